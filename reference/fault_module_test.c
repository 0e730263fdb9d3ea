/*
 * Fault injection through the `ffi.Module*` global functions a host uses:
 * system libraries, imports (with the cycle check), function and metadata
 * lookups, pinning, and the built-in containers they return.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "tffi_error.h"
#include "fault_test_support.h"
#include "object.h"

static const char meta_text[] = "{\"doc\": \"metadata long enough to live on the heap\"}";

static int meta_getter(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h, (void)args, (void)n;
  TVMFFIByteArray text = {meta_text, sizeof meta_text - 1};
  return TVMFFIStringFromByteArray(&text, result);
}

/* Calls the global `name`; *out is owned by the caller. */
static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(TVMFFIFunctionGetGlobal(&key, &fn), 0);
  cr_assert_not_null(fn, "%s is registered", name);
  *out = (TVMFFIAny){0};
  int rc = TVMFFIFunctionCall(fn, args, n, out);
  tffi_decref(fn);
  return rc;
}

static void release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj) tffi_decref(v->v_obj);
  *v = (TVMFFIAny){0};
}

static TVMFFIAny str_arg(const char* s) {
  return (TVMFFIAny){.type_index = kTVMFFIRawStr, .v_c_str = s};
}

static TVMFFIAny bool_arg(int b) { return (TVMFFIAny){.type_index = kTVMFFIBool, .v_int64 = b}; }

/* ffi.SystemLib(<fresh prefix>): a new library module each time. */
static int system_lib(long serial, const char* tag, TVMFFIAny* out) {
  char prefix[48];
  snprintf(prefix, sizeof prefix, "ut_fm%s%ld_", tag, serial);
  TVMFFIAny arg = str_arg(prefix);
  return call("ffi.SystemLib", &arg, 1, out);
}

/* With `a` importing `b`: functions, metadata, pinning and a refused cycle. */
static int use_modules(TVMFFIAny a, TVMFFIAny b) {
  TVMFFIAny args[3] = {a, b}, out = {0};
  if (call("ffi.ModuleImportModule", args, 2, &out) != 0) return -1;
  args[1] = str_arg("ut_fm_fn");
  args[2] = bool_arg(1);
  if (call("ffi.ModuleGetFunction", args, 3, &out) != 0) return -1;
  cr_assert_eq(out.type_index, kTVMFFIFunction);
  release(&out);
  args[1] = str_arg("ut_fm_meta");
  args[2] = bool_arg(1);
  if (call("ffi.ModuleGetFunctionMetadata", args, 3, &out) != 0) return -1;
  cr_assert_eq(out.type_index, kTVMFFIStr);
  cr_assert_eq(TVMFFIBytesGetByteArrayPtr(out.v_obj)->size, sizeof meta_text - 1);
  release(&out);
  if (call("ffi.ModuleGetWriteFormats", &a, 1, &out) != 0) return -1;
  release(&out);
  if (call("ffi.ModuleGetKind", &a, 1, &out) != 0) return -1;
  release(&out);
  if (call("ffi.ModuleGlobalsAdd", &a, 1, &out) != 0) return -1;
  cr_assert_eq(call("ffi.ModuleGlobalsRemove", &a, 1, &out), 0);
  args[0] = b;
  args[1] = a;
  if (call("ffi.ModuleImportModule", args, 2, &out) == 0) cr_assert_fail("a cycle was accepted");
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  int oom = strcmp(TVMFFIErrorGetCellPtr(err)->kind.data, TFFI_MEMORY_ERROR) == 0;
  if (!oom) cr_assert_str_eq(TVMFFIErrorGetCellPtr(err)->kind.data, "RuntimeError");
  if (oom)
    tffi_set_raised(err);
  else
    tffi_decref(err);
  return oom ? -1 : 0;
}

static int op_module_globals(void* ctx) {
  long* serial = ctx;
  ++*serial;
  TVMFFIAny a = {0}, b = {0};
  int rc = system_lib(*serial, "a", &a);
  if (rc == 0) rc = system_lib(*serial, "b", &b);
  if (rc == 0) rc = use_modules(a, b);
  if (a.v_obj) {
    TVMFFIAny out = {0};
    cr_assert_eq(call("ffi.ModuleClearImports", &a, 1, &out), 0); /* SystemLib keeps them */
  }
  release(&a);
  release(&b);
  return rc;
}

Test(fault, module_globals) {
  /* Found through either library's prefix fallback: the name alone. */
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ut_fm_fn", (void*)fault_answer), 0);
  cr_assert_eq(
      TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi__metadata_ut_fm_meta", (void*)meta_getter), 0);
  long serial = 0;
  fault_walk_both("ffi.Module* globals", op_module_globals, &serial);
}

static int op_containers(void* ctx) {
  (void)ctx;
  TVMFFIAny dims[3] = {{.type_index = kTVMFFIInt, .v_int64 = 2},
                       {.type_index = kTVMFFIInt, .v_int64 = 3},
                       {.type_index = kTVMFFIInt, .v_int64 = 4}};
  TVMFFIAny shape = {0}, array = {0};
  if (call("ffi.Shape", dims, 3, &shape) != 0) return -1;
  int rc = call("ffi.Array", dims, 3, &array);
  release(&shape);
  release(&array);
  return rc;
}

Test(fault, containers) { fault_walk_both("ffi.Shape and ffi.Array", op_containers, NULL); }

/* ffi.ModuleLoadFromFile of a real shared library (dlopen) whose library_bin
 * imports 99 modules of kind "bench" (tools/bench/bench_lib_100.so). */
static int load_bench_entry(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h, (void)args, (void)n;
  TVMFFIAny prefix = str_arg("ut_fm_bench_");
  return call("ffi.SystemLib", &prefix, 1, result);
}

static int op_load_shared_library(void* ctx) {
  (void)ctx;
  TVMFFIAny path = str_arg("tools/bench/bench_lib_100.so"), mod = {0}, fn = {0};
  if (call("ffi.ModuleLoadFromFile", &path, 1, &mod) != 0) return -1;
  TVMFFIAny args[3] = {mod, str_arg("bench_noop"), bool_arg(0)};
  int rc = call("ffi.ModuleGetFunction", args, 3, &fn);
  if (rc == 0) cr_assert_eq(fn.type_index, kTVMFFIFunction, "bench_noop is found");
  release(&fn);
  release(&mod);
  return rc;
}

Test(fault, load_shared_library) {
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(TVMFFIFunctionCreate(NULL, load_bench_entry, NULL, &loader), 0);
  TVMFFIByteArray name = {"ffi.Module.load_from_bytes.bench", 32};
  cr_assert_eq(TVMFFIFunctionSetGlobal(&name, loader, 0), 0);
  tffi_decref(loader);
  fault_walk_both("load a shared library (100)", op_load_shared_library, NULL);
}
