/*
 * Fault injection over the process-wide registries and modules: globals,
 * types, per-thread streams, and a module loaded with a library_bin.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "tffi_error.h"
#include "fault_test_support.h"
#include "library_bin.h"
#include "tools/libbin/pack.h"
#include "library_loader.h"
#include "module.h"
#include "object.h"
#include "system_lib.h"

/* ---- global functions ---- */

static int op_register_global(void* ctx) {
  long* serial = ctx;
  char name[64];
  snprintf(name, sizeof name, "ut.fault.global%ld", (*serial)++);
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL, got = NULL;
  if (TVMFFIFunctionCreate(NULL, fault_answer, NULL, &fn) != 0) return -1;
  int rc = TVMFFIFunctionSetGlobal(&key, fn, 0);
  tffi_decref(fn);
  if (rc != 0) return -1;
  cr_assert_eq(TVMFFIFunctionGetGlobal(&key, &got), 0);
  cr_assert_not_null(got, "%s registered but not found", name);
  rc = fault_call_answer(got);
  tffi_decref(got);
  return rc;
}

Test(fault, register_global) {
  long serial = 0;
  fault_walk_both("register a global", op_register_global, &serial);
}

static int op_register_symbols(void* ctx) {
  long* serial = ctx;
  char name[64];
  snprintf(name, sizeof name, "ut_fault_sym%ld", (*serial)++);
  if (TVMFFIEnvModRegisterSystemLibSymbol(name, (void*)fault_answer) != 0) return -1;
  return TVMFFIEnvModRegisterContextSymbol(name, (void*)fault_answer);
}

Test(fault, register_symbols) {
  long serial = 0;
  fault_walk_both("register lib/context symbols", op_register_symbols, &serial);
}

/* ---- types ---- */

static int op_register_type(void* ctx) {
  long* serial = ctx;
  char key[64];
  snprintf(key, sizeof key, "ut.fault.Type%ld", (*serial)++);
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t parent = TVMFFITypeGetOrAllocIndex(&k, -1, 1, 2, 0, kTVMFFIObject);
  if (parent < 0) return -1;
  strcat(key, ".Child");
  k.size = strlen(key);
  int32_t child = TVMFFITypeGetOrAllocIndex(&k, -1, 2, 0, 0, parent);
  if (child < 0) return -1;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(child);
  cr_assert_not_null(info);
  cr_assert_eq(info->type_depth, 2);
  cr_assert_eq(info->type_ancestors[1]->type_index, parent);
  return 0;
}

Test(fault, register_type) {
  long serial = 0;
  fault_walk_both("register a type", op_register_type, &serial);
}

/* ---- streams, on a thread that has none yet ---- */

typedef struct {
  int rc;
  TVMFFIObjectHandle err;
} StreamRun;

static void* set_streams(void* arg) {
  StreamRun* run = arg;
  run->rc = 0;
  /* The fast table, then enough slow-path devices to make its list grow. */
  for (int32_t id = 0; id < 40 && run->rc == 0; ++id) {
    run->rc = TVMFFIEnvSetStream(kDLCUDA, id, (void*)(intptr_t)(id + 1), NULL);
  }
  for (int32_t id = 0; id < 40 && run->rc == 0; ++id) {
    cr_assert_eq(TVMFFIEnvGetStream(kDLCUDA, id), (void*)(intptr_t)(id + 1));
  }
  TVMFFIErrorMoveFromRaised(&run->err); /* errors are per thread: carry it home */
  return NULL;
}

static int op_stream_on_new_thread(void* ctx) {
  (void)ctx;
  StreamRun run = {0, NULL};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, set_streams, &run), 0);
  pthread_join(t, NULL);
  if (run.err) tffi_set_raised(run.err);
  return run.rc;
}

Test(fault, stream_on_new_thread) {
  fault_walk_both("set streams on a new thread", op_stream_on_new_thread, NULL);
}

/* ---- a module loaded with a library_bin ----
 * The "library" is the system-library symbol table under the prefix
 * "ut_fault_": its blob holds the library itself importing a module of kind
 * "ut_fault", whose registered loader returns ffi.SystemLib("ut_fchild_"). */

/* Static storage: the loader bounds the blob by the loaded segment. */
static uint8_t blob[256];
static void* ctx_value = (void*)0x1234;
static void* ctx_slot;

static int load_child(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  cr_assert_eq(n, 1);
  cr_assert(args[0].type_index == kTVMFFIBytes || args[0].type_index == kTVMFFISmallBytes);
  TVMFFIObject* mod = NULL;
  if (tffi_system_lib_get("ut_fchild_", 10, &mod) != 0) return -1;
  result->type_index = kTVMFFIModule;
  result->v_obj = mod;
  return 0;
}

static void setup_library(void) {
  uint64_t indptr[] = {0, 1, 1}, child[] = {1};
  TffiLibraryBinEntry entries[2] = {
      {.is_lib = 1},
      {.kind = "ut_fault", .kind_size = 8, .payload = (const uint8_t*)"xyz", .payload_size = 3},
  };
  LibbinTree in = {.num_modules = 2,
                   .indptr = indptr,
                   .child_indices = child,
                   .num_children = 1,
                   .entries = entries};
  uint8_t* packed;
  size_t size;
  cr_assert_eq(libbin_pack(&in, &packed, &size), 0);
  cr_assert_leq(size, sizeof blob);
  memcpy(blob, packed, size);
  tffi_free(packed);
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("ut_fault___tvm_ffi__library_bin", blob), 0);
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("ut_fault_ctx_var", &ctx_slot), 0);
  cr_assert_eq(TVMFFIEnvModRegisterContextSymbol("ut_fault_ctx_var", ctx_value), 0);
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ut_fault_own", (void*)fault_answer),
               0);
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ut_fchild_deep", (void*)fault_answer),
               0);
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(TVMFFIFunctionCreate(NULL, load_child, NULL, &loader), 0);
  TVMFFIByteArray name = {"ffi.Module.load_from_bytes.ut_fault", 35};
  cr_assert_eq(TVMFFIFunctionSetGlobal(&name, loader, 0), 0);
  tffi_decref(loader);
}

static int op_load_module(void* ctx) {
  (void)ctx;
  ctx_slot = NULL;
  TffiLibrary* lib = tffi_library_system("ut_fault_", 9);
  if (lib == NULL) return -1;
  TVMFFIObject *mod = NULL, *own = NULL;
  TVMFFIObjectHandle deep = NULL;
  int rc = tffi_library_module_create(lib, &mod);
  tffi_library_release(lib);
  if (rc != 0) return -1;
  cr_assert_eq(ctx_slot, ctx_value, "context symbols are filled in");
  rc = tffi_module_get_function(mod, "ut_fault_own", 12, 0, &own);
  if (rc == 0) {
    cr_assert_not_null(own, "the library's own function is found");
    rc = fault_call_answer(own);
    tffi_decref(own);
  }
  if (rc == 0) rc = TVMFFIEnvModLookupFromImports(mod, "ut_fchild_deep", &deep);
  if (rc == 0) rc = fault_call_answer(deep); /* borrowed from the module's cache */
  tffi_decref(mod);
  return rc;
}

Test(fault, load_module_with_library_bin, .init = setup_library) {
  fault_walk_both("load a module (library_bin)", op_load_module, NULL);
}
