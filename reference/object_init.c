/* Objects of reflected types built from arguments, field by field:
 *
 *   "ffi._RegisterFFIInit"(type_index) gives the type an `__ffi_init__`
 *     attribute: a constructor taking its init fields positionally (those
 *     without a default first) and, after the ffi.GetKwargsObject marker,
 *     by name in key-value pairs; fields not given take their defaults.
 *     C++ libraries built on upstream's headers call it for every type they
 *     register without an explicit constructor, and Python builds the
 *     class's __init__ from it.
 *   "ffi.MakeObjectFromPackedArgs"(type key or index, name, value, ...)
 *     makes an object from named field values alone.
 *
 * A new object comes from the type's creator (its metadata), else from its
 * `__ffi_new__` attribute. Messages and error kinds are upstream's: Python
 * shows them to users as its own. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "field_set.h"
#include "function.h"
#include "mem.h"
#include "object.h"
#include "recursive.h"
#include "sentinel.h"
#include "tffi_string.h"

/* The fields of a type in order (ancestors' first), their records borrowed
 * from the registry, which keeps them for the life of the process. */
typedef struct {
  const TVMFFIFieldInfo** items;
  size_t n, cap;
  int set[];
} TffiFieldList;

static TffiFieldList* tffi_field_list(const TVMFFITypeInfo* info) {
  size_t total = (size_t)info->num_fields;
  for (int32_t d = 1; d < info->type_depth; ++d)
    total += (size_t)info->type_ancestors[d]->num_fields;
  TffiFieldList* list = tffi_calloc(1, sizeof *list + (total + 1) * sizeof(int));
  if (list != NULL) list->items = tffi_calloc(total + 1, sizeof *list->items);
  if (list == NULL || list->items == NULL) {
    if (list) tffi_free(list);
    tffi_raise_oom(total * sizeof(void*));
    return NULL;
  }
  for (int32_t d = 1; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    for (int32_t i = 0; i < t->num_fields; ++i) list->items[list->n++] = &t->fields[i];
  }
  return list;
}

static void tffi_field_list_free(TffiFieldList* list) {
  tffi_free(list->items);
  tffi_free(list);
}

static int tffi_is_kwargs_marker(const TVMFFIAny* v) {
  return v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj != NULL &&
         v->v_obj == tffi_kwargs_object();
}

static int tffi_field_is(const TVMFFIFieldInfo* f, int64_t bit) { return (f->flags & bit) != 0; }

static int tffi_name_is(const TVMFFIFieldInfo* f, const char* name, size_t len) {
  return f->name.size == len && memcmp(f->name.data, name, len) == 0;
}

/* The positional order: init fields that are not keyword-only, those
 * without a default before those with one (each group in field order). */
static size_t tffi_positional(const TffiFieldList* list, size_t* order) {
  size_t n = 0;
  for (int with_default = 0; with_default < 2; ++with_default)
    for (size_t i = 0; i < list->n; ++i) {
      const TVMFFIFieldInfo* f = list->items[i];
      if (tffi_field_is(f, kTVMFFIFieldFlagBitMaskInitOff) ||
          tffi_field_is(f, kTVMFFIFieldFlagBitMaskKwOnly) ||
          tffi_field_is(f, kTVMFFIFieldFlagBitMaskHasDefault) != with_default)
        continue;
      order[n++] = i;
    }
  return n;
}

/* Sets field i of obj from value, naming the field when the setter fails. */
static int tffi_bind(const char* key, TVMFFIObject* obj, TffiFieldList* list, size_t i,
                     const TVMFFIAny* value, const char* what) {
  const TVMFFIFieldInfo* f = list->items[i];
  int rc = value ? tffi_field_set(f, (char*)obj + f->offset, value)
                 : tffi_field_set_default(f, (char*)obj + f->offset);
  list->set[i] = 1;
  if (rc == 0) return 0;
  return tffi_field_error_rename(key, what, f);
}

static int tffi_bind_args(const char* key, TVMFFIObject* obj, TffiFieldList* list,
                          const TVMFFIAny* args, int32_t num_args) {
  size_t* order = tffi_malloc((list->n + 1) * sizeof *order);
  if (order == NULL) return tffi_raise_oom(list->n * sizeof *order);
  size_t npos = tffi_positional(list, order);
  int32_t kw = -1;
  for (int32_t i = 0; i < num_args && kw < 0; ++i)
    if (tffi_is_kwargs_marker(&args[i])) kw = i;
  int32_t given = kw < 0 ? num_args : kw;
  int rc = 0;
  if ((size_t)given > npos)
    rc = tffi_raise(TFFI_TYPE_ERROR,
                    "%s.__ffi_init__() takes at most %zu positional argument(s), but %d were given",
                    key, npos, (int)given);
  for (int32_t i = 0; i < given && rc == 0; ++i)
    rc = tffi_bind(key, obj, list, order[i], &args[i], "field");
  tffi_free(order);
  if (rc == 0 && kw >= 0 && (num_args - kw - 1) % 2 != 0)
    rc = tffi_raise(TFFI_TYPE_ERROR,
                    "%s.__ffi_init__() KWARGS requires an even number of key-value arguments", key);
  for (int32_t i = kw + 1; kw >= 0 && i < num_args && rc == 0; i += 2) {
    const char* name;
    size_t len;
    if (tffi_args_str(key, args, i, "keyword", &name, &len)) return -1;
    size_t at = 0;
    while (at < list->n && !(tffi_name_is(list->items[at], name, len) &&
                             !tffi_field_is(list->items[at], kTVMFFIFieldFlagBitMaskInitOff)))
      ++at;
    if (at == list->n)
      return tffi_raise(TFFI_TYPE_ERROR,
                        "%s.__ffi_init__() got an unexpected keyword argument '%.*s'", key,
                        (int)len, name);
    if (list->set[at])
      return tffi_raise(TFFI_TYPE_ERROR,
                        "%s.__ffi_init__() got multiple values for argument '%.*s'", key, (int)len,
                        name);
    rc = tffi_bind(key, obj, list, at, &args[i + 1], "field");
  }
  for (size_t i = 0; i < list->n && rc == 0; ++i) {
    const TVMFFIFieldInfo* f = list->items[i];
    if (list->set[i]) continue;
    if (tffi_field_is(f, kTVMFFIFieldFlagBitMaskHasDefault)) {
      rc = tffi_bind(key, obj, list, i, NULL, "default for field");
    } else if (!tffi_field_is(f, kTVMFFIFieldFlagBitMaskInitOff)) {
      rc = tffi_raise(TFFI_TYPE_ERROR, "%s.__ffi_init__() missing required %sargument: '%.*s'", key,
                      tffi_field_is(f, kTVMFFIFieldFlagBitMaskKwOnly) ? "keyword-only " : "",
                      (int)f->name.size, f->name.data);
    }
  }
  return rc;
}

/* The auto-made __ffi_init__ of the type whose index is `self`. */
static int tffi_auto_init_call(void* self, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo((int32_t)(intptr_t)self);
  if (info == NULL) return -1;
  TffiFieldList* list = tffi_field_list(info);
  if (list == NULL) return -1;
  TVMFFIObject* obj = tffi_object_create_empty(info);
  int rc = obj ? tffi_bind_args(info->type_key.data, obj, list, args, num_args) : -1;
  tffi_field_list_free(list);
  if (rc != 0) {
    if (obj) tffi_decref(obj);
    return -1;
  }
  *result = tffi_any_object(obj);
  return 0;
}

static int tffi_register_init_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  int64_t type_index = 0;
  if (tffi_args_count(self, num_args, 1) || tffi_args_int(self, args, 0, "type_index", &type_index))
    return -1;
  if (type_index < kTVMFFIStaticObjectBegin || type_index > INT32_MAX ||
      TVMFFIGetTypeInfo((int32_t)type_index) == NULL)
    return tffi_args_error(TFFI_VALUE_ERROR, self, 0, "type_index",
                           "%lld is not a registered object type", (long long)type_index);
  TVMFFIObject* init = tffi_function_new((void*)(intptr_t)type_index, tffi_auto_init_call, NULL);
  if (init == NULL) return -1;
  TVMFFIAny value = tffi_any_object(init);
  TVMFFIByteArray attr = {"__ffi_init__", 12};
  int rc = TVMFFITypeRegisterAttr((int32_t)type_index, &attr, &value);
  tffi_decref(init);
  if (rc == 0) *result = tffi_any_none();
  return rc;
}

/* The type named by args[0]: a type index, or a type key. */
static const TVMFFITypeInfo* tffi_type_arg(const char* fn, const TVMFFIAny* args) {
  int32_t index;
  const char* key;
  size_t len;
  if (args[0].type_index == kTVMFFIInt) {
    index = (int32_t)args[0].v_int64;
  } else {
    if (tffi_args_str(fn, args, 0, "type", &key, &len)) return NULL;
    TVMFFIByteArray type_key = {key, len};
    if (TVMFFITypeKeyToIndex(&type_key, &index) != 0) return NULL;
  }
  return TVMFFIGetTypeInfo(index);
}

/* Sets each field from the argument of its name, else its default. */
static int tffi_set_named(const char* fn, const TVMFFITypeInfo* info, TVMFFIObject* obj,
                          const TffiFieldList* list, const TVMFFIAny* args, int32_t num_args,
                          char* used) {
  for (size_t i = 0; i < list->n; ++i) {
    const TVMFFIFieldInfo* f = list->items[i];
    void* addr = (char*)obj + f->offset;
    int32_t at = 1;
    for (const char* key; at < num_args; at += 2) {
      size_t len;
      if (!used[at / 2] && tffi_args_str(fn, args, at, "name", &key, &len) == 0 &&
          tffi_name_is(f, key, len))
        break;
    }
    int rc;
    if (at < num_args) {
      used[at / 2] = 1;
      rc = tffi_field_set(f, addr, &args[at + 1]);
    } else if (tffi_field_is(f, kTVMFFIFieldFlagBitMaskHasDefault)) {
      rc = tffi_field_set_default(f, addr);
    } else {
      rc = tffi_raise(TFFI_TYPE_ERROR, "Required field `%.*s` not set in type `%.*s`",
                      (int)f->name.size, f->name.data, (int)info->type_key.size,
                      info->type_key.data);
    }
    if (rc != 0) return -1;
  }
  for (int32_t at = 1; at < num_args; at += 2) {
    const char* key;
    size_t len;
    if (!used[at / 2] && tffi_args_str(fn, args, at, "name", &key, &len) == 0)
      return tffi_raise(TFFI_TYPE_ERROR, "Type `%.*s` does not have field `%.*s`",
                        (int)info->type_key.size, info->type_key.data, (int)len, key);
  }
  return 0;
}

/* "ffi.MakeObjectFromPackedArgs"(type, name0, value0, ...). */
static int tffi_make_object_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  if (num_args < 1 || num_args % 2 != 1)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "%s: expected a type and name-value pairs but got %d arguments",
                      (const char*)self, (int)num_args);
  for (int32_t at = 1; at < num_args; at += 2) {
    const char* key;
    size_t len;
    if (tffi_args_str(self, args, at, "name", &key, &len)) return -1;
  }
  const TVMFFITypeInfo* info = tffi_type_arg(self, args);
  if (info == NULL) return -1;
  TffiFieldList* list = tffi_field_list(info);
  char* used = list ? tffi_calloc((size_t)num_args / 2 + 1, 1) : NULL;
  TVMFFIObject* obj = used ? tffi_object_create_empty(info) : NULL;
  int rc = obj ? tffi_set_named(self, info, obj, list, args, num_args, used) : -1;
  if (list && used == NULL) tffi_raise_oom((size_t)num_args / 2 + 1);
  if (list) tffi_field_list_free(list);
  tffi_free(used);
  if (rc != 0) {
    if (obj) tffi_decref(obj);
    return -1;
  }
  *result = tffi_any_object(obj);
  return 0;
}

__attribute__((constructor)) static void tffi_object_init_register(void) {
  tffi_builtin_register("ffi._RegisterFFIInit", tffi_register_init_call);
  tffi_builtin_register("ffi.MakeObjectFromPackedArgs", tffi_make_object_call);
}
