/* What maps and the recursive walks need to treat big integers as values:
 * equal big ints are the same map key (`__any_equal__`, `__any_hash__`)
 * and hash alike (`__ffi_hash__`), as upstream's runtime registers them for
 * ffi.BigInt. Every big int is in its shortest form (bigint.c), so equal
 * values have equal words. */
#include <string.h>

#include "any.h"
#include "any_hash.h"
#include "builtin.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "reflect_def.h"
#include "type.h"

static TVMFFIByteArray tffi_words(const TVMFFIAny* v) { return TVMFFIBigIntGetContentByteArray(v); }

static int tffi_is_big(const TVMFFIAny* v) {
  return v->type_index == kTVMFFIBigInt && v->v_obj != NULL;
}

/* (big int) -> int: a hash of its words. Also the `__ffi_hash__` hook,
 * whose second argument (the recursion) a big int does not need. */
static int tffi_big_hash(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  if (num_args < 1 || !tffi_is_big(&args[0]))
    return tffi_raise(TFFI_TYPE_ERROR, "ffi.BigInt hash: expected a big int argument");
  TVMFFIByteArray w = tffi_words(&args[0]);
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)tffi_hash_bytes(w.data, w.size);
  return 0;
}

/* (big int, big int) -> bool: the same value. */
static int tffi_big_equal(void* self, const TVMFFIAny* args, int32_t num_args,
                          TVMFFIAny* result) {
  (void)self;
  if (num_args < 2 || !tffi_is_big(&args[0]) || !tffi_is_big(&args[1]))
    return tffi_raise(TFFI_TYPE_ERROR, "ffi.BigInt equality: expected two big int arguments");
  TVMFFIByteArray a = tffi_words(&args[0]), b = tffi_words(&args[1]);
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
  return 0;
}

static int tffi_big_attr(const char* name, TVMFFISafeCallType call) {
  TVMFFIObject* fn = tffi_function_new(NULL, call, NULL);
  if (fn == NULL) return -1;
  TVMFFIAny value = tffi_any_object(fn);
  int rc = tffi_define_attr(kTVMFFIBigInt, name, &value);
  tffi_decref(fn);
  return rc;
}

static int tffi_bigint_attrs_register(void) {
  if (tffi_big_attr("__any_hash__", tffi_big_hash) || tffi_big_attr("__any_equal__", tffi_big_equal))
    return -1;
  return tffi_big_attr("__ffi_hash__", tffi_big_hash) ? -1 : 0;
}

__attribute__((constructor)) static void tffi_bigint_attrs_at_load(void) {
  tffi_type_on_ready(tffi_bigint_attrs_register);
}
