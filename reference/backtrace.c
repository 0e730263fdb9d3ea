/* TVMFFIBacktrace: the frame the caller names, then the frames that called
 * it, walked from the machine stack, as upstream's runtime reports them
 * (Python-style lines, innermost first):
 *
 *   File "<file>", line <n>, in <function>
 *
 * The walk names a frame by its symbol in the dynamic symbol table (C++
 * names demangled when the process has libstdc++'s demangler), so frames
 * of functions no library exports are left out, as are the runtime's and
 * the C++ headers' own calling machinery; with no debug information a
 * walked frame's file is "<unknown>" and its line 0. Without
 * cross_ffi_boundary the walk stops at the FFI boundary: the
 * TVMFFIFunctionCall that called in, or the Python interpreter. */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvm/ffi/c_api.h>

#include "mem.h"

#define TFFI_BACKTRACE_FORMAT "  File \"%s\", line %d, in %s\n"
#define TFFI_BACKTRACE_DEPTH 128 /* frames read from the stack */

/* Per thread, like upstream: the result stays valid until the same thread
 * calls again, and threads never see each other's text. The text lives in
 * a buffer that grows to the longest text asked for; a pthread key gives
 * it back when the thread exits. */
static _Thread_local char* tffi_backtrace_text;
static _Thread_local size_t tffi_backtrace_cap;
static _Thread_local size_t tffi_backtrace_len;
static _Thread_local int tffi_backtrace_failed;
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
  size_t cap = need > 2 * tffi_backtrace_cap ? need : 2 * tffi_backtrace_cap;
  char* text = tffi_realloc(tffi_backtrace_text, cap);
  if (text == NULL) return -1;
  pthread_once(&tffi_backtrace_once, tffi_backtrace_key_create);
  (void)pthread_setspecific(tffi_backtrace_key, text);
  tffi_backtrace_text = text;
  tffi_backtrace_cap = cap;
  return 0;
}

/* Appends one line; a line that finds no memory ends the text there. */
static void tffi_backtrace_line(const char* file, int line, const char* func) {
  if (tffi_backtrace_failed) return;
  int n = snprintf(NULL, 0, TFFI_BACKTRACE_FORMAT, file, line, func);
  size_t need = tffi_backtrace_len + (size_t)n + 1;
  if (n < 0 || tffi_backtrace_reserve(need) != 0) {
    tffi_backtrace_failed = 1;
    return;
  }
  snprintf(tffi_backtrace_text + tffi_backtrace_len, (size_t)n + 1, TFFI_BACKTRACE_FORMAT, file,
           line, func);
  tffi_backtrace_len += (size_t)n;
}

static int tffi_prefix(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Frames of the calling machinery, left out (upstream's list, and the
 * mangled spelling of its C++ names for when nothing demangles). */
static int tffi_frame_hidden(const char* sym) {
  static const char* const hidden[] = {"tvm::ffi::Function",
                                       "tvm::ffi::detail::",
                                       "TVMFFIBacktrace",
                                       "TVMFFIErrorSetRaisedFromCStr",
                                       "__libc_",
                                       "ffi_call_",
                                       "_ZN3tvm3ffi8Function",
                                       "_ZNK3tvm3ffi8Function",
                                       "_ZN3tvm3ffi6detail",
                                       "_ZNK3tvm3ffi6detail"};
  for (size_t i = 0; i < sizeof hidden / sizeof *hidden; ++i)
    if (tffi_prefix(sym, hidden[i])) return 1;
  return 0;
}

/* Where calls came in from the other side of the FFI. */
static int tffi_frame_boundary(const char* sym) {
  return tffi_prefix(sym, "TVMFFIFunctionCall") || tffi_prefix(sym, "slot_tp_call") ||
         tffi_prefix(sym, "object_is_not_callable") || tffi_prefix(sym, "_Py") ||
         tffi_prefix(sym, "PyObject");
}

typedef char* (*TffiDemangle)(const char* name, char* buf, size_t* len, int* status);

/* The walked frames above this function's caller's caller (`skip` more
 * frames past TVMFFIBacktrace itself), each named line appended. */
static void tffi_backtrace_walk(int skip, int stop_at_boundary) {
  void* pcs[TFFI_BACKTRACE_DEPTH];
  int n = backtrace(pcs, TFFI_BACKTRACE_DEPTH), start = n;
  TffiDemangle demangle = (TffiDemangle)dlsym(RTLD_DEFAULT, "__cxa_demangle");
  for (int i = 0; i < n && start == n; ++i) {
    Dl_info info;
    if (dladdr(pcs[i], &info) && info.dli_saddr == (void*)TVMFFIBacktrace) start = i + 1 + skip;
  }
  for (int i = start; i < n && !tffi_backtrace_failed; ++i) {
    Dl_info info;
    /* A return address is one past its call: look up the call itself. */
    if (!dladdr((char*)pcs[i] - 1, &info) || info.dli_sname == NULL) continue;
    int status = -1;
    char* plain = demangle ? demangle(info.dli_sname, NULL, NULL, &status) : NULL;
    const char* sym = status == 0 && plain ? plain : info.dli_sname;
    int stop = stop_at_boundary && tffi_frame_boundary(sym);
    if (!stop && !tffi_frame_hidden(sym)) tffi_backtrace_line("<unknown>", 0, sym);
    free(plain); /* the demangler's own malloc */
    if (stop) break;
  }
}

const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno, const char* func,
                                       int cross_ffi_boundary) {
  tffi_backtrace_len = 0;
  tffi_backtrace_failed = 0;
  int named = filename != NULL && func != NULL;
  if (named) tffi_backtrace_line(filename, lineno, func);
  tffi_backtrace_walk(named, cross_ffi_boundary == 0);
  /* Without memory for even a line: an empty text. */
  tffi_backtrace_bytes.data = tffi_backtrace_len ? tffi_backtrace_text : "";
  tffi_backtrace_bytes.size = tffi_backtrace_len;
  return &tffi_backtrace_bytes;
}
