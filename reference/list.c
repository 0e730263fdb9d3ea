/* List objects: a mutable sequence of owned TVMFFIAny values in upstream's
 * layout (the object header, then a TVMFFISeqCell whose data is a buffer
 * apart from the object, given back through the cell's data_deleter). C++
 * code built on upstream's headers grows a list in place with a buffer
 * from operator new and keeps the cell's deleter for it, so the buffers
 * here come from C++'s allocator too when the process has one
 * (tffi_cxx_malloc). Made and changed across the ABI through "ffi.List"
 * and the "ffi.List*" functions. */
#include <string.h>

#include "any.h"
#include "any_hash.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "mem.h"
#include "object.h"

typedef struct {
  TVMFFIObject header;
  TVMFFISeqCell cell;
} TffiList;

/* Bounds what a caller's count can make the runtime allocate. */
#define TFFI_LIST_MAX_SIZE ((int64_t)1 << 28)

static TVMFFIAny* tffi_list_items(const TffiList* l) { return l->cell.data; }

static void tffi_list_delete(void* self, int flags) {
  TffiList* l = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (int64_t i = 0; i < l->cell.size; ++i) tffi_any_release(&tffi_list_items(l)[i]);
    if (l->cell.data_deleter) l->cell.data_deleter(l->cell.data);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* Room for `need` elements: a new buffer of max(need, 2 * capacity). */
static int tffi_list_reserve(const char* fn, TffiList* l, int64_t need) {
  if (need <= l->cell.capacity) return 0;
  if (need > TFFI_LIST_MAX_SIZE)
    return tffi_raise(TFFI_MEMORY_ERROR, "%s: %lld elements are more than a list may hold (%lld)",
                      fn, (long long)need, (long long)TFFI_LIST_MAX_SIZE);
  int64_t cap = l->cell.capacity * 2 > need ? l->cell.capacity * 2 : need;
  if (cap > TFFI_LIST_MAX_SIZE) cap = TFFI_LIST_MAX_SIZE;
  TVMFFIAny* items = tffi_cxx_malloc((size_t)cap * sizeof(TVMFFIAny));
  if (items == NULL) return tffi_raise_oom((size_t)cap * sizeof(TVMFFIAny));
  if (l->cell.size) memcpy(items, l->cell.data, (size_t)l->cell.size * sizeof(TVMFFIAny));
  if (l->cell.data_deleter) l->cell.data_deleter(l->cell.data);
  l->cell.data = items;
  l->cell.capacity = cap;
  l->cell.data_deleter = tffi_cxx_free;
  return 0;
}

/* The list argument #i, not NULL. */
static int tffi_list_arg(const char* fn, const TVMFFIAny* args, int32_t i, TffiList** out) {
  TVMFFIObject* obj = NULL;
  if (tffi_args_object(fn, args, i, "list", kTVMFFIList, "ffi.List", &obj)) return -1;
  *out = (TffiList*)obj;
  return 0;
}

/* Checks the count and takes the list (argument 0) and, with `index`, the
 * int argument 1. */
static int tffi_list_args(const char* fn, const TVMFFIAny* args, int32_t num_args, int32_t want,
                          TffiList** l, int64_t* index) {
  return tffi_args_count(fn, num_args, want) || tffi_list_arg(fn, args, 0, l) ||
         (index && tffi_args_int(fn, args, 1, "index", index));
}

static int tffi_list_bounds(const char* fn, const TffiList* l, int64_t i, int64_t end) {
  if (i >= 0 && i < end) return 0;
  return tffi_raise(TFFI_INDEX_ERROR, "%s: index %lld out of bounds for size %lld", fn,
                    (long long)i, (long long)l->cell.size);
}

/* Inserts owned copies of values[0..n) at position i (0 <= i <= size). */
static int tffi_list_insert_n(const char* fn, TffiList* l, int64_t i, const TVMFFIAny* values,
                              int64_t n) {
  if (tffi_list_bounds(fn, l, i, l->cell.size + 1) || tffi_list_reserve(fn, l, l->cell.size + n))
    return -1;
  TVMFFIAny* items = tffi_list_items(l);
  for (int64_t k = 0; k < n; ++k) {
    TVMFFIAny owned;
    if (tffi_any_copy_owned(&values[k], &owned) != 0) return -1;
    memmove(&items[i + k + 1], &items[i + k], (size_t)(l->cell.size - i - k) * sizeof(TVMFFIAny));
    items[i + k] = owned;
    l->cell.size += 1;
  }
  return 0;
}

/* Removes [first, last), releasing the values after the list is whole. */
static void tffi_list_erase_range(TffiList* l, int64_t first, int64_t last) {
  int64_t n = last - first;
  if (n <= 0) return;
  TVMFFIAny* items = tffi_list_items(l);
  TVMFFIAny gone[16];
  for (int64_t done = 0; done < n;) {
    int64_t k = n - done < 16 ? n - done : 16;
    memcpy(gone, &items[first], (size_t)k * sizeof(TVMFFIAny));
    memmove(&items[first], &items[first + k],
            (size_t)(l->cell.size - first - k) * sizeof(TVMFFIAny));
    l->cell.size -= k;
    for (int64_t j = 0; j < k; ++j) tffi_any_release(&gone[j]);
    done += k;
  }
}

static TVMFFIAny tffi_none_result(void) { return tffi_any_none(); }

static int tffi_list_make(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args < 0) return tffi_args_count(self, num_args, 0);
  TffiList* l = tffi_object_alloc(sizeof(TffiList), kTVMFFIList, tffi_list_delete);
  if (l == NULL) return -1;
  l->cell.data_deleter = tffi_cxx_free;
  if (tffi_list_insert_n(self, l, 0, args, num_args) != 0) {
    tffi_decref(&l->header);
    return -1;
  }
  *result = tffi_any_object(&l->header);
  return 0;
}

static int tffi_list_get_item(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  TffiList* l;
  int64_t i;
  if (tffi_list_args(self, args, num_args, 2, &l, &i) || tffi_list_bounds(self, l, i, l->cell.size))
    return -1;
  return tffi_any_copy_owned(&tffi_list_items(l)[i], result);
}

static int tffi_list_set_item(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  TffiList* l;
  int64_t i;
  TVMFFIAny owned;
  if (tffi_list_args(self, args, num_args, 3, &l, &i) ||
      tffi_list_bounds(self, l, i, l->cell.size) || tffi_any_copy_owned(&args[2], &owned))
    return -1;
  TVMFFIAny old = tffi_list_items(l)[i];
  tffi_list_items(l)[i] = owned;
  tffi_any_release(&old);
  *result = tffi_none_result();
  return 0;
}

static int tffi_list_size(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiList* l;
  if (tffi_list_args(self, args, num_args, 1, &l, NULL)) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = l->cell.size;
  return 0;
}

static int tffi_list_contains(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  TffiList* l;
  TVMFFIAny value;
  if (tffi_list_args(self, args, num_args, 2, &l, NULL) || tffi_any_copy_owned(&args[1], &value))
    return -1;
  int found = 0;
  for (int64_t i = 0; i < l->cell.size && found == 0; ++i)
    found = tffi_any_equal(&tffi_list_items(l)[i], &value);
  tffi_any_release(&value);
  if (found < 0) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = found;
  return 0;
}

static int tffi_list_append(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  TffiList* l;
  if (tffi_list_args(self, args, num_args, 2, &l, NULL) ||
      tffi_list_insert_n(self, l, l->cell.size, &args[1], 1))
    return -1;
  *result = tffi_none_result();
  return 0;
}

static int tffi_list_insert(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  TffiList* l;
  int64_t i;
  if (tffi_list_args(self, args, num_args, 3, &l, &i) ||
      tffi_list_insert_n(self, l, i, &args[2], 1))
    return -1;
  *result = tffi_none_result();
  return 0;
}

static int tffi_list_pop(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiList* l;
  int64_t i;
  if (tffi_list_args(self, args, num_args, 2, &l, &i) || tffi_list_bounds(self, l, i, l->cell.size))
    return -1;
  /* The value moves out to the caller: no count changes. */
  TVMFFIAny* items = tffi_list_items(l);
  *result = items[i];
  memmove(&items[i], &items[i + 1], (size_t)(l->cell.size - i - 1) * sizeof(TVMFFIAny));
  l->cell.size -= 1;
  return 0;
}

static int tffi_list_erase(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiList* l;
  int64_t i;
  if (tffi_list_args(self, args, num_args, 2, &l, &i) || tffi_list_bounds(self, l, i, l->cell.size))
    return -1;
  tffi_list_erase_range(l, i, i + 1);
  *result = tffi_none_result();
  return 0;
}

/* [start, stop) of the list, as upstream checks it: empty is always fine. */
static int tffi_list_range(const char* fn, const TVMFFIAny* args, const TffiList* l, int64_t* start,
                           int64_t* stop) {
  if (tffi_args_int(fn, args, 1, "start", start) || tffi_args_int(fn, args, 2, "stop", stop))
    return -1;
  if (*start == *stop || (*start >= 0 && *stop <= l->cell.size && *start < *stop)) return 0;
  return tffi_raise(TFFI_INDEX_ERROR, "%s: range [%lld, %lld) out of bounds for size %lld", fn,
                    (long long)*start, (long long)*stop, (long long)l->cell.size);
}

static int tffi_list_erase_range_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  TffiList* l;
  int64_t start, stop;
  if (tffi_list_args(self, args, num_args, 3, &l, NULL) ||
      tffi_list_range(self, args, l, &start, &stop))
    return -1;
  tffi_list_erase_range(l, start, stop);
  *result = tffi_none_result();
  return 0;
}

/* (list, start, stop, replacement): [start, stop) becomes the replacement's
 * elements, read before anything changes (the two may be one list). */
static int tffi_list_replace_slice(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  TffiList *l, *rep;
  int64_t start, stop;
  if (tffi_list_args(self, args, num_args, 4, &l, NULL) ||
      tffi_list_range(self, args, l, &start, &stop) || tffi_list_arg(self, args, 3, &rep))
    return -1;
  int64_t n = rep->cell.size;
  TVMFFIAny* copy = tffi_malloc((size_t)(n ? n : 1) * sizeof(TVMFFIAny));
  if (copy == NULL) return tffi_raise_oom((size_t)n * sizeof(TVMFFIAny));
  /* An empty list may have no storage: memcpy wants a pointer even for 0 bytes. */
  if (n) memcpy(copy, rep->cell.data, (size_t)n * sizeof(TVMFFIAny));
  /* Elements are owned values already: a copy only counts a reference. */
  for (int64_t k = 0; k < n; ++k)
    if (copy[k].type_index >= kTVMFFIStaticObjectBegin && copy[k].v_obj) tffi_incref(copy[k].v_obj);
  tffi_list_erase_range(l, start, stop);
  int rc = tffi_list_insert_n(self, l, start, copy, n);
  for (int64_t k = 0; k < n; ++k) tffi_any_release(&copy[k]);
  tffi_free(copy);
  if (rc == 0) *result = tffi_none_result();
  return rc;
}

static int tffi_list_reverse(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  TffiList* l;
  if (tffi_list_args(self, args, num_args, 1, &l, NULL)) return -1;
  TVMFFIAny* items = tffi_list_items(l);
  for (int64_t i = 0, j = l->cell.size - 1; i < j; ++i, --j) {
    TVMFFIAny t = items[i];
    items[i] = items[j];
    items[j] = t;
  }
  *result = tffi_none_result();
  return 0;
}

static int tffi_list_clear(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiList* l;
  if (tffi_list_args(self, args, num_args, 1, &l, NULL)) return -1;
  tffi_list_erase_range(l, 0, l->cell.size);
  *result = tffi_none_result();
  return 0;
}

static int tffi_list_reserve_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  TffiList* l;
  int64_t cap;
  if (tffi_list_args(self, args, num_args, 2, &l, &cap) || tffi_list_reserve(self, l, cap))
    return -1;
  *result = tffi_none_result();
  return 0;
}

__attribute__((constructor)) static void tffi_list_register(void) {
  tffi_builtin_register("ffi.List", tffi_list_make);
  tffi_builtin_register("ffi.ListGetItem", tffi_list_get_item);
  tffi_builtin_register("ffi.ListSetItem", tffi_list_set_item);
  tffi_builtin_register("ffi.ListSize", tffi_list_size);
  tffi_builtin_register("ffi.ListContains", tffi_list_contains);
  tffi_builtin_register("ffi.ListAppend", tffi_list_append);
  tffi_builtin_register("ffi.ListInsert", tffi_list_insert);
  tffi_builtin_register("ffi.ListPop", tffi_list_pop);
  tffi_builtin_register("ffi.ListErase", tffi_list_erase);
  tffi_builtin_register("ffi.ListEraseRange", tffi_list_erase_range_call);
  tffi_builtin_register("ffi.ListReplaceSlice", tffi_list_replace_slice);
  tffi_builtin_register("ffi.ListReverse", tffi_list_reverse);
  tffi_builtin_register("ffi.ListClear", tffi_list_clear);
  tffi_builtin_register("ffi.ListReserve", tffi_list_reserve_call);
}
