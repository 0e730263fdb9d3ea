/* Shared helpers of the tensor and environment conformance tests: DLPack
 * producers whose deleters count their calls. Raised errors are checked with
 * core_expect_raised (core_support.h). */
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

/* TypeError whose message names `api`, `arg`, and says `what`. */
static inline void expect_type_error(const char* api, const char* arg, const char* what) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "%s: nothing raised", api);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  const char* parts[] = {api, arg, what};
  cr_expect(cell->kind.size == 9 && memcmp(cell->kind.data, "TypeError", 9) == 0,
            "%s: raised %.*s", api, (int)cell->kind.size, cell->kind.data);
  for (int i = 0; i < 3; ++i) {
    cr_expect(memmem(cell->message.data, cell->message.size, parts[i], strlen(parts[i])) != NULL,
              "%s: the message lacks \"%s\": %.*s", api, parts[i], (int)cell->message.size,
              cell->message.data);
  }
  API(TVMFFIObjectDecRef)(err);
}

/* Takes the raised error and checks its kind, that its message names `api`
 * (the whole name: TVMFFITensorFromDLPack is not found inside
 * TVMFFITensorFromDLPackVersioned) and, after it, `arg`, and that it says
 * `what` (when not NULL). */
static inline void expect_raised_naming(const char* kind, const char* api, const char* arg,
                                        const char* what) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "%s: nothing raised (%s expected)", api, kind);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  const char* msg = cell->message.data;
  size_t size = cell->message.size, n = strlen(api);
  cr_expect(cell->kind.size == strlen(kind) && memcmp(cell->kind.data, kind, strlen(kind)) == 0,
            "%s: raised %.*s, expected %s", api, (int)cell->kind.size, cell->kind.data, kind);
  const char* at = msg;
  const char* end = msg + size;
  while ((at = memmem(at, (size_t)(end - at), api, n)) != NULL) {
    char next = at + n < end ? at[n] : ' ';
    if (!(next == '_' || (next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z'))) break;
    at += n;
  }
  const char* after = at ? at + n : end;
  cr_expect(at != NULL && memmem(after, (size_t)(end - after), arg, strlen(arg)) != NULL,
            "%s: the message does not name the function, then `%s`: %.*s", api, arg, (int)size,
            msg);
  cr_expect(what == NULL || memmem(msg, size, what, strlen(what)) != NULL,
            "%s: the message does not say \"%s\": %.*s", api, what, (int)size, msg);
  API(TVMFFIObjectDecRef)(err);
}

#endif
