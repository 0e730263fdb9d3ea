"""Clauses of spec/errors.md on error kinds crossing into Python.

A C test library raises each kind through TVMFFIErrorSetRaisedFromCStr;
upstream's Python package must turn it into the exception class the kind
table names, with the message bytes unchanged.
"""
import filecmp
import os

import pytest
import tvm_ffi

LIB = os.environ.get("CONF_RAISE_KINDS_LIB", "")
PACKAGE_LIB = os.path.join(os.path.dirname(tvm_ffi.__file__), "lib", "libtvm_ffi.so")


def skip_reason(impl: str, upstream_lib: str) -> str:
    """Why these tests say nothing about the implementation under test ("" when they do).

    They run upstream's Python package over its own libtvm_ffi.so, so they
    test the implementation only when it is that library: TVMFFI_IMPL=upstream
    (the pinned wheel; the package is the same pinned release) or a path to a
    file identical to the package's library.
    """
    if impl == "upstream":
        return ""
    if impl not in ("", "reference") and os.path.exists(impl) and os.path.exists(PACKAGE_LIB) \
            and filecmp.cmp(impl, PACKAGE_LIB, shallow=False):
        return ""
    if upstream_lib and impl not in ("", "reference") and os.path.exists(impl) \
            and os.path.exists(upstream_lib) and filecmp.cmp(impl, upstream_lib, shallow=False):
        return ""
    under_test = impl if impl not in ("", "reference") else "the bundled reference runtime"
    return (f"these tests run upstream's Python package tvm_ffi {tvm_ffi.__version__} over its own "
            f"{PACKAGE_LIB}; the library under test ({under_test}) is not that library")


@pytest.fixture(scope="module")
def mod():
    reason = skip_reason(os.environ.get("TVMFFI_IMPL", ""), os.environ.get("CONF_UPSTREAM_LIB", ""))
    if reason:
        pytest.skip(reason)
    assert os.path.exists(LIB), f"test library not found at {LIB!r}"
    return tvm_ffi.load_module(LIB)


def test_skip_reason_follows_tvmffi_impl():
    """The implementation under test decides whether these tests run (not a clause test)."""
    assert skip_reason("upstream", "") == ""
    assert "bundled reference runtime" in skip_reason("", "")
    assert "bundled reference runtime" in skip_reason("reference", "")
    assert "/nonexistent.so" in skip_reason("/nonexistent.so", "")
    assert skip_reason(PACKAGE_LIB, "") == ""


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
