/* DLPack exchange: importing managed tensors as Tensor objects and
 * exporting Tensor objects as managed tensors. */
#include <stdlib.h>

#include "arg.h"
#include "dlpack.h"
#include "error.h"
#include "mem.h"
#include "object.h"
#include "tensor.h"

/* Devices whose data pointer is a plain address, so that alignment can be
 * judged on data + byte_offset; elsewhere the pointer is an opaque handle
 * and only byte_offset can be judged. */
static int tffi_direct_address(DLDevice device) {
  return device.device_type <= kDLCUDAHost || device.device_type == kDLCUDAManaged ||
         device.device_type == kDLROCM || device.device_type == kDLROCMHost;
}

static int tffi_check_requirements(const char* api, const DLTensor* t, const char* arg_name,
                                   int32_t require_alignment, int32_t require_contiguous) {
  if (require_alignment < 0) {
    return tffi_arg_error(TFFI_VALUE_ERROR, api, "require_alignment", "is negative (%d)",
                          require_alignment);
  }
  if (require_alignment > 0) {
    uintptr_t at = (uintptr_t)t->byte_offset;
    if (tffi_direct_address(t->device)) at += (uintptr_t)t->data;
    if (at % (uintptr_t)require_alignment != 0) {
      return tffi_raise(TFFI_RUNTIME_ERROR,
                        "%s: %s data is not aligned to %d bytes (require_alignment)", api,
                        arg_name, require_alignment);
    }
  }
  if (require_contiguous && !tffi_dltensor_is_contiguous(t)) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s is not contiguous (require_contiguous)", api,
                      arg_name);
  }
  return 0;
}

static void tffi_release_versioned(void* ctx) {
  DLManagedTensorVersioned* m = ctx;
  if (m->deleter != NULL) m->deleter(m);
}

static void tffi_release_legacy(void* ctx) {
  DLManagedTensor* m = ctx;
  if (m->deleter != NULL) m->deleter(m);
}

/* An import with require_alignment or require_contiguous asked: the
 * tensor's own checks come first, then the requirements. */
__attribute__((noinline)) static int tffi_import_required(const char* api,
                                                          DLManagedTensorVersioned* from,
                                                          const char* arg_name,
                                                          int32_t require_alignment,
                                                          int32_t require_contiguous,
                                                          TVMFFIObject** out) {
  if (tffi_dltensor_check_in(api, &from->dl_tensor, arg_name) != 0 ||
      tffi_check_requirements(api, &from->dl_tensor, arg_name, require_alignment,
                              require_contiguous) != 0 ||
      tffi_tensor_new_checked(&from->dl_tensor, tffi_release_versioned, from, out) != 0) {
    return -1;
  }
  tffi_tensor_set_flags(*out, from->flags);
  return 0;
}

int tffi_tensor_import_versioned(const char* api, DLManagedTensorVersioned* from,
                                 const char* arg_name, int32_t require_alignment,
                                 int32_t require_contiguous, TVMFFIObject** out) {
  /* A different major version means a different layout: nothing past the
   * version field may be read. */
  if (from->version.major != DLPACK_MAJOR_VERSION) {
    return tffi_raise(TFFI_VALUE_ERROR,
                      "%s: %s.version.major is %u; only DLPack major %d is understood", api,
                      arg_name, from->version.major, DLPACK_MAJOR_VERSION);
  }
  if (from->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s.flags: padded sub-byte types are not supported",
                      api, arg_name);
  }
  if (require_alignment != 0 || require_contiguous != 0) {
    return tffi_import_required(api, from, arg_name, require_alignment, require_contiguous, out);
  }
  /* None asked (the common case): checks, object and flags in one call. */
  return tffi_tensor_import(api, &from->dl_tensor, arg_name, tffi_release_versioned, from,
                            from->flags, out);
}

int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFITensorFromDLPackVersioned", "out");
  if (from == NULL) return tffi_arg_null("TVMFFITensorFromDLPackVersioned", "from");
  return tffi_tensor_import_versioned("TVMFFITensorFromDLPackVersioned", from, "from",
                                      require_alignment, require_contiguous, (TVMFFIObject**)out);
}

int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                           int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFITensorFromDLPack", "out");
  if (from == NULL) return tffi_arg_null("TVMFFITensorFromDLPack", "from");
  const char* api = "TVMFFITensorFromDLPack";
  if (tffi_dltensor_check_in(api, &from->dl_tensor, "from") != 0) return -1;
  if (tffi_check_requirements(api, &from->dl_tensor, "from", require_alignment,
                              require_contiguous)) {
    return -1;
  }
  return tffi_tensor_new_checked(&from->dl_tensor, tffi_release_legacy, from,
                                 (TVMFFIObject**)out);
}

/* An exported managed tensor holds one strong reference to the tensor (its
 * manager_ctx); the DLTensor it carries points into that tensor. */
static void tffi_export_delete_versioned(DLManagedTensorVersioned* self) {
  tffi_decref(self->manager_ctx);
  tffi_free(self);
}

static void tffi_export_delete_legacy(DLManagedTensor* self) {
  tffi_decref(self->manager_ctx);
  tffi_free(self);
}

static int tffi_export_check(const char* api, TVMFFIObjectHandle from, const void* out) {
  if (!tffi_is_tensor(from)) {
    return tffi_arg_error(TFFI_TYPE_ERROR, api, "from", "is %s, expected a Tensor object",
                          from == NULL ? "NULL" : "not a Tensor");
  }
  if (out == NULL) return tffi_arg_null(api, "out");
  return 0;
}

int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from, DLManagedTensorVersioned** out) {
  if (tffi_export_check("TVMFFITensorToDLPackVersioned", from, out) != 0) return -1;
  DLManagedTensorVersioned* m = tffi_calloc(1, sizeof *m);
  if (m == NULL) return tffi_raise_oom(sizeof *m);
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = from;
  m->deleter = tffi_export_delete_versioned;
  m->flags = tffi_tensor_flags(from);
  m->dl_tensor = *tffi_tensor_dl(from);
  tffi_incref(from);
  *out = m;
  return 0;
}

int TVMFFITensorToDLPack(TVMFFIObjectHandle from, DLManagedTensor** out) {
  if (tffi_export_check("TVMFFITensorToDLPack", from, out) != 0) return -1;
  DLManagedTensor* m = tffi_calloc(1, sizeof *m);
  if (m == NULL) return tffi_raise_oom(sizeof *m);
  m->manager_ctx = from;
  m->deleter = tffi_export_delete_legacy;
  m->dl_tensor = *tffi_tensor_dl(from);
  tffi_incref(from);
  *out = m;
  return 0;
}
