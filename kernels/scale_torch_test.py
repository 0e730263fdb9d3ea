"""The PyTorch client on a GPU: the pip `tvm_ffi` package loads
libscale_cuda.so with `tvm_ffi.load_module` and calls `scale` on torch CUDA
tensors (spec/kernels.md KER-041, KER-042, KER-051; spec/devices.md DEV-005).

Needs python3 with `tvm_ffi` and `torch` and a CUDA GPU; each missing one
makes every case SKIP with the reason. No pytest: the GPU bundle runs this
file on machines that may lack it. Output is TAP ("ok - NAME",
"ok - NAME # SKIP why", "not ok - NAME: why"); the exit status is 1 when
a case failed.

Usage: python3 scale_torch_test.py [--lib PATH/libscale_cuda.so] [--tap]
(under Bazel the library comes from the runfiles tree).
"""
import argparse
import os
import sys
import traceback

CASES = []


class Skip(Exception):
    pass


def case(fn):
    CASES.append(fn)
    return fn


def library_path(explicit):
    if explicit:
        return explicit
    root = os.environ.get("TEST_SRCDIR", "")
    workspace = os.environ.get("TEST_WORKSPACE", "tvm_ffi_conformance")
    return os.path.join(root, workspace, "kernels", "libscale_cuda.so")


def environment(lib):
    """(tvm_ffi, torch, module) or raises Skip naming what is missing."""
    try:
        import tvm_ffi
    except ImportError as e:
        raise Skip(f"the tvm_ffi package is not installed ({e})")
    try:
        import torch
    except ImportError as e:
        raise Skip(f"torch is not installed ({e})")
    if not torch.cuda.is_available():
        raise Skip("torch sees no CUDA GPU (torch.cuda.is_available() is False)")
    return tvm_ffi, torch, tvm_ffi.load_module(lib)


def expected(torch, x, factor):
    """The contract computed on the CPU: 16- and 32-bit types multiply by
    the float32 factor in float32 and round once; float64 in double."""
    xc = x.cpu()
    if xc.dtype == torch.float64:
        return xc * factor
    f = torch.tensor(factor, dtype=torch.float32)
    return (xc.float() * f).to(xc.dtype)


def same_bits(torch, got, want):
    view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]
    return torch.equal(got.cpu().view(view), want.view(view))


@case
def test_KER_041_values_every_dtype_and_size(env):
    _, torch, mod = env
    gen = torch.Generator().manual_seed(5)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for n in (0, 1, 7, 4099, 1 << 20, (1 << 20) + 3):
            x = (torch.randn(n, generator=gen) * 100).to(dtype).cuda()
            y = torch.full((n,), 7, dtype=dtype, device="cuda")
            mod.scale(y, x, 1.7)
            torch.cuda.synchronize()
            assert same_bits(torch, y, expected(torch, x, 1.7)), f"{dtype} n={n}"
            mod.scale(y, x, -3)  # an int factor
            torch.cuda.synchronize()
            assert same_bits(torch, y, expected(torch, x, -3.0)), f"{dtype} n={n}, int factor"


@case
def test_KER_041_unaligned_view(env):
    _, torch, mod = env
    base = torch.arange(4100, dtype=torch.float32, device="cuda")
    out = torch.zeros(4100, dtype=torch.float32, device="cuda")
    x, y = base[1:], out[3:4102 - 3]  # 4 and 12 bytes past 16-byte boundaries
    x = x[: y.numel()]
    mod.scale(y, x, 0.1)
    torch.cuda.synchronize()
    assert same_bits(torch, y, expected(torch, x, 0.1))
    assert torch.count_nonzero(out[:3]).item() == 0, "wrote before the view"


@case
def test_DEV_005_ordered_on_torch_stream(env):
    """Under torch.cuda.stream(s) the kernel runs on s, after the work
    queued on s before the call: s first sleeps on the GPU and then fills x,
    so a kernel on any other stream would read x before the fill."""
    _, torch, mod = env
    s = torch.cuda.Stream()
    n = 1 << 20
    x = torch.zeros(n, dtype=torch.float32, device="cuda")
    y = torch.full((n,), -1.0, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU clock cycles
        x.fill_(3.0)
        mod.scale(y, x, 2.0)
        done = torch.cuda.Event()
        done.record(s)
    done.synchronize()
    assert torch.all(y == 6.0).item(), f"y[0] = {y[0].item()}: the kernel did not follow s"


@case
def test_KER_042_captured_on_torch_stream(env):
    """A CUDA graph captured on a torch stream holds the kernel's launch:
    nothing is written until the graph is replayed (thread-local capture,
    so a kernel that synchronised would fail the capture)."""
    _, torch, mod = env
    n = 1 << 16
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.zeros(n, dtype=torch.float32, device="cuda")
    mod.scale(y, x, 2.0)  # first call outside the capture (lazy loading)
    y.zero_()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
        mod.scale(y, x, 2.0)
    torch.cuda.synchronize()
    assert torch.count_nonzero(y).item() == 0, "the output was written during capture"
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2), "the replayed graph did not compute scale"


def refused(mod, exc, parts, *args):
    try:
        mod.scale(*args)
    except exc as e:
        text = str(e)
        for p in parts:
            assert p in text, f"{exc.__name__} message {text!r} lacks {p!r}"
        return
    except Exception as e:  # the wrong class
        raise AssertionError(f"expected {exc.__name__}, got {type(e).__name__}: {e}")
    raise AssertionError(f"expected {exc.__name__}, the call succeeded")


@case
def test_KER_051_errors_are_python_exceptions(env):
    _, torch, mod = env
    x = torch.ones(8, dtype=torch.float32, device="cuda")
    y = torch.zeros(8, dtype=torch.float32, device="cuda")
    refused(mod, TypeError, ["scale", "3"], y, x)
    refused(mod, TypeError, ["factor"], y, x, "two")
    refused(mod, ValueError, ["output", "cpu"], torch.zeros(8), x, 2.0)
    refused(mod, ValueError, ["input", "contiguous"], y[:4], x[::2], 2.0)
    refused(mod, ValueError, ["dtypes differ", "float16", "float32"], y.half(), x, 2.0)
    refused(mod, ValueError, ["element counts differ"], y[:7], x, 2.0)
    refused(mod, TypeError, ["input", "int32"], y.int(), x.int(), 2.0)
    assert torch.count_nonzero(y).item() == 0, "a refused call wrote output"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--tap", action="store_true", help="TAP output (the default anyway)")
    a = ap.parse_args()
    print(f"1..{len(CASES)}")
    try:
        env, why = environment(library_path(a.lib)), None
    except Skip as e:
        env, why = None, str(e)
    failed = 0
    for fn in CASES:
        name = fn.__name__
        if env is None:
            print(f"ok - {name} # SKIP {why}")
            continue
        try:
            fn(env)
            print(f"ok - {name}")
        except Skip as e:
            print(f"ok - {name} # SKIP {e}")
        except Exception as e:  # a failed assertion or an unexpected error
            failed += 1
            print(f"not ok - {name}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stdout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
