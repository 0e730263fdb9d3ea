#define _GNU_SOURCE
#include "bench_ops.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nothing(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  return 0;
}

/* Calls the global `name` once; *out is owned by the caller. */
static int global_call(BenchRuntime* rt, const char* name, TVMFFIAny* args, int32_t n,
                       TVMFFIAny* out) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL;
  if (rt->TVMFFIFunctionGetGlobal(&key, &fn) != 0 || fn == NULL) return -1;
  memset(out, 0, sizeof *out);
  int rc = rt->TVMFFIFunctionCall(fn, args, n, out);
  rt->TVMFFIObjectDecRef(fn);
  return rc;
}

static TVMFFIAny str_any(const char* s) {
  TVMFFIAny a = {0};
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* ffi.Module.load_from_bytes.bench: every "bench" entry of a library_bin
 * becomes the system library module (self is the runtime). */
static int load_bench_entry(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n;
  TVMFFIAny prefix = str_any("");
  return global_call(self, "ffi.SystemLib", &prefix, 1, rv);
}

/* ---- the measured loops: each never inlined, so the per-iteration cost is
 * the operation plus the same few loop instructions for every runtime ---- */

__attribute__((noinline)) static int run_calls(BenchRuntime* rt, TVMFFIObjectHandle fn,
                                               TVMFFIAny* args, int32_t nargs, long n) {
  TVMFFIAny rv;
  for (long i = 0; i < n; ++i) {
    memset(&rv, 0, sizeof rv);
    if (rt->TVMFFIFunctionCall(fn, args, nargs, &rv) != 0) return -1;
  }
  return 0;
}

/* The baseline: the loop every op has (counter, compare, branch, an
 * indirect call through a pointer loaded from the runtime record, a test of
 * its result) around a callee that does nothing but return 0. noipa and the
 * pointer in memory keep the compiler from inlining or dropping the call,
 * and since the callee might change *rt the pointer is reloaded every
 * iteration, as in the ops' loops. Its cost is subtracted from theirs (the
 * "net" figures). */
__attribute__((noipa)) static int empty_callee(void* self) {
  (void)self;
  return 0;
}

__attribute__((noinline)) static int op_baseline(BenchRuntime* rt, long n) {
  for (long i = 0; i < n; ++i) {
    if (rt->empty(rt) != 0) return -1;
  }
  return 0;
}

static TVMFFIAny int_args[8];
static TVMFFIAny tensor_args[8];
static int64_t shape4[4] = {2, 3, 4, 5};
static float data4[120];
static DLTensor tensor4 = {data4, {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, shape4, NULL, 0};

static void fill_args(void) {
  for (int i = 0; i < 8; ++i) {
    int_args[i].type_index = kTVMFFIInt;
    int_args[i].v_int64 = i;
    tensor_args[i].type_index = kTVMFFIDLTensorPtr;
    tensor_args[i].v_ptr = &tensor4;
  }
}

static int op_call0_self(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_self, NULL, 0, n);
}
static int op_call0(BenchRuntime* rt, long n) { return run_calls(rt, rt->fn_direct, NULL, 0, n); }
static int op_call1_int(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_direct, int_args, 1, n);
}
static int op_call3_int(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_direct, int_args, 3, n);
}
static int op_call8_int(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_direct, int_args, 8, n);
}
static int op_call1_tensor(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_direct, tensor_args, 1, n);
}
static int op_call3_tensor(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_direct, tensor_args, 3, n);
}
static int op_call8_tensor(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->fn_direct, tensor_args, 8, n);
}
static int op_module_call(BenchRuntime* rt, long n) {
  return run_calls(rt, rt->mod_fn, NULL, 0, n);
}

__attribute__((noinline)) static int op_stream(BenchRuntime* rt, long n) {
  void* want = rt->TVMFFIEnvGetStream(kDLCUDA, 0);
  for (long i = 0; i < n; ++i) {
    void* s = rt->TVMFFIEnvGetStream(kDLCUDA, 0);
    __asm__ volatile("" : : "r"(s));
    if (s != want) return -1;
  }
  return want != NULL ? 0 : -1;
}

__attribute__((noinline)) static int op_raise(BenchRuntime* rt, long n) {
  for (long i = 0; i < n; ++i) {
    TVMFFIObjectHandle err = NULL;
    rt->TVMFFIErrorSetRaisedFromCStr("RuntimeError", "benchmark error");
    rt->TVMFFIErrorMoveFromRaised(&err);
    if (err == NULL) return -1;
    rt->TVMFFIObjectDecRef(err);
  }
  return 0;
}

static int to_owned(BenchRuntime* rt, const char* text, int32_t want, long n) {
  TVMFFIAny view = str_any(text), out;
  for (long i = 0; i < n; ++i) {
    if (rt->TVMFFIAnyViewToOwnedAny(&view, &out) != 0 || out.type_index != want) return -1;
    if (out.type_index >= kTVMFFIStaticObjectBegin) rt->TVMFFIObjectDecRef(out.v_obj);
  }
  return 0;
}

__attribute__((noinline)) static int op_owned_short(BenchRuntime* rt, long n) {
  return to_owned(rt, "short", kTVMFFISmallStr, n);
}

static const char long_text[] =
    "a string of one hundred bytes, too long to be kept inline in an Any, so it goes to the heap";

__attribute__((noinline)) static int op_owned_long(BenchRuntime* rt, long n) {
  return to_owned(rt, long_text, kTVMFFIStr, n);
}

__attribute__((noinline)) static int op_incref_decref(BenchRuntime* rt, long n) {
  for (long i = 0; i < n; ++i) {
    rt->TVMFFIObjectIncRef(rt->fn_self);
    rt->TVMFFIObjectDecRef(rt->fn_self);
  }
  return 0;
}

static long dlpack_deleted;
static void count_delete(DLManagedTensorVersioned* self) { (void)self, ++dlpack_deleted; }

__attribute__((noinline)) static int op_dlpack_4d(BenchRuntime* rt, long n) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.deleter = count_delete;
  m.dl_tensor = tensor4;
  long before = dlpack_deleted;
  for (long i = 0; i < n; ++i) {
    TVMFFIObjectHandle t = NULL;
    if (rt->TVMFFITensorFromDLPackVersioned(&m, 0, 0, &t) != 0) return -1;
    rt->TVMFFIObjectDecRef(t);
  }
  return dlpack_deleted - before == n ? 0 : -1;
}

static int load_lib(BenchRuntime* rt, int which, long n) {
  for (long i = 0; i < n; ++i) {
    TVMFFIAny path = str_any(rt->libs[which]), mod;
    memset(&mod, 0, sizeof mod);
    if (rt->TVMFFIFunctionCall(rt->load_file, &path, 1, &mod) != 0) return -1;
    if (mod.type_index != kTVMFFIModule) return -1;
    rt->TVMFFIObjectDecRef(mod.v_obj);
  }
  return 0;
}

__attribute__((noinline)) static int op_load_1(BenchRuntime* rt, long n) {
  return load_lib(rt, 0, n);
}
__attribute__((noinline)) static int op_load_100(BenchRuntime* rt, long n) {
  return load_lib(rt, 1, n);
}
__attribute__((noinline)) static int op_load_10000(BenchRuntime* rt, long n) {
  return load_lib(rt, 2, n);
}

/* ---- floors: the part of an op that no runtime can skip, done with the C
 * library alone (no runtime is called, so both runtimes measure the same).
 * A runtime's op can cost no less than its floor; a floor above half of
 * upstream's cost puts the target out of reach. The laundering asm keeps
 * gcc from folding strlen of a constant or dropping an unused malloc/free
 * pair, which a runtime could not do either. ---- */

static void* launder(void* p) {
  __asm__ volatile("" : "+r"(p) : : "memory");
  return p;
}

/* owned_long: measure the string, take one block for an object header, a
 * byte array and the bytes with their NUL, copy, and free the block. */
__attribute__((noinline)) static int op_floor_owned_long(BenchRuntime* rt, long n) {
  (void)rt;
  const size_t head = sizeof(TVMFFIObject) + sizeof(TVMFFIByteArray);
  for (long i = 0; i < n; ++i) {
    const char* s = launder((void*)long_text);
    size_t len = strlen(s);
    char* block = malloc(head + len + 1);
    if (block == NULL) return -1;
    memcpy(block + head, s, len + 1);
    free(launder(block));
  }
  return 0;
}

/* dlpack_4d: one block for an object header, the DLTensor (which the ABI
 * puts right after the header) and the compact strides TEN-006 asks for a
 * tensor imported without strides, made in one pass over the shape (the
 * producer's shape array may stay in use, its owner being kept alive);
 * then the block freed and the producer's deleter called. Nothing is
 * checked, so this is a lower bound. */
__attribute__((noinline)) static int op_floor_dlpack_4d(BenchRuntime* rt, long n) {
  (void)rt;
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.dl_tensor = tensor4;
  m.deleter = count_delete;
  long before = dlpack_deleted;
  for (long i = 0; i < n; ++i) {
    DLManagedTensorVersioned* from = launder(&m);
    int32_t ndim = from->dl_tensor.ndim;
    char* block = malloc(sizeof(TVMFFIObject) + sizeof(DLTensor) + ndim * sizeof(int64_t));
    if (block == NULL) return -1;
    DLTensor* dl = (DLTensor*)(block + sizeof(TVMFFIObject));
    *dl = from->dl_tensor;
    int64_t* strides = (int64_t*)(dl + 1);
    int64_t step = 1;
    for (int32_t k = ndim; k-- > 0;) {
      strides[k] = step;
      step *= dl->shape[k];
    }
    dl->strides = strides;
    free(launder(block));
    from->deleter(from);
  }
  return dlpack_deleted - before == n ? 0 : -1;
}

/* load_1: open the library as both runtimes do (RTLD_LAZY | RTLD_LOCAL),
 * find its library_bin and look for the context symbol a library may export
 * for the runtime to fill (this one has none, and a failed dlsym is the
 * dearer kind), then close it. */
__attribute__((noinline)) static int op_floor_load_1(BenchRuntime* rt, long n) {
  for (long i = 0; i < n; ++i) {
    void* h = dlopen(rt->libs[0], RTLD_LAZY | RTLD_LOCAL);
    if (h == NULL) return -1;
    int found = dlsym(h, "__tvm_ffi__library_bin") != NULL;
    found &= dlsym(h, "__tvm_ffi__library_ctx") == NULL;
    dlclose(h);
    if (!found) return -1;
  }
  return 0;
}

const BenchOp bench_ops[] = {
    {"baseline", "the benchmark loop alone: an empty callee, subtracted from every op",
     op_baseline},
    {"call0_self", "FunctionCall, 0 args, C callback with self", op_call0_self},
    {"call0", "FunctionCall, 0 args, self NULL", op_call0},
    {"call1_int", "FunctionCall, 1 int", op_call1_int},
    {"call3_int", "FunctionCall, 3 ints", op_call3_int},
    {"call8_int", "FunctionCall, 8 ints", op_call8_int},
    {"call1_tensor", "FunctionCall, 1 DLTensor* view", op_call1_tensor},
    {"call3_tensor", "FunctionCall, 3 DLTensor* views", op_call3_tensor},
    {"call8_tensor", "FunctionCall, 8 DLTensor* views", op_call8_tensor},
    {"module_call", "FunctionCall of a function from a loaded module", op_module_call},
    {"stream", "EnvGetStream(kDLCUDA, 0), a stream set", op_stream},
    {"raise", "SetRaisedFromCStr + MoveFromRaised + DecRef", op_raise},
    {"owned_short", "AnyViewToOwnedAny, 5-byte str (+ release)", op_owned_short},
    {"owned_long", "AnyViewToOwnedAny, 91-byte str (+ release)", op_owned_long},
    {"incref_decref", "ObjectIncRef + ObjectDecRef", op_incref_decref},
    {"dlpack_4d", "TensorFromDLPackVersioned 4-D + DecRef", op_dlpack_4d},
    {"load_1", "ModuleLoadFromFile, library_bin of 1 entry (+ release)", op_load_1},
    {"load_100", "ModuleLoadFromFile, library_bin of 100 entries", op_load_100},
    {"load_10000", "ModuleLoadFromFile, library_bin of 10000 entries", op_load_10000},
    {"floor_owned_long", "owned_long's floor: strlen, malloc, memcpy, free", op_floor_owned_long},
    {"floor_dlpack_4d", "dlpack_4d's floor: malloc, DLTensor and strides, free, deleter",
     op_floor_dlpack_4d},
    {"floor_load_1", "load_1's floor: dlopen, dlsym of the two symbols, dlclose", op_floor_load_1},
};
const int bench_num_ops = sizeof bench_ops / sizeof bench_ops[0];

const BenchOp* bench_find(const char* name) {
  for (int i = 0; i < bench_num_ops; ++i)
    if (strcmp(bench_ops[i].name, name) == 0) return &bench_ops[i];
  return NULL;
}

/* The module function: ffi.ModuleLoadFromFile(lib) then GetFunction. */
static int prepare_module(BenchRuntime* rt) {
  TVMFFIByteArray key = {"ffi.ModuleLoadFromFile", 22};
  if (rt->TVMFFIFunctionGetGlobal(&key, &rt->load_file) != 0 || rt->load_file == NULL) return -1;
  TVMFFIAny path = str_any(rt->libs[0]), mod;
  if (global_call(rt, "ffi.ModuleLoadFromFile", &path, 1, &mod) != 0) return -1;
  rt->mod = mod.v_obj;
  TVMFFIAny args[3] = {mod, str_any("bench_noop"), {0}};
  args[2].type_index = kTVMFFIBool;
  TVMFFIAny fn;
  if (global_call(rt, "ffi.ModuleGetFunction", args, 3, &fn) != 0) return -1;
  if (fn.type_index != kTVMFFIFunction) return -1;
  rt->mod_fn = fn.v_obj;
  return 0;
}

int bench_load(BenchRuntime* rt, const char* name, const char* path, const char* const libs[3]) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "abi_bench: cannot load %s: %s\n", path, dlerror());
    return -1;
  }
  memset(rt, 0, sizeof *rt);
  rt->name = name;
  for (int i = 0; i < 3; ++i) rt->libs[i] = libs[i];
  rt->empty = empty_callee;
#define BENCH_SYM(f)                                       \
  *(void**)&rt->f = dlsym(h, #f);                          \
  if (rt->f == NULL) {                                     \
    fprintf(stderr, "abi_bench: %s lacks %s\n", path, #f); \
    return -1;                                             \
  }
  BENCH_API(BENCH_SYM)
#undef BENCH_SYM
  fill_args();
  static int self_marker, stream_marker;
  TVMFFIObjectHandle loader = NULL;
  TVMFFIByteArray loader_name = {"ffi.Module.load_from_bytes.bench", 32};
  if (rt->TVMFFIFunctionCreate(&self_marker, nothing, NULL, &rt->fn_self) != 0 ||
      rt->TVMFFIFunctionCreate(NULL, nothing, NULL, &rt->fn_direct) != 0 ||
      rt->TVMFFIFunctionCreate(rt, load_bench_entry, NULL, &loader) != 0 ||
      rt->TVMFFIFunctionSetGlobal(&loader_name, loader, 1) != 0 ||
      rt->TVMFFIEnvSetStream(kDLCUDA, 0, &stream_marker, NULL) != 0 || prepare_module(rt) != 0) {
    fprintf(stderr, "abi_bench: setting up %s failed\n", path);
    return -1;
  }
  rt->TVMFFIObjectDecRef(loader);
  return 0;
}

void bench_unload(BenchRuntime* rt) {
  TVMFFIObjectHandle held[] = {rt->fn_self, rt->fn_direct, rt->mod_fn, rt->mod, rt->load_file};
  for (size_t i = 0; i < sizeof held / sizeof held[0]; ++i)
    if (held[i] != NULL) rt->TVMFFIObjectDecRef(held[i]);
  memset(rt, 0, sizeof *rt);
}
