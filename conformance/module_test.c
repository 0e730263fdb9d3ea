/* Clauses of spec/modules.md: the ffi.Module* globals, loading, imports,
 * and the TVMFFIEnvMod* functions, exercised as a pure-C host. */
#include <stdint.h>

#include "module_support.h"

static const char* const module_globals[] = {
    "ffi.ModuleLoadFromFile",       "ffi.Module.load_from_file.so",
    "ffi.ModuleGetFunction",        "ffi.ModuleImplementsFunction",
    "ffi.ModuleGetFunctionMetadata", "ffi.ModuleGetFunctionDoc",
    "ffi.ModuleGetKind",            "ffi.ModuleGetPropertyMask",
    "ffi.ModuleInspectSource",      "ffi.ModuleGetWriteFormats",
    "ffi.ModuleWriteToFile",        "ffi.ModuleImportModule",
    "ffi.ModuleClearImports",       "ffi.ModuleGlobalsAdd",
    "ffi.ModuleGlobalsRemove",      "ffi.SystemLib",
};

/* MOD-001: every module global is registered under its exact name. */
TEST(module, MOD_001_globals_registered) {
  for (size_t i = 0; i < sizeof module_globals / sizeof module_globals[0]; ++i) {
    TVMFFIByteArray n = {module_globals[i], strlen(module_globals[i])};
    TVMFFIObjectHandle fn = NULL;
    cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&n, &fn), 0);
    cr_expect_not_null(fn, "%s is not registered", module_globals[i]);
    if (fn) {
      cr_expect_eq(((TVMFFIObject*)fn)->type_index, kTVMFFIFunction);
      API(TVMFFIObjectDecRef)(fn);
    }
  }
}

static const char* kind_of(TVMFFIObjectHandle mod, char* buf, size_t cap) {
  TVMFFIAny arg = mod_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleGetKind", &arg, 1, &r));
  return mod_take_str(&r, buf, cap);
}

/* MOD-002: loading a .so gives a module object of kind "library". */
TEST(module, MOD_002_load_gives_library_module) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  cr_expect_eq(((TVMFFIObject*)mod)->type_index, kTVMFFIModule);
  char buf[64];
  const char* kind = kind_of(mod, buf, sizeof buf);
  cr_assert_not_null(kind, "ffi.ModuleGetKind did not return a str");
  cr_expect_str_eq(kind, "library");
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-003: ffi.Module.load_from_file.so loads directly. */
TEST(module, MOD_003_so_loader_direct) {
  TVMFFIAny args[2] = {mod_str(mod_lib_path("libmod_basic.so")), mod_str("so")}, r;
  EXPECT_OK(mod_call("ffi.Module.load_from_file.so", args, 2, &r));
  cr_assert_eq(r.type_index, kTVMFFIModule);
  TVMFFIObjectHandle fn = mod_get_function(r.v_obj, "add_one", 0);
  cr_assert_not_null(fn);
  TVMFFIAny arg = mod_int(1);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 2);
  API(TVMFFIObjectDecRef)(fn);
  mod_release(&r);
}

/* A loader for the made-up format "tffitest": records its arguments and
 * loads libmod_basic.so instead. */
static char seen_path[4096], seen_format[64];
static int seen_calls;

static int copy_str_arg(const TVMFFIAny* a, char* buf, size_t cap) {
  if (a->type_index == kTVMFFIRawStr) return snprintf(buf, cap, "%s", a->v_c_str);
  if (a->type_index == kTVMFFISmallStr)
    return snprintf(buf, cap, "%.*s", (int)a->small_str_len, a->v_bytes);
  if (a->type_index == kTVMFFIStr) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(a->v_obj);
    return snprintf(buf, cap, "%.*s", (int)b->size, b->data);
  }
  return -1;
}

static int test_format_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  ++seen_calls;
  if (n != 2 || copy_str_arg(&args[0], seen_path, sizeof seen_path) < 0 ||
      copy_str_arg(&args[1], seen_format, sizeof seen_format) < 0) {
    API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "test loader: want (str, str)");
    return -1;
  }
  TVMFFIObjectHandle fn = mod_global("ffi.Module.load_from_file.so");
  TVMFFIAny a[2] = {mod_str(mod_lib_path("libmod_basic.so")), mod_str("so")};
  int rc = API(TVMFFIFunctionCall)(fn, a, 2, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

static void register_global(const char* name, TVMFFISafeCallType call) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, call, NULL, &fn), 0);
  TVMFFIByteArray n = {name, strlen(name)};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
  API(TVMFFIObjectDecRef)(fn);
}

/* MOD-004: the format after the last '.' picks ffi.Module.load_from_file.<format>;
 * dll, dylib and dso mean so. */
TEST(module, MOD_004_format_dispatch) {
  register_global("ffi.Module.load_from_file.tffitest", test_format_loader);
  TVMFFIObjectHandle mod;
  EXPECT_OK(mod_load_path("/no/such/dir/lib.v1.tffitest", &mod));
  cr_expect_eq(seen_calls, 1);
  cr_expect_str_eq(seen_path, "/no/such/dir/lib.v1.tffitest");
  cr_expect_str_eq(seen_format, "tffitest");
  cr_expect_eq(((TVMFFIObject*)mod)->type_index, kTVMFFIModule);
  API(TVMFFIObjectDecRef)(mod);
  /* Aliases reach the "so" loader: a missing .dylib fails inside dlopen. */
  const char* aliases[] = {"/no/such/lib.dylib", "/no/such/lib.dll", "/no/such/lib.dso"};
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(mod_load_path(aliases[i], &mod), -1);
    ConfError err = conf_take_error();
    cr_expect(strstr(err.message, aliases[i]) != NULL, "%s: %s", aliases[i], err.message);
    cr_expect(strstr(err.message, "load_from_file") == NULL,
              "%s did not reach the so loader: %s", aliases[i], err.message);
  }
}

/* MOD-005: no '.' or an unregistered format: RuntimeError naming it. */
TEST(module, MOD_005_bad_format) {
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path("/tmp/no_extension", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"/tmp/no_extension"});
  cr_expect_eq(mod_load_path("/tmp/x.tffinosuchformat", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"ffi.Module.load_from_file.tffinosuchformat"});
}

/* MOD-110: ffi.ModuleLoadFromFile keeps no reference to the loader it
 * called: once the global is overridden, the loader's deleter has run, after
 * a successful load and after a failed one alike. */
static int loader_deleted;
static void count_loader_delete(void* self) {
  (void)self;
  ++loader_deleted;
}

static int failing_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "tffiref110 loader refuses");
  return -1;
}

static void expect_loader_released(TVMFFISafeCallType loader, int want_rc) {
  const char* path = "/no/such/dir/lib.tffiref110";
  static const char name[] = "ffi.Module.load_from_file.tffiref110";
  TVMFFIObjectHandle fn = NULL, other = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, loader, count_loader_delete, &fn), 0);
  TVMFFIByteArray n = {name, sizeof name - 1};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
  API(TVMFFIObjectDecRef)(fn);
  loader_deleted = 0;
  TVMFFIAny arg = mod_str(path), result;
  int rc = mod_call("ffi.ModuleLoadFromFile", &arg, 1, &result);
  cr_expect_eq(rc, want_rc, "%s: ffi.ModuleLoadFromFile returned %d", path, rc);
  if (want_rc == 0) mod_release(&result);
  cr_expect_eq(loader_deleted, 0, "the loader was freed while registered");
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, test_format_loader, NULL, &other), 0);
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, other, 1), 0);
  API(TVMFFIObjectDecRef)(other);
  cr_expect_eq(loader_deleted, 1, "%s: the overridden loader was not freed", path);
}

TEST(module, MOD_110_load_from_file_releases_loader) {
  expect_loader_released(test_format_loader, 0);
  expect_loader_released(failing_loader, -1);
  EXPECT_RAISED(.kind = "ValueError");
}

/* MOD-080: a path without '.' fails even when its whole text names a
 * registered loader; that loader is never called. */
TEST(module, MOD_080_no_dot_never_dispatches) {
  register_global("ffi.Module.load_from_file.tffinodot80", test_format_loader);
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path("tffinodot80", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"tffinodot80"});
  cr_expect_eq(seen_calls, 0, "the loader of the whole path ran %d times", seen_calls);
  /* A long path is named too, from its start. */
  static char longpath[5001];
  memset(longpath, 'a', sizeof longpath - 1);
  memcpy(longpath, "tffinodot80long", 15);
  cr_expect_eq(mod_load_path(longpath, &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"tffinodot80longaaaaaaaa"});
}

/* MOD-083: the unregistered-format error shows the format as `.<format>`
 * besides the loader's name. */
TEST(module, MOD_083_unregistered_format_shown) {
  TVMFFIObjectHandle mod = NULL;
  cr_assert_eq(mod_load_path("/tmp/x.tffinosuchformat", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError",
                .says = {"`.tffinosuchformat`", "ffi.Module.load_from_file.tffinosuchformat"});
}

/* MOD-006: a missing file: the path and dlopen's reason. */
TEST(module, MOD_006_missing_file) {
  TVMFFIObjectHandle mod = (void*)1;
  cr_expect_eq(mod_load_path("/no/such/dir/libmissing.so", &mod), -1);
  EXPECT_RAISED(.says = {"/no/such/dir/libmissing.so", "No such file or directory"});
}

/* MOD-007: a file that is not a shared library. */
TEST(module, MOD_007_not_a_library) {
  char copy[4200];
  snprintf(copy, sizeof copy, "%s/not_a_lib.so", getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR")
                                                                       : "/tmp");
  FILE* f = fopen(copy, "w");
  cr_assert_not_null(f);
  fputs("this is not an ELF file\n", f);
  fclose(f);
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path(copy, &mod), -1);
  ConfError err = conf_take_error();
  cr_expect(strstr(err.message, copy) != NULL, "message: %s", err.message);
  cr_expect(strstr(err.message, "invalid ELF header") != NULL ||
                strstr(err.message, "file too short") != NULL,
            "no loader reason in: %s", err.message);
}

/* MOD-008: an unresolved data reference: the symbol is named. */
TEST(module, MOD_008_unresolved_symbol) {
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_unresolved.so"), &mod), -1);
  EXPECT_RAISED(.says = {"conf_symbol_nobody_defines"});
}

/* MOD-009: those failures are RuntimeError. */
TEST(module, MOD_009_load_failure_kind) {
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path("/no/such/dir/libmissing.so", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_unresolved.so"), &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
}

/* basic imports other (which=1, other_fn) and third (which=2, third_fn). */
static void load_tree(TVMFFIObjectHandle* basic, TVMFFIObjectHandle* other,
                      TVMFFIObjectHandle* third) {
  *basic = mod_load("libmod_basic.so");
  *other = mod_load("libmod_other.so");
  *third = mod_load("libmod_third.so");
  TVMFFIAny a[2] = {mod_obj(*basic), mod_obj(*other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  a[1] = mod_obj(*third);
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
}

static void release3(TVMFFIObjectHandle a, TVMFFIObjectHandle b, TVMFFIObjectHandle c) {
  API(TVMFFIObjectDecRef)(a);
  API(TVMFFIObjectDecRef)(b);
  API(TVMFFIObjectDecRef)(c);
}

/* MOD-010: None for an unknown name, with and without imports. */
TEST(module, MOD_010_unknown_name_is_none) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  cr_expect_null(mod_get_function(basic, "no_such_function", 0));
  cr_expect_null(mod_get_function(basic, "no_such_function", 1));
  release3(basic, other, third);
}

/* MOD-011: own functions only without query_imports; with it, the module
 * first and then imports in order. */
TEST(module, MOD_011_query_imports_order) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  cr_expect_null(mod_get_function(basic, "other_fn", 0));
  TVMFFIObjectHandle fn = mod_get_function(basic, "other_fn", 1);
  cr_assert_not_null(fn, "other_fn not found through imports");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 42);
  API(TVMFFIObjectDecRef)(fn);
  fn = mod_get_function(basic, "which", 1); /* both imports have it: first wins */
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  fn = mod_get_function(basic, "add_one", 1); /* own before imports */
  cr_assert_not_null(fn);
  TVMFFIAny arg = mod_int(1);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 2);
  API(TVMFFIObjectDecRef)(fn);
  /* depth first: basic -> other -> third; third_fn is reached. */
  fn = mod_get_function(basic, "third_fn", 1);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 43);
  API(TVMFFIObjectDecRef)(fn);
  release3(basic, other, third);
}

/* MOD-012: ImplementsFunction agrees with GetFunction. */
TEST(module, MOD_012_implements_matches_get) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  const char* names[] = {"add_one", "other_fn", "third_fn", "nothing", "main"};
  for (int i = 0; i < 5; ++i) {
    for (int qi = 0; qi < 2; ++qi) {
      TVMFFIObjectHandle fn = mod_get_function(basic, names[i], qi);
      cr_expect_eq(mod_implements(basic, names[i], qi), fn != NULL, "%s qi=%d", names[i], qi);
      if (fn) API(TVMFFIObjectDecRef)(fn);
    }
  }
  cr_expect_eq(mod_implements(basic, "other_fn", 0), 0);
  cr_expect_eq(mod_implements(basic, "other_fn", 1), 1);
  release3(basic, other, third);
}

/* MOD-013: a function outlives the module handle and keeps the library. */
TEST(module, MOD_013_function_keeps_library) {
  const char* path = mod_lib_path("libmod_other.so");
  TVMFFIObjectHandle mod = mod_load("libmod_other.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "other_fn", 0);
  cr_assert_not_null(fn);
  API(TVMFFIObjectDecRef)(mod);
  cr_expect(mod_is_loaded(path), "the library was unloaded while a function is alive");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 42);
  API(TVMFFIObjectDecRef)(fn);
}

/* MOD-014: releasing everything unloads the library. */
TEST(module, MOD_014_release_unloads) {
  const char* path = mod_lib_path("libmod_other.so");
  cr_assert(!mod_is_loaded(path), "libmod_other.so is loaded before the test");
  TVMFFIObjectHandle mod = mod_load("libmod_other.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "other_fn", 0);
  cr_expect(mod_is_loaded(path));
  API(TVMFFIObjectDecRef)(mod);
  API(TVMFFIObjectDecRef)(fn);
  cr_expect(!mod_is_loaded(path), "the library stays loaded after every handle is released");
}

/* MOD-015: ImportModule adds, ClearImports removes. */
TEST(module, MOD_015_import_and_clear) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  cr_expect_eq(mod_implements(basic, "third_fn", 1), 1);
  TVMFFIAny a = mod_obj(basic), r;
  EXPECT_OK(mod_call("ffi.ModuleClearImports", &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  cr_expect_eq(mod_implements(basic, "third_fn", 1), 0);
  cr_expect_eq(mod_implements(basic, "other_fn", 1), 0);
  cr_expect_eq(mod_implements(basic, "add_one", 1), 1);
  release3(basic, other, third);
}

/* MOD-016: a cycle (including importing oneself) is refused with
 * RuntimeError and changes nothing. */
TEST(module, MOD_016_import_cycle_refused) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  TVMFFIAny a[2] = {mod_obj(basic), mod_obj(basic)}, r;
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  a[0] = mod_obj(third); /* basic -> third already: third -> basic closes it */
  a[1] = mod_obj(basic);
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  cr_expect_eq(mod_implements(third, "add_one", 1), 0, "the refused import was kept");
  /* Clearing breaks what would otherwise be a reference cycle on exit. */
  a[0] = mod_obj(basic);
  mod_call("ffi.ModuleClearImports", a, 1, &r);
  release3(basic, other, third);
}

static int64_t call_int_global(const char* name, TVMFFIObjectHandle mod) {
  TVMFFIAny a = mod_obj(mod), r;
  EXPECT_OK(mod_call(name, &a, 1, &r));
  cr_assert_eq(r.type_index, kTVMFFIInt, "%s returned type index %d", name, r.type_index);
  return r.v_int64;
}

/* MOD-017: property mask 3. */
TEST(module, MOD_017_property_mask) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  cr_expect_eq(call_int_global("ffi.ModuleGetPropertyMask", mod), 3);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-018: InspectSource "", GetWriteFormats [], WriteToFile RuntimeError. */
TEST(module, MOD_018_source_and_write) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny a[3] = {mod_obj(mod), mod_str("asm"), mod_none()}, r;
  char buf[64];
  EXPECT_OK(mod_call("ffi.ModuleInspectSource", a, 2, &r));
  const char* s = mod_take_str(&r, buf, sizeof buf);
  cr_assert_not_null(s, "InspectSource did not return a str");
  cr_expect_str_eq(s, "");
  EXPECT_OK(mod_call("ffi.ModuleGetWriteFormats", a, 1, &r));
  cr_assert_eq(r.type_index, kTVMFFIArray, "GetWriteFormats returned type index %d",
               r.type_index);
  cr_expect_eq(((TVMFFISeqCell*)((char*)r.v_obj + sizeof(TVMFFIObject)))->size, 0);
  mod_release(&r);
  a[1] = mod_str("/tmp/conf_never_written.so");
  a[2] = mod_str("so");
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-019: GlobalsAdd keeps the module and its library alive until
 * GlobalsRemove. */
TEST(module, MOD_019_globals_keep_alive) {
  const char* path = mod_lib_path("libmod_other.so");
  TVMFFIObjectHandle mod = mod_load("libmod_other.so");
  TVMFFIAny a = mod_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleGlobalsAdd", &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  API(TVMFFIObjectDecRef)(mod);
  cr_expect(!mod_is_loaded(path), "still loaded after ffi.ModuleGlobalsRemove and release");
  /* Added and released by the host: the runtime keeps it. */
  mod = mod_load("libmod_other.so");
  a = mod_obj(mod);
  EXPECT_OK(mod_call("ffi.ModuleGlobalsAdd", &a, 1, &r));
  API(TVMFFIObjectDecRef)(mod);
  cr_expect(mod_is_loaded(path), "unloaded although ffi.ModuleGlobalsAdd holds the module");
}

/* MOD-020: a non-module argument is a TypeError naming argument #0. */
TEST(module, MOD_020_non_module_is_type_error) {
  const char* names[] = {"ffi.ModuleGetKind", "ffi.ModuleGetPropertyMask",
                         "ffi.ModuleClearImports", "ffi.ModuleGlobalsAdd"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny a = mod_int(5), r;
    cr_expect_eq(mod_call(names[i], &a, 1, &r), -1, "%s accepted an int", names[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#0"});
  }
  TVMFFIAny a[3] = {mod_str("x"), mod_str("add_one"), mod_bool(0)}, r;
  cr_expect_eq(mod_call("ffi.ModuleGetFunction", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "TypeError");
}

/* MOD-021: LookupFromImports from inside the library finds the imports'
 * functions, with the same handle each time. */
TEST(module, MOD_021_lookup_from_imports) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  TVMFFIAny arg = mod_str("third_fn");
  cr_expect_eq(mod_call_int(call, &arg, 1), 43);
  arg = mod_str("other_fn");
  cr_expect_eq(mod_call_int(call, &arg, 1), 42);
  TVMFFIObjectHandle twice = mod_get_function(basic, "lookup_twice", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFIOpaquePtr);
  cr_expect_not_null(r.v_ptr);
  API(TVMFFIObjectDecRef)(twice);
  API(TVMFFIObjectDecRef)(call);
  release3(basic, other, third);
}

static int mod022_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 2222;
  return 0;
}

/* MOD-022: the global registry is the fallback. */
TEST(module, MOD_022_lookup_falls_back_to_globals) {
  register_global("conf_test.mod022", mod022_global);
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  TVMFFIAny arg = mod_str("conf_test.mod022");
  cr_expect_eq(mod_call_int(call, &arg, 1), 2222);
  API(TVMFFIObjectDecRef)(call);
  release3(basic, other, third);
}

/* MOD-023: nothing found: -1 and RuntimeError naming the function. */
TEST(module, MOD_023_lookup_missing_is_runtime_error) {
  TVMFFIObjectHandle basic, other, third;
  load_tree(&basic, &other, &third);
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  TVMFFIAny arg = mod_str("conf_no_function_has_this_name"), r;
  cr_expect_eq(mod_call_fn(call, &arg, 1, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"conf_no_function_has_this_name"});
  API(TVMFFIObjectDecRef)(call);
  release3(basic, other, third);
}

/* MOD-024: a registered context symbol is written into later libraries. */
TEST(module, MOD_024_context_symbol_filled) {
  static int marker;
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &marker), 0);
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "get_context_slot", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(fn, NULL, 0, &r));
  cr_assert_eq(r.type_index, kTVMFFIOpaquePtr);
  cr_expect_eq(r.v_ptr, &marker, "slot holds %p, registered %p", r.v_ptr, (void*)&marker);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

static int syslib_plain(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1;
  return 0;
}

static int syslib_prefixed(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 2;
  return 0;
}

static TVMFFIObjectHandle system_lib(const char* prefix) {
  TVMFFIAny a = mod_str(prefix), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &a, prefix ? 1 : 0, &r));
  cr_assert_eq(r.type_index, kTVMFFIModule);
  return r.v_obj;
}

/* MOD-025: system-library symbols: `__tvm_ffi_<prefix>f`, else `__tvm_ffi_f`. */
TEST(module, MOD_025_system_lib_symbols) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod025_f",
                                                          (void*)syslib_plain), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_pfx_conf_mod025_f",
                                                          (void*)syslib_prefixed), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod025_g",
                                                          (void*)syslib_plain), 0);
  TVMFFIObjectHandle with_prefix = system_lib("pfx_");
  TVMFFIObjectHandle fn = mod_get_function(with_prefix, "conf_mod025_f", 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 2, "the prefixed symbol must win");
  API(TVMFFIObjectDecRef)(fn);
  fn = mod_get_function(with_prefix, "conf_mod025_g", 0);
  cr_assert_not_null(fn, "no fallback to the unprefixed symbol");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  TVMFFIObjectHandle plain = system_lib("");
  fn = mod_get_function(plain, "conf_mod025_f", 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  cr_expect_null(mod_get_function(plain, "conf_mod025_none", 0));
  API(TVMFFIObjectDecRef)(plain);
  API(TVMFFIObjectDecRef)(with_prefix);
}

/* MOD-026: one module per prefix; no argument means "". */
TEST(module, MOD_026_system_lib_is_cached) {
  TVMFFIObjectHandle a = system_lib("conf_p_");
  TVMFFIObjectHandle b = system_lib("conf_p_");
  TVMFFIObjectHandle c = system_lib(NULL);
  TVMFFIObjectHandle d = system_lib("");
  TVMFFIObjectHandle e = system_lib("conf_q_");
  cr_expect_eq(a, b);
  cr_expect_eq(c, d);
  cr_expect_neq(a, e);
  cr_expect_neq(a, c);
  API(TVMFFIObjectDecRef)(a);
  API(TVMFFIObjectDecRef)(b);
  API(TVMFFIObjectDecRef)(c);
  API(TVMFFIObjectDecRef)(d);
  API(TVMFFIObjectDecRef)(e);
}
