/* DLPack exchange as the runtime itself uses it. */
#ifndef TFFI_DLPACK_H_
#define TFFI_DLPACK_H_

#include <tvm/ffi/c_api.h>

/*
 * Imports a DLPack 1.x managed tensor (what TVMFFITensorFromDLPackVersioned
 * and TVMFFIEnvTensorAlloc share); `from` is not NULL, both callers have
 * refused that with their own message. Checks version, flags, metadata (errors
 * read "<api>: <arg_name>..."), and the alignment / contiguity requirements
 * (0 = none).
 * On success the tensor owns `from` and runs its deleter once when freed;
 * on failure nothing is called and the caller still owns `from`.
 */
int tffi_tensor_import_versioned(const char* api, DLManagedTensorVersioned* from,
                                 const char* arg_name, int32_t require_alignment,
                                 int32_t require_contiguous, TVMFFIObject** out);

#endif
