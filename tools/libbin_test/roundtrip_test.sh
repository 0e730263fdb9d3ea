#!/bin/bash
# libbin round trip: pack a description, dump it (from the raw blob and from
# a shared library built from the generated C), validate it, and check that
# damaged blobs are refused with an offset and a field.
set -u
LIBBIN=$1 DESC=$2 WANT_DUMP=$3 SO=$4 PYTHON=${5:-python3}
T=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "FAIL: $*"; exit 1; }

"$LIBBIN" pack "$DESC" -o "$T/blob.bin" -c "$T/blob.c" || fail "pack exited $?"
grep -q 'const unsigned char __tvm_ffi__library_bin\[' "$T/blob.c" || fail "C source lacks the symbol"

"$LIBBIN" dump "$T/blob.bin" > "$T/dump.txt" || fail "dump of blob exited $?"
diff -u "$WANT_DUMP" "$T/dump.txt" || fail "dump of blob differs from $WANT_DUMP"

"$LIBBIN" dump "$SO" > "$T/dump_so.txt" || fail "dump of shared library exited $?"
diff -u "$WANT_DUMP" "$T/dump_so.txt" || fail "dump of shared library differs"

out=$("$LIBBIN" validate "$T/blob.bin") || fail "validate exited $? on a packed blob"
[ "$out" = "ok: 3 modules, $(( $(stat -c %s "$T/blob.bin") - 8 )) bytes" ] || fail "validate said: $out"

# Cut the blob short: nbytes now exceeds what is there.
head -c 40 "$T/blob.bin" > "$T/short.bin"
"$LIBBIN" validate "$T/short.bin" 2> "$T/err.txt"; rc=$?
[ $rc = 1 ] || fail "validate of a truncated blob exited $rc, want 1"
grep -q 'offset 0: field nbytes' "$T/err.txt" || fail "truncation report: $(cat "$T/err.txt")"

# One extra byte inside nbytes: trailing bytes after the last entry.
size=$(stat -c %s "$T/blob.bin")
"$PYTHON" - "$T/blob.bin" "$T/trail.bin" <<'PY' || fail "python helper"
import struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', b[:8])[0] + 1
open(sys.argv[2], 'wb').write(struct.pack('<Q', n) + b[8:] + b'\0')
PY
"$LIBBIN" validate "$T/trail.bin" 2> "$T/err2.txt"; rc=$?
[ $rc = 1 ] || fail "validate of trailing bytes exited $rc, want 1"
grep -q "offset $size: field entries" "$T/err2.txt" || fail "trailing report: $(cat "$T/err2.txt")"

# A description with a cycle is refused by pack.
printf '_lib imports=1\nk imports=0\n' > "$T/cycle.desc"
"$LIBBIN" pack "$T/cycle.desc" -o "$T/cycle.bin" 2> "$T/err3.txt"; rc=$?
[ $rc = 1 ] || fail "pack of a cycle exited $rc, want 1"
grep -q 'import cycle' "$T/err3.txt" || fail "cycle report: $(cat "$T/err3.txt")"
echo PASS
