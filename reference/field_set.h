/* Writing reflected fields and making blank objects, as the constructors
 * built from reflection need (object_init.c, deep copy): through a field's
 * setter (a function pointer, or a Function object when the field says
 * so), its default (a value, or a factory to call), and a type's creator or
 * `__ffi_new__` attribute. */
#ifndef TFFI_FIELD_SET_H_
#define TFFI_FIELD_SET_H_

#include <tvm/ffi/c_api.h>

/* Sets the field at addr to value; 0, or -1 with the setter's error. */
int tffi_field_set(const TVMFFIFieldInfo* field, void* addr, const TVMFFIAny* value);

/* Sets the field at addr to its default (the field must have one). */
int tffi_field_set_default(const TVMFFIFieldInfo* field, void* addr);

/* Re-raises the error just raised for `field` as upstream words it: the
 * same kind, its message under "<key>.__ffi_init__() <what> '<name>':".
 * Returns -1. */
int tffi_field_error_rename(const char* key, const char* what, const TVMFFIFieldInfo* field);

/* A new object of the type with nothing set (a new reference), from the
 * type's creator or its `__ffi_new__` attribute; NULL with the error
 * raised (RuntimeError when the type has neither). */
TVMFFIObject* tffi_object_create_empty(const TVMFFITypeInfo* info);

#endif
