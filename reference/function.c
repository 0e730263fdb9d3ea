/* Function objects: a C callback with its own `self`, behind the cell that
 * every caller jumps through. */
#include "arg.h"
#include "function.h"

#include "tffi_error.h"
#include "object.h"

/*
 * The cell comes first after the header, as the ABI requires; the callback
 * and its context follow, where only the trampoline looks.
 */
typedef struct {
  TVMFFIObject header;
  TVMFFIFunctionCell cell;
  void* self;
  TVMFFISafeCallType call;
  void (*deleter)(void* self);
} TffiFunction;

/* Swaps the function object for the callback's own context. */
static int tffi_function_trampoline(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  TffiFunction* fn = handle;
  return fn->call(fn->self, args, num_args, result);
}

static void tffi_function_delete(void* obj, int flags) {
  TffiFunction* fn = obj;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && fn->deleter) fn->deleter(fn->self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(fn);
}

TVMFFIObject* tffi_function_new(void* self, TVMFFISafeCallType call, void (*deleter)(void* self)) {
  TffiFunction* fn = tffi_object_alloc(sizeof(TffiFunction), kTVMFFIFunction, tffi_function_delete);
  if (fn == NULL) return NULL;
  fn->self = self;
  fn->call = call;
  fn->deleter = deleter;
  /* Nothing to swap in when there is no context: callers then jump straight
   * into the callback, which receives the function object (as upstream). */
  fn->cell.safe_call = (self == NULL && deleter == NULL) ? call : tffi_function_trampoline;
  fn->cell.cpp_call = NULL;
  return &fn->header;
}

int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void* self),
                         TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIFunctionCreate", "out");
  *out = NULL;
  if (safe_call == NULL) return tffi_arg_null("TVMFFIFunctionCreate", "safe_call");
  *out = tffi_function_new(self, safe_call, deleter);
  return *out ? 0 : -1;
}

/* Out of line: a host that looked up a missing global and called it anyway
 * (upstream's Python package does, with a NULL handle) gets an error. */
__attribute__((noinline, cold)) static int tffi_function_call_null(void) {
  return tffi_arg_null("TVMFFIFunctionCall", "func");
}

/* The hot path: one predicted branch, one load and a tail jump. Beyond NULL
 * the caller vouches for the handle, as with upstream. */
int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                       TVMFFIAny* result) {
  if (__builtin_expect(func == NULL, 0)) return tffi_function_call_null();
  return TVMFFIFunctionGetCellPtr(func)->safe_call(func, args, num_args, result);
}
