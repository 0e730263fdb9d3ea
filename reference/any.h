/* Ownership of TVMFFIAny values in the reference runtime. */
#ifndef TFFI_ANY_H_
#define TFFI_ANY_H_

#include <tvm/ffi/c_api.h>

/* Releases what an owned value holds (the reference of an object) and
 * leaves it None with all 16 bytes zero. */
void tffi_any_release(TVMFFIAny* value);

/*
 * Turns the borrowed view `view` into an owned value in *out, exactly as
 * TVMFFIAnyViewToOwnedAny: inline values are copied, objects gain a strong
 * reference, raw C strings and byte-array pointers become String/Bytes,
 * and an rvalue reference moves its object out (clearing the source slot).
 * Returns 0, or -1 with the error raised (then *out is None).
 */
int tffi_any_copy_owned(const TVMFFIAny* view, TVMFFIAny* out);

/* A None value with every byte zero. */
static inline TVMFFIAny tffi_any_none(void) {
  TVMFFIAny none = {0};
  return none;
}

/* An owned value holding `obj` (taking over its reference); None when
 * `obj` is NULL. */
static inline TVMFFIAny tffi_any_object(TVMFFIObject* obj) {
  TVMFFIAny out = {0};
  if (obj != NULL) {
    out.type_index = obj->type_index;
    out.v_obj = obj;
  }
  return out;
}

#endif
