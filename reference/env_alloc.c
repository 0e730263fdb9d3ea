/*
 * The DLPack tensor allocator a host installs (per thread, with a global
 * fallback) and TVMFFIEnvTensorAlloc, which kernels use to make outputs.
 */
#include <tvm/ffi/extra/c_env_api.h>

#include "arg.h"
#include "tffi_error.h"
#include "tensor.h"

static _Thread_local DLPackManagedTensorAllocator tffi_local_allocator;
/* Read by every thread without a lock: atomic, so that a host may install
 * it while other threads already run. */
static DLPackManagedTensorAllocator tffi_global_allocator;

DLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void) {
  DLPackManagedTensorAllocator local = tffi_local_allocator;
  if (local != NULL) return local;
  return __atomic_load_n(&tffi_global_allocator, __ATOMIC_ACQUIRE);
}

int TVMFFIEnvSetDLPackManagedTensorAllocator(
    DLPackManagedTensorAllocator allocator, int write_to_global_context,
    DLPackManagedTensorAllocator* opt_out_original_allocator) {
  /* The thread's own previous value: setting it back restores the thread
   * exactly, whatever the global allocator is. */
  if (opt_out_original_allocator != NULL) *opt_out_original_allocator = tffi_local_allocator;
  if (write_to_global_context) {
    __atomic_store_n(&tffi_global_allocator, allocator, __ATOMIC_RELEASE);
  }
  tffi_local_allocator = allocator;
  return 0;
}

/* error_ctx handed to the allocator: lets us tell whether it raised. */
typedef struct {
  int raised;
} TffiAllocErrorCtx;

static void tffi_alloc_set_error(void* error_ctx, const char* kind, const char* message) {
  if (error_ctx != NULL) ((TffiAllocErrorCtx*)error_ctx)->raised = 1;
  tffi_raise(kind != NULL ? kind : TFFI_RUNTIME_ERROR, "%s", message != NULL ? message : "");
}

int TVMFFIEnvTensorAlloc(DLTensor* prototype, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIEnvTensorAlloc", "out");
  if (tffi_dltensor_check_in("TVMFFIEnvTensorAlloc", prototype, "prototype") != 0) return -1;
  DLPackManagedTensorAllocator alloc = TVMFFIEnvGetDLPackManagedTensorAllocator();
  if (alloc == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFIEnvTensorAlloc: no allocator is set "
                      "(TVMFFIEnvSetDLPackManagedTensorAllocator was not called)");
  }
  DLManagedTensorVersioned* made = NULL;
  TffiAllocErrorCtx ctx = {0};
  if (alloc(prototype, &made, &ctx, tffi_alloc_set_error) != 0) {
    if (!ctx.raised) {
      return tffi_raise(TFFI_RUNTIME_ERROR,
                        "TVMFFIEnvTensorAlloc: the allocator failed without reporting an error");
    }
    return -1;
  }
  if (made == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFIEnvTensorAlloc: the allocator returned 0 but no tensor");
  }
  if (tffi_tensor_import_versioned("TVMFFIEnvTensorAlloc", made, "allocator result", 0, 0,
                                   (TVMFFIObject**)out) != 0) {
    /* The allocator handed it over: a tensor we refuse is ours to free.
     * DLPack keeps the deleter where it is across major versions, so this
     * is safe even when the version was the reason for refusing. */
    if (made->deleter != NULL) made->deleter(made);
    return -1;
  }
  return 0;
}
