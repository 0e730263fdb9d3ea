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
  uint64_t flags; /* DLPack flags as given; only READ_ONLY is read back */
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
                        "%s: %s data is not aligned to %d bytes (require_alignment)", api, arg_name,
                        require_alignment);
    }
  }
  if (require_contiguous && !tffi_dltensor_is_contiguous(t)) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s is not contiguous (require_contiguous)", api,
                      arg_name);
  }
  return 0;
}

/* The mask is applied here, on the rare reads (exports and views), rather
 * than on every import's store. */
uint64_t tffi_tensor_flags(const TVMFFIObject* tensor) {
  return ((const TffiTensor*)tensor)->flags & DLPACK_FLAG_BITMASK_READ_ONLY;
}

void tffi_tensor_set_flags(TVMFFIObject* tensor, uint64_t flags) {
  ((TffiTensor*)tensor)->flags = flags;
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

/* tffi_tensor_delete_imported given one of the two flags: the strong
 * references gone while weak ones stay, or later the last weak one. Out of
 * line, so that the common case keeps nothing but the tensor across the
 * producer's deleter. */
__attribute__((noinline)) static void tffi_tensor_delete_imported_part(void* self, int flags) {
  TffiTensor* t = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) tffi_release_versioned(t->ctx);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_allocator_default_free_body(self);
}

/* The deleter of the tensors the one-pass import makes: it knows what they
 * hold (a producer's DLPack 1.x managed tensor) and where their storage
 * came from (the default allocator: that path runs only while no custom
 * allocator is registered), so it asks neither the release hook (which
 * the import leaves unset) nor the allocation header. Both flags at once
 * (the last reference of a tensor nobody watches weakly) is the common
 * case. */
static void tffi_tensor_delete_imported(void* self, int flags) {
  if (flags != (kTVMFFIObjectDeleterFlagBitMaskStrong | kTVMFFIObjectDeleterFlagBitMaskWeak)) {
    tffi_tensor_delete_imported_part(self, flags);
    return;
  }
  tffi_release_versioned(((TffiTensor*)self)->ctx);
  tffi_allocator_default_free_body(self);
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
  TffiTensor* t =
      tffi_object_alloc_uninit(tffi_tensor_size(proto->ndim), kTVMFFITensor, tffi_tensor_delete);
  if (t == NULL) return -1;
  t->dl = *proto;
  tffi_copy_dims(t, proto);
  t->release = release;
  t->ctx = ctx;
  t->flags = 0;
  *out = &t->header;
  return 0;
}

/* The import the one pass does not take: a requirement asked, a custom
 * allocator registered (it must not be asked for the storage of metadata
 * that is then refused). The tensor's own checks come first, then the
 * requirements (0 asks none), then the storage. */
__attribute__((noinline, cold)) static int tffi_import_checked(
    const char* api, DLManagedTensorVersioned* from, const char* arg_name,
    int32_t require_alignment, int32_t require_contiguous, TVMFFIObject** out) {
  if (tffi_dltensor_check_in(api, &from->dl_tensor, arg_name) != 0 ||
      tffi_dltensor_check_requirements(api, &from->dl_tensor, arg_name, require_alignment,
                                       require_contiguous) != 0 ||
      tffi_tensor_new_checked(&from->dl_tensor, tffi_release_versioned, from, out) != 0) {
    return -1;
  }
  tffi_tensor_set_flags(*out, from->flags);
  return 0;
}

/* The one pass's storage could not be had: the metadata's refusal, if it
 * has one, comes first, as on the checked path. */
__attribute__((noinline, cold)) static int tffi_import_out_of_memory(
    const char* api, const DLManagedTensorVersioned* from, const char* arg_name) {
  if (tffi_dltensor_check_in(api, &from->dl_tensor, arg_name) != 0) return -1;
  return tffi_raise_oom(tffi_tensor_size(from->dl_tensor.ndim));
}

/* What makes the rest of a managed tensor unreadable or unsupported: a
 * major version other than ours (a different layout: nothing past the
 * version field may be read), or padded sub-byte types. */
static inline bool tffi_import_header_ok(const DLManagedTensorVersioned* from) {
  return from->version.major == DLPACK_MAJOR_VERSION &&
         !(from->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
}

/* The refusal of a header tffi_import_header_ok did not accept. */
__attribute__((noinline, cold)) static int tffi_import_refuse_header(
    const char* api, const DLManagedTensorVersioned* from, const char* arg_name) {
  if (from->version.major != DLPACK_MAJOR_VERSION) {
    return tffi_raise(TFFI_VALUE_ERROR,
                      "%s: %s.version.major is %u; only DLPack major %d is understood", api,
                      arg_name, from->version.major, DLPACK_MAJOR_VERSION);
  }
  return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s.flags: padded sub-byte types are not supported",
                    api, arg_name);
}

int tffi_tensor_import_versioned(const char* api, DLManagedTensorVersioned* from,
                                 const char* arg_name, int32_t require_alignment,
                                 int32_t require_contiguous, TVMFFIObject** out) {
  if (!tffi_import_header_ok(from)) return tffi_import_refuse_header(api, from, arg_name);
  return tffi_import_checked(api, from, arg_name, require_alignment, require_contiguous, out);
}

/* TVMFFITensorFromDLPackVersioned's names, which only its refusals need. */
#define TFFI_IMPORT_API "TVMFFITensorFromDLPackVersioned"
#define TFFI_IMPORT_ARG "from"

/* An element count from 1 to 2^TFFI_IMPORT_EASY_BITS has a size in bits
 * that fits in int64 whatever its dtype (at most 255 bits x 65535 lanes):
 * the one pass need not multiply it out (tffi_import_fill). */
#define TFFI_IMPORT_EASY_BITS 39
_Static_assert(((uint64_t)1 << TFFI_IMPORT_EASY_BITS) <= INT64_MAX / (255 * 65535),
               "an easy count times the largest dtype's bits must fit in int64");

/* The one pass found a dimension negative, or an element count that is 0,
 * overflowed, or is past the easy bound: the checks again, in their order
 * (so the refusal is tffi_dltensor_check_in's), and for a tensor that
 * passes them (an empty one, a huge one) the shape and strides copied
 * again (an empty tensor's strides wrap) and the tensor handed out. Frees
 * t when refused. The metadata is found through t, whose release context
 * is the managed tensor, so that the one pass need not keep it at hand. */
__attribute__((noinline, cold)) static int tffi_import_recheck(TffiTensor* t, TVMFFIObject** out) {
  const DLTensor* proto = &((DLManagedTensorVersioned*)t->ctx)->dl_tensor;
  if (tffi_dltensor_check_in(TFFI_IMPORT_API, proto, TFFI_IMPORT_ARG) != 0) {
    tffi_object_free(t);
    return -1;
  }
  tffi_copy_dims(t, proto);
  *out = &t->header;
  return 0;
}

/* One pass over the producer's arrays, from the last dimension: each
 * extent is read once, checked and copied, so that the tensor holds exactly
 * what was checked. Compact strides (from_strides NULL, a constant where
 * this is inlined) are the running element count, left in *numel. False as
 * soon as the count passes 2^64 (the rest is then left uncopied: the rare
 * path copies it all again). */
static inline __attribute__((always_inline)) bool tffi_dims_pass(const int64_t* from_shape,
                                                                 const int64_t* from_strides,
                                                                 size_t ndim, int64_t* shape,
                                                                 int64_t* strides,
                                                                 uint64_t* numel) {
  uint64_t count = 1;
  for (size_t i = ndim; i != 0; --i) {
    uint64_t d = (uint64_t)from_shape[i - 1];
    shape[i - 1] = (int64_t)d;
    strides[i - 1] = from_strides ? from_strides[i - 1] : (int64_t)count;
    if (__builtin_expect(__builtin_mul_overflow(count, d, &count), 0)) return false;
  }
  *numel = count;
  return true;
}

/* The one pass, into storage t the default allocator gave for from's
 * checked ndim. It reads `from` and `out` only, and every value it makes
 * fits in the registers a call may clobber: so its caller keeps just those
 * two across malloc, and needs no frame slot beyond them. */
static inline __attribute__((always_inline)) int tffi_import_fill(DLManagedTensorVersioned* from,
                                                                  TffiTensor* t,
                                                                  TVMFFIObject** out) {
  const DLTensor* proto = &from->dl_tensor;
  size_t ndim = (size_t)proto->ndim;
  tffi_object_init_header(&t->header, kTVMFFITensor, tffi_tensor_delete_imported);
  t->dl = *proto;
  t->ctx = from;
  t->flags = from->flags;
  int64_t* shape = t->dims;
  int64_t* strides = t->dims + ndim;
  t->dl.shape = shape;
  t->dl.strides = strides;
  uint64_t numel = 0;
  bool fits = proto->strides == NULL
                  ? tffi_dims_pass(proto->shape, NULL, ndim, shape, strides, &numel)
                  : tffi_dims_pass(proto->shape, proto->strides, ndim, shape, strides, &numel);
  /* The rare path decides when the count passed 2^64, when it is 0 (an
   * empty tensor, valid whatever its other extents, a negative one aside),
   * or past the easy bound, which takes in every count of 2^63 and more
   * (as every negative extent, read unsigned, makes unless the count was 0
   * already) and leaves no size in bits to test here. */
  if (__builtin_expect(!fits || ((numel - 1) >> TFFI_IMPORT_EASY_BITS) != 0, 0)) {
    return tffi_import_recheck(t, out);
  }
  *out = &t->header;
  return 0;
}

/* The hot path asks no requirement of the default allocator's storage:
 * what bounds the allocation and every read checked before both, then the
 * storage, then the one pass. Every other case leaves by a tail call to a
 * cold function, so that only `from` and `out` are kept across malloc. */
int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFITensorFromDLPackVersioned", "out");
  if (from == NULL) return tffi_arg_null("TVMFFITensorFromDLPackVersioned", "from");
  if (!tffi_import_header_ok(from))
    return tffi_import_refuse_header(TFFI_IMPORT_API, from, TFFI_IMPORT_ARG);
  TVMFFIObject** tensor_out = (TVMFFIObject**)out;
  /* A requirement asked, a custom allocator registered: one test for both. */
  uintptr_t checked_first =
      (uintptr_t)tffi_allocator_custom() | (uint32_t)(require_alignment | require_contiguous);
  if (checked_first != 0) {
    return tffi_import_checked(TFFI_IMPORT_API, from, TFFI_IMPORT_ARG, require_alignment,
                               require_contiguous, tensor_out);
  }
  const DLTensor* proto = &from->dl_tensor;
  int32_t ndim = proto->ndim;
  if (ndim < 0 || ndim > TFFI_TENSOR_MAX_NDIM || (proto->shape == NULL && ndim != 0))
    return tffi_dltensor_check_in(TFFI_IMPORT_API, proto, TFFI_IMPORT_ARG);
  TffiTensor* t = tffi_allocator_default_body(tffi_tensor_size(ndim));
  if (t == NULL) return tffi_import_out_of_memory(TFFI_IMPORT_API, from, TFFI_IMPORT_ARG);
  return tffi_import_fill(from, t, tensor_out);
}

static void tffi_release_source(void* ctx) { tffi_decref(ctx); }

int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                 TVMFFIObjectHandle* out) {
  if (!tffi_is_tensor(source)) {
    return tffi_arg_error(TFFI_TYPE_ERROR, "TVMFFITensorCreateUnsafeView", "source",
                          "is %s, expected a Tensor object",
                          source == NULL ? "NULL" : "not a Tensor");
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
