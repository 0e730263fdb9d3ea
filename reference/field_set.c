/* Writing reflected fields, making blank objects (field_set.h). */
#include "field_set.h"

#include <stdio.h>
#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "mem.h"
#include "object.h"

int tffi_field_set(const TVMFFIFieldInfo* field, void* addr, const TVMFFIAny* value) {
  if (field->setter == NULL)
    return tffi_raise(TFFI_TYPE_ERROR, "field `%.*s` has no setter", (int)field->name.size,
                      field->name.data);
  if (!(field->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj))
    return ((TVMFFIFieldSetter)field->setter)(addr, value);
  TVMFFIAny args[2] = {tffi_any_none(), *value};
  args[0].type_index = kTVMFFIOpaquePtr;
  args[0].v_ptr = addr;
  TVMFFIAny result = tffi_any_none();
  int rc = TVMFFIFunctionCall(field->setter, args, 2, &result);
  tffi_any_release(&result);
  return rc;
}

int tffi_field_set_default(const TVMFFIFieldInfo* field, void* addr) {
  if (!(field->flags & kTVMFFIFieldFlagBitMaskDefaultFromFactory))
    return tffi_field_set(field, addr, &field->default_value_or_factory);
  const TVMFFIAny* factory = &field->default_value_or_factory;
  if (factory->type_index != kTVMFFIFunction || factory->v_obj == NULL)
    return tffi_raise(TFFI_TYPE_ERROR, "field `%.*s`: its default factory is not a function",
                      (int)field->name.size, field->name.data);
  TVMFFIAny made = tffi_any_none();
  if (TVMFFIFunctionCall(factory->v_obj, NULL, 0, &made) != 0) return -1;
  int rc = tffi_field_set(field, addr, &made);
  tffi_any_release(&made);
  return rc;
}

int tffi_field_error_rename(const char* key, const char* what, const TVMFFIFieldInfo* field) {
  TVMFFIObjectHandle raised = NULL;
  TVMFFIErrorMoveFromRaised(&raised);
  if (raised == NULL) return -1;
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(raised);
  /* The cause's message indented under the field it concerns. */
  size_t cap = cell->message.size * 3 + strlen(key) + strlen(what) + field->name.size + 64;
  char* text = tffi_malloc(cap);
  if (text == NULL) {
    tffi_set_raised(raised); /* the original says at least what went wrong */
    return -1;
  }
  size_t n = (size_t)snprintf(text, cap, "%s.__ffi_init__() %s '%.*s':\n  ", key, what,
                              (int)field->name.size, field->name.data);
  for (size_t i = 0; i < cell->message.size && n + 3 < cap; ++i) {
    text[n++] = cell->message.data[i];
    if (cell->message.data[i] == '\n') text[n++] = ' ', text[n++] = ' ';
  }
  TVMFFIByteArray message = {text, n};
  TVMFFIObject* renamed = tffi_error_new(&cell->kind, &message, &cell->backtrace, raised, NULL);
  tffi_free(text);
  if (renamed == NULL) {
    tffi_set_raised(raised);
    return -1;
  }
  tffi_decref(raised);
  tffi_set_raised(renamed);
  return -1;
}

TVMFFIObject* tffi_object_create_empty(const TVMFFITypeInfo* info) {
  TVMFFIObjectHandle made = NULL;
  if (info->metadata != NULL && info->metadata->creator != NULL)
    return info->metadata->creator(&made) == 0 ? made : NULL;
  TVMFFIByteArray name = {"__ffi_new__", 11};
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&name);
  int32_t offset = column ? info->type_index - column->begin_index : -1;
  if (offset >= 0 && offset < column->size && column->data[offset].type_index == kTVMFFIFunction) {
    TVMFFIAny result = tffi_any_none();
    if (TVMFFIFunctionCall(column->data[offset].v_obj, NULL, 0, &result) != 0) return NULL;
    if (result.type_index >= kTVMFFIStaticObjectBegin && result.v_obj != NULL) return result.v_obj;
    tffi_any_release(&result);
  }
  tffi_raise(TFFI_RUNTIME_ERROR,
             "Type `%.*s` does not support reflection creation (no native creator or __ffi_new__ "
             "type attr)",
             (int)info->type_key.size, info->type_key.data);
  return NULL;
}
