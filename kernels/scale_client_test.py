"""The real client: the pip `tvm_ffi` package loads our CPU kernel library and
calls `scale` on NumPy arrays (spec/kernels.md, KER-050 and KER-051).

Run by `bazel test //kernels:scale_client_test`; the library path comes from
the runfiles tree (or SCALE_CPU_LIB when run by hand).
"""

import os
import sys

import numpy as np
import pytest
import tvm_ffi

from tools.sanitizer_preload import sanitizer_env


def _library_path():
    explicit = os.environ.get("SCALE_CPU_LIB")
    if explicit:
        return explicit
    root = os.environ.get("TEST_SRCDIR", "")
    workspace = os.environ.get("TEST_WORKSPACE", "tvm_ffi_conformance")
    return os.path.join(root, workspace, "kernels", "libscale_cpu.so")


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(_library_path())


def _inputs(dtype, n, seed=7):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [0, 1, 7, 4099, 1 << 20])
def test_KER_050_scale_numpy(mod, dtype, n):
    x = _inputs(dtype, n)
    y = np.full(n, 123, dtype=dtype)
    mod.scale(y, x, 1.7)
    # The contract: 16- and 32-bit types multiply by the float32 factor in
    # float32 and round once; float64 multiplies in double.
    if dtype == np.float64:
        want = x * 1.7
    else:
        want = (x.astype(np.float32) * np.float32(1.7)).astype(dtype)
    np.testing.assert_array_equal(y, want)


def test_KER_050_int_factor_and_in_place(mod):
    x = np.arange(10, dtype=np.float32)
    mod.scale(x, x, 3)
    np.testing.assert_array_equal(x, np.arange(10, dtype=np.float32) * 3)


def test_KER_050_returns_none(mod):
    x = np.ones(4, dtype=np.float64)
    y = np.zeros(4, dtype=np.float64)
    assert mod.scale(y, x, 2.0) is None
    np.testing.assert_array_equal(y, np.full(4, 2.0))


def _refused(mod, exc, parts, *args):
    with pytest.raises(exc) as info:
        mod.scale(*args)
    text = str(info.value)
    for part in parts:
        assert part in text, f"{exc.__name__} message {text!r} lacks {part!r}"


def test_KER_051_arity_is_type_error(mod):
    x = np.ones(4, dtype=np.float32)
    _refused(mod, TypeError, ["scale", "got 2"], x, x)


def test_KER_051_not_a_tensor_is_type_error(mod):
    x = np.ones(4, dtype=np.float32)
    _refused(mod, TypeError, ["output", "int"], 5, x, 2.0)
    _refused(mod, TypeError, ["input"], x, "x", 2.0)


def test_KER_051_bad_factor_is_type_error(mod):
    x = np.ones(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    _refused(mod, TypeError, ["factor"], y, x, "2")
    _refused(mod, TypeError, ["factor"], y, x, None)
    np.testing.assert_array_equal(y, np.zeros(4, dtype=np.float32))


def test_KER_051_not_contiguous_is_value_error(mod):
    x = np.ones(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    _refused(mod, ValueError, ["output", "contiguous"], y[::2], x[:4], 2.0)
    _refused(mod, ValueError, ["input", "contiguous"], y[:4], x[::2], 2.0)


def test_KER_051_not_1d_is_value_error(mod):
    x = np.ones((2, 4), dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    _refused(mod, ValueError, ["input", "1-D"], y, x, 2.0)


def test_KER_051_mismatches_are_value_errors(mod):
    x = np.ones(8, dtype=np.float32)
    _refused(mod, ValueError, ["dtypes differ", "float64", "float32"],
             np.zeros(8, dtype=np.float64), x, 2.0)
    _refused(mod, ValueError, ["element counts differ", "(7 vs 8)"],
             np.zeros(7, dtype=np.float32), x, 2.0)


def test_KER_051_unsupported_dtype_is_type_error(mod):
    x = np.ones(8, dtype=np.int32)
    y = np.zeros(8, dtype=np.int32)
    _refused(mod, TypeError, ["input", "int32"], y, x, 2.0)
    np.testing.assert_array_equal(y, np.zeros(8, dtype=np.int32))


def test_KER_051_cuda_kernel_refuses_host_arrays(mod):
    # The CUDA build loads into the same host and refuses NumPy (CPU) arrays
    # with ValueError naming the argument, before touching the CUDA runtime.
    cuda = tvm_ffi.load_module(_library_path().replace("libscale_cpu.so", "libscale_cuda.so"))
    x = np.ones(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    _refused(cuda, ValueError, ["output", "CUDA", "cpu:0"], y, x, 2.0)
    _refused(cuda, TypeError, ["scale", "got 1"], x)


if __name__ == "__main__":
    env = sanitizer_env(_library_path())
    if env:
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    args = [__file__, "-v", "-p", "no:cacheprovider"]
    if os.environ.get("XML_OUTPUT_FILE"):  # one JUnit case per test for Bazel
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    sys.exit(pytest.main(args))
