/*
 * The runtime-facing harnesses (args, dlpack, dtype, module_load, stream,
 * error) call the C API of the implementation under test, chosen the way
 * the conformance suite chooses it (conformance/impl_load.h: TVMFFI_IMPL,
 * --config=upstream, default the bundled reference) and dlopened at start.
 *
 * Included first in such a harness, this header turns every TVMFFI* call
 * after it into a call through `conf_api`, so the harness reads as plain C
 * against the ABI while no runtime is linked in. When the library was built
 * with -fsanitize=fuzzer-no-link, libFuzzer's coverage comes from it too;
 * otherwise the harness fuzzes it blind and says so at start.
 */
#ifndef FUZZ_IMPL_API_H_
#define FUZZ_IMPL_API_H_

#include <stddef.h>

#include "conformance/impl_load.h"

/* Loads the implementation, prints which one (its path, TVMFFIGetVersion,
 * and whether libFuzzer sees its coverage) and exits with status 1 when it
 * does not load or lacks one of `needed` (NULL-terminated symbol names).
 * Call from LLVMFuzzerInitialize. */
void fuzz_impl_init(const char* harness, const char* const* needed);

/* One line per function of CONF_API_FUNCTIONS (conformance/impl_load.h). */
#define TVMFFIGetVersion (*conf_api.TVMFFIGetVersion)
#define TVMFFIObjectIncRef (*conf_api.TVMFFIObjectIncRef)
#define TVMFFIObjectDecRef (*conf_api.TVMFFIObjectDecRef)
#define TVMFFIObjectCreateOpaque (*conf_api.TVMFFIObjectCreateOpaque)
#define TVMFFIGetCustomAllocator (*conf_api.TVMFFIGetCustomAllocator)
#define TVMFFISetCustomAllocator (*conf_api.TVMFFISetCustomAllocator)
#define TVMFFITypeKeyToIndex (*conf_api.TVMFFITypeKeyToIndex)
#define TVMFFIFunctionCreate (*conf_api.TVMFFIFunctionCreate)
#define TVMFFIFunctionGetGlobal (*conf_api.TVMFFIFunctionGetGlobal)
#define TVMFFIFunctionSetGlobal (*conf_api.TVMFFIFunctionSetGlobal)
#define TVMFFIFunctionSetGlobalFromMethodInfo (*conf_api.TVMFFIFunctionSetGlobalFromMethodInfo)
#define TVMFFIAnyViewToOwnedAny (*conf_api.TVMFFIAnyViewToOwnedAny)
#define TVMFFIFunctionCall (*conf_api.TVMFFIFunctionCall)
#define TVMFFIErrorMoveFromRaised (*conf_api.TVMFFIErrorMoveFromRaised)
#define TVMFFIErrorSetRaised (*conf_api.TVMFFIErrorSetRaised)
#define TVMFFIErrorSetRaisedFromCStr (*conf_api.TVMFFIErrorSetRaisedFromCStr)
#define TVMFFIErrorSetRaisedFromCStrParts (*conf_api.TVMFFIErrorSetRaisedFromCStrParts)
#define TVMFFIErrorCreate (*conf_api.TVMFFIErrorCreate)
#define TVMFFIErrorCreateWithCauseAndExtraContext \
  (*conf_api.TVMFFIErrorCreateWithCauseAndExtraContext)
#define TVMFFITensorFromDLPack (*conf_api.TVMFFITensorFromDLPack)
#define TVMFFITensorToDLPack (*conf_api.TVMFFITensorToDLPack)
#define TVMFFITensorFromDLPackVersioned (*conf_api.TVMFFITensorFromDLPackVersioned)
#define TVMFFITensorToDLPackVersioned (*conf_api.TVMFFITensorToDLPackVersioned)
#define TVMFFITensorCreateUnsafeView (*conf_api.TVMFFITensorCreateUnsafeView)
#define TVMFFIStringFromByteArray (*conf_api.TVMFFIStringFromByteArray)
#define TVMFFIBytesFromByteArray (*conf_api.TVMFFIBytesFromByteArray)
#define TVMFFIBigIntFromByteArray (*conf_api.TVMFFIBigIntFromByteArray)
#define TVMFFIBigIntGetContentByteArray (*conf_api.TVMFFIBigIntGetContentByteArray)
#define TVMFFIDataTypeFromString (*conf_api.TVMFFIDataTypeFromString)
#define TVMFFIDataTypeToString (*conf_api.TVMFFIDataTypeToString)
#define TVMFFITypeRegisterField (*conf_api.TVMFFITypeRegisterField)
#define TVMFFITypeRegisterMethod (*conf_api.TVMFFITypeRegisterMethod)
#define TVMFFITypeRegisterMetadata (*conf_api.TVMFFITypeRegisterMetadata)
#define TVMFFITypeRegisterAttr (*conf_api.TVMFFITypeRegisterAttr)
#define TVMFFIGetTypeAttrColumn (*conf_api.TVMFFIGetTypeAttrColumn)
#define TVMFFIBacktrace (*conf_api.TVMFFIBacktrace)
#define TVMFFITypeGetOrAllocIndex (*conf_api.TVMFFITypeGetOrAllocIndex)
#define TVMFFIGetTypeInfo (*conf_api.TVMFFIGetTypeInfo)
#define TVMFFIHandleInitOnce (*conf_api.TVMFFIHandleInitOnce)
#define TVMFFIHandleDeinitOnce (*conf_api.TVMFFIHandleDeinitOnce)
#define TVMFFIEnvSetStream (*conf_api.TVMFFIEnvSetStream)
#define TVMFFIEnvGetStream (*conf_api.TVMFFIEnvGetStream)
#define TVMFFIEnvSetDLPackManagedTensorAllocator \
  (*conf_api.TVMFFIEnvSetDLPackManagedTensorAllocator)
#define TVMFFIEnvGetDLPackManagedTensorAllocator \
  (*conf_api.TVMFFIEnvGetDLPackManagedTensorAllocator)
#define TVMFFIEnvTensorAlloc (*conf_api.TVMFFIEnvTensorAlloc)
#define TVMFFIEnvCheckSignals (*conf_api.TVMFFIEnvCheckSignals)
#define TVMFFIEnvRegisterCAPI (*conf_api.TVMFFIEnvRegisterCAPI)
#define TVMFFIEnvModLookupFromImports (*conf_api.TVMFFIEnvModLookupFromImports)
#define TVMFFIEnvModRegisterContextSymbol (*conf_api.TVMFFIEnvModRegisterContextSymbol)
#define TVMFFIEnvModRegisterSystemLibSymbol (*conf_api.TVMFFIEnvModRegisterSystemLibSymbol)

#endif
