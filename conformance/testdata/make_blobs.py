#!/usr/bin/env python3
"""Writes the library_bin blobs of conformance/testdata/ (committed; rerun
only to change them). Each is loaded through testlibs/libmod_blob_env.so,
whose 512-byte `__tvm_ffi__library_bin` is filled from the file; bytes of
the file past 8 + nbytes are padding. Offsets in the comments are where the
reference reports the fault (library_bin_test.c checks them)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def u64(v):
    return struct.pack('<Q', v)


def vec(items):
    return u64(len(items)) + b''.join(u64(i) for i in items)


def s(data):
    data = data.encode() if isinstance(data, str) else data
    return u64(len(data)) + data


def blob(body, nbytes=None):
    return u64(len(body) if nbytes is None else nbytes) + body


# A well-formed body (_lib imports a testkind module with payload "xy") for
# the truncations: indptr at 8, child_indices at 40, the kinds at 56 and 68,
# the payload's length at 84.
TRUNCATABLE = vec([0, 1, 1]) + vec([1]) + s('_lib') + s('testkind') + s('xy')

BLOBS = {
    # valid: the library imports a custom module whose payload is empty
    'empty_payload.bin': blob(vec([0, 1, 1]) + vec([1]) + s('_lib') + s('testkind') + s(b'')),
    # valid: only the library, then non-zero padding past nbytes
    'padded.bin': blob(vec([0, 0]) + vec([]) + s('_lib')) + b'\xee' * 40,
    # offset 8: the indptr vector is empty
    'empty_indptr.bin': blob(vec([]) + vec([])),
    # offset 8: indptr [0] describes zero modules
    'zero_modules.bin': blob(vec([0]) + vec([])),
    # offset 16: indptr starts at 1
    'indptr_nonzero_start.bin': blob(vec([1, 1]) + vec([0]) + s('_lib')),
    # offset 32: indptr goes 0, 1, 0
    'indptr_decreasing.bin':
        blob(vec([0, 1, 0]) + vec([1]) + s('_lib') + s('testkind') + s('x')),
    # offset 32: indptr goes 0, 2, 1, 2: it decreases before its last
    # element, which matches the 2 child indices
    'indptr_decreasing_inner.bin':
        blob(vec([0, 2, 1, 2]) + vec([1, 2]) + s('_lib') + s('testkind') + s('x') +
             s('testkind') + s('y')),
    # offset 32: indptr ends at 4 but there is 1 child index
    'indptr_past_children.bin':
        blob(vec([0, 4, 4]) + vec([1]) + s('_lib') + s('testkind') + s('x')),
    # offset 40: child index 7 of 1 module
    'child_out_of_range.bin': blob(vec([0, 1]) + vec([7]) + s('_lib')),
    # offset 72: 0 -> 1 -> 2 -> 1
    'import_cycle.bin': blob(vec([0, 1, 2, 3]) + vec([1, 2, 1]) + s('_lib') + s('testkind') +
                             s('a') + s('testkind') + s('b')),
    # offset 40: a kind of 2^40 bytes
    'huge_string.bin': blob(vec([0, 0]) + vec([]) + u64(1 << 40) + b'_lib'),
    # offset 8: an indptr of 2^40 elements
    'huge_vector.bin': blob(u64(1 << 40) + u64(0) * 4),
    # offset 0: nbytes 2000 in a 512-byte symbol; the kind claims 1000 bytes,
    # so a parser trusting nbytes reads past the end of the symbol
    'nbytes_past_symbol.bin': blob(vec([0, 0]) + vec([]) + u64(1000) + b'kind', nbytes=2000),
    # offset 52: 8 bytes inside nbytes after the last entry
    'trailing_bytes.bin': blob(vec([0, 0]) + vec([]) + s('_lib') + u64(0)),
    # offset 60: a second _lib
    'duplicate_lib.bin': blob(vec([0, 0, 0]) + vec([]) + s('_lib') + s('_lib')),
    # offset 40: an empty kind
    'empty_kind.bin': blob(vec([0, 0]) + vec([]) + s('') + s('x')),
    # offset 8: nbytes 20 ends inside the indptr vector
    'truncated.bin': blob(vec([0, 1, 1]) + vec([1]) + s('_lib') + s('testkind') + s('x'),
                          nbytes=20),
    # offset 32: nbytes ends right after indptr, before child_indices
    'truncated_after_indptr.bin': blob(vec([0, 0])),
    # offset 40: nbytes ends inside the child_indices elements
    'truncated_children.bin': blob(TRUNCATABLE, nbytes=44),
    # offset 56: nbytes ends inside the first kind's length
    'truncated_kind_length.bin': blob(TRUNCATABLE, nbytes=52),
    # offset 56: nbytes ends inside the first kind's bytes
    'truncated_kind.bin': blob(TRUNCATABLE, nbytes=58),
    # offset 84: nbytes ends inside the payload's length
    'truncated_payload_length.bin': blob(TRUNCATABLE, nbytes=80),
    # offset 84: nbytes ends inside the payload's bytes
    'truncated_payload.bin': blob(TRUNCATABLE, nbytes=85),
    # offset 48: the second child index (7) of 1 module
    'child_out_of_range_second.bin': blob(vec([0, 2]) + vec([0, 7]) + s('_lib')),
    # offset 40: module 0 imports itself
    'self_import.bin': blob(vec([0, 1]) + vec([0]) + s('_lib')),
    # offset 72: 0 -> [1, 2], 2 -> 0, found after module 1 is done
    'import_cycle_late.bin': blob(vec([0, 2, 2, 3]) + vec([1, 2, 0]) + s('_lib') +
                                  s('testkind') + s('a') + s('testkind') + s('b')),
    # offset 64: 1 -> 2 -> 1, not reachable from module 0
    'import_cycle_unreachable.bin': blob(vec([0, 0, 1, 2]) + vec([2, 1]) + s('_lib') +
                                         s('testkind') + s('a') + s('testkind') + s('b')),
    # offset 56: 0 -> [1], 1 -> [1, 1]: the first of module 1's two
    # self-imports closes the cycle (a search that goes on after it finds
    # the second)
    'self_import_twice.bin': blob(vec([0, 1, 3]) + vec([1, 1, 1]) + s('_lib') + s('testkind') +
                                  s('a')),
    # offset 56: a payload of 2^40 bytes
    'huge_payload.bin': blob(vec([0, 0]) + vec([]) + s('testkind') + u64(1 << 40)),
    # offset 32: child_indices of 2^40 elements
    'huge_children.bin': blob(vec([0, 0]) + u64(1 << 40) + u64(0) * 4),
    # offset 32: child_indices claims 2 elements (16 bytes) where 14 are left
    'children_count_past_end.bin': blob(vec([0, 2]) + u64(2) + u64(0) + b'\x00' * 6),
    # offset 40: a kind length with its top bit set (2^63 + 4)
    # offset 16024, for libmod_blob_env_large.so (the long_ blobs): an indptr of 2000 entries
    # (1999 modules without imports), then nbytes ends before the first kind
    'long_indptr_truncated.bin': blob(vec([0] * 2000) + vec([])),
    'huge_string_high_bit.bin': blob(vec([0, 0]) + vec([]) + u64((1 << 63) | 4) + b'_lib'),
    # offset 56: nbytes leaves 7 bytes of the first kind's length
    'truncated_kind_length_7.bin': blob(TRUNCATABLE, nbytes=55),
    # offset 40: child index 1 of 1 module (one past the last)
    'child_index_equal_count.bin': blob(vec([0, 1]) + vec([1]) + s('_lib')),
    # offset 24: indptr ends at 0 but there is 1 child index
    'indptr_short_of_children.bin': blob(vec([0, 0]) + vec([0]) + s('_lib')),
    # valid: _lib imports modules of kinds "_libx" and "_lix": kinds that
    # only start like "_lib" are ordinary kinds with payloads
    'lib_like_kinds.bin': blob(vec([0, 2, 2, 2]) + vec([1, 2]) + s('_lib') + s('_libx') +
                               s('p1') + s('_lix') + s('p2')),
    # valid: module 1 is imported by the root and by module 3 (0 -> [1, 3],
    # 1 -> [2], 3 -> [1]); a search that leaves modules marked as on its
    # path when it moves on takes module 3's import for a cycle
    'shared_import.bin': blob(vec([0, 2, 3, 3, 4]) + vec([1, 3, 2, 1]) + s('_lib') +
                              s('testkind') + s('a') + s('testkind') + s('b') + s('testkind') +
                              s('c')),
    # offset 80: 0 -> 1 -> 2 -> 1, and module 3 imports module 1 too; the
    # search stops at the first cycle
    'import_cycle_then_shared.bin': blob(vec([0, 1, 2, 3, 4]) + vec([1, 2, 1, 1]) + s('_lib') +
                                         s('testkind') + s('a') + s('testkind') + s('b') +
                                         s('testkind') + s('c')),
    # valid, for libmod_blob_env_large.so: 64 modules sharing imports along
    # exponentially many paths. _lib imports module 63; module k imports
    # k - 1 and k - 2 (module 2 imports 1, module 1 nothing), so a walk
    # that revisits shared modules takes about 2^44 steps, from the root
    # or from the modules in index order.
    'long_shared_imports.bin': blob(vec([0, 1, 1] + [2 + 2 * (k - 3) for k in range(3, 65)]) +
                                    vec([63, 1] + [i for k in range(3, 64) for i in (k - 1, k - 2)]) +
                                    s('_lib') + b''.join(s('dagkind') + s('x') for _ in range(63))),
}

if __name__ == '__main__':
    for name, data in BLOBS.items():
        assert len(data) <= (32768 if name.startswith('long_') else 512), name
        with open(os.path.join(HERE, name), 'wb') as f:
            f.write(data)
