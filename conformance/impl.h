/*
 * The implementation under test, loaded at run time.
 *
 * The suite never links a runtime: it dlopens one (the reference by default,
 * the pip library with --config=upstream, or the path in TVMFFI_IMPL) and
 * reaches the C API through `conf_api`. A symbol the library lacks gets a
 * stand-in that skips the running test naming the symbol (from any thread of
 * the test), so a test that calls it never crashes the suite; API(name)
 * checks first, and conf_api_present says which ones the library has.
 */
#ifndef CONFORMANCE_IMPL_H_
#define CONFORMANCE_IMPL_H_

#include <criterion/criterion.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* The C API: every TVMFFI* function that upstream's libtvm_ffi.so
 * (CONF_API_RELEASE) exports, every one of which the reference implements. */
#define CONF_API_RELEASE "0.1.15.post2"
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

/* 1 for each function the library exports, 0 where conf_api holds the
 * stand-in. */
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

/* Skips the running test when `dlerror_text` (of a library loaded on top of
 * the implementation) says a symbol is undefined that the implementation
 * does not export: the implementation lacks it, the library is not at fault. */
void conf_impl_skip_if_unresolved(const char* dlerror_text, const char* library);

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

/* Skips the running test, naming the symbol, when `fn` is NULL or the
 * stand-in of a missing function. */
void conf_impl_need(const void* fn, const char* name);

/* Skips the running test, naming the symbol, when `present` is 0. */
void conf_impl_need_present(int present, const char* name);

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

#define API(name) (conf_impl_need_present(conf_api_present.name, #name), conf_api.name)

/* Every conformance test: Test() with the load check as its fixture. */
#define TEST(suite, name, ...) Test(suite, name, .init = conf_impl_require, ##__VA_ARGS__)

#endif
