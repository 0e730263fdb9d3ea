"""Hypothesis strategies for structured fuzz inputs.

- ``trees()``: valid library_bin import trees: a DAG over the modules (an
  edge only ever goes from a module to one later in a random topological
  order, so no cycle can form), kinds (at most one ``_lib``) and payloads.
- ``corruptions(blob)``: one single-field corruption of a valid blob, as
  ``(name, corrupted_blob)``: a length or count made too large (2^40, 2^64-1,
  one too many), an index out of range, a decreasing or non-zero-based
  indptr, an import cycle, an empty kind, a second ``_lib``, truncation,
  trailing bytes.
- ``arg_arrays()``: argument arrays for fuzz/args_fuzz.c, as the exact byte
  encoding that harness decodes (see ``encode_args``).
"""

from __future__ import annotations

import struct
from typing import List, Tuple

from hypothesis import strategies as st

from fuzz.gen import libbin_model as lm

# ---------------------------------------------------------------- library_bin

KINDS = [b"c", b"cuda", b"metal", b"test", b"static_library", b"x" * 40]


@st.composite
def trees(draw, max_modules: int = 6) -> lm.Tree:
    n = draw(st.integers(min_value=1, max_value=max_modules))
    order = draw(st.permutations(range(n)))
    rank = {m: r for r, m in enumerate(order)}
    imports = []
    for i in range(n):
        later = [j for j in range(n) if rank[j] > rank[i]]
        # Duplicates allowed: a module may import the same child twice.
        children = draw(st.lists(st.sampled_from(later), max_size=4)) if later else []
        imports.append(tuple(children))
    lib_at = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=n - 1)))
    modules = []
    for i in range(n):
        if i == lib_at:
            modules.append(lm.Module(lm.LIB_KIND, None))
            continue
        kind = draw(
            st.one_of(
                st.sampled_from(KINDS),
                st.binary(min_size=1, max_size=12).filter(lambda k: k != lm.LIB_KIND),
            )
        )
        payload = draw(st.binary(max_size=48))
        modules.append(lm.Module(kind, payload))
    return lm.Tree(tuple(modules), tuple(imports))


class Layout:
    """Byte offsets of every field of an encoded blob, for corrupting one."""

    def __init__(self, tree: lm.Tree):
        self.tree = tree
        self.blob = bytearray(lm.encode(tree))
        pos = 8
        self.indptr_at = pos
        pos += 8 + 8 * len(tree.indptr)
        self.children_at = pos
        pos += 8 + 8 * len(tree.child_indices)
        self.kind_at: List[int] = []
        self.payload_at: List[int] = []  # -1 for _lib
        for m in tree.modules:
            self.kind_at.append(pos)
            pos += 8 + len(m.kind)
            if m.kind == lm.LIB_KIND:
                self.payload_at.append(-1)
            else:
                self.payload_at.append(pos)
                pos += 8 + len(m.payload or b"")

    def put(self, offset: int, value: int) -> bytes:
        b = bytearray(self.blob)
        b[offset : offset + 8] = lm.u64(value)
        return bytes(b)

    def with_nbytes(self, body: bytes) -> bytes:
        return lm.u64(len(body)) + body


HUGE = [1 << 40, (1 << 64) - 1, (1 << 63), (1 << 61) + 1]


@st.composite
def corruptions(draw, tree: lm.Tree) -> Tuple[str, bytes]:
    """One field of ``encode(tree)`` made wrong; the blob must be refused."""
    lay = Layout(tree)
    blob = bytes(lay.blob)
    body = blob[8:]
    n = len(tree.modules)
    options = ["nbytes_too_large", "truncated", "trailing", "indptr_count_huge",
               "indptr_empty", "indptr_first", "children_count_huge", "kind_len_huge",
               "kind_empty", "duplicate_lib", "cycle"]
    if n >= 2:
        options.append("indptr_decrease")
    if tree.child_indices:
        options.append("child_out_of_range")
    if any(m.kind != lm.LIB_KIND for m in tree.modules):
        options.append("payload_len_huge")
    what = draw(st.sampled_from(options))
    if what == "nbytes_too_large":
        extra = draw(st.sampled_from([1, 8] + HUGE))
        return what, lay.put(0, len(body) + extra)
    if what == "truncated":
        cut = draw(st.integers(min_value=0, max_value=len(blob) - 1))
        return what, blob[:cut]
    if what == "trailing":
        tail = draw(st.binary(min_size=1, max_size=16))
        return what, lay.with_nbytes(body + tail)
    if what == "indptr_count_huge":
        return what, lay.put(lay.indptr_at, draw(st.sampled_from(HUGE + [len(tree.indptr) + 1])))
    if what == "indptr_empty":
        # A zero-length indptr followed by the original child vector.
        rest = body[8 + 8 * len(tree.indptr) :]
        return what, lay.with_nbytes(lm.u64(0) + rest)
    if what == "indptr_first":
        return what, lay.put(lay.indptr_at + 8, draw(st.integers(min_value=1, max_value=1 << 64 - 1)))
    if what == "indptr_decrease":
        i = draw(st.integers(min_value=1, max_value=n - 1))
        # indptr[i] above the final count forces a decrease or a bad end.
        return what, lay.put(lay.indptr_at + 8 + 8 * i, len(tree.child_indices) + 1)
    if what == "children_count_huge":
        return what, lay.put(lay.children_at, draw(st.sampled_from(HUGE)))
    if what == "child_out_of_range":
        j = draw(st.integers(min_value=0, max_value=len(tree.child_indices) - 1))
        bad = draw(st.sampled_from([n, n + 1] + HUGE))
        return what, lay.put(lay.children_at + 8 + 8 * j, bad)
    if what == "kind_len_huge":
        i = draw(st.integers(min_value=0, max_value=n - 1))
        return what, lay.put(lay.kind_at[i], draw(st.sampled_from(HUGE)))
    if what == "payload_len_huge":
        i = draw(st.sampled_from([k for k in range(n) if lay.payload_at[k] >= 0]))
        return what, lay.put(lay.payload_at[i], draw(st.sampled_from(HUGE)))
    if what == "kind_empty":
        i = draw(st.integers(min_value=0, max_value=n - 1))
        mods = list(tree.modules)
        mods[i] = lm.Module(b"", b"")
        return what, lm.encode(lm.Tree(tuple(mods), tree.imports))
    if what == "duplicate_lib":
        mods = list(tree.modules) + [lm.Module(lm.LIB_KIND, None)] * 2
        return what, lm.encode(lm.Tree(tuple(mods), tree.imports + ((), ())))
    # cycle: module a imports b and b imports a (a == b is a self import).
    a = draw(st.integers(min_value=0, max_value=n - 1))
    b = draw(st.integers(min_value=0, max_value=n - 1))
    imports = [list(c) for c in tree.imports]
    imports[a].append(b)
    imports[b].append(a)
    return what, lm.encode(lm.Tree(tree.modules, tuple(tuple(c) for c in imports)))


@st.composite
def valid_blobs(draw) -> bytes:
    """A valid blob, sometimes followed by padding past nbytes."""
    blob = lm.encode(draw(trees()))
    return blob + draw(st.one_of(st.just(b""), st.binary(max_size=8)))


@st.composite
def nearly_valid_blobs(draw) -> Tuple[str, bytes]:
    return draw(corruptions(draw(trees())))


# --------------------------------------------------------------------- args
#
# The byte encoding fuzz/args_fuzz.c decodes. One header byte: the low
# nibble modulo 9 is the argument count, the high nibble modulo 3 the
# target (0 ViewToOwned, 1 the unpacking C function, 2 the scale kernel).
# Then each argument: a kind byte (modulo 18) and its fields.

TARGET_VIEW, TARGET_UNPACK, TARGET_SCALE = 0, 1, 2


def _header(count: int, target: int) -> bytes:
    return bytes([(target << 4) | count])


@st.composite
def arg_encodings(draw) -> bytes:
    """One argument, encoded."""
    kind = draw(st.integers(min_value=0, max_value=17))
    if kind == 0:
        return bytes([0])
    if 1 <= kind <= 6:
        return bytes([kind]) + draw(st.binary(min_size=8, max_size=8))
    if kind == 7:  # a 1-D CPU DLTensor view with a backed buffer
        n = draw(st.integers(min_value=0, max_value=16))
        dtype = draw(st.integers(min_value=0, max_value=7))
        return tensor_view(n, dtype, draw(st.binary(min_size=256, max_size=256)))
    if kind in (8, 9):
        s = draw(st.binary(max_size=20))
        return bytes([kind, len(s)]) + s
    if kind in (11, 12):
        s = draw(st.binary(max_size=8))
        return bytes([kind, len(s)]) + s
    if kind == 13:
        return bytes([13, draw(st.integers(0, 255))]) + draw(st.binary(min_size=8, max_size=8))
    # objects (kind 10 as an rvalue reference, after a byte that picks a
    # real slot, an empty one or none): which object, then its bytes
    obj = draw(st.integers(min_value=0, max_value=4))
    slot = bytes([draw(st.sampled_from([0, 0, 0, 0xF8, 0xFF]))]) if kind == 10 else b""
    return bytes([kind]) + slot + bytes([obj]) + draw(st.binary(min_size=10, max_size=24))


@st.composite
def arg_arrays(draw) -> bytes:
    args = draw(st.lists(arg_encodings(), max_size=8))
    target = draw(st.sampled_from([TARGET_VIEW, TARGET_UNPACK, TARGET_SCALE]))
    return _header(len(args), target) + b"".join(args)


# The harness's common dtypes by index, and the bytes n elements take.
DTYPE_BYTES = {
    0: lambda n: 4 * n,  # float32
    1: lambda n: 8 * n,  # float64
    2: lambda n: 2 * n,  # float16
    3: lambda n: 2 * n,  # bfloat16
    4: lambda n: 4 * n,  # int32
    5: lambda n: 16 * n,  # float32x4
    6: lambda n: 0,  # float with 0 bits
    7: lambda n: (n + 7) // 8,  # uint1
}


def tensor_view(n: int, dtype_byte: int, fill: bytes) -> bytes:
    """A DLTensor* argument: 1-D, CPU, n elements, buffer filled from fill."""
    need = DTYPE_BYTES[dtype_byte](n)
    data = (fill * (need // max(len(fill), 1) + 1))[:need] if fill else bytes(need)
    # ndim byte 0 -> 1-D; layout 0 -> shape, no strides; then dim, dtype,
    # device (CPU), byte offset 0, "backed", the buffer, then "not NULL".
    return bytes([7, 0, 0, n, dtype_byte, 0, 0, 0xFF]) + data + b"\x00"


def scale_call(n: int, dtype_byte: int, int_factor: bool = False) -> bytes:
    """scale(output, input, factor) on two backed 1-D CPU tensors of n elements."""
    fill = bytes((i * 7 + 1) % 256 for i in range(64))
    tensor = tensor_view(n, dtype_byte, fill)
    factor = bytes([1]) + struct.pack("<q", 3) if int_factor else bytes([3]) + struct.pack("<d", 2.5)
    return _header(3, TARGET_SCALE) + tensor + tensor + factor


# ------------------------------------------------- single argument views
#
# Descriptions of one TVMFFIAny argument view for the ctypes property test
# of TVMFFIAnyViewToOwnedAny (fuzz/gen/any_test.py):
#   ("inline", type_index, payload_u64)   None, Int, Bool, Float, OpaquePtr,
#                                         DataType, Device
#   ("raw_str", text)                     const char*, NUL-terminated
#   ("byte_array", data)                  TVMFFIByteArray*, any bytes
#   ("object", kind, data)                a heap Str (65) or Bytes (66)
#   ("rvalue", kind, data)                an rvalue reference to one

_U64 = st.integers(min_value=0, max_value=(1 << 64) - 1)


def _inline() -> st.SearchStrategy:
    dtype = st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 65535)).map(
        lambda t: t[0] | (t[1] << 8) | (t[2] << 16))
    device = st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1)).map(
        lambda t: t[0] | (t[1] << 32))
    return st.one_of(
        st.just(("inline", 0, 0)),
        _U64.map(lambda v: ("inline", 1, v)),
        st.integers(0, 1).map(lambda v: ("inline", 2, v)),
        _U64.map(lambda v: ("inline", 3, v)),
        _U64.map(lambda v: ("inline", 4, v)),
        dtype.map(lambda v: ("inline", 5, v)),
        device.map(lambda v: ("inline", 6, v)),
    )


def any_views() -> st.SearchStrategy:
    # Lengths around the inline limit (7 bytes plus a NUL) matter most.
    data = st.one_of(st.binary(max_size=10), st.binary(min_size=6, max_size=9),
                     st.binary(max_size=300))
    heap = st.binary(min_size=8, max_size=64)
    return st.one_of(
        _inline(),
        data.map(lambda b: ("raw_str", b.replace(b"\x00", b"\x01"))),
        data.map(lambda b: ("byte_array", b)),
        st.tuples(st.sampled_from([65, 66]), heap).map(lambda t: ("object",) + t),
        st.tuples(st.sampled_from([65, 66]), heap).map(lambda t: ("rvalue",) + t),
    )
