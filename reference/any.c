/* Ownership of TVMFFIAny values: TVMFFIAnyViewToOwnedAny and release. */
#include "any.h"
#include "arg.h"

#include <string.h>

#include "tffi_error.h"
#include "object.h"
#include "tffi_string.h"

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

int tffi_any_copy_owned(const TVMFFIAny* view, TVMFFIAny* out) {
  int32_t kind = view->type_index;
  if (kind >= kTVMFFIStaticObjectBegin) {
    if (view->v_obj != NULL) tffi_incref(view->v_obj);
    *out = *view;
    return 0;
  }
  if (kind == kTVMFFIRawStr && view->v_c_str != NULL)
    return tffi_any_from_c_str(view->v_c_str, out);
  TVMFFIAny result = tffi_any_none();
  int rc = 0;
  switch (kind) {
    case kTVMFFIRawStr: /* only a NULL one gets here */
      rc = tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIAnyViewToOwnedAny: any_view holds a NULL const char*");
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
    case kTVMFFIObjectRValueRef: rc = tffi_move_rvalue(view, &result); break;
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
    return tffi_any_from_c_str(any_view->v_c_str, out);
  return tffi_any_copy_owned(any_view, out);
}
