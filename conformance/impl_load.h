/*
 * Loading the implementation under test, without Criterion: the part of
 * conformance/impl.h that the fuzz harnesses (fuzz/impl_api.h) share with
 * the suite, so both pick a library the same way:
 *
 *   TVMFFI_IMPL unset, empty or "reference"  the bundled reference runtime
 *   TVMFFI_IMPL=upstream                     the pinned pip apache-tvm-ffi
 *   TVMFFI_IMPL=/abs/path/libtvm_ffi.so      anything else
 *
 * The library is dlopened RTLD_GLOBAL (kernels loaded later bind to it) and
 * its C API reached through `conf_api`; conf_api_present says which
 * functions it exports. Here a function it lacks leaves its slot NULL; the
 * conformance suite (impl.c) then puts a stand-in there that skips the test.
 */
#ifndef CONFORMANCE_IMPL_LOAD_H_
#define CONFORMANCE_IMPL_LOAD_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* The C API: every TVMFFI* function that upstream's libtvm_ffi.so
 * (CONF_API_RELEASE) exports, every one of which the reference implements. */
#define CONF_API_RELEASE "0.1.15.post2"
#define CONF_API_FUNCTIONS(X)                  \
  X(TVMFFIGetVersion)                          \
  X(TVMFFIObjectIncRef)                        \
  X(TVMFFIObjectDecRef)                        \
  X(TVMFFIObjectCreateOpaque)                  \
  X(TVMFFIGetCustomAllocator)                  \
  X(TVMFFISetCustomAllocator)                  \
  X(TVMFFITypeKeyToIndex)                      \
  X(TVMFFIFunctionCreate)                      \
  X(TVMFFIFunctionGetGlobal)                   \
  X(TVMFFIFunctionSetGlobal)                   \
  X(TVMFFIFunctionSetGlobalFromMethodInfo)     \
  X(TVMFFIAnyViewToOwnedAny)                   \
  X(TVMFFIFunctionCall)                        \
  X(TVMFFIErrorMoveFromRaised)                 \
  X(TVMFFIErrorSetRaised)                      \
  X(TVMFFIErrorSetRaisedFromCStr)              \
  X(TVMFFIErrorSetRaisedFromCStrParts)         \
  X(TVMFFIErrorCreate)                         \
  X(TVMFFIErrorCreateWithCauseAndExtraContext) \
  X(TVMFFITensorFromDLPack)                    \
  X(TVMFFITensorToDLPack)                      \
  X(TVMFFITensorFromDLPackVersioned)           \
  X(TVMFFITensorToDLPackVersioned)             \
  X(TVMFFITensorCreateUnsafeView)              \
  X(TVMFFIStringFromByteArray)                 \
  X(TVMFFIBytesFromByteArray)                  \
  X(TVMFFIBigIntFromByteArray)                 \
  X(TVMFFIBigIntGetContentByteArray)           \
  X(TVMFFIDataTypeFromString)                  \
  X(TVMFFIDataTypeToString)                    \
  X(TVMFFITypeRegisterField)                   \
  X(TVMFFITypeRegisterMethod)                  \
  X(TVMFFITypeRegisterMetadata)                \
  X(TVMFFITypeRegisterAttr)                    \
  X(TVMFFIGetTypeAttrColumn)                   \
  X(TVMFFIBacktrace)                           \
  X(TVMFFITypeGetOrAllocIndex)                 \
  X(TVMFFIGetTypeInfo)                         \
  X(TVMFFIHandleInitOnce)                      \
  X(TVMFFIHandleDeinitOnce)                    \
  X(TVMFFIEnvSetStream)                        \
  X(TVMFFIEnvGetStream)                        \
  X(TVMFFIEnvSetDLPackManagedTensorAllocator)  \
  X(TVMFFIEnvGetDLPackManagedTensorAllocator)  \
  X(TVMFFIEnvTensorAlloc)                      \
  X(TVMFFIEnvCheckSignals)                     \
  X(TVMFFIEnvRegisterCAPI)                     \
  X(TVMFFIEnvModLookupFromImports)             \
  X(TVMFFIEnvModRegisterContextSymbol)         \
  X(TVMFFIEnvModRegisterSystemLibSymbol)

typedef struct {
#define CONF_API_SLOT(name) __typeof__(&name) name;
  CONF_API_FUNCTIONS(CONF_API_SLOT)
#undef CONF_API_SLOT
} ConfApi;

extern ConfApi conf_api;

/* 1 for each function the library exports, 0 for each it lacks. */
typedef struct {
#define CONF_API_FLAG(name) unsigned char name;
  CONF_API_FUNCTIONS(CONF_API_FLAG)
#undef CONF_API_FLAG
} ConfApiPresent;

extern ConfApiPresent conf_api_present;

/* How many of the CONF_API_FUNCTIONS the library exports, of how many,
 * the names of those it lacks (comma-separated), and CONF_API_RELEASE. */
int conf_impl_exported(void);
int conf_impl_api_total(void);
const char* conf_impl_missing(void);
const char* conf_impl_api_release(void);

/* Resolves TVMFFI_IMPL and loads that library, once per process (later
 * calls return the first answer). Returns 0, or -1 when it did not load
 * (conf_impl_load_error says why). */
int conf_impl_load(void);

/* Absolute path of the library under test, and its dlopen handle. */
const char* conf_impl_path(void);
void* conf_impl_handle(void);

/* The dlerror() text when the library did not load (NULL when it did), its
 * TVMFFIGetVersion as "M.m.p" ("" when it has none), and whether it is the
 * bundled reference runtime. */
const char* conf_impl_load_error(void);
const char* conf_impl_version(void);
int conf_impl_is_reference(void);

/* Path of a file in the test's runfiles (e.g. "kernels/libscale_cpu.so"),
 * or of an external repository's file ("../tvm_ffi_upstream/..."). Outside
 * Bazel, the path as given (relative to the working directory). */
const char* conf_runfile(const char* path);

/* A library the program loads: its runfile when there is one, else
 * lib/<basename> beside the executable (a program copied out of Bazel with
 * its libraries, as fuzz/build.sh lays out an OSS-Fuzz $OUT), else the
 * runfile path (so that a failure names it). */
const char* conf_library_path(const char* runfile);

#endif
