/* TVMFFIBacktrace: the reference runtime does not walk the stack; it
 * reports the one frame the caller names, in the Python-style line that
 * upstream uses, so tools that parse backtraces find what they expect. */
#include <pthread.h>
#include <stdio.h>

#include <tvm/ffi/c_api.h>

#include "mem.h"

#define TFFI_BACKTRACE_FORMAT "  File \"%s\", line %d, in %s\n"

/* Per thread, like upstream: the result stays valid until the same thread
 * calls again, and threads never see each other's text. The text lives in
 * a buffer that grows to the longest line asked for; a pthread key gives
 * it back when the thread exits. */
static _Thread_local char* tffi_backtrace_text;
static _Thread_local size_t tffi_backtrace_cap;
static _Thread_local TVMFFIByteArray tffi_backtrace_bytes;
static pthread_key_t tffi_backtrace_key;
static pthread_once_t tffi_backtrace_once = PTHREAD_ONCE_INIT;

static void tffi_backtrace_release(void* text) {
  tffi_free(text);
  tffi_backtrace_text = NULL; /* a later call on this thread starts over */
  tffi_backtrace_cap = 0;
}

static void tffi_backtrace_key_create(void) {
  (void)pthread_key_create(&tffi_backtrace_key, tffi_backtrace_release);
}

/* Room for `need` bytes of text: 0, or -1 with the old buffer kept. */
static int tffi_backtrace_reserve(size_t need) {
  if (need <= tffi_backtrace_cap) return 0;
  char* text = tffi_realloc(tffi_backtrace_text, need);
  if (text == NULL) return -1;
  pthread_once(&tffi_backtrace_once, tffi_backtrace_key_create);
  (void)pthread_setspecific(tffi_backtrace_key, text);
  tffi_backtrace_text = text;
  tffi_backtrace_cap = need;
  return 0;
}

const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno, const char* func,
                                       int cross_ffi_boundary) {
  (void)cross_ffi_boundary; /* only one frame is ever reported */
  /* Without a frame, or without memory for it: an empty text. */
  tffi_backtrace_bytes.data = "";
  tffi_backtrace_bytes.size = 0;
  if (filename == NULL || func == NULL) return &tffi_backtrace_bytes;
  int n = snprintf(NULL, 0, TFFI_BACKTRACE_FORMAT, filename, lineno, func);
  size_t size = (size_t)n + 1;
  if (n < 0 || tffi_backtrace_reserve(size) != 0) return &tffi_backtrace_bytes;
  snprintf(tffi_backtrace_text, size, TFFI_BACKTRACE_FORMAT, filename, lineno, func);
  tffi_backtrace_bytes.data = tffi_backtrace_text;
  tffi_backtrace_bytes.size = size - 1;
  return &tffi_backtrace_bytes;
}
