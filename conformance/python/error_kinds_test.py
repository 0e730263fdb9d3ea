"""Clauses of spec/errors.md on error kinds crossing into Python.

A C test library raises each kind through TVMFFIErrorSetRaisedFromCStr;
upstream's Python package must turn it into the exception class the kind
table names, with the message bytes unchanged.
"""
import hashlib
import os

import pytest
import tvm_ffi

LIB = os.environ.get("CONF_RAISE_KINDS_LIB", "")


def mapped_runtime() -> str:
    """The one libtvm_ffi.so this process mapped (importing tvm_ffi loaded it)."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        paths = {line.split(None, 5)[5].strip() for line in maps
                 if len(line.split(None, 5)) == 6
                 and os.path.basename(line.split(None, 5)[5].strip()) == "libtvm_ffi.so"}
    assert len(paths) == 1, f"expected one libtvm_ffi.so mapped, found {sorted(paths)}"
    return paths.pop()


def digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def skip_reason(runtime: str) -> str:
    """Why these tests say nothing about the implementation under test ("" when they do).

    conformance/python/run_pytest.py runs them with upstream's Python package
    over the implementation under test and names it in CONF_PYTHON_RUNTIME:
    "upstream" (the package's own library) or the path of the library it
    swapped into a copy of the package. Without that, they test nothing.
    """
    if not runtime:
        return "CONF_PYTHON_RUNTIME is unset: run these tests through conformance/python/run_pytest.py"
    return ""


@pytest.fixture(scope="module")
def mod():
    runtime = os.environ.get("CONF_PYTHON_RUNTIME", "")
    reason = skip_reason(runtime)
    if reason:
        pytest.skip(reason)
    mapped = mapped_runtime()
    if runtime != "upstream":
        assert digest(mapped) == digest(runtime), f"tvm_ffi mapped {mapped}, not {runtime}"
    assert os.path.exists(LIB), f"test library not found at {LIB!r}"
    return tvm_ffi.load_module(LIB)


def test_skip_reason_follows_the_runner():
    """The runner decides whether these tests run (not a clause test)."""
    assert skip_reason("upstream") == ""
    assert skip_reason("/abs/libtvm_ffi.so") == ""
    assert "run_pytest.py" in skip_reason("")


def expected_message(kind: str) -> str:
    return f"argument `x` of raise_{kind} is bad: 42"


def raise_and_catch(mod, kind: str) -> BaseException:
    with pytest.raises(BaseException) as info:
        getattr(mod, "raise_" + kind)()
    return info.value


def check_kind(mod, kind: str, cls: type) -> None:
    exc = raise_and_catch(mod, kind)
    # Exact class, not a subclass match: the table names one class per kind.
    assert type(exc) is cls, f"{kind} became {type(exc).__name__}"
    # args[0], not str(): str(KeyError) adds quotes.
    assert exc.args == (expected_message(kind),)


def test_ERR_040_library_loads_and_calls(mod):
    """ERR-040: a library exporting `__tvm_ffi_<name>` functions loads with tvm_ffi.load_module
    and its functions are callable from Python"""
    assert mod.ok() == 7


def test_ERR_041_runtime_error(mod):
    """ERR-041: kind RuntimeError reaches Python as RuntimeError with args equal to (message,)"""
    check_kind(mod, "RuntimeError", RuntimeError)


def test_ERR_042_value_error(mod):
    """ERR-042: kind ValueError reaches Python as ValueError with args equal to (message,)"""
    check_kind(mod, "ValueError", ValueError)


def test_ERR_043_type_error(mod):
    """ERR-043: kind TypeError reaches Python as TypeError with args equal to (message,)"""
    check_kind(mod, "TypeError", TypeError)


def test_ERR_044_attribute_error(mod):
    """ERR-044: kind AttributeError reaches Python as AttributeError with args equal to
    (message,)"""
    check_kind(mod, "AttributeError", AttributeError)


def test_ERR_045_key_error(mod):
    """ERR-045: kind KeyError reaches Python as KeyError with args equal to (message,)"""
    check_kind(mod, "KeyError", KeyError)


def test_ERR_046_index_error(mod):
    """ERR-046: kind IndexError reaches Python as IndexError with args equal to (message,)"""
    check_kind(mod, "IndexError", IndexError)


def test_ERR_047_assertion_error(mod):
    """ERR-047: kind AssertionError reaches Python as AssertionError with args equal to
    (message,)"""
    check_kind(mod, "AssertionError", AssertionError)


def test_ERR_048_memory_error(mod):
    """ERR-048: kind MemoryError reaches Python as MemoryError with args equal to (message,)"""
    check_kind(mod, "MemoryError", MemoryError)


def test_ERR_049_unregistered_kinds_become_runtime_error(mod):
    """ERR-049: a kind Python has no class registered for (NotImplementedError, any custom kind)
    reaches Python as RuntimeError with args equal to (message,)"""
    for kind in ("NotImplementedError", "MyCustomError"):
        exc = raise_and_catch(mod, kind)
        assert type(exc) is RuntimeError, f"{kind} became {type(exc).__name__}"
        assert exc.args == (expected_message(kind),)


def test_ERR_050_kind_kept_on_the_error_object(mod):
    """ERR-050: the Python exception keeps the FFI error as `__tvm_ffi_error__`, whose kind and
    message are the bytes raised in C"""
    exc = raise_and_catch(mod, "NotImplementedError")
    err = exc.__tvm_ffi_error__
    assert err.kind == "NotImplementedError"
    assert err.message == expected_message("NotImplementedError")


def test_ERR_051_parts_message_utf8(mod):
    """ERR-051: a message made by TVMFFIErrorSetRaisedFromCStrParts, UTF-8 included, reaches
    Python decoded unchanged"""
    exc = raise_and_catch(mod, "parts")
    assert type(exc) is ValueError
    assert exc.args == ("shape [2, 3] \u00e9 mismatch",)
