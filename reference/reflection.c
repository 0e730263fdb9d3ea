/* Type reflection: the field, method and metadata records that libraries
 * register for their types as they load (TVMFFITypeRegisterField, ...Method,
 * ...Metadata) and that TVMFFIGetTypeInfo then shows. */
#include "reflection.h"

#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "mem.h"
#include "object.h"
#include "type.h"

int tffi_reflect_copy_bytes(const char* api, const char* arg, const TVMFFIByteArray* in, size_t max,
                            TVMFFIByteArray* out) {
  if (in == NULL) return tffi_raise(TFFI_VALUE_ERROR, "%s: %s is NULL", api, arg);
  if (in->data == NULL && in->size != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: %s.data is NULL with size %zu", api, arg, in->size);
  if (in->size > max)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: %s is %zu bytes long, more than %zu", api, arg,
                      in->size, max);
  char* copy = tffi_malloc(in->size + 1);
  if (copy == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", api);
  if (in->size) memcpy(copy, in->data, in->size);
  copy[in->size] = '\0';
  out->data = copy;
  out->size = in->size;
  return 0;
}

int tffi_reflect_copy_value(const char* api, const char* arg, const TVMFFIAny* view,
                            TVMFFIAny* out) {
  int32_t kind = view->type_index;
  if (kind < kTVMFFINone || (kind > kTVMFFIUnchanged && kind < kTVMFFIStaticObjectBegin))
    return tffi_raise(TFFI_TYPE_ERROR, "%s: %s has type_index %d, which names no value kind", api,
                      arg, (int)kind);
  /* An rvalue reference moves out of its slot: give it a slot of our own. */
  TVMFFIAny local = *view;
  if (tffi_any_copy_owned(&local, out) == 0) return 0;
  /* Only a text copied into a heap value allocates, and the copy's own
   * MemoryError names no call: say which registration ran out. */
  const TVMFFIByteArray* bytes = kind == kTVMFFIByteArrayPtr ? view->v_ptr : NULL;
  int text = (kind == kTVMFFIRawStr && view->v_c_str != NULL) ||
             (bytes != NULL && (bytes->data != NULL || bytes->size == 0));
  if (text) return tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory copying %s", api, arg);
  return -1;
}

/* The three texts every field and method record owns. */
typedef struct {
  TVMFFIByteArray name, doc, metadata;
} TffiTexts;

static void tffi_texts_free(TffiTexts* t) {
  tffi_free((void*)t->name.data);
  tffi_free((void*)t->doc.data);
  tffi_free((void*)t->metadata.data);
  memset(t, 0, sizeof *t);
}

static int tffi_texts_copy(const char* api, const TVMFFIByteArray* name, const TVMFFIByteArray* doc,
                           const TVMFFIByteArray* metadata, TffiTexts* out) {
  memset(out, 0, sizeof *out);
  if (tffi_reflect_copy_bytes(api, "info->name", name, TFFI_REFLECT_NAME_MAX, &out->name) ||
      tffi_reflect_copy_bytes(api, "info->doc", doc, TFFI_REFLECT_TEXT_MAX, &out->doc) ||
      tffi_reflect_copy_bytes(api, "info->metadata", metadata, TFFI_REFLECT_TEXT_MAX,
                              &out->metadata)) {
    tffi_texts_free(out);
    return -1;
  }
  return 0;
}

static int tffi_bytes_eq(const TVMFFIByteArray* a, const TVMFFIByteArray* b) {
  return a->size == b->size && (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}

/* The runtime never reads a field itself, but readers of the record do:
 * a geometry no C object can have is refused where it arrives. */
static int tffi_check_field_geometry(const char* api, const TVMFFIFieldInfo* info) {
  if (info->size < 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: info->size %lld is negative", api,
                      (long long)info->size);
  if (info->offset < 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: info->offset %lld is negative", api,
                      (long long)info->offset);
  if (info->alignment <= 0 || (info->alignment & (info->alignment - 1)) != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: info->alignment %lld is not a power of two", api,
                      (long long)info->alignment);
  return 0;
}

/* The references a field record holds besides its texts: the default value
 * and, with kTVMFFIFieldFlagBitSetterIsFunctionObj, the setter object. */
static int tffi_field_take_refs(const char* api, const TVMFFIFieldInfo* info,
                                TVMFFIFieldInfo* rec) {
  rec->default_value_or_factory = tffi_any_none();
  if ((info->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) && info->setter != NULL) {
    TVMFFIObject* setter = info->setter;
    if (setter->type_index != kTVMFFIFunction)
      return tffi_raise(TFFI_TYPE_ERROR,
                        "%s: info->setter is flagged as a function object but has type_index %d",
                        api, (int)setter->type_index);
    tffi_incref(setter);
  }
  if (info->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
    if (tffi_reflect_copy_value(api, "info->default_value_or_factory",
                                &info->default_value_or_factory, &rec->default_value_or_factory)) {
      if ((info->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) && info->setter != NULL)
        tffi_decref(info->setter);
      return -1;
    }
  }
  return 0;
}

static void tffi_field_drop(TVMFFIFieldInfo* rec) {
  TffiTexts texts = {rec->name, rec->doc, rec->metadata};
  tffi_texts_free(&texts);
  tffi_any_release(&rec->default_value_or_factory);
  if ((rec->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) && rec->setter != NULL)
    tffi_decref(rec->setter);
}

/* Lock held. Appends `rec` to the type's fields unless its name is taken. */
static int tffi_field_append(const char* api, TVMFFITypeInfo* type, const TVMFFIFieldInfo* rec) {
  for (int32_t i = 0; i < type->num_fields; ++i)
    if (tffi_bytes_eq(&type->fields[i].name, &rec->name))
      return tffi_raise(
          TFFI_RUNTIME_ERROR, "%s: info->name `%.*s` is already a field of type `%.*s`", api,
          (int)rec->name.size, rec->name.data, (int)type->type_key.size, type->type_key.data);
  if (type->num_fields >= TFFI_REFLECT_MEMBERS_MAX)
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: type `%.*s` already has %d fields", api,
                      (int)type->type_key.size, type->type_key.data, TFFI_REFLECT_MEMBERS_MAX);
  size_t bytes = ((size_t)type->num_fields + 1) * sizeof *type->fields;
  TVMFFIFieldInfo* grown = tffi_realloc((void*)type->fields, bytes);
  if (grown == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", api);
  grown[type->num_fields] = *rec;
  type->fields = grown;
  type->num_fields += 1;
  return 0;
}

static int tffi_unknown_type(const char* api, int32_t type_index) {
  return tffi_raise(TFFI_KEY_ERROR, "%s: type_index %d is not a registered type", api,
                    (int)type_index);
}

int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info) {
  const char* api = "TVMFFITypeRegisterField";
  if (info == NULL) return tffi_raise(TFFI_VALUE_ERROR, "%s: info is NULL", api);
  if (tffi_check_field_geometry(api, info)) return -1;
  TVMFFIFieldInfo rec = *info;
  TffiTexts texts;
  if (tffi_texts_copy(api, &info->name, &info->doc, &info->metadata, &texts)) return -1;
  rec.name = texts.name;
  rec.doc = texts.doc;
  rec.metadata = texts.metadata;
  if (tffi_field_take_refs(api, info, &rec)) {
    tffi_texts_free(&texts);
    return -1;
  }
  TVMFFITypeInfo* type = tffi_type_lock(type_index);
  int rc = type ? tffi_field_append(api, type, &rec) : tffi_unknown_type(api, type_index);
  tffi_type_unlock();
  /* Released outside the lock: a deleter may call back into the registry. */
  if (rc) tffi_field_drop(&rec);
  return rc;
}

/* Lock held. Appends `rec` to the type's methods. Upstream keeps a name
 * registered twice twice, so this does too. */
static int tffi_method_append(const char* api, TVMFFITypeInfo* type, const TVMFFIMethodInfo* rec) {
  if (type->num_methods >= TFFI_REFLECT_MEMBERS_MAX)
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: type `%.*s` already has %d methods", api,
                      (int)type->type_key.size, type->type_key.data, TFFI_REFLECT_MEMBERS_MAX);
  size_t bytes = ((size_t)type->num_methods + 1) * sizeof *type->methods;
  TVMFFIMethodInfo* grown = tffi_realloc((void*)type->methods, bytes);
  if (grown == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", api);
  grown[type->num_methods] = *rec;
  type->methods = grown;
  type->num_methods += 1;
  return 0;
}

int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info) {
  const char* api = "TVMFFITypeRegisterMethod";
  if (info == NULL) return tffi_raise(TFFI_VALUE_ERROR, "%s: info is NULL", api);
  TVMFFIMethodInfo rec = *info;
  TffiTexts texts;
  if (tffi_texts_copy(api, &info->name, &info->doc, &info->metadata, &texts)) return -1;
  if (tffi_reflect_copy_value(api, "info->method", &info->method, &rec.method)) {
    tffi_texts_free(&texts);
    return -1;
  }
  rec.name = texts.name;
  rec.doc = texts.doc;
  rec.metadata = texts.metadata;
  TVMFFITypeInfo* type = tffi_type_lock(type_index);
  int rc = type ? tffi_method_append(api, type, &rec) : tffi_unknown_type(api, type_index);
  tffi_type_unlock();
  if (rc) {
    tffi_texts_free(&texts);
    tffi_any_release(&rec.method);
  }
  return rc;
}

int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata) {
  const char* api = "TVMFFITypeRegisterMetadata";
  if (metadata == NULL) return tffi_raise(TFFI_VALUE_ERROR, "%s: metadata is NULL", api);
  TVMFFITypeMetadata* rec = tffi_malloc(sizeof *rec);
  if (rec == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", api);
  *rec = *metadata;
  if (tffi_reflect_copy_bytes(api, "metadata->doc", &metadata->doc, TFFI_REFLECT_TEXT_MAX,
                              &rec->doc)) {
    tffi_free(rec);
    return -1;
  }
  TVMFFITypeInfo* type = tffi_type_lock(type_index);
  int rc;
  if (type == NULL) {
    rc = tffi_unknown_type(api, type_index);
  } else if (type->metadata != NULL) {
    rc = tffi_raise(TFFI_RUNTIME_ERROR, "%s: type_index %d (`%.*s`) already has metadata", api,
                    (int)type_index, (int)type->type_key.size, type->type_key.data);
  } else {
    type->metadata = rec;
    rc = 0;
  }
  tffi_type_unlock();
  if (rc) {
    tffi_free((void*)rec->doc.data);
    tffi_free(rec);
  }
  return rc;
}
