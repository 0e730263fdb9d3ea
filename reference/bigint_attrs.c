/* What maps and the recursive walks need to treat big integers as values:
 * equal big ints are the same map key (`__any_equal__`, `__any_hash__`)
 * and hash alike (`__ffi_hash__`), as upstream's runtime registers them for
 * ffi.BigInt. Every big int is in its shortest form (bigint.c), so equal
 * values have equal words. */
#include <string.h>

#include "any.h"
#include "any_hash.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "reflect_def.h"
#include "type.h"

/* Big int argument #i of a hook, its words in *words. */
static int tffi_big_arg(const char* fn, const TVMFFIAny* args, int32_t i, TVMFFIByteArray* words) {
  TVMFFIObject* big;
  if (tffi_args_object(fn, args, i, "value", kTVMFFIBigInt, "ffi.BigInt", &big)) return -1;
  *words = TVMFFIBigIntGetContentByteArray(&args[i]);
  return 0;
}

/* (big int) -> int: a hash of its words. Also the `__ffi_hash__` hook,
 * whose second argument (the recursion) a big int does not need. */
static int tffi_big_hash(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const char* fn = self;
  TVMFFIByteArray w;
  if (num_args < 1) return tffi_args_count(fn, num_args, 1);
  if (tffi_big_arg(fn, args, 0, &w)) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)tffi_hash_bytes(w.data, w.size);
  return 0;
}

/* (big int, big int) -> bool: the same value. */
static int tffi_big_equal(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const char* fn = self;
  TVMFFIByteArray a, b;
  if (tffi_args_count(fn, num_args, 2) || tffi_big_arg(fn, args, 0, &a) ||
      tffi_big_arg(fn, args, 1, &b))
    return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
  return 0;
}

/* Registers call (its handle the hook's name, for messages) as `name`. */
static int tffi_big_attr(const char* name, const char* label, TVMFFISafeCallType call) {
  TVMFFIObject* fn = tffi_function_new((void*)label, call, NULL);
  if (fn == NULL) return -1;
  TVMFFIAny value = tffi_any_object(fn);
  int rc = tffi_define_attr(kTVMFFIBigInt, name, &value);
  tffi_decref(fn);
  return rc;
}

static int tffi_bigint_attrs_register(void) {
  if (tffi_big_attr("__any_hash__", "ffi.BigInt.__any_hash__", tffi_big_hash) ||
      tffi_big_attr("__any_equal__", "ffi.BigInt.__any_equal__", tffi_big_equal))
    return -1;
  return tffi_big_attr("__ffi_hash__", "ffi.BigInt.__ffi_hash__", tffi_big_hash) ? -1 : 0;
}

__attribute__((constructor)) static void tffi_bigint_attrs_at_load(void) {
  tffi_type_on_ready(tffi_bigint_attrs_register);
}
