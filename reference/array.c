/* Array objects: an immutable sequence of owned TVMFFIAny values, what a
 * tuple or list argument becomes. Made and read across the ABI through the
 * global functions "ffi.Array", "ffi.ArraySize" and "ffi.ArrayGetItem". */
#include "any.h"
#include "any_hash.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
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

static int tffi_array_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args < 0 || num_args > TFFI_ARRAY_MAX_SIZE)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: num_args %d is out of range", (const char*)self,
                      (int)num_args);
  TVMFFIObject* arr = tffi_array_new(args, num_args);
  if (arr == NULL) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIArray;
  result->v_obj = arr;
  return 0;
}

static int tffi_array_size_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  TVMFFIObject* arr = NULL; /* set on success; -O2 over one file cannot see that */
  if (tffi_args_count(self, num_args, 1) ||
      tffi_args_object(self, args, 0, "array", kTVMFFIArray, "ffi.Array", &arr))
    return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = TVMFFISeqGetCellPtr(arr)->size;
  return 0;
}

static int tffi_array_get_item_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  const char* fn = self;
  TVMFFIObject* arr = NULL; /* both set on success (as above) */
  int64_t i = 0;
  if (tffi_args_count(fn, num_args, 2) ||
      tffi_args_object(fn, args, 0, "array", kTVMFFIArray, "ffi.Array", &arr) ||
      tffi_args_int(fn, args, 1, "index", &i))
    return -1;
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(arr);
  if (i < 0 || i >= cell->size)
    return tffi_raise(TFFI_INDEX_ERROR, "%s: index %lld out of bounds for size %lld", fn,
                      (long long)i, (long long)cell->size);
  return tffi_any_copy_owned((const TVMFFIAny*)cell->data + i, result);
}

/* "ffi.ArrayContains"(array, value): by key equality (AnyEqual), as
 * upstream compares. */
static int tffi_array_contains_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  const char* fn = self;
  TVMFFIObject* arr;
  if (tffi_args_count(fn, num_args, 2) ||
      tffi_args_object(fn, args, 0, "array", kTVMFFIArray, "ffi.Array", &arr))
    return -1;
  TVMFFIAny value; /* compared in its owned form, as the elements are held */
  if (tffi_any_copy_owned(&args[1], &value)) return -1;
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(arr);
  int found = 0;
  for (int64_t i = 0; i < cell->size && found == 0; ++i)
    found = tffi_any_equal((const TVMFFIAny*)cell->data + i, &value);
  tffi_any_release(&value);
  if (found < 0) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = found;
  return 0;
}

__attribute__((constructor)) static void tffi_array_register(void) {
  tffi_builtin_register("ffi.ArrayContains", tffi_array_contains_call);
  tffi_builtin_register("ffi.Array", tffi_array_call);
  tffi_builtin_register("ffi.ArraySize", tffi_array_size_call);
  tffi_builtin_register("ffi.ArrayGetItem", tffi_array_get_item_call);
}
