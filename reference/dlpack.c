/* DLPack exchange: importing pre-1.0 managed tensors as Tensor objects and
 * exporting Tensor objects as managed tensors (the DLPack 1.x import is
 * tensor.c's: its hot path builds the object while it checks). */
#include <stdlib.h>

#include "arg.h"
#include "tffi_error.h"
#include "mem.h"
#include "object.h"
#include "tensor.h"

static void tffi_release_legacy(void* ctx) {
  DLManagedTensor* m = ctx;
  if (m->deleter != NULL) m->deleter(m);
}

int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                           int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFITensorFromDLPack", "out");
  if (from == NULL) return tffi_arg_null("TVMFFITensorFromDLPack", "from");
  const char* api = "TVMFFITensorFromDLPack";
  if (tffi_dltensor_check_in(api, &from->dl_tensor, "from") != 0) return -1;
  if (tffi_dltensor_check_requirements(api, &from->dl_tensor, "from", require_alignment,
                                       require_contiguous)) {
    return -1;
  }
  return tffi_tensor_new_checked(&from->dl_tensor, tffi_release_legacy, from, (TVMFFIObject**)out);
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
