#!/usr/bin/env bash
# Writes the seed corpus of //fuzz:certify_elf: small real shared libraries
# (about 2 KB each: stripped, 16-byte page alignment, no start files) with
# the features certify's static stage reads. Run from the repository root;
# the seeds are committed, so this runs only when they should change.
set -euo pipefail
out=fuzz/corpus/certify_elf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=(-Ireference/include "-I$(python3 -c 'import tvm_ffi,os;print(os.path.dirname(tvm_ffi.__file__))')/include")
small=(-shared -fPIC -Os -fvisibility=hidden -nostartfiles -s "-Wl,-z,max-page-size=16" "-Wl,-z,noseparate-code")
gcc -shared -fPIC -Wl,-soname,libcert_absent.so -o "$tmp/libcert_absent.so" tools/certify/testdata/absent.c
mkdir -p "$out"
for name in data_export reserved bad_bin; do
  gcc "${small[@]}" "${inc[@]}" -o "$out/$name.so" "tools/certify/testdata/$name.c"
done
gcc "${small[@]}" "${inc[@]}" -o "$out/needs_absent.so" tools/certify/testdata/needs_absent.c \
  -L"$tmp" -lcert_absent -Wl,-rpath,\$ORIGIN/../lib
gcc "${small[@]}" -o "$out/cuda_like.so" fuzz/gen/certify_elf/cuda_like.c \
  -L/usr/local/cuda/lib64 -lcudart -Wl,--disable-new-dtags -Wl,-rpath,/usr/local/cuda/lib64
gcc "${small[@]}" -o "$out/lib_bin.so" fuzz/gen/certify_elf/lib_bin.c
gcc "${small[@]}" "${inc[@]}" -Ikernels/.. -o "$out/scale_cpu.so" kernels/scale_cpu.c
# Without section headers (e_shoff, e_shnum, e_shstrndx zeroed): certify
# then reads PT_DYNAMIC as ld.so does.
for name in scale_cpu cuda_like; do
  python3 - "$out/$name.so" "$out/noshdr_$name.so" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[0x28:0x30] = bytes(8)
b[0x3c:0x40] = bytes(4)
open(sys.argv[2], "wb").write(b)
PY
done
ls -l "$out"
