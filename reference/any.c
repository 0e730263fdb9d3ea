/* Ownership of TVMFFIAny values: TVMFFIAnyViewToOwnedAny and release. */
#include "any.h"
#include "arg.h"

#include <string.h>

#include "error.h"
#include "object.h"
#include "string.h"

void tffi_any_release(TVMFFIAny* value) {
  if (value->type_index >= kTVMFFIStaticObjectBegin && value->v_obj != NULL)
    tffi_decref(value->v_obj);
  *value = tffi_any_none();
}

/* An rvalue reference is a pointer to the caller's object slot: the object
 * moves out (no count change) and the slot is cleared so it moves once. */
static int tffi_move_rvalue(const TVMFFIAny* view, TVMFFIAny* out) {
  TVMFFIObject** slot = view->v_ptr;
  if (slot == NULL)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIAnyViewToOwnedAny: any_view holds a NULL rvalue reference");
  TVMFFIObject* obj = *slot;
  if (obj == NULL)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIAnyViewToOwnedAny: any_view is an rvalue reference already moved");
  *slot = NULL;
  out->type_index = obj->type_index;
  out->v_obj = obj;
  return 0;
}

/* A C string longer than TFFI_SMALL_STR_MAX bytes, whose first 8 bytes
 * are known not to hold the NUL: measured from there, copied to the heap. */
__attribute__((noinline)) static int tffi_own_long_c_str(const char* s, TVMFFIAny* out) {
  size_t n = TFFI_SMALL_STR_MAX + 1 + strlen(s + TFFI_SMALL_STR_MAX + 1);
  TVMFFIObject* obj = tffi_str_new(kTVMFFIStr, s, n);
  *out = tffi_any_none();
  if (obj == NULL) return -1;
  out->type_index = kTVMFFIStr;
  out->v_obj = obj;
  return 0;
}

/* C strings, the common case: short ones (up to TFFI_SMALL_STR_MAX bytes)
 * are measured and copied in one pass of at most 8 byte reads, which stops
 * at the NUL (nothing past it is read) and needs no strlen call, nor a
 * frame (inlined into its callers; the long case is a call). */
static inline __attribute__((always_inline)) int tffi_own_c_str(const char* s, TVMFFIAny* out) {
  out->type_index = kTVMFFISmallStr;
  out->v_int64 = 0;
#pragma GCC unroll 8
  for (uint32_t n = 0; n <= TFFI_SMALL_STR_MAX; ++n) {
    char c = s[n];
    if (c == '\0') {
      out->small_str_len = n;
      return 0;
    }
    if (n < TFFI_SMALL_STR_MAX) out->v_bytes[n] = c;
  }
  return tffi_own_long_c_str(s, out);
}

int tffi_any_copy_owned(const TVMFFIAny* view, TVMFFIAny* out) {
  int32_t kind = view->type_index;
  if (kind >= kTVMFFIStaticObjectBegin) {
    if (view->v_obj != NULL) tffi_incref(view->v_obj);
    *out = *view;
    return 0;
  }
  if (kind == kTVMFFIRawStr && view->v_c_str != NULL) return tffi_own_c_str(view->v_c_str, out);
  TVMFFIAny result = tffi_any_none();
  int rc = 0;
  switch (kind) {
    case kTVMFFIRawStr: /* only a NULL one gets here */
      rc = tffi_raise(TFFI_VALUE_ERROR, "TVMFFIAnyViewToOwnedAny: any_view holds a NULL const char*");
      break;
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* bytes = view->v_ptr;
      if (bytes == NULL || (bytes->data == NULL && bytes->size != 0))
        rc = tffi_raise(TFFI_VALUE_ERROR,
                        "TVMFFIAnyViewToOwnedAny: any_view holds a NULL TVMFFIByteArray*");
      else
        rc = tffi_any_from_bytes(kTVMFFIBytes, bytes->data, bytes->size, &result);
      break;
    }
    case kTVMFFIObjectRValueRef:
      rc = tffi_move_rvalue(view, &result);
      break;
    default:
      /* Inline values, DLTensor* included (a borrowed pointer stays one):
       * a verbatim copy, handed out only when rc is 0. Anything else names
       * no kind this ABI defines. */
      if (kind < kTVMFFINone || kind > kTVMFFIUnchanged)
        rc = tffi_raise(TFFI_TYPE_ERROR,
                        "TVMFFIAnyViewToOwnedAny: any_view has type_index %d, no value kind",
                        (int)kind);
      result = *view;
      break;
  }
  *out = rc == 0 ? result : tffi_any_none();
  return rc;
}

int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIAnyViewToOwnedAny", "out");
  if (any_view == NULL) {
    *out = tffi_any_none();
    return tffi_arg_null("TVMFFIAnyViewToOwnedAny", "any_view");
  }
  /* Before the general path, whose frame a C string does not need. */
  if (any_view->type_index == kTVMFFIRawStr && any_view->v_c_str != NULL)
    return tffi_own_c_str(any_view->v_c_str, out);
  return tffi_any_copy_owned(any_view, out);
}
