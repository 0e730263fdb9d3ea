/* Clauses of spec/modules.md on loading (## Loading): ffi.ModuleLoadFromFile
 * and its per-format loaders, the formats and their aliases, host loaders,
 * what a failed load says and leaves behind, and how long a loaded library
 * stays mapped. */
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>

#include "alloc_fail.h"
#include "core_support.h"
#include "module_support.h"

static const char* kind_of(TVMFFIObjectHandle mod, char* buf, size_t cap) {
  TVMFFIAny arg = core_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleGetKind", &arg, 1, &r));
  return mod_take_str(&r, buf, cap);
}

/* MOD-002: loading a .so gives a module object of kind "library". */
TEST(module_load, MOD_002_load_gives_library_module) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  cr_expect_eq(((TVMFFIObject*)mod)->type_index, kTVMFFIModule);
  char buf[64];
  const char* kind = kind_of(mod, buf, sizeof buf);
  cr_assert_not_null(kind, "ffi.ModuleGetKind did not return a str");
  cr_expect_str_eq(kind, "library");
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-003: ffi.Module.load_from_file.so loads directly. */
TEST(module_load, MOD_003_so_loader_direct) {
  TVMFFIAny args[2] = {core_c_str(mod_lib_path("libmod_basic.so")), core_c_str("so")}, r;
  EXPECT_OK(mod_call("ffi.Module.load_from_file.so", args, 2, &r));
  cr_assert_eq(r.type_index, kTVMFFIModule);
  TVMFFIObjectHandle fn = mod_get_function(r.v_obj, "add_one", 0);
  cr_assert_not_null(fn);
  TVMFFIAny arg = core_int(1);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 2);
  API(TVMFFIObjectDecRef)(fn);
  core_release(&r);
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
  TVMFFIAny a[2] = {core_c_str(mod_lib_path("libmod_basic.so")), core_c_str("so")};
  int rc = API(TVMFFIFunctionCall)(fn, a, 2, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* MOD-004: the format after the last '.' picks ffi.Module.load_from_file.<format>;
 * dll, dylib and dso mean so. */
TEST(module_load, MOD_004_format_dispatch) {
  mod_register_global("ffi.Module.load_from_file.tffitest", test_format_loader);
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
    cr_expect(strstr(err.message, "load_from_file") == NULL, "%s did not reach the so loader: %s",
              aliases[i], err.message);
  }
}

/* MOD-005: no '.' or an unregistered format: RuntimeError naming it. */
TEST(module_load, MOD_005_bad_format) {
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
  TVMFFIAny arg = core_c_str(path), result;
  int rc = mod_call("ffi.ModuleLoadFromFile", &arg, 1, &result);
  cr_expect_eq(rc, want_rc, "%s: ffi.ModuleLoadFromFile returned %d", path, rc);
  if (want_rc == 0) core_release(&result);
  cr_expect_eq(loader_deleted, 0, "the loader was freed while registered");
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, test_format_loader, NULL, &other), 0);
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, other, 1), 0);
  API(TVMFFIObjectDecRef)(other);
  cr_expect_eq(loader_deleted, 1, "%s: the overridden loader was not freed", path);
}

TEST(module_load, MOD_110_load_from_file_releases_loader) {
  expect_loader_released(test_format_loader, 0);
  expect_loader_released(failing_loader, -1);
  EXPECT_RAISED(.kind = "ValueError");
}

/* MOD-080: a path without '.' fails even when its whole text names a
 * registered loader; that loader is never called. */
TEST(module_load, MOD_080_no_dot_never_dispatches) {
  mod_register_global("ffi.Module.load_from_file.tffinodot80", test_format_loader);
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
TEST(module_load, MOD_083_unregistered_format_shown) {
  TVMFFIObjectHandle mod = NULL;
  cr_assert_eq(mod_load_path("/tmp/x.tffinosuchformat", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError",
                .says = {"`.tffinosuchformat`", "ffi.Module.load_from_file.tffinosuchformat"});
}

/* MOD-006: a missing file: the path and dlopen's reason. */
TEST(module_load, MOD_006_missing_file) {
  TVMFFIObjectHandle mod = (void*)1;
  cr_expect_eq(mod_load_path("/no/such/dir/libmissing.so", &mod), -1);
  EXPECT_RAISED(.says = {"/no/such/dir/libmissing.so", "No such file or directory"});
}

/* MOD-007: a file that is not a shared library. */
TEST(module_load, MOD_007_not_a_library) {
  char copy[4200];
  snprintf(copy, sizeof copy, "%s/not_a_lib.so",
           getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp");
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
TEST(module_load, MOD_008_unresolved_symbol) {
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_unresolved.so"), &mod), -1);
  EXPECT_RAISED(.says = {"conf_symbol_nobody_defines"});
}

/* MOD-009: those failures are RuntimeError. */
TEST(module_load, MOD_009_load_failure_kind) {
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path("/no/such/dir/libmissing.so", &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_unresolved.so"), &mod), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
}

/* MOD-013: a function outlives the module handle and keeps the library. */
TEST(module_load, MOD_013_function_keeps_library) {
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
TEST(module_load, MOD_014_release_unloads) {
  const char* path = mod_lib_path("libmod_other.so");
  cr_assert(!mod_is_loaded(path), "libmod_other.so is loaded before the test");
  TVMFFIObjectHandle mod = mod_load("libmod_other.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "other_fn", 0);
  cr_expect(mod_is_loaded(path));
  API(TVMFFIObjectDecRef)(mod);
  API(TVMFFIObjectDecRef)(fn);
  cr_expect(!mod_is_loaded(path), "the library stays loaded after every handle is released");
}

/* A loader that refuses, saying which format it was called with. */
static int refusing_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)result;
  char msg[128], format[64] = "(not a str)";
  if (n == 2) {
    TVMFFIAny copy = args[1];
    if (copy.type_index == kTVMFFIRawStr)
      snprintf(format, sizeof format, "%s", copy.v_c_str);
    else if (copy.type_index >= kTVMFFIStaticObjectBegin)
      API(TVMFFIObjectIncRef)(copy.v_obj);
    if (copy.type_index != kTVMFFIRawStr) mod_take_str(&copy, format, sizeof format);
  }
  snprintf(msg, sizeof msg, "conf113 loader called with %d arguments, format %s", (int)n, format);
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", msg);
  return -1;
}

/* MOD-113: only dll, dylib and dso themselves are taken for so: a format
 * as long as one of them, a part of one, or one that extends one goes to
 * its own loader. */
TEST(module_load, MOD_113_only_exact_aliases_fold) {
  static const char* const formats[] = {"abc", "dylix", "dsx", "d", "dl", "dyl", "dlls", "dsoo"};
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, refusing_loader, NULL, &loader), 0);
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; ++i) {
    char name[96], path[96];
    snprintf(name, sizeof name, "ffi.Module.load_from_file.%s", formats[i]);
    TVMFFIByteArray n = {name, strlen(name)};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, loader, 1), 0);
    snprintf(path, sizeof path, "/no/such/dir/lib.%s", formats[i]);
    TVMFFIObjectHandle mod = NULL;
    cr_expect_eq(mod_load_path(path, &mod), -1, "%s loaded", path);
    ConfError err = conf_take_error();
    cr_expect_str_eq(err.kind, "ValueError", "%s: %s: %s", path, err.kind, err.message);
    /* Not cut at "format": the refusal text after it is exact. */
    char want[64];
    snprintf(want, sizeof want, "format %s", formats[i]);
    const char* at = strstr(err.message, want);
    cr_expect(at != NULL && at[strlen(want)] == '\0',
              "%s did not reach ffi.Module.load_from_file.%s with format %s: %s", path, formats[i],
              formats[i], err.message);
  }
  API(TVMFFIObjectDecRef)(loader);
}

/* MOD-117: the refusals of loading say what they refuse: a NUL byte in
 * the path or the prefix (named as a parameter), a long path without '.'
 * (shown, not cut to nothing), and WriteToFile of a library module. */
TEST(module_load, MOD_117_load_refusals_say_what) {
  static const char nul_path[] = "/no/such/dir/lib\0x.so";
  TVMFFIAny args[2] = {mod_str_of(nul_path, sizeof nul_path - 1), core_c_str("so")}, r;
  ConfError err =
      mod_expect_names_param("ffi.Module.load_from_file.so", args, 2, 0, "path", "ValueError");
  cr_expect(strstr(err.message, "NUL") != NULL, "the reason is not given: %s", err.message);
  core_release(&args[0]);
  TVMFFIAny prefix = mod_str_of("conf117_\0x", 10);
  int rc = mod_call("ffi.SystemLib", &prefix, 1, &r);
  core_release(&r);
  core_release(&prefix);
  if (rc != 0) { /* refusing is one of the two answers MOD-036 allows */
    err = conf_take_error();
    cr_expect_str_eq(err.kind, "ValueError");
    cr_expect(strstr(err.message, "ffi.SystemLib") && strstr(err.message, "#0") &&
                  mod_has_word(err.message, "symbol_prefix") && strstr(err.message, "NUL"),
              "the refusal does not name ffi.SystemLib, #0, symbol_prefix and NUL: %s",
              err.message);
  }
  static char long_path[5001];
  memset(long_path, 'p', 5000);
  memcpy(long_path, "/tmp/conf117_", 13);
  TVMFFIAny path = core_c_str(long_path);
  cr_expect_eq(mod_call("ffi.ModuleLoadFromFile", &path, 1, &r), -1);
  char head[1001];
  memcpy(head, long_path, 1000);
  head[1000] = '\0';
  EXPECT_RAISED(.kind = "RuntimeError", .says = {head});
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny w[3] = {core_obj(mod), core_c_str("/tmp/conf117_never_written.so"), core_c_str("so")};
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", w, 3, &r), -1);
  err = conf_take_error();
  cr_expect_str_eq(err.kind, "RuntimeError");
  cr_expect(strstr(err.message, "WriteToFile") && strstr(err.message, "library"),
            "the message does not say that a library module cannot WriteToFile: %s", err.message);
  API(TVMFFIObjectDecRef)(mod);
}

static __attribute__((aligned(8))) unsigned char ctx_fail_blob[256];

static void* mod122_ctx;

/* MOD-122: a load that fails after making the `_lib` module leaves the
 * library's context variable as it was or NULL, never pointing at the
 * module the failure freed. The blob: `_lib` importing a module of a kind
 * without a loader. */
TEST(module_load, MOD_122_failed_load_leaves_no_stale_context) {
  static const char kind[] = "conf122_no_loader";
  size_t klen = sizeof kind - 1;
  unsigned char* at = ctx_fail_blob;
  mod_put_u64(&at, 8 + 24 + 8 + 8 + 8 + 4 + 8 + klen + 8 + 1); /* nbytes */
  mod_put_u64(&at, 3); /* indptr [0, 1, 1]: _lib imports module 1 */
  mod_put_u64(&at, 0);
  mod_put_u64(&at, 1);
  mod_put_u64(&at, 1);
  mod_put_u64(&at, 1); /* child_indices [1] */
  mod_put_u64(&at, 1);
  mod_put_u64(&at, 4);
  memcpy(at, "_lib", 4);
  at += 4;
  mod_put_u64(&at, klen);
  memcpy(at, kind, klen);
  at += klen;
  mod_put_u64(&at, 1);
  *at = 'p';
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("conf122___tvm_ffi__library_bin", ctx_fail_blob), 0);
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("conf122___tvm_ffi__library_ctx", &mod122_ctx), 0);
  static int sentinel;
  mod122_ctx = &sentinel;
  TVMFFIAny a = core_c_str("conf122_"), r;
  cr_assert_eq(mod_call("ffi.SystemLib", &a, 1, &r), -1, "a kind without a loader was loaded");
  EXPECT_RAISED(.says = {"ffi.Module.load_from_bytes.conf122_no_loader"});
  cr_expect(mod122_ctx == &sentinel || mod122_ctx == NULL,
            "the context variable points at %p, a module the failed load made and freed",
            mod122_ctx);
}

/* MOD-002 (exact): ffi.ModuleGetKind gives the str of exactly the seven
 * bytes "library", no NUL or anything else after them. */
TEST(module_load, MOD_002_kind_is_exactly_library) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny a = core_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleGetKind", &a, 1, &r));
  const char* data = NULL;
  size_t size = 0;
  if (r.type_index == kTVMFFISmallStr) {
    data = r.v_bytes;
    size = r.small_str_len;
  } else if (r.type_index == kTVMFFIStr) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(r.v_obj);
    data = b->data;
    size = b->size;
  }
  cr_assert_not_null(data, "ffi.ModuleGetKind returned type index %d", r.type_index);
  cr_expect(size == 7 && memcmp(data, "library", 7) == 0, "the kind is %zu bytes: %.*s", size,
            (int)size, data);
  core_release(&r);
  API(TVMFFIObjectDecRef)(mod);
}

static int loader_gives_int(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 31;
  return 0;
}

static int loader_fails(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "conf loader: this file is corrupt");
  return -1;
}

/* MOD-032: a host loader's error comes out of ffi.ModuleLoadFromFile
 * unchanged, and a loader that returns something other than a module makes
 * the load fail with TypeError. */
TEST(module_load, MOD_032_host_loader_results) {
  mod_register_global("ffi.Module.load_from_file.conffail", loader_fails);
  mod_register_global("ffi.Module.load_from_file.confint", loader_gives_int);
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path("/tmp/x.conffail", &mod), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"conf loader: this file is corrupt"});
  cr_expect_eq(mod_load_path("/tmp/x.confint", &mod), -1, "an int was accepted as a module");
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_null(mod);
}

/* MOD-035: a path holding a NUL byte is refused with ValueError; the load
 * never opens the path cut at the NUL. */
TEST(module_load, MOD_035_path_with_nul_refused) {
  const char* path = mod_lib_path("libmod_other.so");
  char buf[4200];
  size_t len = (size_t)snprintf(buf, sizeof buf, "%s%cx.so", path, 0);
  TVMFFIByteArray bytes = {buf, len};
  TVMFFIAny arg;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &arg), 0);
  TVMFFIAny args[2] = {arg, core_c_str("so")}, r;
  int rc = mod_call("ffi.ModuleLoadFromFile", args, 1, &r);
  core_release(&r);
  cr_expect_eq(rc, -1, "a path with a NUL byte was loaded");
  EXPECT_RAISED(.kind = "ValueError");
  rc = mod_call("ffi.Module.load_from_file.so", args, 2, &r);
  core_release(&r);
  cr_expect_eq(rc, -1, "a path with a NUL byte was loaded");
  EXPECT_RAISED(.kind = "ValueError");
  core_release(&args[0]);
  cr_expect(!mod_is_loaded(path), "the path cut at the NUL was opened");
}

static int mod047_calls;

static char mod047_payload[2][16];

/* ffi.Module.load_from_bytes.testkind for MOD-047: keeps the payload and
 * answers with a module of libmod_other.so. */
static int mod047_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int k = mod047_calls++;
  if (n != 1 || k >= 2) {
    API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "mod047 loader: want one argument");
    return -1;
  }
  if (args[0].type_index == kTVMFFISmallBytes) {
    memcpy(mod047_payload[k], args[0].v_bytes, args[0].small_str_len);
  } else if (args[0].type_index == kTVMFFIBytes) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(args[0].v_obj);
    memcpy(mod047_payload[k], b->data, b->size < 15 ? b->size : 15);
  }
  TVMFFIObjectHandle fn = mod_global("ffi.ModuleLoadFromFile");
  TVMFFIAny path = core_c_str(mod_lib_path("libmod_other.so"));
  int rc = API(TVMFFIFunctionCall)(fn, &path, 1, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* MOD-047: a `__tvm_ffi__library_bin` symbol without an ELF size (assembly
 * with no .size) is read like a sized one: libmod_packed_unsized.so holds
 * packed.desc's tree and loads as that tree. */
TEST(module_load, MOD_047_unsized_library_bin) {
  mod_register_global("ffi.Module.load_from_bytes.testkind", mod047_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed_unsized.so");
  cr_expect_eq(mod047_calls, 2, "the loader ran %d times for 2 custom entries", mod047_calls);
  cr_expect_str_eq(mod047_payload[0], "payload-one");
  cr_expect_eq(mod_implements(root, "add_one", 0), 1);
  cr_expect_eq(mod_implements(root, "other_fn", 0), 0);
  cr_expect_eq(mod_implements(root, "other_fn", 1), 1);
  API(TVMFFIObjectDecRef)(root);
}

/* MOD-049: an unsized `__tvm_ffi__library_bin` claiming 2^40 bytes
 * (libmod_huge_unsized.so) is refused with ValueError: its loaded segment
 * bounds what the loader reads. */
TEST(module_load, MOD_049_unsized_blob_bounded_by_segment) {
  HOSTILE_INPUT("an unbounded reader runs off the mapped segment");
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_huge_unsized.so"), &mod), -1,
               "a blob larger than its segment was accepted");
  EXPECT_RAISED(.kind = "ValueError");
  if (mod) API(TVMFFIObjectDecRef)(mod);
}

/* MOD-086: that refusal is the one of nbytes itself (offset 0), as for a
 * sized symbol (LIB-029): the segment's end is the symbol's extent. */
TEST(module_load, MOD_086_unsized_blob_nbytes_named) {
  HOSTILE_INPUT("an unbounded reader runs off the mapped segment");
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_huge_unsized.so"), &mod), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"offset 0:", "field nbytes:"});
  if (mod) API(TVMFFIObjectDecRef)(mod);
}
