/* Tensor helpers for the runtime's unit tests. No TVMFFI* function needs
 * them, so they live here rather than in the runtime, where they would be
 * code no conformance test can reach. */
#ifndef TFFI_TENSOR_TEST_SUPPORT_H_
#define TFFI_TENSOR_TEST_SUPPORT_H_

#include <stdint.h>
#include <string.h>

#include "tffi_error.h"
#include "mem.h"
#include "tensor.h"

/* Element count of checked metadata (1 for ndim 0). A zero dimension is
 * looked for first: the others of an empty tensor may be anything, and
 * their running product could overflow. */
static inline int64_t test_dltensor_numel(const DLTensor* t) {
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return 0;
  }
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* Byte size of checked metadata: ceil(numel * bits * lanes / 8). */
static inline int64_t test_dltensor_nbytes(const DLTensor* t) {
  return (test_dltensor_numel(t) * t->dtype.bits * t->dtype.lanes + 7) / 8;
}

static inline void test_free_buffer(void* ctx) { tffi_free(ctx); }

/* A CPU tensor owning zero-filled, 64-byte aligned memory of the given
 * shape and dtype (compact strides); errors as tffi_dltensor_check_in and
 * tffi_tensor_new_checked. */
static inline int test_tensor_alloc_cpu(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                        TVMFFIObject** out) {
  DLTensor proto = {.data = NULL,
                    .device = {kDLCPU, 0},
                    .ndim = ndim,
                    .dtype = dtype,
                    .shape = (int64_t*)shape,
                    .strides = NULL,
                    .byte_offset = 0};
  if (tffi_dltensor_check_in("test", &proto, "shape") != 0) return -1;
  int64_t nbytes = test_dltensor_nbytes(&proto);
  if (nbytes > INT64_MAX - 64) return tffi_raise_oom((size_t)-1);
  /* aligned_alloc wants a multiple of the alignment, and never size 0. */
  size_t size = ((size_t)nbytes + 63) / 64 * 64;
  if (size == 0) size = 64;
  void* data = tffi_aligned_alloc(64, size);
  if (data == NULL) return tffi_raise_oom(size);
  memset(data, 0, size);
  proto.data = data;
  if (tffi_tensor_new_checked(&proto, test_free_buffer, data, out) != 0) {
    tffi_free(data);
    return -1;
  }
  return 0;
}

#endif /* TFFI_TENSOR_TEST_SUPPORT_H_ */
