/* The names the TVM-FFI C ABI gives a library's symbols, written once for
 * every part of certify, and the one prefix test they all use. */
#ifndef CERT_SYMBOL_NAMES_H_
#define CERT_SYMBOL_NAMES_H_

#include <string.h>

#define CERT_EXPORT_PREFIX "__tvm_ffi_"             /* a callable __tvm_ffi_<name> */
#define CERT_RESERVED_PREFIX CERT_EXPORT_PREFIX "_" /* __tvm_ffi__*: the ABI's own names */
#define CERT_METADATA_PREFIX CERT_RESERVED_PREFIX "metadata_" /* __tvm_ffi__metadata_<name> */
#define CERT_DOC_PREFIX CERT_RESERVED_PREFIX "doc_"           /* __tvm_ffi__doc_<name> */
#define CERT_RUNTIME_SONAME "libtvm_ffi.so"

static inline int cert_starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

#endif
