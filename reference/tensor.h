/*
 * Tensor objects of the reference runtime and the checks on DLTensor
 * metadata that every entry point taking a tensor from outside runs first.
 *
 * Layout (same as upstream, which C callers rely on through
 * TVMFFITensorGetDLTensorPtr): the TVMFFIObject header, then the DLTensor,
 * then private fields. A tensor always owns copies of its shape and strides
 * (stored after the private fields), so a producer's arrays may go away once
 * the tensor exists, and strides are never NULL when ndim > 0 (a NULL
 * strides in the input means compact row-major and is filled in).
 */
#ifndef TFFI_TENSOR_H_
#define TFFI_TENSOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/*
 * The largest ndim accepted anywhere in the runtime. NumPy and PyTorch both
 * stop at 64 dimensions; a larger value in untrusted metadata is refused
 * rather than used to size an allocation.
 */
#define TFFI_TENSOR_MAX_NDIM 64

/*
 * Checks DLTensor metadata before anything reads shape or strides. Raises
 * ValueError "<api>: <arg_name>..." (the one argument vocabulary; arg_name
 * e.g. "prototype", "from") and returns -1 when: t is NULL; ndim < 0 or
 * ndim > TFFI_TENSOR_MAX_NDIM; shape is NULL while ndim > 0; a dimension is
 * negative; the element count or the size in bits (elements * bits * lanes)
 * does not fit in int64. Returns 0 otherwise. Reads exactly t->ndim shape
 * entries, never more. Strides are not checked: negative and zero strides
 * are legal.
 */
int tffi_dltensor_check_in(const char* api, const DLTensor* t, const char* arg_name);

/*
 * True when checked metadata is compact row-major: NULL strides, any dimension
 * of size 0, or every stride equal to the product of the later dimensions
 * (dimensions of size 1 may carry any stride).
 */
bool tffi_dltensor_is_contiguous(const DLTensor* t);

/*
 * What a tensor does when its last strong reference goes: `release(ctx)`,
 * exactly once. Never NULL: every tensor is made on behalf of something
 * that must learn when it goes (a producer's deleter, a view's source).
 */
typedef void (*TffiTensorRelease)(void* ctx);

/*
 * Makes a Tensor object from DLTensor metadata that passed
 * tffi_dltensor_check_in (callers check first, so that a refusal names
 * their argument): data pointer, device, dtype, byte_offset are copied;
 * shape and strides are copied into the object (strides computed when
 * `proto->strides` is NULL). The object calls release(ctx) once when
 * freed. On failure returns -1 with MemoryError raised, and does NOT call
 * release: the caller still owns ctx. On success *out is a new reference.
 */
int tffi_tensor_new_checked(const DLTensor* proto, TffiTensorRelease release, void* ctx,
                            TVMFFIObject** out);

/*
 * Checks the requirements an import may ask: require_alignment (negative is
 * a ValueError naming it; otherwise data + byte_offset, or byte_offset alone
 * where the data pointer is an opaque handle, a multiple of it, else
 * RuntimeError) and require_contiguous (nonzero: tffi_dltensor_is_contiguous,
 * else RuntimeError). 0 asks nothing. t passed tffi_dltensor_check_in.
 */
int tffi_dltensor_check_requirements(const char* api, const DLTensor* t, const char* arg_name,
                                     int32_t require_alignment, int32_t require_contiguous);

/*
 * Imports a DLPack 1.x managed tensor (what TVMFFITensorFromDLPackVersioned
 * and TVMFFIEnvTensorAlloc share); `from` is not NULL, both callers have
 * refused that with their own message. Checks version, flags, metadata
 * (errors read "<api>: <arg_name>..."), and the alignment / contiguity
 * requirements (0 = none). On success the tensor owns `from` and runs its
 * deleter once when freed; on failure nothing is called and the caller
 * still owns `from`. (TVMFFITensorFromDLPackVersioned has a path of its
 * own for the common case: no requirement, the default allocator; it takes
 * the storage first and reads each extent once, checking and copying it in
 * one pass. Refused metadata gives the storage back.)
 */
int tffi_tensor_import_versioned(const char* api, DLManagedTensorVersioned* from,
                                 const char* arg_name, int32_t require_alignment,
                                 int32_t require_contiguous, TVMFFIObject** out);

/*
 * DLPack flags a tensor carries from its import to its exports. Only
 * DLPACK_FLAG_BITMASK_READ_ONLY is kept: a consumer must not be told it may
 * write to memory its producer declared read-only. Views inherit it.
 */
uint64_t tffi_tensor_flags(const TVMFFIObject* tensor);
void tffi_tensor_set_flags(TVMFFIObject* tensor, uint64_t flags);

/* The DLTensor inside a Tensor object (no check of the type index). */
static inline DLTensor* tffi_tensor_dl(TVMFFIObject* tensor) {
  return (DLTensor*)((char*)tensor + sizeof(TVMFFIObject));
}

/* 1 when `obj` is a non-NULL Tensor object. */
static inline int tffi_is_tensor(const TVMFFIObject* obj) {
  return obj != NULL && obj->type_index == kTVMFFITensor;
}

#endif
