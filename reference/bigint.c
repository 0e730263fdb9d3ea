/* Arbitrary-precision integers: TVMFFIBigIntFromByteArray and
 * TVMFFIBigIntGetContentByteArray. A value that fits in int64 is always an
 * inline int; a larger one is an ffi.BigInt object laid out as the header,
 * the word count (size_t), then the words (int64, least significant first,
 * native byte order, two's complement) in their shortest form. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "tffi_error.h"
#include "object.h"

typedef struct {
  TVMFFIObject header;
  size_t size;
} TffiBigInt;

int TVMFFIBigIntFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIBigIntFromByteArray", "out");
  *out = tffi_any_none();
  if (input == NULL) return tffi_arg_null("TVMFFIBigIntFromByteArray", "input");
  if (input->size % sizeof(int64_t) != 0)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIBigIntFromByteArray: input->size %zu is not in whole 64-bit words",
                      input->size);
  /* No word limit: any number of redundant sign words still makes a small
   * int (BIG-001), and what is allocated is never more than the words the
   * caller already holds in memory. */
  size_t n = input->size / sizeof(int64_t);
  if (n && input->data == NULL) return tffi_arg_null("TVMFFIBigIntFromByteArray", "input->data");
  /* The shortest form: drop top words that only repeat the sign of the word
   * below them. Words are read through memcpy: the bytes need not be
   * aligned. */
  int64_t top = 0, below = 0;
  size_t keep = n;
  while (keep > 1) {
    memcpy(&top, input->data + (keep - 1) * 8, 8);
    memcpy(&below, input->data + (keep - 2) * 8, 8);
    if (top != (below < 0 ? -1 : 0)) break;
    --keep;
  }
  out->type_index = kTVMFFIInt;
  if (keep <= 1) {
    if (keep) memcpy(&out->v_int64, input->data, 8);
    return 0;
  }
  TffiBigInt* big = tffi_object_alloc(sizeof(TffiBigInt) + keep * sizeof(int64_t), kTVMFFIBigInt,
                                      tffi_object_delete_plain);
  if (big == NULL) {
    *out = tffi_any_none();
    return -1;
  }
  memcpy(big + 1, input->data, keep * sizeof(int64_t));
  big->size = keep;
  out->type_index = kTVMFFIBigInt;
  out->v_obj = &big->header;
  return 0;
}

TVMFFIByteArray TVMFFIBigIntGetContentByteArray(const TVMFFIAny* value) {
  TVMFFIByteArray none = {NULL, 0};
  if (value == NULL) return none;
  if (value->type_index == kTVMFFIInt) {
    TVMFFIByteArray word = {(const char*)&value->v_int64, sizeof(int64_t)};
    return word;
  }
  if (value->type_index != kTVMFFIBigInt || value->v_obj == NULL) return none;
  const TffiBigInt* big = (const TffiBigInt*)value->v_obj;
  TVMFFIByteArray words = {(const char*)(big + 1), big->size * sizeof(int64_t)};
  return words;
}
