/* Reflection records of registered types (fields, methods, metadata) and
 * the type-attribute columns: what reflection.c and type_attr.c share. */
#ifndef TFFI_REFLECTION_H_
#define TFFI_REFLECTION_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* Longest field, method or attribute name accepted. */
#define TFFI_REFLECT_NAME_MAX 4096

/* Longest doc or metadata text accepted (docstrings can be long). */
#define TFFI_REFLECT_TEXT_MAX (1 << 20)

/* Most fields, and most methods, one type may hold. */
#define TFFI_REFLECT_MEMBERS_MAX 65536

/* Most attribute columns the runtime holds. */
#define TFFI_REFLECT_COLUMNS_MAX 65536

/*
 * Copies the caller's byte array `in` (named `arg` in errors raised for
 * `api`) into *out: a NUL-terminated heap copy, also when empty. Refuses
 * NULL, data NULL with a size, and more than `max` bytes with ValueError.
 * Returns 0, or -1 with the error raised.
 */
int tffi_reflect_copy_bytes(const char* api, const char* arg, const TVMFFIByteArray* in, size_t max,
                            TVMFFIByteArray* out);

/*
 * Makes *out an owned copy of the caller's value `view` (named `arg`), as
 * TVMFFIAnyViewToOwnedAny would, after refusing a type_index that names no
 * value kind with TypeError. Returns 0, or -1 with the error raised.
 */
int tffi_reflect_copy_value(const char* api, const char* arg, const TVMFFIAny* view,
                            TVMFFIAny* out);

#endif
