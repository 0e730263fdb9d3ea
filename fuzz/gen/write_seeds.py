"""Writes seed corpora for the fuzz harnesses into fuzz/corpus/<harness>/.

    python3 -m fuzz.gen.write_seeds [--out fuzz/corpus] [--count 12]

(from the repository root). Seeds are drawn from the hypothesis strategies
with derandomize=True, so the same files come out on every run, plus a few
hand-picked cases per harness. Files are named gen_<what>_<n>; existing
gen_ files of a harness are replaced, other files (crash reproducers,
merged fuzzer finds) are left alone. Keep the result small: libFuzzer's
-merge=1 trims it later (see fuzz/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
from typing import Dict, List

from hypothesis import HealthCheck, given, settings

from fuzz.gen import libbin_model as lm
from fuzz.gen import strategies as gs


def draw_many(strategy, count: int) -> List:
    """`count` deterministic examples of `strategy`."""
    out: List = []

    @settings(derandomize=True, database=None, max_examples=count, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    # Hypothesis also tries shrunk and repeated examples: keep distinct ones.
    seen, unique = set(), []
    for x in out:
        key = repr(x)
        if key not in seen:
            seen.add(key)
            unique.append(x)
    return unique[:count]


def library_bin_seeds(count: int) -> Dict[str, bytes]:
    seeds = {}
    for i, tree in enumerate(draw_many(gs.trees(), count)):
        seeds[f"valid_{i}"] = lm.encode(tree)
    for i, (what, blob) in enumerate(draw_many(gs.nearly_valid_blobs(), count)):
        seeds[f"{what}_{i}"] = blob
    lib = lm.Tree((lm.Module(b"_lib", None),), ((),))
    seeds["lib_only"] = lm.encode(lib)
    seeds["lib_padded"] = lm.encode(lib) + b"\x00" * 7
    diamond = lm.Tree(
        (lm.Module(b"_lib", None), lm.Module(b"cuda", b"ptx"), lm.Module(b"c", b"src"),
         lm.Module(b"metal", b"")),
        ((1, 2), (3,), (3,), ()),
    )
    seeds["diamond"] = lm.encode(diamond)
    return seeds


def args_seeds(count: int) -> Dict[str, bytes]:
    seeds = {}
    for i, blob in enumerate(draw_many(gs.arg_arrays(), count)):
        seeds[f"array_{i}"] = blob
    for dtype, name in [(0, "f32"), (1, "f64"), (2, "f16"), (3, "bf16")]:
        seeds[f"scale_{name}"] = gs.scale_call(7, dtype)
    seeds["scale_int_factor"] = gs.scale_call(5, 0, int_factor=True)
    seeds["scale_empty"] = gs.scale_call(0, 0)
    return seeds


DTYPE_WORDS = [
    "int8", "int16", "int32", "int64", "uint1", "uint8", "uint64", "float16", "float32",
    "float64", "bfloat16", "bool", "handle", "float32x4", "int8x16", "float8_e4m3fn",
    "float8_e5m2", "float8_e8m0fnu", "float6_e2m3fn", "float4_e2m1fn", "float4_e2m1fnx2",
    "", "float", "int", "float33", "int8x0", "int8x", "x4", "int8x65536", "int256",
    "float32\x00", "custom[7]32", "void", "int-1", "uint18446744073709551617",
]


def dtype_seeds(count: int) -> Dict[str, bytes]:
    del count
    return {
        "word_" + hashlib.sha1(w.encode()).hexdigest()[:8]: w.encode("latin-1") for w in DTYPE_WORDS
    }


def dlpack_seed(mode: int, ndim_byte: int, dims: List[int], dtype_byte: int,
                layout: int = 0x01, data_how: int = 128, align_byte: int = 0) -> bytes:
    """The byte layout fuzz/dlpack_fuzz.c decodes (see its read_* functions)."""
    head = bytes([mode, 0, 0, align_byte, 0])  # mode, version, flags, alignment, contiguous
    body = bytes([ndim_byte, layout]) + bytes(dims)
    if layout & 0x30 == 0x20:
        body += bytes(dims)
    return head + body + bytes([dtype_byte, 0, data_how, 0])


def dlpack_seeds(count: int) -> Dict[str, bytes]:
    del count
    return {
        "versioned_1d_f32": dlpack_seed(0, 1, [5], 0),
        "legacy_2d_f16": dlpack_seed(1, 2, [3, 4], 1),
        "ndim0": dlpack_seed(0, 0, [], 0),
        "null_shape": dlpack_seed(0, 3, [], 0, layout=0x00),
        "explicit_strides": dlpack_seed(0, 2, [2, 3], 2, layout=0x21),
        "compact_strides": dlpack_seed(0, 3, [2, 3, 4], 3, layout=0x11),
        "null_data": dlpack_seed(0, 1, [4], 0, data_how=0),
        "aligned_64": dlpack_seed(0, 1, [4], 0, align_byte=7),
        "ndim_65": dlpack_seed(0, 225, [1] * 65, 0),
        "null_deleter": dlpack_seed(0x0e, 1, [2], 0),
        # One dimension read as a raw int64 (selector byte 210): 2^62 elements.
        "huge_dim": dlpack_seed(0, 1, list(bytes([210]) + struct.pack("<q", 1 << 62)), 0),
    }


def elf_symbol_seeds(count: int) -> Dict[str, bytes]:
    """Tiny shared libraries exporting a valid blob, with and without the
    static symbol table, built by $CC (clang-14 by default)."""
    del count
    import shutil
    import subprocess
    import tempfile

    cc = os.environ.get("CC", "clang-14")
    if shutil.which(cc) is None:
        print(f"elf_symbol: {cc} not found, no seeds written")
        return {}
    blob = lm.encode(lm.Tree((lm.Module(b"_lib", None), lm.Module(b"c", b"x")), ((1,), ())))
    src = ("__attribute__((visibility(\"default\"))) const unsigned char "
           "__tvm_ffi__library_bin[] = {" + ",".join(str(b) for b in blob) + "};\n")
    seeds = {}
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "lib.c"), "w") as f:
            f.write(src)
        so = os.path.join(d, "lib.so")
        # No build id, no page padding: the smallest file that is still a
        # real shared library.
        subprocess.run([cc, "-shared", "-nostdlib", "-fPIC", "-Wl,--build-id=none",
                        "-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=64", "-o", so,
                        os.path.join(d, "lib.c")], check=True)
        with open(so, "rb") as f:
            seeds["so_symtab"] = f.read()
        subprocess.run(["strip", so], check=True)
        with open(so, "rb") as f:
            seeds["so_dynsym_only"] = f.read()
    return seeds


HARNESSES = {
    "library_bin": library_bin_seeds,
    "args": args_seeds,
    "dtype": dtype_seeds,
    "dlpack": dlpack_seeds,
    "elf_symbol": elf_symbol_seeds,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join("fuzz", "corpus"))
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("harness", nargs="*", default=sorted(HARNESSES))
    a = ap.parse_args()
    for name in a.harness:
        d = os.path.join(a.out, name)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("gen_"):
                os.remove(os.path.join(d, f))
        seeds = HARNESSES[name](a.count)
        for what, blob in sorted(seeds.items()):
            with open(os.path.join(d, f"gen_{what}"), "wb") as fh:
                fh.write(blob)
        print(f"{name}: {len(seeds)} seeds in {d}")


if __name__ == "__main__":
    main()
