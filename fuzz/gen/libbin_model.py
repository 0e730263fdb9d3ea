"""A Python model of the ``__tvm_ffi__library_bin`` format.

Layout (every integer a little-endian u64)::

    <nbytes> <indptr: vec> <child_indices: vec> then per module
    <kind: str> [<payload: bytes> unless kind is "_lib"]

where vec, str and bytes are a count followed by the elements. ``nbytes``
counts the bytes after itself; anything past ``8 + nbytes`` is padding.

The model accepts exactly the blobs that the checks listed in
reference/library_bin.h allow, and refuses with the field the parser names.
The property tests hold the C parser to it: two decoders written
separately, one straight-line Python and one bounded C, must agree.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import List, Optional, Sequence, Tuple

LIB_KIND = b"_lib"


@dataclasses.dataclass(frozen=True)
class Module:
    """One module of the blob: its kind, and its payload unless it is _lib."""

    kind: bytes
    payload: Optional[bytes]  # None exactly when kind == b"_lib"


@dataclasses.dataclass(frozen=True)
class Tree:
    """Modules and their imports: imports[i] lists module i's children."""

    modules: Tuple[Module, ...]
    imports: Tuple[Tuple[int, ...], ...]

    @property
    def indptr(self) -> List[int]:
        out = [0]
        for children in self.imports:
            out.append(out[-1] + len(children))
        return out

    @property
    def child_indices(self) -> List[int]:
        return [c for children in self.imports for c in children]


class Malformed(Exception):
    """The model refuses a blob: which field, at which byte offset."""

    def __init__(self, field: str, offset: int, why: str):
        super().__init__(f"offset {offset}: field {field}: {why}")
        self.field = field
        self.offset = offset
        self.why = why


def u64(value: int) -> bytes:
    return struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF)


def encode_span(data: bytes) -> bytes:
    return u64(len(data)) + data


def encode_vec(values: Sequence[int]) -> bytes:
    return u64(len(values)) + b"".join(u64(v) for v in values)


def encode_body(tree: Tree) -> bytes:
    """Everything after the nbytes header."""
    parts = [encode_vec(tree.indptr), encode_vec(tree.child_indices)]
    for m in tree.modules:
        parts.append(encode_span(m.kind))
        if m.kind != LIB_KIND:
            parts.append(encode_span(m.payload or b""))
    return b"".join(parts)


def encode(tree: Tree) -> bytes:
    body = encode_body(tree)
    return u64(len(body)) + body


class _Reader:
    """Reads u64 values and spans off [pos, end) of the blob."""

    def __init__(self, blob: bytes, end: int):
        self.blob = blob
        self.pos = 0
        self.end = end

    def u64(self, field: str) -> int:
        if self.end - self.pos < 8:
            raise Malformed(field, self.pos, "truncated u64")
        (v,) = struct.unpack_from("<Q", self.blob, self.pos)
        self.pos += 8
        return v

    def vec(self, field: str) -> List[int]:
        at = self.pos
        n = self.u64(field)
        if n > (self.end - self.pos) // 8:
            raise Malformed(field, at, "element count exceeds the bytes left")
        values = list(struct.unpack_from(f"<{n}Q", self.blob, self.pos)) if n else []
        self.pos += 8 * n
        return values

    def span(self, field: str) -> bytes:
        at = self.pos
        n = self.u64(field)
        if n > self.end - self.pos:
            raise Malformed(field, at, "length exceeds the bytes left")
        data = self.blob[self.pos : self.pos + n]
        self.pos += n
        return data


def _has_cycle(imports: Sequence[Sequence[int]]) -> bool:
    """Kahn's algorithm: a graph is acyclic iff every node gets removed."""
    n = len(imports)
    indegree = [0] * n
    for children in imports:
        for c in children:
            indegree[c] += 1
    ready = [i for i in range(n) if indegree[i] == 0]
    removed = 0
    while ready:
        node = ready.pop()
        removed += 1
        for c in imports[node]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return removed != n


def parse(blob: bytes, size: Optional[int] = None) -> Tree:
    """Decodes ``blob[:size]`` or raises Malformed naming the first bad field.

    Fields are checked in the order the bytes come, except that the import
    graph (indptr shape, child range, acyclicity) is judged once both of
    its vectors are read, before any module entry.
    """
    blob = bytes(blob[: len(blob) if size is None else size])
    r = _Reader(blob, len(blob))
    nbytes = r.u64("nbytes")
    if nbytes > r.end - r.pos:
        raise Malformed("nbytes", 0, "larger than the bytes available")
    r.end = r.pos + nbytes
    indptr_at = r.pos
    indptr = r.vec("import_tree.indptr")
    if not indptr:
        raise Malformed("import_tree.indptr", indptr_at, "empty")
    if len(indptr) == 1:
        raise Malformed("import_tree.indptr", indptr_at, "zero modules")
    children_at = r.pos
    children = r.vec("import_tree.child_indices")
    num_modules = len(indptr) - 1
    if indptr[0] != 0:
        raise Malformed("import_tree.indptr", indptr_at + 8, "first element is not 0")
    for i in range(1, len(indptr)):
        if indptr[i] < indptr[i - 1]:
            raise Malformed("import_tree.indptr", indptr_at + 8 + 8 * i, "elements decrease")
    if indptr[-1] != len(children):
        raise Malformed(
            "import_tree.indptr",
            indptr_at + 8 * len(indptr),
            "last element differs from the number of child indices",
        )
    for j, c in enumerate(children):
        if c >= num_modules:
            raise Malformed(
                "import_tree.child_indices", children_at + 8 + 8 * j, "child index names no module"
            )
    imports = tuple(tuple(children[indptr[i] : indptr[i + 1]]) for i in range(num_modules))
    if _has_cycle(imports):
        # The offset of the closing edge depends on the search order; the
        # model names the field only.
        raise Malformed("import_tree.child_indices", -1, "import cycle")
    modules = []
    seen_lib = False
    for _ in range(num_modules):
        at = r.pos
        kind = r.span("kind")
        if not kind:
            raise Malformed("kind", at, "empty module kind")
        if kind == LIB_KIND:
            if seen_lib:
                raise Malformed("kind", at, "duplicate _lib")
            seen_lib = True
            modules.append(Module(kind, None))
        else:
            modules.append(Module(kind, r.span("payload")))
    if r.pos != r.end:
        raise Malformed("entries", r.pos, "trailing bytes")
    return Tree(tuple(modules), imports)


def accepts(blob: bytes, size: Optional[int] = None) -> bool:
    try:
        parse(blob, size)
    except Malformed:
        return False
    return True
