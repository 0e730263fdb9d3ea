/* TVMFFIBacktrace: the reference runtime does not walk the stack; it
 * reports the one frame the caller names, in the Python-style line that
 * upstream uses, so tools that parse backtraces find what they expect. */
#include <stdio.h>

#include "error.h"

/* Per thread, like upstream: the result stays valid until the same thread
 * calls again, and threads never see each other's text. Fixed storage means
 * nothing to release at thread exit; overlong names are cut at its end. */
#define TFFI_BACKTRACE_MAX 1024
static _Thread_local char tffi_backtrace_text[TFFI_BACKTRACE_MAX];
static _Thread_local TVMFFIByteArray tffi_backtrace_bytes;

const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno, const char* func,
                                       int cross_ffi_boundary) {
  (void)cross_ffi_boundary; /* only one frame is ever reported */
  size_t n = 0;
  if (filename != NULL && func != NULL) {
    int w = snprintf(tffi_backtrace_text, sizeof tffi_backtrace_text,
                     "  File \"%s\", line %d, in %s\n", filename, lineno, func);
    if (w > 0)
      n = (size_t)w < sizeof tffi_backtrace_text ? (size_t)w : sizeof tffi_backtrace_text - 1;
  }
  tffi_backtrace_text[n] = '\0';
  tffi_backtrace_bytes.data = tffi_backtrace_text;
  tffi_backtrace_bytes.size = n;
  return &tffi_backtrace_bytes;
}
