/* Types the runtime itself defines with reflection records (fields,
 * methods, metadata), the way upstream's runtime registers its own
 * reflected types: one table per type, registered at load through the
 * public TVMFFIType* API, so a reader sees them exactly as it sees a
 * library's types. */
#ifndef TFFI_REFLECT_DEF_H_
#define TFFI_REFLECT_DEF_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* A field: where it is, how it is read and written, what it holds. */
typedef struct {
  const char* name;
  int64_t offset, size, alignment, flags;
  int32_t static_type_index; /* -1 when the field holds no one kind */
  TVMFFIFieldGetter getter;
  TVMFFIFieldSetter setter;
  const char* type_schema; /* JSON, as upstream writes it into the metadata */
} TffiFieldDef;

typedef struct {
  const char* key;
  int32_t parent; /* the parent's type index (its depth is looked up) */
  int32_t total_size;
  TVMFFIObjectCreator creator;
  int32_t structural_kind; /* TVMFFISEqHashKind */
  const TffiFieldDef* fields;
  int32_t num_fields;
} TffiTypeDef;

/* Registers the type, its metadata and fields; returns its index, or -1
 * with the error raised. Safe to run again: the key of an existing type
 * keeps its index, and metadata and fields already there stay. */
int32_t tffi_define_type(const TffiTypeDef* def);

/* Registers `fn` (a Function, borrowed) as the method `name` of the type,
 * with the type schema `schema` in its metadata (static: flags bit 2),
 * unless the type has a method of that name already. */
int tffi_define_method(int32_t type_index, const char* name, TVMFFIObject* fn, int is_static,
                       const char* schema);

/* Sets the type attribute `name` of the type to the value, unless the
 * type has a value there already (so that a definition can run again). */
int tffi_define_attr(int32_t type_index, const char* name, const TVMFFIAny* value);

/* Field accessors for the common field kinds. An object field is a pointer
 * to an object (NULL reads as None); an int field an int64_t; a text field
 * a 16-byte value holding a str (small or heap). Each setter takes one
 * kind (the object setter: any object or None). */
int tffi_field_get_object(void* field, TVMFFIAny* result);
int tffi_field_set_object(void* field, const TVMFFIAny* value);
int tffi_field_get_int(void* field, TVMFFIAny* result);
int tffi_field_set_int(void* field, const TVMFFIAny* value);
int tffi_field_get_str(void* field, TVMFFIAny* result);
int tffi_field_set_str(void* field, const TVMFFIAny* value);

#endif
