/*
 * The operations abi_bench measures, for any runtime loaded with dlopen.
 * Each op checks what it gets (a failing call makes it return -1), so a run
 * with a few iterations doubles as a correctness check (the smoke test).
 */
#ifndef BENCH_OPS_H_
#define BENCH_OPS_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#define BENCH_API(X)              \
  X(TVMFFIFunctionCreate)         \
  X(TVMFFIFunctionCall)           \
  X(TVMFFIFunctionGetGlobal)      \
  X(TVMFFIFunctionSetGlobal)      \
  X(TVMFFIEnvGetStream)           \
  X(TVMFFIEnvSetStream)           \
  X(TVMFFIErrorSetRaisedFromCStr) \
  X(TVMFFIErrorMoveFromRaised)    \
  X(TVMFFIObjectIncRef)           \
  X(TVMFFIObjectDecRef)           \
  X(TVMFFIAnyViewToOwnedAny)      \
  X(TVMFFITensorFromDLPackVersioned)

typedef struct {
  const char* name;
#define BENCH_FIELD(f) __typeof__(&f) f;
  BENCH_API(BENCH_FIELD)
#undef BENCH_FIELD
  TVMFFIObjectHandle fn_self;   /* a C callback with a self pointer */
  TVMFFIObjectHandle fn_direct; /* self and deleter NULL */
  TVMFFIObjectHandle mod_fn;    /* bench_noop, looked up from a loaded module */
  TVMFFIObjectHandle mod;       /* the module it came from */
  TVMFFIObjectHandle load_file; /* ffi.ModuleLoadFromFile */
  const char* libs[3];          /* bench_lib_{1,100,10000}.so */
  int (*empty)(void* self);     /* the baseline's callee: returns 0 */
} BenchRuntime;

typedef struct {
  const char* name;
  const char* what;
  int (*run)(BenchRuntime* rt, long n); /* 0, or -1 when a call failed */
} BenchOp;

extern const BenchOp bench_ops[];
extern const int bench_num_ops;

/* Loads the runtime at `path` (RTLD_LOCAL) and prepares every op; `libs`
 * are the module libraries. 0, or -1 with a message on stderr. */
int bench_load(BenchRuntime* rt, const char* name, const char* path, const char* const libs[3]);

/* Releases what bench_load made (so leak checkers see a clean exit). */
void bench_unload(BenchRuntime* rt);

const BenchOp* bench_find(const char* name);

#endif
