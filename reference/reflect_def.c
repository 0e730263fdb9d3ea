/* The runtime's own reflected types (reflect_def.h). */
#include "reflect_def.h"

#include <stdio.h>
#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "object.h"
#include "tffi_string.h"

static TVMFFIByteArray tffi_bytes_of(const char* s) {
  TVMFFIByteArray b = {s ? s : "", s ? strlen(s) : 0};
  return b;
}

/* `{"type_schema":"<schema, its quotes escaped>"}` in buf. */
static int tffi_schema_metadata(const char* schema, char* buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "{\"type_schema\":\"");
  for (const char* p = schema; *p && n + 2 < cap; ++p) {
    if (*p == '"') buf[n++] = '\\';
    buf[n++] = *p;
  }
  if (n + 3 > cap) return tffi_raise(TFFI_VALUE_ERROR, "type schema %s is too long", schema);
  memcpy(buf + n, "\"}", 3);
  return 0;
}

/* Whether one of n records (fields or methods: each starts with its
 * name) of `stride` bytes at `records` is called `name`. */
static int tffi_has_member(const void* records, size_t stride, int32_t n, const char* name) {
  size_t len = strlen(name);
  for (int32_t i = 0; i < n; ++i) {
    const TVMFFIByteArray* have =
        (const TVMFFIByteArray*)((const char*)records + (size_t)i * stride);
    if (have->size == len && memcmp(have->data, name, len) == 0) return 1;
  }
  return 0;
}

int32_t tffi_define_type(const TffiTypeDef* def) {
  const TVMFFITypeInfo* parent = TVMFFIGetTypeInfo(def->parent);
  if (parent == NULL) return -1;
  TVMFFIByteArray key = tffi_bytes_of(def->key);
  int32_t index = TVMFFITypeGetOrAllocIndex(&key, -1, parent->type_depth + 1, 0, 1, def->parent);
  if (index < 0) return -1;
  /* Run again after a failure: what is there already stays. */
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  if (info == NULL) return -1;
  TVMFFITypeMetadata meta = {tffi_bytes_of(NULL), def->creator, def->total_size,
                             def->structural_kind};
  if (info->metadata == NULL && TVMFFITypeRegisterMetadata(index, &meta) != 0) return -1;
  char schema[512];
  for (int32_t i = 0; i < def->num_fields; ++i) {
    const TffiFieldDef* f = &def->fields[i];
    if (tffi_has_member(info->fields, sizeof *info->fields, info->num_fields, f->name)) continue;
    if (tffi_schema_metadata(f->type_schema, schema, sizeof schema) != 0) return -1;
    TVMFFIFieldInfo field;
    memset(&field, 0, sizeof field);
    field.name = tffi_bytes_of(f->name);
    field.metadata = tffi_bytes_of(schema);
    field.flags = f->flags;
    field.size = f->size;
    field.alignment = f->alignment;
    field.offset = f->offset;
    field.getter = f->getter;
    field.setter = (void*)f->setter;
    field.field_static_type_index = f->static_type_index;
    if (TVMFFITypeRegisterField(index, &field) != 0) return -1;
  }
  return index;
}

int tffi_define_method(int32_t type_index, const char* name, TVMFFIObject* fn, int is_static,
                       const char* schema) {
  const TVMFFITypeInfo* type = TVMFFIGetTypeInfo(type_index);
  if (type == NULL) return -1;
  if (tffi_has_member(type->methods, sizeof *type->methods, type->num_methods, name)) return 0;
  char metadata[512];
  if (tffi_schema_metadata(schema, metadata, sizeof metadata) != 0) return -1;
  TVMFFIMethodInfo info;
  memset(&info, 0, sizeof info);
  info.name = tffi_bytes_of(name);
  info.metadata = tffi_bytes_of(metadata);
  info.flags = is_static ? kTVMFFIFieldFlagBitMaskIsStaticMethod : 0;
  info.method = tffi_any_object(fn);
  return TVMFFITypeRegisterMethod(type_index, &info);
}

int tffi_define_attr(int32_t type_index, const char* name, const TVMFFIAny* value) {
  TVMFFIByteArray attr = tffi_bytes_of(name);
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&attr);
  if (column == NULL) tffi_set_raised(NULL); /* no column yet: nothing there */
  int32_t at = column ? type_index - column->begin_index : -1;
  if (at >= 0 && at < column->size && column->data[at].type_index != kTVMFFINone) return 0;
  return TVMFFITypeRegisterAttr(type_index, &attr, value);
}

int tffi_field_get_object(void* field, TVMFFIAny* result) {
  TVMFFIObject* obj = *(TVMFFIObject**)field;
  if (obj) tffi_incref(obj);
  *result = tffi_any_object(obj);
  return 0;
}

int tffi_field_set_object(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFINone && value->type_index < kTVMFFIStaticObjectBegin)
    return tffi_raise(TFFI_TYPE_ERROR, "field setter: expected an object but got type index %d",
                      (int)value->type_index);
  TVMFFIObject** slot = field;
  TVMFFIObject* old = *slot;
  *slot = value->type_index == kTVMFFINone ? NULL : value->v_obj;
  if (*slot) tffi_incref(*slot);
  if (old) tffi_decref(old);
  return 0;
}

int tffi_field_get_int(void* field, TVMFFIAny* result) {
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  memcpy(&result->v_int64, field, sizeof(int64_t));
  return 0;
}

int tffi_field_set_int(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt && value->type_index != kTVMFFIBool)
    return tffi_raise(TFFI_TYPE_ERROR, "field setter: expected int but got type index %d",
                      (int)value->type_index);
  memcpy(field, &value->v_int64, sizeof(int64_t));
  return 0;
}

int tffi_field_get_str(void* field, TVMFFIAny* result) {
  return tffi_any_copy_owned((const TVMFFIAny*)field, result);
}

int tffi_field_set_str(void* field, const TVMFFIAny* value) {
  int32_t t = value->type_index;
  if (t != kTVMFFIStr && t != kTVMFFISmallStr && t != kTVMFFIRawStr)
    return tffi_raise(TFFI_TYPE_ERROR, "field setter: expected str but got type index %d", (int)t);
  TVMFFIAny owned;
  if (tffi_any_copy_owned(value, &owned) != 0) return -1;
  TVMFFIAny* slot = field;
  TVMFFIAny old = *slot;
  *slot = owned;
  tffi_any_release(&old);
  return 0;
}
