/* Shape objects: an immutable list of int64 extents, made across the ABI by
 * the global function "ffi.Shape". */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "object.h"

/* One allocation: header, the cell callers read through
 * TVMFFIShapeGetCellPtr, then the extents themselves. */
typedef struct {
  TVMFFIObject header;
  TVMFFIShapeCell cell;
} TffiShape;

/* Bounds the allocation a caller's argument count can ask for. */
#define TFFI_SHAPE_MAX_NDIM ((int32_t)1 << 24)

static TVMFFIObject* tffi_shape_new(const TVMFFIAny* args, int32_t n) {
  TffiShape* shape = tffi_object_alloc(sizeof(TffiShape) + (size_t)n * sizeof(int64_t),
                                       kTVMFFIShape, tffi_object_delete_plain);
  if (shape == NULL) return NULL;
  int64_t* extents = (int64_t*)(shape + 1);
  for (int32_t i = 0; i < n; ++i) extents[i] = args[i].v_int64;
  shape->cell.data = extents;
  shape->cell.size = (size_t)n;
  return &shape->header;
}

/* "ffi.Shape"(int...) -> Shape. */
static int tffi_shape_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const char* fn = self;
  if (num_args < 0 || num_args > TFFI_SHAPE_MAX_NDIM)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: num_args %d is out of range", fn, (int)num_args);
  for (int32_t i = 0; i < num_args; ++i) {
    if (args[i].type_index != kTVMFFIInt && args[i].type_index != kTVMFFIBool)
      return tffi_args_error(TFFI_VALUE_ERROR, fn, i, "extent",
                             "expected int but got type index %d; a shape takes int arguments",
                             (int)args[i].type_index);
  }
  TVMFFIObject* shape = tffi_shape_new(args, num_args);
  if (shape == NULL) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIShape;
  result->v_obj = shape;
  return 0;
}

__attribute__((constructor)) static void tffi_shape_register(void) {
  tffi_builtin_register("ffi.Shape", tffi_shape_call);
}
