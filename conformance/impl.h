/*
 * The implementation under test, loaded at run time.
 *
 * The suite never links a runtime: it dlopens one (the reference by default,
 * the pip library with --config=upstream, or the path in TVMFFI_IMPL) and
 * reaches the C API through `conf_api`. A symbol the library lacks leaves its
 * slot NULL, and API(name) turns that into a SKIP naming the symbol.
 */
#ifndef CONFORMANCE_IMPL_H_
#define CONFORMANCE_IMPL_H_

#include <criterion/criterion.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* The C API: the 50 TVMFFI* functions that upstream's libtvm_ffi.so
 * (0.1.15.post2) exports, every one of which the reference implements. */
#define CONF_API_FUNCTIONS(X)                    \
  X(TVMFFIGetVersion)                            \
  X(TVMFFIObjectIncRef)                          \
  X(TVMFFIObjectDecRef)                          \
  X(TVMFFIObjectCreateOpaque)                    \
  X(TVMFFIGetCustomAllocator)                    \
  X(TVMFFISetCustomAllocator)                    \
  X(TVMFFITypeKeyToIndex)                        \
  X(TVMFFIFunctionCreate)                        \
  X(TVMFFIFunctionGetGlobal)                     \
  X(TVMFFIFunctionSetGlobal)                     \
  X(TVMFFIFunctionSetGlobalFromMethodInfo)       \
  X(TVMFFIAnyViewToOwnedAny)                     \
  X(TVMFFIFunctionCall)                          \
  X(TVMFFIErrorMoveFromRaised)                   \
  X(TVMFFIErrorSetRaised)                        \
  X(TVMFFIErrorSetRaisedFromCStr)                \
  X(TVMFFIErrorSetRaisedFromCStrParts)           \
  X(TVMFFIErrorCreate)                           \
  X(TVMFFIErrorCreateWithCauseAndExtraContext)   \
  X(TVMFFITensorFromDLPack)                      \
  X(TVMFFITensorToDLPack)                        \
  X(TVMFFITensorFromDLPackVersioned)             \
  X(TVMFFITensorToDLPackVersioned)               \
  X(TVMFFITensorCreateUnsafeView)                \
  X(TVMFFIStringFromByteArray)                   \
  X(TVMFFIBytesFromByteArray)                    \
  X(TVMFFIBigIntFromByteArray)                   \
  X(TVMFFIBigIntGetContentByteArray)             \
  X(TVMFFIDataTypeFromString)                    \
  X(TVMFFIDataTypeToString)                      \
  X(TVMFFITypeRegisterField)                     \
  X(TVMFFITypeRegisterMethod)                    \
  X(TVMFFITypeRegisterMetadata)                  \
  X(TVMFFITypeRegisterAttr)                      \
  X(TVMFFIGetTypeAttrColumn)                     \
  X(TVMFFIBacktrace)                             \
  X(TVMFFITypeGetOrAllocIndex)                   \
  X(TVMFFIGetTypeInfo)                           \
  X(TVMFFIHandleInitOnce)                        \
  X(TVMFFIHandleDeinitOnce)                      \
  X(TVMFFIEnvSetStream)                          \
  X(TVMFFIEnvGetStream)                          \
  X(TVMFFIEnvSetDLPackManagedTensorAllocator)    \
  X(TVMFFIEnvGetDLPackManagedTensorAllocator)    \
  X(TVMFFIEnvTensorAlloc)                        \
  X(TVMFFIEnvCheckSignals)                       \
  X(TVMFFIEnvRegisterCAPI)                       \
  X(TVMFFIEnvModLookupFromImports)               \
  X(TVMFFIEnvModRegisterContextSymbol)           \
  X(TVMFFIEnvModRegisterSystemLibSymbol)

typedef struct {
#define CONF_API_SLOT(name) __typeof__(&name) name;
  CONF_API_FUNCTIONS(CONF_API_SLOT)
#undef CONF_API_SLOT
} ConfApi;

extern ConfApi conf_api;

/* Absolute path of the library under test, and its dlopen handle. */
const char* conf_impl_path(void);
void* conf_impl_handle(void);

/* For the report (conformance/main.c): the dlerror() text when the library
 * did not load (NULL when it did), its TVMFFIGetVersion as "M.m.p" ("" when
 * it has none), and whether it is the bundled reference runtime. */
const char* conf_impl_load_error(void);
const char* conf_impl_version(void);
int conf_impl_is_reference(void);

/* Fixture run before every conformance test: fails it with the dlerror()
 * text when the library did not load. */
void conf_impl_require(void);

/* Skips the running test, naming the symbol, when `fn` is NULL. */
void conf_impl_need(const void* fn, const char* name);

/* Path of a file in the test's runfiles (e.g. "kernels/libscale_cpu.so"),
 * or of an external repository's file ("../tvm_ffi_upstream/..."). */
const char* conf_runfile(const char* path);

/*
 * For tests that feed hostile input: caps this test's address space at what
 * it uses now plus CONF_HOSTILE_HEADROOM, so an implementation that sizes an
 * allocation from the input fails (or dies) instead of exhausting the
 * machine. Each test runs in its own process: a crash fails only that test,
 * and spec/deviations.md records it. No cap under ASan, whose shadow memory
 * needs the address space.
 */
#define CONF_HOSTILE_HEADROOM (1024L * 1024 * 1024)
void conf_limit_memory(void);

/* Marks a test that feeds input some implementations crash on (`why` says
 * which); the test still runs everywhere, under the memory cap. */
#define HOSTILE_INPUT(why)                                          \
  do {                                                              \
    cr_log_info("hostile input (%s); a crash fails this test only", why); \
    conf_limit_memory();                                            \
  } while (0)

/* conformance_layout_guard(part, fields): a test reading an ABI struct of
 * the library under test calls it first (layout_guard.h). */
#include "layout_guard.h"

#define API(name) (conf_impl_need((const void*)conf_api.name, #name), conf_api.name)

/* Every conformance test: Test() with the load check as its fixture. */
#define TEST(suite, name, ...) Test(suite, name, .init = conf_impl_require, ##__VA_ARGS__)

#endif
