/* Type attributes: named columns of values indexed by type index
 * (TVMFFITypeRegisterAttr, TVMFFIGetTypeAttrColumn), a run-time form of
 * type traits that libraries fill as they load. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "mem.h"
#include "reflection.h"
#include "type.h"

/* One column. The public part comes first: the pointer handed out is the
 * entry's, and entries never move or go away, so callers may keep it. */
typedef struct {
  TVMFFITypeAttrColumn column;
  TVMFFIAny* slots;     /* owned; column.data points here */
  int32_t capacity;     /* slots allocated; column.size of them are in use */
  TVMFFIByteArray name; /* owned, NUL-terminated */
} TffiAttrColumn;

static pthread_mutex_t tffi_attrs_lock = PTHREAD_MUTEX_INITIALIZER;
static TffiAttrColumn** tffi_attrs;
static int32_t tffi_attrs_count;
static int32_t tffi_attrs_cap;
static int tffi_attrs_ready;

/* The columns upstream's runtime has from the start (0.1.15). C++ code built
 * on upstream's headers looks a column up by one of these names at load
 * time and fails when it is missing, even when it registers nothing in it. */
static const char* const tffi_builtin_columns[] = {
    "__any_equal__",
    "__any_hash__",
    "__data_from_json__",
    "__data_to_json__",
    "__ffi_compare__",
    "__ffi_convert__",
    "__ffi_enum__",
    "__ffi_eq__",
    "__ffi_hash__",
    "__ffi_init__",
    "__ffi_new__",
    "__ffi_repr__",
    "__ffi_shallow_copy__",
    "__ffi_type_final__",
    "__s_equal__",
    "__s_hash__",
    "__s_maybe_inplace_mutate__",
    "__s_mutate__",
    "__s_visit__",
};

/* Lock held. A linear scan: a process holds tens of columns. */
static TffiAttrColumn* tffi_attr_find(const TVMFFIByteArray* name) {
  for (int32_t i = 0; i < tffi_attrs_count; ++i) {
    TffiAttrColumn* c = tffi_attrs[i];
    if (c->name.size == name->size &&
        (name->size == 0 || memcmp(c->name.data, name->data, name->size) == 0))
      return c;
  }
  return NULL;
}

/* Lock held. The column named `name`, made empty when there is none yet. */
static TffiAttrColumn* tffi_attr_get_or_add(const char* api, const TVMFFIByteArray* name) {
  TffiAttrColumn* c = tffi_attr_find(name);
  if (c) return c;
  if (tffi_attrs_count >= TFFI_REFLECT_COLUMNS_MAX) {
    tffi_raise(TFFI_RUNTIME_ERROR, "%s: the runtime already holds %d attribute columns", api,
               TFFI_REFLECT_COLUMNS_MAX);
    return NULL;
  }
  if (tffi_attrs_count == tffi_attrs_cap) {
    int32_t cap = tffi_attrs_cap ? tffi_attrs_cap * 2 : 16;
    TffiAttrColumn** grown = tffi_realloc(tffi_attrs, (size_t)cap * sizeof *grown);
    if (grown == NULL) {
      tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", api);
      return NULL;
    }
    tffi_attrs = grown;
    tffi_attrs_cap = cap;
  }
  c = tffi_calloc(1, sizeof *c);
  if (c == NULL) {
    tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", api);
    return NULL;
  }
  if (tffi_reflect_copy_bytes(api, "attr_name", name, TFFI_REFLECT_NAME_MAX, &c->name)) {
    tffi_free(c);
    return NULL;
  }
  tffi_attrs[tffi_attrs_count++] = c;
  return c;
}

/* Lock held. Makes the built-in columns once; fails only for memory. */
static int tffi_attrs_init(const char* api) {
  if (tffi_attrs_ready) return 0;
  for (size_t i = 0; i < sizeof tffi_builtin_columns / sizeof *tffi_builtin_columns; ++i) {
    TVMFFIByteArray name = {tffi_builtin_columns[i], strlen(tffi_builtin_columns[i])};
    if (tffi_attr_get_or_add(api, &name) == NULL) return -1;
  }
  tffi_attrs_ready = 1;
  return 0;
}

/* Lock held. Makes the column cover type indices [0, type_index]; new
 * entries are None. begin_index stays 0: code built against the headers
 * before 0.1.9 reads data[type_index] with no begin_index at all. */
static int tffi_attr_cover(TffiAttrColumn* c, int32_t type_index) {
  if (type_index < c->column.size) return 0;
  if (type_index >= c->capacity) {
    int32_t cap = c->capacity ? c->capacity : 64;
    /* cap is a power of two and type_index is below the registry's bound,
     * TFFI_TYPE_MAX_INDEX, another one: doubling stops there at the latest. */
    while (cap <= type_index) cap *= 2;
    TVMFFIAny* grown = tffi_realloc(c->slots, (size_t)cap * sizeof *grown);
    if (grown == NULL)
      return tffi_raise(TFFI_MEMORY_ERROR, "TVMFFITypeRegisterAttr: out of memory");
    memset(grown + c->capacity, 0, (size_t)(cap - c->capacity) * sizeof *grown);
    c->slots = grown;
    c->capacity = cap;
  }
  c->column.data = c->slots;
  c->column.size = type_index + 1;
  c->column.begin_index = 0;
  return 0;
}

/* Lock held. Stores `value` (owned; taken over on success) for type_index. */
static int tffi_attr_store(const char* api, const TVMFFIByteArray* name, int32_t type_index,
                           TVMFFIAny* value) {
  if (tffi_attrs_init(api)) return -1;
  TffiAttrColumn* c = tffi_attr_get_or_add(api, name);
  if (c == NULL) return -1;
  /* kTVMFFINone only makes sure the column exists. */
  if (type_index == kTVMFFINone) return 0;
  if (tffi_attr_cover(c, type_index)) return -1;
  TVMFFIAny* slot = &c->slots[type_index];
  if (slot->type_index != kTVMFFINone)
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "%s: attr_name `%.*s` already has a value for type_index %d", api,
                      (int)name->size, name->data, (int)type_index);
  *slot = *value;
  *value = tffi_any_none();
  return 0;
}

/* Checks a caller's attribute name; returns 0 when usable. */
static int tffi_check_attr_name(const char* api, const TVMFFIByteArray* attr_name) {
  if (attr_name == NULL) return tffi_raise(TFFI_VALUE_ERROR, "%s: attr_name is NULL", api);
  if (attr_name->data == NULL && attr_name->size != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: attr_name.data is NULL with size %zu", api,
                      attr_name->size);
  if (attr_name->size > TFFI_REFLECT_NAME_MAX)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: attr_name is %zu bytes long, more than %d", api,
                      attr_name->size, TFFI_REFLECT_NAME_MAX);
  return 0;
}

int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* attr_name,
                           const TVMFFIAny* attr_value) {
  const char* api = "TVMFFITypeRegisterAttr";
  if (tffi_check_attr_name(api, attr_name)) return -1;
  if (attr_value == NULL) return tffi_raise(TFFI_VALUE_ERROR, "%s: attr_value is NULL", api);
  /* Registered types only: that bounds the column by the registry's size. */
  int known = tffi_type_lock(type_index) != NULL;
  tffi_type_unlock();
  if (!known)
    return tffi_raise(TFFI_KEY_ERROR, "%s: type_index %d is not a registered type", api,
                      (int)type_index);
  TVMFFIAny value = tffi_any_none();
  if (type_index != kTVMFFINone && tffi_reflect_copy_value(api, "attr_value", attr_value, &value))
    return -1;
  pthread_mutex_lock(&tffi_attrs_lock);
  int rc = tffi_attr_store(api, attr_name, type_index, &value);
  pthread_mutex_unlock(&tffi_attrs_lock);
  /* Not stored: released outside the lock, a deleter may call back in. */
  tffi_any_release(&value);
  return rc;
}

const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* attr_name) {
  if (tffi_check_attr_name("TVMFFIGetTypeAttrColumn", attr_name)) return NULL;
  tffi_type_ready(); /* the runtime's own attributes are in place first */
  pthread_mutex_lock(&tffi_attrs_lock);
  int rc = tffi_attrs_init("TVMFFIGetTypeAttrColumn");
  TffiAttrColumn* c = rc ? NULL : tffi_attr_find(attr_name);
  pthread_mutex_unlock(&tffi_attrs_lock);
  return c ? &c->column : NULL;
}
