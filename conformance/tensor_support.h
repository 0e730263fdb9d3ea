/* Shared helpers of the tensor and environment conformance tests: DLPack
 * producers whose deleters count their calls. Raised errors are checked with
 * EXPECT_RAISED (core_support.h). */
#ifndef CONFORMANCE_TENSOR_SUPPORT_H_
#define CONFORMANCE_TENSOR_SUPPORT_H_

#include <stdint.h>
#include <string.h>

#include "core_support.h"

/* A producer of one managed tensor (versioned or legacy) over a static
 * buffer; its deleter counts calls and records the pointer it got. */
typedef struct {
  DLManagedTensorVersioned v;
  DLManagedTensor legacy;
  int64_t shape[8];
  int64_t strides[8];
  int deleted;
  void* deleted_arg;
} Producer;

static _Alignas(64) float producer_buffer[256];

static void producer_delete_v(DLManagedTensorVersioned* m) {
  Producer* p = m->manager_ctx;
  p->deleted++;
  p->deleted_arg = m;
}

static void producer_delete_legacy(DLManagedTensor* m) {
  Producer* p = m->manager_ctx;
  p->deleted++;
  p->deleted_arg = m;
}

/* A float32 CPU tensor of shape {2, 3} at producer_buffer, NULL strides,
 * in both the versioned and the legacy managed form. */
static inline void producer_init(Producer* p) {
  memset(p, 0, sizeof *p);
  p->shape[0] = 2;
  p->shape[1] = 3;
  DLTensor t = {.data = producer_buffer,
                .device = {kDLCPU, 0},
                .ndim = 2,
                .dtype = {kDLFloat, 32, 1},
                .shape = p->shape,
                .strides = NULL,
                .byte_offset = 0};
  p->v.version.major = DLPACK_MAJOR_VERSION;
  p->v.version.minor = DLPACK_MINOR_VERSION;
  p->v.manager_ctx = p;
  p->v.deleter = producer_delete_v;
  p->v.dl_tensor = t;
  p->legacy.manager_ctx = p;
  p->legacy.deleter = producer_delete_legacy;
  p->legacy.dl_tensor = t;
}

static inline DLTensor* tensor_dl(TVMFFIObjectHandle t) { return TVMFFITensorGetDLTensorPtr(t); }

/* Imports p's versioned tensor with the given alignment and contiguity
 * requirements; the import must succeed and give a tensor. */
static inline TVMFFIObjectHandle tensor_import_v(Producer* p, int32_t align, int32_t contig) {
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p->v, align, contig, &out);
  cr_assert_eq(rc, 0, "versioned import failed (rc %d)", rc);
  cr_assert_not_null(out);
  return out;
}

/* Checks the DLTensor fields that a zero-copy exchange must keep. */
static inline void expect_same_tensor(const DLTensor* got, const DLTensor* want) {
  cr_expect_eq(got->data, want->data, "data pointer changed");
  cr_expect_eq(got->device.device_type, want->device.device_type, "device type");
  cr_expect_eq(got->device.device_id, want->device.device_id, "device id");
  cr_expect_eq(got->ndim, want->ndim, "ndim");
  cr_expect_eq(got->dtype.code, want->dtype.code, "dtype code");
  cr_expect_eq(got->dtype.bits, want->dtype.bits, "dtype bits");
  cr_expect_eq(got->dtype.lanes, want->dtype.lanes, "dtype lanes");
  cr_expect_eq(got->byte_offset, want->byte_offset, "byte_offset");
  for (int i = 0; i < want->ndim && i < got->ndim; ++i) {
    cr_expect_eq(got->shape[i], want->shape[i], "shape[%d]: %lld vs %lld", i,
                 (long long)got->shape[i], (long long)want->shape[i]);
  }
}

#endif
