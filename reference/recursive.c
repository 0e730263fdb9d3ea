/* Shared pieces of the recursive walks (recursive.h). */
#include "recursive.h"

#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "mem.h"
#include "tffi_string.h"

const TVMFFIAny* tffi_rec_hook(const TVMFFITypeAttrColumn** cache, const char* column,
                               int32_t type_index) {
  const TVMFFITypeAttrColumn* c = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (c == NULL) {
    TVMFFIByteArray name = {column, strlen(column)};
    c = TVMFFIGetTypeAttrColumn(&name);
    if (c == NULL) return NULL;
    __atomic_store_n(cache, c, __ATOMIC_RELEASE);
  }
  int32_t offset = type_index - c->begin_index;
  if (offset < 0 || offset >= c->size) return NULL;
  const TVMFFIAny* hook = &c->data[offset];
  return hook->type_index == kTVMFFIFunction && hook->v_obj != NULL ? hook : NULL;
}

/* Appends the fields of one type's record; *n counts what was read. */
static int tffi_rec_fields_of(TVMFFIObject* obj, const TVMFFITypeInfo* info, int64_t skip_mask,
                              TVMFFIAny* out, int32_t* n) {
  for (int32_t i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo* f = &info->fields[i];
    if ((f->flags & skip_mask) != 0 || f->getter == NULL) continue;
    out[*n] = tffi_any_none();
    if (f->getter((char*)obj + f->offset, &out[*n]) != 0) return -1;
    *n += 1;
  }
  return 0;
}

int tffi_rec_fields(TVMFFIObject* obj, int64_t skip_mask, TVMFFIAny** out, int32_t* n) {
  *out = NULL;
  *n = 0;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj->type_index);
  if (info == NULL) return -1;
  /* ffi.Object, the root of every chain, has no fields. */
  size_t total = (size_t)info->num_fields;
  for (int32_t d = 1; d < info->type_depth; ++d)
    total += (size_t)info->type_ancestors[d]->num_fields;
  if (total == 0) return 0;
  TVMFFIAny* values = tffi_malloc(total * sizeof *values);
  if (values == NULL) return tffi_raise_oom(total * sizeof *values);
  int rc = 0;
  for (int32_t d = 1; d < info->type_depth && rc == 0; ++d)
    rc = tffi_rec_fields_of(obj, info->type_ancestors[d], skip_mask, values, n);
  if (rc == 0) rc = tffi_rec_fields_of(obj, info, skip_mask, values, n);
  if (rc != 0) {
    tffi_rec_values_free(values, *n);
    *n = 0;
    return -1;
  }
  *out = values;
  return 0;
}

void tffi_rec_values_free(TVMFFIAny* values, int32_t n) {
  for (int32_t i = 0; i < n; ++i) tffi_any_release(&values[i]);
  tffi_free(values);
}

const TVMFFIAny* tffi_rec_seq_child(TVMFFIObject* obj, int64_t* i) {
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(obj);
  return *i < cell->size ? (const TVMFFIAny*)cell->data + (*i)++ : NULL;
}

const TVMFFIAny* tffi_rec_map_child(const TffiMap* m, uint64_t* p, int64_t* i) {
  if (*p == tffi_map_end(m)) return NULL;
  const TffiKV* at = tffi_map_at(m, *p);
  if ((*i)++ % 2 == 0) return &at->key;
  *p = tffi_map_next(m, *p);
  return &at->value;
}

const char* tffi_rec_type_key(int32_t type_index, int* len) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) {
    tffi_set_raised(NULL); /* only a message wanted it */
    *len = 1;
    return "?";
  }
  *len = (int)info->type_key.size;
  return info->type_key.data;
}

const char* tffi_rec_text(const TVMFFIAny* value, int is_bytes, size_t* size) {
  int32_t t = value->type_index;
  int ok = is_bytes ? (t == kTVMFFIBytes || t == kTVMFFISmallBytes)
                    : (t == kTVMFFIStr || t == kTVMFFISmallStr);
  return ok ? tffi_any_str_data(value, size) : NULL;
}
