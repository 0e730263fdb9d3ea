/* The values of one call, made in the call's process: every argument
 * built from its CertCall description (tensors whose data ends right at an
 * unreadable page, objects made by the runtime, arrays and shapes by its
 * global functions), released after the call, and a str result read back.
 * Also the guard regions a fault handler names the argument of. */
#ifndef CERT_PROBE_ARGS_H_
#define CERT_PROBE_ARGS_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "probe_call.h"
#include "probe_protocol.h"

/* The runtime's C API, resolved on the runtime handle by the worker
 * (probe_child.c) before any call. */
typedef struct {
  void (*error_move)(TVMFFIObjectHandle*);
  int (*dec_ref)(TVMFFIObjectHandle);
  int (*string_from)(const TVMFFIByteArray*, TVMFFIAny*);
  int (*bytes_from)(const TVMFFIByteArray*, TVMFFIAny*);
  int (*tensor_from)(DLManagedTensorVersioned*, int32_t, int32_t, TVMFFIObjectHandle*);
  int (*function_create)(void*, TVMFFISafeCallType, void (*)(void*), TVMFFIObjectHandle*);
  int (*error_create)(const TVMFFIByteArray*, const TVMFFIByteArray*, const TVMFFIByteArray*,
                      TVMFFIObjectHandle*);
  int (*get_global)(const TVMFFIByteArray*, TVMFFIObjectHandle*);
  int (*function_call)(TVMFFIObjectHandle, TVMFFIAny*, int32_t, TVMFFIAny*);
  const TVMFFITypeInfo* (*type_info)(int32_t);
} CertRuntimeApi;

extern CertRuntimeApi cert_api;

/* Fills cert_api from the runtime's dlopen handle. Returns 0, or -1 naming
 * in `missing` the first required symbol the runtime lacks. */
int cert_api_resolve(void* runtime, char* missing, size_t n);

/* An owned result must be None, an inline value, or an object of its
 * stated type with at least one reference; views are not owned values. */
int cert_result_is_valid(const TVMFFIAny* r);

typedef struct {
  DLTensor dl;
  int64_t shape[CERT_MAX_NDIM];
  int64_t strides[CERT_MAX_NDIM];
  void* map_base;
  size_t map_len;
  void* before; /* copy of the data bytes before the call */
  size_t span_bytes;
  DLManagedTensorVersioned managed;
} TensorBox;

typedef struct {
  TVMFFIAny* args;
  void* args_base;
  size_t args_len;
  TVMFFIAny owned[CERT_MAX_ARGS]; /* objects to release after the call */
  TensorBox* boxes[CERT_MAX_ARGS];
  TVMFFIAny item_values[CERT_MAX_ITEMS]; /* the elements of array arguments */
  TVMFFIAny item_owned[CERT_MAX_ITEMS];
  TensorBox* item_boxes[CERT_MAX_ITEMS];
  void* guard_page;
  uint32_t refs_before[CERT_MAX_ARGS];
} Built;

static inline int32_t cert_strong_count(TVMFFIObject* obj) {
  return (int32_t)(obj->combined_ref_count & 0xffffffffu);
}

/* Builds call->args into b (guard_page: the unreadable page given as device
 * data and opaque pointers); 0, or -1 with `note` saying why. */
int cert_args_build(const CertCall* call, Built* b, void* guard_page, char* note, size_t nn);
void cert_args_release(Built* b, int32_t nargs);

/* A str value (small or object) copied into *out (malloc'd, at most
 * CERT_TEXT_MAX bytes); 0, or -1 when it is no str. */
int cert_str_text(const TVMFFIAny* r, char** out);

/* The value the children write into element i of tensor argument `arg`
 * (exact in every float type down to float16/bfloat16), as a double. */
double cert_fill_value(int32_t arg, int64_t i);

/* Guard regions: a fault in [start, start + len) is blamed on `region` and
 * argument `arg`. cert_guard_find leaves *region and *arg as they are
 * when no region holds addr; it is async-signal-safe. */
void cert_guard_add(void* start, size_t len, CertRegion region, int32_t arg);
void cert_guards_reset(void);
void cert_guard_find(uintptr_t addr, int32_t* region, int32_t* arg);

size_t cert_page_size(void);

/* A mapping of `len` usable bytes that ends exactly at an unreadable page
 * (or, with `align`, as near it as a start at a multiple of `align`
 * allows). Returns the start of the usable bytes (or the guard page itself
 * when len is 0); *base and *total say what to unmap. */
void* cert_guarded_alloc(size_t len, size_t align, void** base, size_t* total, void** guard);

#endif
