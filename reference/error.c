#include "tffi_error.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "object.h"

/* One error object per thread, owned by the slot until moved out. */
static _Thread_local TVMFFIObject* tffi_raised;

/*
 * An error nobody retrieved must not outlive its thread. The first raise on
 * a thread points a pthread key at the thread's slot; the key's destructor
 * releases whatever the slot still holds when the thread exits. The flag
 * keeps later raises on that thread down to one load and one branch.
 */
static _Thread_local int tffi_raised_armed;
static pthread_key_t tffi_raised_key;
static pthread_once_t tffi_raised_key_once = PTHREAD_ONCE_INIT;
static int tffi_raised_key_ok;

static void tffi_raised_at_thread_exit(void* slot) {
  TVMFFIObject** raised = slot;
  TVMFFIObject* err = *raised;
  *raised = NULL;
  /* A deleter below may raise again; let that raise re-arm the key, which
   * POSIX then runs again. */
  tffi_raised_armed = 0;
  if (err) tffi_decref(err);
}

static void tffi_raised_key_create(void) {
  tffi_raised_key_ok = pthread_key_create(&tffi_raised_key, tffi_raised_at_thread_exit) == 0;
}

static void tffi_raised_arm(void) {
  pthread_once(&tffi_raised_key_once, tffi_raised_key_create);
  /* Without a key (key space exhausted) the error is released when the next
   * one replaces it or it is moved out, as before. */
  if (tffi_raised_key_ok && pthread_setspecific(tffi_raised_key, &tffi_raised) == 0)
    tffi_raised_armed = 1;
}

/*
 * Error objects are one allocation: header, cell, then kind and message
 * bytes (NUL-terminated for C callers). The backtrace can be replaced or
 * appended to later, so it lives in its own buffer.
 */
typedef struct {
  TVMFFIObject header;
  TVMFFIErrorCell cell;
  char* backtrace_buf;
} TffiError;

static const char tffi_empty[1] = "";

static void tffi_error_delete(void* self, int flags) {
  TffiError* err = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (err->cell.cause_chain) tffi_decref(err->cell.cause_chain);
    if (err->cell.extra_context) tffi_decref(err->cell.extra_context);
    tffi_free(err->backtrace_buf);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

static void tffi_error_update_backtrace(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                                        int32_t update_mode) {
  TffiError* err = self;
  if (backtrace == NULL) return;
  /* Any mode but Replace appends, as upstream reads it. */
  size_t keep = update_mode == kTVMFFIBacktraceUpdateModeReplace ? 0 : err->cell.backtrace.size;
  /* Sizes no allocation can hold are refused before malloc sees them (as
   * in tffi_error_new). keep is the size of a backtrace this function
   * allocated, so below PTRDIFF_MAX: the sum below cannot overflow. */
  if (backtrace->size > SIZE_MAX / 4) return;
  char* buf = tffi_malloc(keep + backtrace->size + 1);
  if (buf == NULL) return; /* the old backtrace stays: better than none */
  if (keep) memcpy(buf, err->cell.backtrace.data, keep);
  if (backtrace->size) memcpy(buf + keep, backtrace->data, backtrace->size);
  buf[keep + backtrace->size] = '\0';
  tffi_free(err->backtrace_buf);
  err->backtrace_buf = buf;
  err->cell.backtrace.data = buf;
  err->cell.backtrace.size = keep + backtrace->size;
}

static size_t tffi_len(const TVMFFIByteArray* bytes) { return bytes ? bytes->size : 0; }

/* Copies bytes to `at`. The object's storage comes zeroed
 * (tffi_object_init), so the byte after them is already the NUL C callers
 * rely on. */
static char* tffi_put(char* at, const TVMFFIByteArray* bytes, TVMFFIByteArray* out) {
  size_t n = tffi_len(bytes);
  if (n) memcpy(at, bytes->data, n);
  out->data = at;
  out->size = n;
  return at + n + 1;
}

TVMFFIObject* tffi_error_new(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                             const TVMFFIByteArray* backtrace, TVMFFIObjectHandle cause_chain,
                             TVMFFIObjectHandle extra_context) {
  size_t nkind = tffi_len(kind), nmsg = tffi_len(message);
  if (nkind > SIZE_MAX / 4 || nmsg > SIZE_MAX / 4) return NULL;
  /* Through the object allocator (a custom one included); quiet because an
   * error is being raised already. */
  TffiError* err = tffi_object_alloc_quiet(sizeof(TffiError) + nkind + nmsg + 2, kTVMFFIError,
                                           tffi_error_delete);
  if (err == NULL) return NULL;
  char* at = (char*)(err + 1);
  at = tffi_put(at, kind, &err->cell.kind);
  tffi_put(at, message, &err->cell.message);
  err->cell.backtrace.data = tffi_empty;
  err->cell.update_backtrace = tffi_error_update_backtrace;
  if (tffi_len(backtrace)) {
    tffi_error_update_backtrace(err, backtrace, kTVMFFIBacktraceUpdateModeReplace);
    if (err->backtrace_buf == NULL) {
      tffi_object_free(err);
      return NULL;
    }
  }
  if (cause_chain) tffi_incref(cause_chain);
  if (extra_context) tffi_incref(extra_context);
  err->cell.cause_chain = cause_chain;
  err->cell.extra_context = extra_context;
  return &err->header;
}

/* The preallocated error below is shared by every thread, so it keeps the
 * backtrace it has: a caller adding to it would write into another
 * thread's error. */
static void tffi_oom_update_backtrace(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                                      int32_t update_mode) {
  (void)self, (void)backtrace, (void)update_mode;
}

/* Raised when not even an error object can be allocated. Its reference count
 * starts so high that no sequence of releases brings it to zero. */
static TffiError tffi_oom_error = {
    .header = {.combined_ref_count = TFFI_REF_WEAK_ONE | 0x40000000u, .type_index = kTVMFFIError},
    .cell = {.kind = {"MemoryError", 11},
             .message = {"out of memory while raising an error", 36},
             .backtrace = {tffi_empty, 0},
             .update_backtrace = tffi_oom_update_backtrace},
};

void tffi_set_raised(TVMFFIObject* error) {
  if (__builtin_expect(!tffi_raised_armed, 0)) tffi_raised_arm();
  TVMFFIObject* old = tffi_raised;
  tffi_raised = error;
  if (old) tffi_decref(old);
}

/* Raises the preallocated MemoryError: nothing is left to make another. */
static void tffi_raise_preallocated_oom(void) {
  tffi_incref(&tffi_oom_error.header);
  tffi_set_raised(&tffi_oom_error.header);
}

static void tffi_raise_bytes(const char* kind, const char* msg, size_t nmsg) {
  TVMFFIByteArray k = {kind, strlen(kind)}, m = {msg, nmsg};
  TVMFFIObject* err = tffi_error_new(&k, &m, NULL, NULL, NULL);
  if (err == NULL) {
    tffi_raise_preallocated_oom();
    return;
  }
  tffi_set_raised(err);
}

/* Messages quote input of any length, so they are formatted into a heap
 * buffer sized by a first pass. */
int tffi_raise(const char* kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  size_t size = (size_t)n + 1;
  char* msg = n < 0 ? NULL : tffi_malloc(size);
  if (msg == NULL) {
    tffi_raise_preallocated_oom();
    return -1;
  }
  va_start(ap, fmt);
  vsnprintf(msg, size, fmt, ap);
  va_end(ap);
  tffi_raise_bytes(kind, msg, size - 1);
  tffi_free(msg);
  return -1;
}

/* The size stays out of the message: no caller can check it, and a
 * message that cannot be checked is one a broken runtime can get wrong
 * unnoticed. */
int tffi_raise_oom(size_t size) {
  (void)size;
  return tffi_raise(TFFI_MEMORY_ERROR, "out of memory");
}

void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  const char* k = kind ? kind : "";
  const char* m = message ? message : "";
  tffi_raise_bytes(k, m, strlen(m));
}

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts,
                                       int32_t num_parts) {
  if (message_parts == NULL) num_parts = 0; /* nothing to read: an empty message */
  size_t total = 0;
  for (int32_t i = 0; i < num_parts; ++i)
    if (message_parts[i]) total += strlen(message_parts[i]);
  char* msg = tffi_malloc(total + 1);
  if (msg == NULL) {
    tffi_raise(TFFI_MEMORY_ERROR,
               "TVMFFIErrorSetRaisedFromCStrParts: out of memory for the message");
    return;
  }
  size_t at = 0;
  for (int32_t i = 0; i < num_parts; ++i) {
    if (message_parts[i] == NULL) continue;
    size_t n = strlen(message_parts[i]);
    memcpy(msg + at, message_parts[i], n);
    at += n;
  }
  tffi_raise_bytes(kind ? kind : "", msg, at);
  tffi_free(msg);
}

void TVMFFIErrorSetRaised(TVMFFIObjectHandle error) {
  /* The slot keeps its own reference; the caller keeps theirs. */
  if (error) tffi_incref(error);
  tffi_set_raised(error);
}

void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result) {
  *result = tffi_raised;
  tffi_raised = NULL;
}

int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                      const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out) {
  return TVMFFIErrorCreateWithCauseAndExtraContext(kind, message, backtrace, NULL, NULL, out);
}

int TVMFFIErrorCreateWithCauseAndExtraContext(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace,
    TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIErrorCreate: out is NULL");
  *out = tffi_error_new(kind, message, backtrace, cause_chain, extra_context);
  if (*out == NULL) return -1; /* upstream signals OOM here with -1 and nothing raised */
  return 0;
}
