/* Unit tests of module.c that need no shared library: modules over the
 * system-library symbol table, wired into import graphs by hand. */
#include "module.h"

#include <criterion/criterion.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "registry.h"
#include "unit_test_support.h"

static int answer(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 77;
  return 0;
}

/* A module whose functions are the system symbols `__tvm_ffi_<prefix>...`. */
static TVMFFIObject* make_module(const char* prefix) {
  TffiLibrary* lib = tffi_library_system(prefix, strlen(prefix));
  cr_assert_not_null(lib);
  TVMFFIObject* mod = tffi_module_new(lib);
  tffi_library_release(lib);
  cr_assert_not_null(mod);
  return mod;
}

/* A diamond (a -> b, a -> c, b -> d, c -> d) is no cycle; d -> a is. */
Test(module, diamond_then_cycle) {
  TVMFFIObject *a = make_module("ut_a_"), *b = make_module("ut_b_");
  TVMFFIObject *c = make_module("ut_c_"), *d = make_module("ut_d_");
  cr_assert_eq(tffi_module_import(a, b), 0);
  cr_assert_eq(tffi_module_import(a, c), 0);
  cr_assert_eq(tffi_module_import(b, d), 0);
  cr_assert_eq(tffi_module_import(c, d), 0);
  cr_expect_eq(tffi_module_import(d, a), -1);
  drop_raised();
  cr_expect_eq(tffi_module_import(d, d), -1);
  drop_raised();
  tffi_module_clear_imports(a);
  cr_expect_eq(tffi_module_import(d, a), 0, "no cycle once a's imports are cleared");
  tffi_module_clear_imports(b);
  tffi_module_clear_imports(c);
  tffi_module_clear_imports(d);
  tffi_decref(a);
  tffi_decref(b);
  tffi_decref(c);
  tffi_decref(d);
}

/* Lookups through imports are cached: the same borrowed handle each time. */
Test(module, lookup_from_imports_is_cached) {
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ut_leaf_fn", (void*)answer), 0);
  TVMFFIObject *root = make_module("ut_root_"), *leaf = make_module("ut_leaf_");
  cr_assert_eq(tffi_module_import(root, leaf), 0);
  TVMFFIObject *f1 = NULL, *f2 = NULL;
  cr_assert_eq(tffi_module_lookup_from_imports(root, "fn", &f1), 0);
  cr_assert_eq(tffi_module_lookup_from_imports(root, "fn", &f2), 0);
  cr_expect_eq(f1, f2);
  TVMFFIAny result = {0};
  cr_assert_eq(TVMFFIFunctionCall(f1, NULL, 0, &result), 0);
  cr_expect_eq(result.v_int64, 77);
  cr_expect_eq(tffi_module_lookup_from_imports(root, "missing_fn", &f1), -1);
  drop_raised();
  tffi_decref(root);
  tffi_decref(leaf);
}

/* A NUL inside a name never reaches the symbol lookup. */
Test(module, nul_in_name_finds_nothing) {
  cr_assert_eq(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_ut_n_x", (void*)answer), 0);
  TVMFFIObject* mod = make_module("ut_n_");
  TVMFFIObject* fn = NULL;
  cr_assert_eq(tffi_module_get_own_function(mod, "x", 1, &fn), 0);
  cr_assert_not_null(fn);
  tffi_decref(fn);
  cr_assert_eq(tffi_module_get_own_function(mod, "x\0y", 3, &fn), 0);
  cr_expect_null(fn);
  tffi_decref(mod);
}

/* The ffi.Module* functions refuse a Module-tagged argument that holds no
 * object (it would be dereferenced), naming the argument; also the second
 * module of ffi.ModuleImportModule. */
Test(module, module_functions_refuse_null_module) {
  static const char* const names[] = {"ffi.ModuleGetKind", "ffi.ModuleClearImports",
                                      "ffi.ModuleGlobalsAdd"};
  TVMFFIAny null_mod = {0};
  null_mod.type_index = kTVMFFIModule;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    TVMFFIObject* fn = NULL;
    cr_assert_eq(tffi_global_get(names[i], strlen(names[i]), &fn), 0);
    cr_assert_not_null(fn, "%s is not registered", names[i]);
    TVMFFIAny result = {0};
    cr_expect_eq(TVMFFIFunctionCall(fn, &null_mod, 1, &result), -1, "%s", names[i]);
    expect_raised("TypeError", "argument #0 (mod) is a NULL ffi.Module");
    tffi_decref(fn);
  }
  TVMFFIObject *mod = make_module("ut_null_"), *import = NULL;
  cr_assert_eq(tffi_global_get("ffi.ModuleImportModule", 22, &import), 0);
  cr_assert_not_null(import);
  TVMFFIAny args[2] = {{0}, null_mod};
  args[0].type_index = kTVMFFIModule;
  args[0].v_obj = mod;
  TVMFFIAny result = {0};
  cr_expect_eq(TVMFFIFunctionCall(import, args, 2, &result), -1);
  expect_raised("TypeError", "argument #1 (other) is a NULL ffi.Module");
  tffi_decref(import);
  tffi_decref(mod);
}
