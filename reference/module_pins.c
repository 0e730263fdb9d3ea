/* ffi.ModuleGlobalsAdd / ffi.ModuleGlobalsRemove: modules a host pins for
 * the life of the process (each pinned once, holding one reference). */
#include <pthread.h>

#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "mem.h"
#include "object.h"
#include "vec.h"

static pthread_mutex_t tffi_pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  TVMFFIObject** items;
  size_t n, cap;
} tffi_pinned;

static int tffi_pin_arg(const char* fn, const TVMFFIAny* args, int32_t n, TVMFFIObject** mod) {
  if (tffi_args_count(fn, n, 1) != 0) return -1;
  return tffi_args_object(fn, args, 0, "mod", kTVMFFIModule, "ffi.Module", mod);
}

static int tffi_pin(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* mod = NULL;
  if (tffi_pin_arg(fn, args, n, &mod) != 0) return -1;
  int rc = 0;
  pthread_mutex_lock(&tffi_pinned_lock);
  size_t i = 0;
  while (i < tffi_pinned.n && tffi_pinned.items[i] != mod) ++i;
  if (i == tffi_pinned.n) {
    if (TFFI_VEC_PUSH(&tffi_pinned, mod) == 0)
      tffi_incref(mod);
    else
      rc = tffi_raise_oom((tffi_pinned.n + 1) * sizeof mod);
  }
  pthread_mutex_unlock(&tffi_pinned_lock);
  return rc;
}

static int tffi_unpin(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* mod = NULL;
  if (tffi_pin_arg(fn, args, n, &mod) != 0) return -1;
  TVMFFIObject* dropped = NULL;
  pthread_mutex_lock(&tffi_pinned_lock);
  for (size_t i = 0; i < tffi_pinned.n && dropped == NULL; ++i) {
    if (tffi_pinned.items[i] != mod) continue;
    dropped = mod;
    tffi_pinned.items[i] = tffi_pinned.items[--tffi_pinned.n];
  }
  pthread_mutex_unlock(&tffi_pinned_lock);
  if (dropped) tffi_decref(dropped); /* outside the lock: may unload a library */
  return 0;
}

__attribute__((constructor)) static void tffi_register_module_pins(void) {
  tffi_builtin_register("ffi.ModuleGlobalsAdd", tffi_pin);
  tffi_builtin_register("ffi.ModuleGlobalsRemove", tffi_unpin);
}
