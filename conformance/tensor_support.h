/* Shared helpers of the tensor and environment conformance tests: DLPack
 * producers whose deleters count their calls, and checks on raised errors. */
#ifndef TFFI_CONFORMANCE_TENSOR_SUPPORT_H_
#define TFFI_CONFORMANCE_TENSOR_SUPPORT_H_

#include <stdint.h>
#include <string.h>

#include "impl.h"

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

/* Moves the raised error out and checks its kind and that its message
 * contains `part` (NULL: any message). */
static inline void expect_raised(const char* kind, const char* part) {
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err, "expected a raised %s, none was raised", kind);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  char k[64] = {0}, msg[512] = {0};
  memcpy(k, cell->kind.data, cell->kind.size < 63 ? cell->kind.size : 63);
  memcpy(msg, cell->message.data, cell->message.size < 511 ? cell->message.size : 511);
  API(TVMFFIObjectDecRef)(err);
  cr_expect_str_eq(k, kind, "error kind: expected %s, got %s (message: %s)", kind, k, msg);
  if (part != NULL) {
    cr_expect(strstr(msg, part) != NULL, "message '%s' should contain '%s'", msg, part);
  }
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
