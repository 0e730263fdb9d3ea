/* Tensor objects, the checks on DLTensor metadata, and the import of DLPack
 * 1.x managed tensors (TVMFFITensorFromDLPackVersioned: its hot path builds
 * the object in the same pass that checks the metadata, so it lives with
 * the object's layout). */
#include "tensor.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arg.h"
#include "tffi_error.h"
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

int tffi_dltensor_check_in(const char* api, const DLTensor* t, const char* arg_name) {
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

/* Devices whose data pointer is a plain address, so that alignment can be
 * judged on data + byte_offset; elsewhere the pointer is an opaque handle
 * and only byte_offset can be judged. */
static int tffi_direct_address(DLDevice device) {
  return device.device_type <= kDLCUDAHost || device.device_type == kDLCUDAManaged ||
         device.device_type == kDLROCM || device.device_type == kDLROCMHost;
}

int tffi_dltensor_check_requirements(const char* api, const DLTensor* t, const char* arg_name,
                                     int32_t require_alignment, int32_t require_contiguous) {
  if (require_alignment < 0) {
    return tffi_arg_error(TFFI_VALUE_ERROR, api, "require_alignment", "is negative (%d)",
                          require_alignment);
  }
  if (require_alignment > 0) {
    uintptr_t at = (uintptr_t)t->byte_offset;
    if (tffi_direct_address(t->device)) at += (uintptr_t)t->data;
    if (at % (uintptr_t)require_alignment != 0) {
      return tffi_raise(TFFI_RUNTIME_ERROR,
                        "%s: %s data is not aligned to %d bytes (require_alignment)", api,
                        arg_name, require_alignment);
    }
  }
  if (require_contiguous && !tffi_dltensor_is_contiguous(t)) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s is not contiguous (require_contiguous)", api,
                      arg_name);
  }
  return 0;
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

static void tffi_release_versioned(void* ctx) {
  DLManagedTensorVersioned* m = ctx;
  if (m->deleter != NULL) m->deleter(m);
}

/* The deleter of the tensors the one-pass import makes: it knows what they
 * hold (a producer's DLPack 1.x managed tensor) and where their storage
 * came from (the default allocator: that path runs only while no custom
 * allocator is registered), so it asks neither the release hook nor the
 * allocation header. */
static void tffi_tensor_delete_imported(void* self, int flags) {
  TffiTensor* t = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) tffi_release_versioned(t->ctx);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_allocator_default_free_body(self);
}

/* Copies checked shape and strides into the tensor's own arrays, making
 * compact strides when the producer gave none. Only an empty tensor's
 * products can pass INT64_MAX here (the element count of any other was
 * checked); no element is addressed through them, so they wrap modulo 2^64,
 * as upstream's do. */
static void tffi_copy_dims(TffiTensor* t, const DLTensor* proto) {
  size_t ndim = (size_t)proto->ndim;
  int64_t* shape = t->dims;
  int64_t* strides = t->dims + ndim;
  t->dl.shape = shape;
  t->dl.strides = strides;
  uint64_t step = 1;
  for (size_t i = ndim; i-- > 0;) {
    shape[i] = proto->shape[i];
    strides[i] = proto->strides ? proto->strides[i] : (int64_t)step;
    step *= (uint64_t)proto->shape[i];
  }
}

/* Bytes of the tensor object for ndim dimensions (ndim within bounds). */
static size_t tffi_tensor_size(int32_t ndim) {
  return sizeof(TffiTensor) + 2 * (size_t)ndim * sizeof(int64_t);
}

int tffi_tensor_new_checked(const DLTensor* proto, TffiTensorRelease release, void* ctx,
                            TVMFFIObject** out) {
  /* Every field is written below: no zero-fill. */
  TffiTensor* t = tffi_object_alloc_uninit(tffi_tensor_size(proto->ndim), kTVMFFITensor,
                                           tffi_tensor_delete);
  if (t == NULL) return -1;
  t->dl = *proto;
  tffi_copy_dims(t, proto);
  t->release = release;
  t->ctx = ctx;
  t->flags = 0;
  *out = &t->header;
  return 0;
}

/* The import of a managed tensor the default allocator's path cannot take
 * in one pass: a custom allocator is registered (it must not be asked for
 * the storage of metadata that is then refused), or memory ran out. The
 * checks come first, as tffi_dltensor_check_in gives them. */
__attribute__((noinline)) static int tffi_import_checked_first(const char* api,
                                                               const char* arg_name,
                                                               DLManagedTensorVersioned* from,
                                                               TVMFFIObject** out,
                                                               bool out_of_memory) {
  if (tffi_dltensor_check_in(api, &from->dl_tensor, arg_name) != 0) return -1;
  if (out_of_memory) return tffi_raise_oom(tffi_tensor_size(from->dl_tensor.ndim));
  if (tffi_tensor_new_checked(&from->dl_tensor, tffi_release_versioned, from, out) != 0)
    return -1;
  tffi_tensor_set_flags(*out, from->flags);
  return 0;
}

/* A dimension the one-pass import found negative, an element count or size
 * in bits that overflowed: the checks again, in their order (so the refusal
 * is tffi_dltensor_check_in's), and for an empty tensor, which passes them,
 * the shape and strides copied again (its strides wrap). Frees t when
 * refused. */
__attribute__((noinline)) static int tffi_import_recheck(const char* api, const char* arg_name,
                                                         const DLTensor* proto, TffiTensor* t) {
  if (tffi_dltensor_check_in(api, proto, arg_name) != 0) {
    tffi_object_free(t);
    return -1;
  }
  tffi_copy_dims(t, proto);
  return 0;
}

/* One pass over the producer's arrays, from the last dimension: each
 * extent is read once, checked and copied, so that the tensor holds exactly
 * what was checked. Compact strides (from_strides NULL, a constant where
 * this is inlined) are the running element count, kept modulo 2^64 in
 * *numel; the high halves of the products are gathered in the result. */
static inline __attribute__((always_inline)) uint64_t tffi_dims_pass(
    const int64_t* from_shape, const int64_t* from_strides, size_t ndim, int64_t* shape,
    int64_t* strides, uint64_t* numel) {
  uint64_t count = 1, high = 0;
  for (size_t i = ndim; i != 0; --i) {
    uint64_t d = (uint64_t)from_shape[i - 1];
    shape[i - 1] = (int64_t)d;
    strides[i - 1] = from_strides ? from_strides[i - 1] : (int64_t)count;
    unsigned __int128 product = (unsigned __int128)count * d;
    count = (uint64_t)product;
    high |= (uint64_t)(product >> 64);
  }
  *numel = count;
  return high;
}

/* The import asking no requirement, with the default allocator: the
 * storage first (its size bounded by the checked ndim), then the one pass
 * that checks and copies the extents. */
static inline __attribute__((always_inline)) int tffi_import_one_pass(
    const char* api, const char* arg_name, DLManagedTensorVersioned* from, TVMFFIObject** out) {
  const DLTensor* proto = &from->dl_tensor;
  int32_t ndim = proto->ndim;
  /* What bounds the allocation and every read is checked before both. */
  if (ndim < 0 || ndim > TFFI_TENSOR_MAX_NDIM || (proto->shape == NULL && ndim != 0)) {
    return tffi_dltensor_check_in(api, proto, arg_name);
  }
  if (__builtin_expect(tffi_allocator_custom() != NULL, 0))
    return tffi_import_checked_first(api, arg_name, from, out, false);
  TffiTensor* t = tffi_allocator_default_body(tffi_tensor_size(ndim));
  if (t == NULL) return tffi_import_checked_first(api, arg_name, from, out, true);
  tffi_object_init_header(&t->header, kTVMFFITensor, tffi_tensor_delete_imported);
  t->dl = *proto;
  t->release = tffi_release_versioned;
  t->ctx = from;
  tffi_tensor_set_flags(&t->header, from->flags);
  int64_t* shape = t->dims;
  int64_t* strides = t->dims + ndim;
  t->dl.shape = shape;
  t->dl.strides = strides;
  uint64_t numel;
  uint64_t high = proto->strides == NULL
                      ? tffi_dims_pass(proto->shape, NULL, ndim, shape, strides, &numel)
                      : tffi_dims_pass(proto->shape, proto->strides, ndim, shape, strides, &numel);
  /* The rare path decides when the count passed INT64_MAX (or 2^64), which
   * every negative extent (2^63 or more, read unsigned) makes unless the
   * count was 0 already, when it is 0 (an empty tensor, valid whatever its
   * other extents), or when the size in bits overflows. */
  int64_t bits = (int64_t)proto->dtype.bits * (int64_t)proto->dtype.lanes, total;
  if (__builtin_expect(high != 0 || (int64_t)numel <= 0 ||
                           __builtin_mul_overflow((int64_t)numel, bits, &total),
                       0) &&
      tffi_import_recheck(api, arg_name, proto, t) != 0) {
    return -1;
  }
  *out = &t->header;
  return 0;
}

/* An import with require_alignment or require_contiguous asked: the
 * tensor's own checks come first, then the requirements. */
__attribute__((noinline)) static int tffi_import_required(const char* api,
                                                          DLManagedTensorVersioned* from,
                                                          const char* arg_name,
                                                          int32_t require_alignment,
                                                          int32_t require_contiguous,
                                                          TVMFFIObject** out) {
  if (tffi_dltensor_check_in(api, &from->dl_tensor, arg_name) != 0 ||
      tffi_dltensor_check_requirements(api, &from->dl_tensor, arg_name, require_alignment,
                                       require_contiguous) != 0 ||
      tffi_tensor_new_checked(&from->dl_tensor, tffi_release_versioned, from, out) != 0) {
    return -1;
  }
  tffi_tensor_set_flags(*out, from->flags);
  return 0;
}

/* tffi_tensor_import_versioned, inlined into TVMFFITensorFromDLPackVersioned
 * (where api and arg_name are constants, needed only by refusals). */
static inline __attribute__((always_inline)) int tffi_import_versioned(
    const char* api, DLManagedTensorVersioned* from, const char* arg_name,
    int32_t require_alignment, int32_t require_contiguous, TVMFFIObject** out) {
  /* A different major version means a different layout: nothing past the
   * version field may be read. */
  if (from->version.major != DLPACK_MAJOR_VERSION) {
    return tffi_raise(TFFI_VALUE_ERROR,
                      "%s: %s.version.major is %u; only DLPack major %d is understood", api,
                      arg_name, from->version.major, DLPACK_MAJOR_VERSION);
  }
  if (from->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s.flags: padded sub-byte types are not supported",
                      api, arg_name);
  }
  if (require_alignment != 0 || require_contiguous != 0) {
    return tffi_import_required(api, from, arg_name, require_alignment, require_contiguous, out);
  }
  return tffi_import_one_pass(api, arg_name, from, out);
}

int tffi_tensor_import_versioned(const char* api, DLManagedTensorVersioned* from,
                                 const char* arg_name, int32_t require_alignment,
                                 int32_t require_contiguous, TVMFFIObject** out) {
  return tffi_import_versioned(api, from, arg_name, require_alignment, require_contiguous, out);
}

int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFITensorFromDLPackVersioned", "out");
  if (from == NULL) return tffi_arg_null("TVMFFITensorFromDLPackVersioned", "from");
  return tffi_import_versioned("TVMFFITensorFromDLPackVersioned", from, "from",
                               require_alignment, require_contiguous, (TVMFFIObject**)out);
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
