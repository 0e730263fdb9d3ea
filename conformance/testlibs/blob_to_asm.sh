#!/bin/sh
# blob_to_asm.sh BLOB OUT.c: OUT.c defines __tvm_ffi__library_bin holding
# BLOB's bytes through top-level assembly, with no .type and no .size, so
# its ELF symbol has size 0 (as hand-written assembly may leave it).
set -e
{
  printf '__asm__(".section .rodata\\n.balign 8\\n.globl __tvm_ffi__library_bin\\n"\n'
  printf '        "__tvm_ffi__library_bin:\\n"\n'
  od -An -v -tu1 "$1" | sed -e 's/^ *//' -e 's/  */,/g' -e '/^$/d' \
    -e 's/^/        ".byte /' -e 's/$/\\n"/'
  printf '        ".previous\\n");\n'
} > "$2"
