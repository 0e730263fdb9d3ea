#include "tensor.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arg.h"
#include "error.h"
#include "mem.h"
#include "object.h"

/*
 * One allocation per tensor: header, DLTensor (where callers expect it),
 * the release hook, then shape and strides (2 * ndim int64 values).
 */
typedef struct {
  TVMFFIObject header;
  DLTensor dl;
  TffiTensorRelease release;
  void* ctx;
  uint64_t flags; /* DLPack flags kept for export (read-only only) */
  int64_t dims[];
} TffiTensor;

_Static_assert(offsetof(TffiTensor, dl) == sizeof(TVMFFIObject),
               "the DLTensor must follow the object header directly");

/* ValueError "<api>: <arg><detail>" (the detail, a format literal, starts
 * with "." or " "). */
#define TFFI_BAD_TENSOR(api, arg, detail, ...) \
  tffi_raise(TFFI_VALUE_ERROR, "%s: %s" detail, api, arg, ##__VA_ARGS__)

_Static_assert(TFFI_TENSOR_MAX_NDIM == 64, "the ndim refusal below says [0, 64]");

/* The checks of tffi_dltensor_check_in, inlined into tffi_tensor_import so
 * that an import is one function from the checks to the copy (the error
 * paths stay calls). */
static inline __attribute__((always_inline)) int tffi_check_shape(const char* api,
                                                                  const DLTensor* t,
                                                                  const char* arg_name) {
  if (t == NULL) return TFFI_BAD_TENSOR(api, arg_name, " is NULL");
  if (t->ndim < 0 || t->ndim > TFFI_TENSOR_MAX_NDIM) {
    return TFFI_BAD_TENSOR(api, arg_name, ".ndim is %d, outside [0, 64]", t->ndim);
  }
  if (t->ndim > 0 && t->shape == NULL) {
    return TFFI_BAD_TENSOR(api, arg_name, ".shape is NULL while ndim is %d", t->ndim);
  }
  /* One pass over the shape: every dimension non-negative, and the element
   * count. An empty tensor (a zero dimension) is valid whatever its other
   * sizes, whose product may overflow: only an overflowed count asks which
   * case it is (the rare path scans again). */
  int64_t numel = 1;
  bool overflow = false;
  for (int32_t i = 0; i < t->ndim; ++i) {
    int64_t d = t->shape[i];
    if (d < 0) {
      return TFFI_BAD_TENSOR(api, arg_name, ".shape[%d] is negative (%lld)", i, (long long)d);
    }
    if (__builtin_mul_overflow(numel, d, &numel)) overflow = true;
  }
  if (overflow) {
    for (int32_t k = 0; k < t->ndim; ++k) {
      if (t->shape[k] == 0) return 0;
    }
    return TFFI_BAD_TENSOR(api, arg_name, ".shape: element count overflows int64");
  }
  int64_t bits = (int64_t)t->dtype.bits * (int64_t)t->dtype.lanes, total;
  if (__builtin_mul_overflow(numel, bits, &total)) {
    return TFFI_BAD_TENSOR(api, arg_name, ": size in bits overflows int64");
  }
  return 0;
}

int tffi_dltensor_check_in(const char* api, const DLTensor* t, const char* arg_name) {
  return tffi_check_shape(api, t, arg_name);
}

bool tffi_dltensor_is_contiguous(const DLTensor* t) {
  if (t->strides == NULL) return true;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return true;
  }
  int64_t expect = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    /* A dimension of size 1 is never stepped over: its stride is free. */
    if (t->shape[i] == 1) continue;
    if (t->strides[i] != expect) return false;
    expect *= t->shape[i];
  }
  return true;
}

uint64_t tffi_tensor_flags(const TVMFFIObject* tensor) {
  return ((const TffiTensor*)tensor)->flags;
}

void tffi_tensor_set_flags(TVMFFIObject* tensor, uint64_t flags) {
  ((TffiTensor*)tensor)->flags = flags & DLPACK_FLAG_BITMASK_READ_ONLY;
}

static void tffi_tensor_delete(void* self, int flags) {
  TffiTensor* t = self;
  /* The strong flag comes once in a tensor's life, so release runs once. */
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) t->release(t->ctx);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* tffi_tensor_new_checked's body, inlined into tffi_tensor_import too. */
static inline __attribute__((always_inline)) int tffi_build(const DLTensor* proto,
                                                            TffiTensorRelease release, void* ctx,
                                                            TVMFFIObject** out) {
  size_t ndim = (size_t)proto->ndim; /* at most TFFI_TENSOR_MAX_NDIM */
  /* Every field is written below: no zero-fill. */
  TffiTensor* t = tffi_object_alloc_uninit(sizeof(TffiTensor) + 2 * ndim * sizeof(int64_t),
                                           kTVMFFITensor, tffi_tensor_delete);
  if (t == NULL) return -1;
  int64_t* shape = t->dims;
  int64_t* strides = t->dims + ndim;
  t->dl = *proto;
  t->dl.shape = shape;
  t->dl.strides = strides;
  if (proto->strides != NULL) {
    for (size_t i = 0; i < ndim; ++i) {
      shape[i] = proto->shape[i];
      strides[i] = proto->strides[i];
    }
  } else {
    /* Compact strides, made in the same pass that copies the shape. Only
     * an empty tensor's products can pass INT64_MAX (the element count of
     * any other was checked); no element is addressed through them, so
     * they wrap modulo 2^64, as upstream's do. */
    uint64_t step = 1;
    for (size_t i = ndim; i-- > 0;) {
      int64_t d = proto->shape[i];
      shape[i] = d;
      strides[i] = (int64_t)step;
      step *= (uint64_t)d;
    }
  }
  t->release = release;
  t->ctx = ctx;
  t->flags = 0;
  *out = &t->header;
  return 0;
}

int tffi_tensor_new_checked(const DLTensor* proto, TffiTensorRelease release, void* ctx,
                            TVMFFIObject** out) {
  return tffi_build(proto, release, ctx, out);
}

int tffi_tensor_import(const char* api, const DLTensor* proto, const char* arg_name,
                       TffiTensorRelease release, void* ctx, uint64_t flags,
                       TVMFFIObject** out) {
  if (tffi_check_shape(api, proto, arg_name) != 0) return -1;
  if (tffi_build(proto, release, ctx, out) != 0) return -1;
  tffi_tensor_set_flags(*out, flags);
  return 0;
}

static void tffi_release_source(void* ctx) { tffi_decref(ctx); }

int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                 TVMFFIObjectHandle* out) {
  if (!tffi_is_tensor(source)) {
    return tffi_arg_error(TFFI_TYPE_ERROR, "TVMFFITensorCreateUnsafeView", "source",
                          "is %s, expected a Tensor object", source == NULL ? "NULL" : "not a Tensor");
  }
  if (out == NULL) return tffi_arg_null("TVMFFITensorCreateUnsafeView", "out");
  if (tffi_dltensor_check_in("TVMFFITensorCreateUnsafeView", prototype, "prototype") != 0) {
    return -1;
  }
  /* The view keeps the source alive, since it points into its data. */
  tffi_incref(source);
  if (tffi_tensor_new_checked(prototype, tffi_release_source, source, (TVMFFIObject**)out) != 0) {
    tffi_decref(source);
    return -1;
  }
  /* A view of read-only memory is read-only too. */
  tffi_tensor_set_flags(*out, tffi_tensor_flags(source));
  return 0;
}
