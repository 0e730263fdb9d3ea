/*
 * Helpers for the module tests (module_*_test.c, symbol_test.c,
 * library_bin*_test.c): calling `ffi.Module*` globals as a pure-C host does,
 * reading results, and running a risky load in a child
 * process so that an implementation that crashes fails one test instead of
 * killing the run.
 */
#ifndef CONFORMANCE_MODULE_SUPPORT_H_
#define CONFORMANCE_MODULE_SUPPORT_H_

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_fail.h"
#include "core_support.h"
#include "impl.h"

/* The global function `name`, a new reference. A library that does not
 * register it SKIPs the test, naming the function (MOD-001 is the test that
 * requires every module global). */
static inline TVMFFIObjectHandle mod_global(const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&n, &fn), 0, "TVMFFIFunctionGetGlobal(%s) failed",
               name);
  if (fn == NULL)
    criterion_skip_test("%s does not register the global function %s", conf_impl_path(), name);
  return fn;
}

/* Calls the global `name`; a failure leaves its error raised, for
 * EXPECT_RAISED or conf_take_error. */
static inline int mod_call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObjectHandle fn = mod_global(name);
  *result = core_none();
  int rc = API(TVMFFIFunctionCall)(fn, args, n, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* Calls a function object; a failure leaves its error raised. */
static inline int mod_call_fn(TVMFFIObjectHandle fn, TVMFFIAny* args, int32_t n,
                              TVMFFIAny* result) {
  *result = core_none();
  return API(TVMFFIFunctionCall)(fn, args, n, result);
}

/* Runfiles path of a test library built in conformance/testlibs. */
static inline const char* mod_lib_path(const char* file) {
  static char buf[8][4096];
  static int next;
  char rel[512];
  snprintf(rel, sizeof rel, "conformance/testlibs/%s", file);
  char* out = buf[next++ % 8];
  snprintf(out, sizeof buf[0], "%s", conf_runfile(rel));
  return out;
}

/* ffi.ModuleLoadFromFile(path): 0 and *mod (a new reference), or -1 with
 * the error raised. */
static inline int mod_load_path(const char* path, TVMFFIObjectHandle* mod) {
  TVMFFIAny arg = core_c_str(path), result;
  *mod = NULL;
  int rc = mod_call("ffi.ModuleLoadFromFile", &arg, 1, &result);
  if (rc == 0) *mod = result.v_obj;
  return rc;
}

/* Loads a test library, failing the test if that fails. */
static inline TVMFFIObjectHandle mod_load(const char* file) {
  TVMFFIObjectHandle mod;
  char what[512];
  snprintf(what, sizeof what, "loading %s", file);
  conf_expect_ok(mod_load_path(mod_lib_path(file), &mod), what);
  cr_assert_not_null(mod);
  return mod;
}

/* ffi.ModuleGetFunction(mod, name, query_imports): the Function (new
 * reference) or NULL for None; fails the test on error or a non-function. */
static inline TVMFFIObjectHandle mod_get_function_n(TVMFFIObjectHandle mod, const char* name,
                                                    size_t len, int query_imports) {
  TVMFFIByteArray bytes = {name, len};
  TVMFFIAny key;
  /* A str the runtime made, so names with NUL bytes travel whole. */
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &key), 0);
  TVMFFIAny args[3] = {core_obj(mod), key, core_bool(query_imports)};
  TVMFFIAny result;
  int rc = mod_call("ffi.ModuleGetFunction", args, 3, &result);
  core_release(&key);
  char what[512];
  snprintf(what, sizeof what, "ffi.ModuleGetFunction(%.*s)", (int)len, name);
  conf_expect_ok(rc, what);
  if (result.type_index == kTVMFFINone) return NULL;
  cr_assert_eq(result.type_index, kTVMFFIFunction, "ffi.ModuleGetFunction returned type index %d",
               result.type_index);
  return result.v_obj;
}

static inline TVMFFIObjectHandle mod_get_function(TVMFFIObjectHandle mod, const char* name,
                                                  int query_imports) {
  return mod_get_function_n(mod, name, strlen(name), query_imports);
}

/* ffi.ModuleImplementsFunction as 0/1; fails the test on error. */
static inline int mod_implements(TVMFFIObjectHandle mod, const char* name, int query_imports) {
  TVMFFIAny args[3] = {core_obj(mod), core_c_str(name), core_bool(query_imports)};
  TVMFFIAny result;
  EXPECT_OK(mod_call("ffi.ModuleImplementsFunction", args, 3, &result));
  cr_assert_eq(result.type_index, kTVMFFIBool, "got type index %d", result.type_index);
  return result.v_int64 != 0;
}

/* Copies the content of a str result (small or heap) into buf and releases
 * it; returns buf, or NULL when the result is not a str. */
static inline const char* mod_take_str(TVMFFIAny* v, char* buf, size_t cap) {
  const char* out = NULL;
  if (v->type_index == kTVMFFISmallStr) {
    snprintf(buf, cap, "%.*s", (int)v->small_str_len, v->v_bytes);
    out = buf;
  } else if (v->type_index == kTVMFFIStr) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(v->v_obj);
    snprintf(buf, cap, "%.*s", (int)b->size, b->data);
    out = buf;
  }
  core_release(v);
  return out;
}

/* Calls fn() expecting an int result. */
static inline int64_t mod_call_int(TVMFFIObjectHandle fn, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  EXPECT_OK(mod_call_fn(fn, args, n, &result));
  cr_assert_eq(result.type_index, kTVMFFIInt, "got type index %d", result.type_index);
  return result.v_int64;
}

/* 1 while the shared library at `path` is mapped in this process. */
static inline int mod_is_loaded(const char* path) {
  void* h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}

/* ---- helpers the module test files share ---- */

/* `word` in `text` with no letter, digit, '_' or '.' right before or after
 * it: "mod" is not found inside "ffi.Module" or "module". */
static inline int mod_has_word(const char* text, const char* word) {
  size_t n = strlen(word);
  for (const char* at = strstr(text, word); at; at = strstr(at + 1, word)) {
    char before = at == text ? ' ' : at[-1], after = at[n];
    int inner = 0;
    for (const char* c = (const char[]){before, after, 0}; *c; ++c)
      inner |= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
               *c == '_' || *c == '.';
    if (!inner) return 1;
  }
  return 0;
}

/* Calls `fn` with `args` and expects a refusal of kind `kind` whose message
 * names fn, position #pos and the parameter `param`; returns the refusal. */
static inline ConfError mod_expect_names_param(const char* fn, TVMFFIAny* args, int32_t n, int pos,
                                               const char* param, const char* kind) {
  TVMFFIAny r;
  cr_expect_eq(mod_call(fn, args, n, &r), -1, "%s accepted a bad argument #%d", fn, pos);
  core_release(&r);
  char where[8];
  snprintf(where, sizeof where, "#%d", pos);
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, kind, "%s #%d: %s: %s", fn, pos, err.kind, err.message);
  cr_expect(strstr(err.message, fn) != NULL && strstr(err.message, where) != NULL,
            "%s: the message does not name the function and %s: %s", fn, where, err.message);
  cr_expect(mod_has_word(err.message, param), "%s: the message does not name %s (%s): %s", fn,
            where, param, err.message);
  return err;
}

/* Calls the one-module global `global` (ffi.ModuleGlobalsAdd or
 * ffi.ModuleGlobalsRemove) on mod, which must succeed and return None. */
static inline void mod_pin(const char* global, TVMFFIObjectHandle mod) {
  TVMFFIAny a = core_obj(mod), r;
  EXPECT_OK(mod_call(global, &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone, "%s returned type index %d", global, r.type_index);
}

/* Registers `call` as the global function `name`, replacing any. */
static inline void mod_register_global(const char* name, TVMFFISafeCallType call) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, call, NULL, &fn), 0);
  TVMFFIByteArray n = {name, strlen(name)};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
  API(TVMFFIObjectDecRef)(fn);
}

/* Writes v little-endian at *at and moves *at past it (a blob field). */
static inline void mod_put_u64(unsigned char** at, uint64_t v) {
  for (int i = 0; i < 8; ++i) *(*at)++ = (unsigned char)(v >> (8 * i));
}

/* A str made by the runtime from `len` bytes (NUL bytes travel whole). */
static inline TVMFFIAny mod_str_of(const char* data, size_t len) {
  TVMFFIByteArray bytes = {data, len};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &s), 0);
  return s;
}

/* basic imports other (which=1, other_fn) and third (which=2, third_fn). */
static inline void mod_load_tree(TVMFFIObjectHandle* basic, TVMFFIObjectHandle* other,
                                 TVMFFIObjectHandle* third) {
  *basic = mod_load("libmod_basic.so");
  *other = mod_load("libmod_other.so");
  *third = mod_load("libmod_third.so");
  TVMFFIAny a[2] = {core_obj(*basic), core_obj(*other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  a[1] = core_obj(*third);
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
}

/* Releases the three modules of mod_load_tree. */
static inline void mod_release3(TVMFFIObjectHandle a, TVMFFIObjectHandle b, TVMFFIObjectHandle c) {
  API(TVMFFIObjectDecRef)(a);
  API(TVMFFIObjectDecRef)(b);
  API(TVMFFIObjectDecRef)(c);
}

/* Releases the non-NULL handles among mods[0..n). */
static inline void mod_release_all(TVMFFIObjectHandle* mods, int n) {
  for (int i = 0; i < n; ++i)
    if (mods[i]) API(TVMFFIObjectDecRef)(mods[i]);
}

/* ffi.ModuleImportModule(mod, other); -1 leaves the error raised. */
static inline int mod_import(TVMFFIObjectHandle mod, TVMFFIObjectHandle other) {
  TVMFFIAny a[2] = {core_obj(mod), core_obj(other)}, r;
  return mod_call("ffi.ModuleImportModule", a, 2, &r);
}

/* ffi.ModuleClearImports(mod), which must succeed. */
static inline void mod_clear_imports(TVMFFIObjectHandle mod) {
  TVMFFIAny a = core_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleClearImports", &a, 1, &r));
}

/* Calls libmod_basic's call_import(name): TVMFFIEnvModLookupFromImports from
 * inside the library, then the function found; -1 leaves the error raised. */
static inline int mod_lookup_call(TVMFFIObjectHandle basic, const char* name, TVMFFIAny* r) {
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  cr_assert_not_null(call);
  TVMFFIAny arg = core_c_str(name);
  int rc = mod_call_fn(call, &arg, 1, r);
  API(TVMFFIObjectDecRef)(call);
  return rc;
}

/* The `__tvm_ffi__library_ctx` of a module of libmod_basic.so, as its
 * get_ctx function reads it from inside the library. */
static inline void* mod_library_ctx(TVMFFIObjectHandle basic) {
  TVMFFIObjectHandle get_ctx = mod_get_function(basic, "get_ctx", 0);
  cr_assert_not_null(get_ctx, "libmod_basic.so has no get_ctx");
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
  API(TVMFFIObjectDecRef)(get_ctx);
  cr_assert_eq(r.type_index, kTVMFFIOpaquePtr, "get_ctx returned type index %d", r.type_index);
  return r.v_ptr;
}

/* Safe-call functions answering the int 7 and 8, told apart by tests. */
static inline int mod_answer_7(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 7;
  return 0;
}

static inline int mod_answer_8(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 8;
  return 0;
}

/* A nonzero step returned -1 and raised a MemoryError (or, where `path` is
 * given, the RuntimeError of a dynamic loader that ran out itself, naming
 * the path). */
static inline void mod_expect_oom_refusal(const ConfAllocWalk* w, const char* what, int rc,
                                          const char* path) {
  cr_assert_eq(rc, -1, "%s, allocation %ld failed: returned %d, not -1", what, w->n, rc);
  ConfError err = conf_take_error();
  int loader = path && strcmp(err.kind, "RuntimeError") == 0 && strstr(err.message, path) != NULL;
  cr_assert(strcmp(err.kind, "MemoryError") == 0 || loader,
            "%s, allocation %ld failed: raised %s: %s", what, w->n,
            err.kind[0] ? err.kind : "nothing", err.message);
}

/* TVMFFIFunctionCall(fn) with the walk's allocation failure armed. */
static inline int mod_armed_call(ConfAllocWalk* w, TVMFFIObjectHandle fn, TVMFFIAny* args,
                                 int32_t n, TVMFFIAny* result) {
  *result = core_none();
  conf_alloc_arm(w);
  int rc = conf_api.TVMFFIFunctionCall(fn, args, n, result);
  conf_alloc_disarm(w);
  return rc;
}

/* After a step that returned 0: nothing raised, and a module with `name`. */
static inline void mod_expect_module_with(const ConfAllocWalk* w, const char* what, TVMFFIAny* r,
                                          const char* name) {
  ConfError err = conf_take_error();
  cr_expect_eq(err.kind[0], '\0', "%s, allocation %ld failed: 0 with %s raised: %s", what, w->n,
               err.kind, err.message);
  int32_t got = r->type_index;
  int found = -1;
  if (got == kTVMFFIModule && r->v_obj != NULL) found = mod_implements(r->v_obj, name, 0);
  core_release(r);
  cr_assert_eq(got, kTVMFFIModule, "%s, allocation %ld failed: 0 with type index %d", what, w->n,
               got);
  cr_assert_eq(found, 1, "%s, allocation %ld failed: the module lacks %s", what, w->n, name);
}

/* ---- running a load in a child process ---- */

typedef struct {
  int exited;      /* 1: the child reported; 0: it died (see signal) */
  int signal;      /* the signal that killed it */
  int rc;          /* the call's return code */
  ConfError error; /* the raised error when rc != 0 */
  int32_t result_type;
} ModOutcome;

/* Loads `path` (via ffi.ModuleLoadFromFile) in a forked child with
 * CONF_TEST_LIBRARY_BIN=blob, a 4 GB address-space cap (not under ASan,
 * which reserves more than that for its shadow), and reports back through a
 * pipe. */
static inline ModOutcome mod_load_isolated(const char* path, const char* blob) {
  ModOutcome out;
  memset(&out, 0, sizeof out);
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    close(fds[0]);
#ifndef __SANITIZE_ADDRESS__
    struct rlimit cap = {4000000000ull, 4000000000ull};
    setrlimit(RLIMIT_AS, &cap);
#endif
    if (blob) setenv("CONF_TEST_LIBRARY_BIN", blob, 1);
    ModOutcome child;
    memset(&child, 0, sizeof child);
    TVMFFIObjectHandle mod = NULL;
    child.exited = 1;
    child.rc = mod_load_path(path, &mod);
    if (child.rc != 0) child.error = conf_take_error();
    child.result_type = mod ? ((TVMFFIObject*)mod)->type_index : 0;
    if (write(fds[1], &child, sizeof child) != (ssize_t)sizeof child) _exit(3);
    _exit(0); /* no teardown: the point was the load */
  }
  close(fds[1]);
  ssize_t got = read(fds[0], &out, sizeof out);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != (ssize_t)sizeof out) {
    memset(&out, 0, sizeof out);
    out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
  }
  return out;
}

/* A system library's data as a test makes it: a library_bin read from a
 * file into a zeroed, aligned writable array, and a loader that allocates
 * nothing itself but hands out new references to a module made beforehand,
 * so an out-of-memory walk through ffi.SystemLib meets only the runtime's
 * own allocations. */
static __attribute__((aligned(8), unused)) unsigned char mod_premade_blob[512];
static __attribute__((unused)) TVMFFIObjectHandle mod_premade_module;

static inline int mod_premade_loader(void* self, const TVMFFIAny* args, int32_t n,
                                     TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  API(TVMFFIObjectIncRef)(mod_premade_module);
  *result = core_obj(mod_premade_module);
  return 0;
}

/* Reads the blob at `path` into mod_premade_blob and loads libmod_other.so
 * as the module mod_premade_loader hands out (the caller releases it). */
static inline void mod_premade_setup(const char* path) {
  FILE* f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  size_t got_bytes = fread(mod_premade_blob, 1, sizeof mod_premade_blob, f);
  fclose(f);
  cr_assert_gt(got_bytes, 8);
  mod_premade_module = mod_load("libmod_other.so");
}

#endif
