/* Opaque objects: a foreign handle (a Python object, say) wrapped as an FFI
 * object so it can travel in a TVMFFIAny; its own deleter runs when the last
 * reference goes. */
#include <tvm/ffi/c_api.h>

#include "arg.h"
#include "tffi_error.h"
#include "object.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIOpaqueObjectCell cell;
  void (*handle_deleter)(void* handle);
} TffiOpaque;

static void tffi_opaque_delete(void* self, int flags) {
  TffiOpaque* obj = self;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && obj->handle_deleter)
    obj->handle_deleter(obj->cell.handle);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                             TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIObjectCreateOpaque", "out");
  *out = NULL;
  /* Only the one opaque kind the ABI defines: other indices belong to types
   * with a layout of their own, which a bare handle would not have. */
  if (type_index != kTVMFFIOpaquePyObject)
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFIObjectCreateOpaque: type_index %d is not supported; only "
                      "kTVMFFIOpaquePyObject (%d) is",
                      (int)type_index, (int)kTVMFFIOpaquePyObject);
  TffiOpaque* obj = tffi_object_alloc(sizeof(TffiOpaque), type_index, tffi_opaque_delete);
  if (obj == NULL) return -1;
  obj->cell.handle = handle;
  obj->handle_deleter = deleter;
  *out = obj;
  return 0;
}
