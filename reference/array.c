/* Array objects: an immutable sequence of owned TVMFFIAny values, what a
 * tuple or list argument becomes. Made and read across the ABI through the
 * global functions "ffi.Array", "ffi.ArraySize" and "ffi.ArrayGetItem". */
#include "any.h"
#include "builtin.h"
#include "error.h"
#include "object.h"

/* One allocation: header, the cell callers read through
 * TVMFFISeqGetCellPtr, then the elements. */
typedef struct {
  TVMFFIObject header;
  TVMFFISeqCell cell;
} TffiArray;

#define TFFI_ARRAY_MAX_SIZE ((int32_t)1 << 24)

static void tffi_array_delete(void* self, int flags) {
  TffiArray* arr = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFIAny* elems = arr->cell.data;
    for (int64_t i = 0; i < arr->cell.size; ++i) tffi_any_release(&elems[i]);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* Each element is the owned form of an argument view, exactly as
 * TVMFFIAnyViewToOwnedAny makes it. */
static TVMFFIObject* tffi_array_new(const TVMFFIAny* args, int32_t n) {
  TffiArray* arr = tffi_object_alloc(sizeof(TffiArray) + (size_t)n * sizeof(TVMFFIAny),
                                     kTVMFFIArray, tffi_array_delete);
  if (arr == NULL) return NULL;
  TVMFFIAny* elems = (TVMFFIAny*)(arr + 1);
  arr->cell.data = elems;
  arr->cell.capacity = n;
  for (int32_t i = 0; i < n; ++i) {
    if (tffi_any_copy_owned(&args[i], &elems[i]) != 0) {
      tffi_decref(&arr->header); /* releases the elements made so far */
      return NULL;
    }
    arr->cell.size = i + 1;
  }
  return &arr->header;
}

static int tffi_array_call(void* self, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
  (void)self;
  if (num_args < 0 || num_args > TFFI_ARRAY_MAX_SIZE)
    return tffi_raise(TFFI_VALUE_ERROR, "ffi.Array: num_args %d is out of range", (int)num_args);
  TVMFFIObject* arr = tffi_array_new(args, num_args);
  if (arr == NULL) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIArray;
  result->v_obj = arr;
  return 0;
}

static int tffi_array_size_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  if (tffi_builtin_check_count("ffi.ArraySize", num_args, 1) ||
      tffi_builtin_check_object("ffi.ArraySize", args, 0, kTVMFFIArray, "ffi.Array"))
    return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = TVMFFISeqGetCellPtr(args[0].v_obj)->size;
  return 0;
}

static int tffi_array_get_item_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  (void)self;
  const char* fn = "ffi.ArrayGetItem";
  if (tffi_builtin_check_count(fn, num_args, 2) ||
      tffi_builtin_check_object(fn, args, 0, kTVMFFIArray, "ffi.Array") ||
      tffi_builtin_check_int(fn, args, 1))
    return -1;
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(args[0].v_obj);
  int64_t i = args[1].v_int64;
  if (i < 0 || i >= cell->size)
    return tffi_raise(TFFI_INDEX_ERROR, "%s: index %lld out of bounds for size %lld", fn,
                      (long long)i, (long long)cell->size);
  return tffi_any_copy_owned((const TVMFFIAny*)cell->data + i, result);
}

__attribute__((constructor)) static void tffi_array_register(void) {
  tffi_builtin_register("ffi.Array", tffi_array_call);
  tffi_builtin_register("ffi.ArraySize", tffi_array_size_call);
  tffi_builtin_register("ffi.ArrayGetItem", tffi_array_get_item_call);
}
