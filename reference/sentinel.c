/* Two process-wide marker objects, "ffi.GetInvalidObject" (a missing value:
 * what a look-up that found nothing returns) and "ffi.GetKwargsObject" (the
 * separator before keyword arguments in a packed call). Each is a plain
 * ffi.Object whose identity is all it carries: every call returns the same
 * one, made on first use and kept for the life of the process. */
#include "sentinel.h"

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "object.h"

static TVMFFIObject* tffi_missing;
static TVMFFIObject* tffi_kwargs;

/* The object in *slot, made on first use; racing threads agree on one. */
static TVMFFIObject* tffi_sentinel(TVMFFIObject** slot) {
  TVMFFIObject* obj = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (obj != NULL) return obj;
  TVMFFIObject* fresh =
      tffi_object_alloc(sizeof(TVMFFIObject), kTVMFFIObject, tffi_object_delete_plain);
  if (fresh == NULL) return NULL;
  TVMFFIObject* expected = NULL;
  if (__atomic_compare_exchange_n(slot, &expected, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fresh;
  tffi_decref(fresh);
  return expected;
}

TVMFFIObject* tffi_missing_object(void) { return tffi_sentinel(&tffi_missing); }

TVMFFIObject* tffi_kwargs_object(void) { return tffi_sentinel(&tffi_kwargs); }

/* Returns the sentinel in *slot as a new reference. */
static int tffi_sentinel_call(const char* fn, TVMFFIObject** slot, int32_t num_args,
                              TVMFFIAny* result) {
  if (tffi_args_count(fn, num_args, 0)) return -1;
  TVMFFIObject* obj = tffi_sentinel(slot);
  if (obj == NULL) return -1;
  tffi_incref(obj);
  *result = tffi_any_object(obj);
  return 0;
}

static int tffi_missing_call(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  (void)args;
  return tffi_sentinel_call(self, &tffi_missing, num_args, result);
}

static int tffi_kwargs_call(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  (void)args;
  return tffi_sentinel_call(self, &tffi_kwargs, num_args, result);
}

__attribute__((constructor)) static void tffi_sentinel_register(void) {
  tffi_builtin_register("ffi.GetInvalidObject", tffi_missing_call);
  tffi_builtin_register("ffi.GetKwargsObject", tffi_kwargs_call);
}
