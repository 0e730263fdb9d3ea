/* The arguments a probe hands a kernel, built from a CertCall (probe_call.h)
 * in the process that makes the call: every argument kind, tensors whose
 * data ends right before an unreadable page, an argument array that ends
 * right before one, device data that is an unreadable page. The guard
 * pages are registered as regions, so that a fault can be told apart (an
 * argument read past the array, a write past a tensor's end).
 *
 * Shared by certify's probe children (probe_child.c) and the kernel fuzzer
 * (fuzz/kernel_fuzz.c): both call kernels with exactly these arguments. */
#ifndef CERT_PROBE_ARGS_H_
#define CERT_PROBE_ARGS_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "probe_call.h"

/* The runtime's C API, resolved on the runtime's dlopen handle: the probes
 * never link a runtime. */
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
} CertApi;

extern CertApi cert_api;

/* Fills cert_api from the runtime handle. Returns 0, or -1 naming the
 * first required symbol the runtime lacks in `missing`. */
int cert_api_resolve(void* runtime, char* missing, size_t n);

/* Where a fault landed. */
typedef enum {
  CERT_REGION_UNKNOWN = 0,
  CERT_REGION_ARGS_END,    /* the page right after args[num_args - 1] */
  CERT_REGION_DATA_END,    /* the page right after a tensor's last element */
  CERT_REGION_DATA_GUARD,  /* the unreadable page given as a non-CPU tensor's data */
  CERT_REGION_PTR_GUARD,   /* the unreadable page given as an opaque pointer */
  CERT_REGION_HEAP_END,    /* the page right after a strict-heap block (strict_heap.h) */
} CertRegion;

/* The guard regions of the arguments being built; cert_region_find is
 * async-signal-safe (a fault handler calls it). */
void cert_regions_clear(void);
void cert_region_add(void* start, size_t len, CertRegion region, int32_t arg);
void cert_region_find(uint64_t addr, int32_t* region, int32_t* arg);

size_t cert_page_size(void);

/* A mapping of `len` usable bytes that ends exactly at an unreadable page
 * (or, with `align`, as near it as a start at a multiple of `align`
 * allows). Returns the start of the usable bytes (or the guard page itself
 * when len is 0); *base and *total say what to unmap, *guard where the
 * page is. */
void* cert_guarded_alloc(size_t len, size_t align, void** base, size_t* total, void** guard);

typedef struct {
  DLTensor dl;
  int64_t shape[CERT_MAX_NDIM];
  int64_t strides[CERT_MAX_NDIM];
  void* map_base;
  size_t map_len;
  void* before; /* copy of the data bytes before the call */
  size_t span_bytes;
  DLManagedTensorVersioned managed;
} CertTensorBox;

typedef struct {
  TVMFFIAny* args;
  void* args_base;
  size_t args_len;
  TVMFFIAny owned[CERT_MAX_ARGS]; /* objects to release after the call */
  CertTensorBox* boxes[CERT_MAX_ARGS];
  TVMFFIAny item_values[CERT_MAX_ITEMS]; /* the elements of array arguments */
  TVMFFIAny item_owned[CERT_MAX_ITEMS];
  CertTensorBox* item_boxes[CERT_MAX_ITEMS];
  void* guard_page;
  uint32_t refs_before[CERT_MAX_ARGS];
} CertBuilt;

/* Builds the call's arguments (guard_page: an unreadable page, given as
 * device data and guard pointers). Returns 0, or -1 with the reason in
 * note; either way cert_release_built releases what was made. */
int cert_build_all(const CertCall* call, CertBuilt* b, void* guard_page, char* note, size_t nn);
void cert_release_built(CertBuilt* b, int32_t nargs);

/* The value the children write into element i of tensor argument `arg`
 * (exact in every float type down to float16/bfloat16), as a double. */
double cert_fill_value(int32_t arg, int64_t i);

/* An owned result must be None, an inline value, or an object of its
 * stated type with at least one reference; views are not owned values. */
int cert_result_is_valid(const TVMFFIAny* r);

static inline int32_t cert_strong_count(TVMFFIObject* obj) {
  return (int32_t)(obj->combined_ref_count & 0xffffffffu);
}

#endif
