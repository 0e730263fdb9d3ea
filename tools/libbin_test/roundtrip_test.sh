#!/bin/bash
# libbin round trip: pack a description, dump it (from the raw blob and from
# a shared library built from the generated C), validate it, and check that
# damaged blobs are refused with an offset and a field.
set -u
LIBBIN=$1 DESC=$2 WANT_DUMP=$3 SO=$4 PYTHON=${5:-python3}
T=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "FAIL: $*"; exit 1; }

"$LIBBIN" pack "$DESC" -o "$T/blob.bin" -c "$T/blob.c" > "$T/pack.txt" || fail "pack exited $?"
# It says what it wrote.
grep -q "^libbin: packed 3 modules from $DESC ([0-9]* bytes): wrote $T/blob.bin, $T/blob.c\$" "$T/pack.txt" ||
  fail "pack's confirmation: $(cat "$T/pack.txt")"
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
grep -q "^libbin: $T/cycle.desc: " "$T/err3.txt" || fail "the cycle report names no file: $(cat "$T/err3.txt")"

# A line that is no description at all (a passwd entry) is refused, naming
# the file and the line, and nothing is written.
printf '# users\n_lib imports=1\nroot:x:0:0:root:/root:/bin/bash\n' > "$T/passwd.desc"
"$LIBBIN" pack "$T/passwd.desc" -o "$T/passwd.bin" 2> "$T/err4.txt"; rc=$?
[ $rc = 1 ] || fail "pack of a passwd line exited $rc, want 1"
grep -q "^libbin: $T/passwd.desc:3: \`root:x:0:0:root:/root:/bin/bash\` is not a module kind" "$T/err4.txt" ||
  fail "passwd report: $(cat "$T/err4.txt")"
[ ! -e "$T/passwd.bin" ] || fail "pack wrote a blob for a refused description"
printf '_lib imports=1\n\nk bogus=1\n' > "$T/option.desc"
"$LIBBIN" pack "$T/option.desc" -o "$T/option.bin" 2> "$T/err5.txt"
grep -q "^libbin: $T/option.desc:3: unknown option" "$T/err5.txt" || fail "option report: $(cat "$T/err5.txt")"
"$LIBBIN" pack -q "$DESC" -o "$T/quiet.bin" > "$T/quiet.txt" || fail "pack -q exited $?"
[ ! -s "$T/quiet.txt" ] || fail "pack -q printed: $(cat "$T/quiet.txt")"

# A text file is not an ELF file: read as a raw blob, and said so.
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$T/passwd"
"$LIBBIN" dump "$T/passwd" 2> "$T/err6.txt"; rc=$?
[ $rc = 1 ] || fail "dump of a text file exited $rc, want 1"
grep -q "^libbin: $T/passwd: not an ELF file; read as a raw blob: invalid: offset 0: field nbytes" "$T/err6.txt" ||
  fail "text file report: $(cat "$T/err6.txt")"
echo PASS
