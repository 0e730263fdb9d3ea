"""Clauses GLB-008 and GLB-009 of spec/host.md: upstream's Python package
over the implementation under test (conformance/python/run_pytest.py swaps
it in and proves it): it imports, with its testing module, and Python's
containers cross into C++ code built on upstream's headers and back."""
import os

import pytest


@pytest.fixture(scope="module")
def ffi():
    if not os.environ.get("CONF_PYTHON_RUNTIME"):
        pytest.skip("CONF_PYTHON_RUNTIME is unset: run through conformance/python/run_pytest.py")
    import tvm_ffi  # noqa: PLC0415
    import tvm_ffi.testing  # noqa: F401, PLC0415
    return tvm_ffi


def test_GLB_008_package_imports(ffi):
    """GLB-008: `import tvm_ffi` and `import tvm_ffi.testing` succeed, and the missing and
    keyword markers the package binds are the runtime's"""
    marker = ffi.get_global_func("ffi.GetInvalidObject")()
    assert ffi.core.MISSING.same_as(marker)
    assert "ffi.Map" in ffi.registry.list_global_func_names()
    pair = ffi.testing.TestIntPair(3, 4)
    assert (pair.a, pair.b) == (3, 4)


def test_GLB_009_containers_round_trip(ffi):
    """GLB-009: a dict, list and tuple passed to a C++ function (testing.echo) come back as
    ffi.Map, ffi.Array of equal content; a dict of 100 entries is found key by key; ffi.Dict
    and ffi.List change in place; repr and == follow upstream"""
    echo = ffi.get_global_func("testing.echo")
    m = echo({"a": 1, "b": [1, 2], 3: None})
    assert isinstance(m, ffi.Map) and dict(m.items())["a"] == 1
    assert list(m["b"]) == [1, 2] and m[3] is None
    big = echo({i: str(i) for i in range(100)})
    assert all(big[i] == str(i) for i in range(100))
    assert echo((1, "x")) == ffi.Array([1, "x"])
    d = ffi.Dict({"k": 1})
    d["j"] = 2
    del d["k"]
    assert dict(d.items()) == {"j": 2}
    lst = ffi.List([3, 1])
    lst.append(2)
    assert list(lst) == [3, 1, 2]
    assert str(ffi.convert({"a": [1, 2]})) == '{"a": (1, 2)}'
