/*
 * Drop-in proof on libraries nobody here wrote (RFL-019): the implementation
 * under test is loaded first (RTLD_GLOBAL, by impl.c), then a C++ library
 * built on upstream's headers, which registers its types through the
 * reflection functions in static initialisers as it loads; its functions are
 * then called through the C ABI alone.
 *
 * - upstream's own libtvm_ffi_testing.so, from the pinned wheel;
 * - jax-tvm-ffi's jax_tvm_ffi.so, from PyPI (SKIP with the reason when the
 *   wheel could not be fetched), whose functions that need no JAX.
 *
 * Each Criterion test runs in its own process, so each loads its library
 * once: a second copy of one from another path would abort the process.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core_support.h"

typedef int (*SafeCall)(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);

static void* load_library(const char* runfile) {
  const char* path = conf_runfile(runfile);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  char why[1024] = "";
  if (lib == NULL) snprintf(why, sizeof why, "%s", dlerror());
  if (lib == NULL) conf_impl_skip_if_unresolved(why, path);
  cr_assert_not_null(lib, "cannot load %s on %s: %s", path, conf_impl_path(), why);
  return lib;
}

static void* load_testing(void) {
  return load_library("../tvm_ffi_upstream/lib/libtvm_ffi_testing.so");
}

static SafeCall export_of(void* lib, const char* name) {
  SafeCall f = (SafeCall)dlsym(lib, name);
  cr_assert_not_null((void*)f, "the library exports no %s", name);
  return f;
}

static int32_t type_index_of(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = -1;
  cr_assert_eq(API(TVMFFITypeKeyToIndex)(&k, &index), 0, "the library registered no type `%s`",
               key);
  return index;
}

static const TVMFFIFieldInfo* field_of(const TVMFFITypeInfo* info, const char* name) {
  for (int32_t i = 0; i < info->num_fields; ++i)
    if (info->fields[i].name.size == strlen(name) &&
        memcmp(info->fields[i].name.data, name, info->fields[i].name.size) == 0)
      return &info->fields[i];
  return NULL;
}

TEST(dropin, RFL_019_testing_exports_answer) {
  void* lib = load_testing();
  TVMFFIAny args[2] = {core_int(1), core_int(2)};
  TVMFFIAny r = core_int(-1);
  SafeCall add = export_of(lib, "__tvm_ffi_testing_dll_test_add_with_docstring");
  cr_assert_eq(add(NULL, args, 2, &r), 0);
  cr_expect_eq(r.type_index, kTVMFFIInt);
  cr_expect_eq(r.v_int64, 3);
  args[0] = core_int(41);
  r = core_int(-1);
  cr_assert_eq(export_of(lib, "__tvm_ffi_testing_dll_schema_id_int")(NULL, args, 1, &r), 0);
  cr_expect_eq(r.type_index, kTVMFFIInt);
  cr_expect_eq(r.v_int64, 41);
  const char* const* doc = dlsym(lib, "__tvm_ffi__doc_testing_dll_test_add_with_docstring");
  cr_expect_not_null(doc, "the docstring symbol is missing");
}

TEST(dropin, RFL_019_testing_refuses_bad_arguments) {
  void* lib = load_testing();
  TVMFFIAny args[1] = {core_c_str("not a number")};
  TVMFFIAny r = core_int(-1);
  cr_expect_eq(export_of(lib, "__tvm_ffi_testing_dll_schema_id_int")(NULL, args, 1, &r), -1);
  core_expect_raised("TypeError", NULL);
}

TEST(dropin, RFL_019_testing_globals_answer) {
  load_testing();
  TVMFFIObjectHandle add_one = core_global("testing.add_one", 0);
  TVMFFIAny args[2] = {core_int(41)};
  TVMFFIAny r = core_int(-1);
  cr_assert_eq(API(TVMFFIFunctionCall)(add_one, args, 1, &r), 0);
  cr_expect_eq(r.v_int64, 42);
  API(TVMFFIObjectDecRef)(add_one);

  TVMFFIObjectHandle echo = core_global("testing.echo", 0);
  args[0] = core_c_str("echoed through a C++ library");
  memset(&r, 0, sizeof r);
  cr_assert_eq(API(TVMFFIFunctionCall)(echo, args, 1, &r), 0);
  TVMFFIByteArray got = core_str_bytes(&r);
  cr_expect(got.size == strlen("echoed through a C++ library") &&
                memcmp(got.data, "echoed through a C++ library", got.size) == 0,
            "echo returned type_index %d", r.type_index);
  core_release(&r);
  API(TVMFFIObjectDecRef)(echo);

  TVMFFIObjectHandle raise = core_global("testing.test_raise_error", 0);
  args[0] = core_c_str("ValueError");
  args[1] = core_c_str("raised by the testing library");
  memset(&r, 0, sizeof r);
  cr_expect_eq(API(TVMFFIFunctionCall)(raise, args, 2, &r), -1);
  core_expect_raised("ValueError", "raised by the testing library");
  API(TVMFFIObjectDecRef)(raise);
}

TEST(dropin, RFL_019_testing_types_registered) {
  load_testing();
  int32_t base = type_index_of("testing.TestObjectBase");
  int32_t derived = type_index_of("testing.TestObjectDerived");
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(base);
  cr_assert_not_null(info);
  cr_expect_eq(info->num_fields, 3);
  const TVMFFIFieldInfo* v_i64 = field_of(info, "v_i64");
  cr_assert_not_null(v_i64, "testing.TestObjectBase has no field v_i64");
  cr_expect_eq(v_i64->offset, (int64_t)sizeof(TVMFFIObject));
  cr_expect_eq(v_i64->size, 8);
  cr_expect_eq(v_i64->field_static_type_index, kTVMFFIInt);
  cr_expect(v_i64->flags & kTVMFFIFieldFlagBitMaskHasDefault);
  cr_expect_eq(v_i64->default_value_or_factory.type_index, kTVMFFIInt);
  cr_expect_eq(v_i64->default_value_or_factory.v_int64, 10);
  cr_expect(v_i64->doc.size == 9 && memcmp(v_i64->doc.data, "i64 field", 9) == 0);
  const TVMFFIFieldInfo* v_str = field_of(info, "v_str");
  cr_assert_not_null(v_str);
  TVMFFIByteArray hello = core_str_bytes(&v_str->default_value_or_factory);
  cr_expect(hello.size == 5 && memcmp(hello.data, "hello", 5) == 0);
  cr_expect_not_null(field_of(info, "v_f64"));
  cr_assert_eq(info->num_methods, 1);
  const TVMFFIByteArray* method = &info->methods[0].name;
  cr_expect(method->size == 7 && memcmp(method->data, "add_i64", 7) == 0);
  cr_expect_eq(info->methods[0].method.type_index, kTVMFFIFunction);
  cr_expect_not_null(info->metadata);
  const TVMFFITypeInfo* d = API(TVMFFIGetTypeInfo)(derived);
  cr_assert_not_null(d);
  cr_expect_eq(d->type_depth, 2);
  cr_expect_eq(d->type_ancestors[1], info);
  cr_expect_not_null(field_of(d, "v_map"));
  cr_expect_not_null(field_of(d, "v_array"));
}

/* The whole chain a reflection client walks: the creator from the type's
 * metadata makes an object, a field setter writes it, a getter reads it
 * back, and the method from the type's record computes with it. */
TEST(dropin, RFL_019_testing_object_through_reflection) {
  load_testing();
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(type_index_of("testing.TestObjectBase"));
  cr_assert_not_null(info);
  cr_assert_not_null(info->metadata);
  cr_assert_not_null((void*)info->metadata->creator, "testing.TestObjectBase has no creator");
  TVMFFIObjectHandle obj = NULL;
  cr_assert_eq(info->metadata->creator(&obj), 0);
  cr_assert_not_null(obj);
  cr_expect_eq(((TVMFFIObject*)obj)->type_index, info->type_index);
  const TVMFFIFieldInfo* v_i64 = field_of(info, "v_i64");
  cr_assert_not_null(v_i64);
  cr_assert(!(v_i64->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj));
  void* addr = (char*)obj + v_i64->offset;
  TVMFFIAny five = core_int(5);
  cr_assert_eq(((TVMFFIFieldSetter)v_i64->setter)(addr, &five), 0);
  TVMFFIAny read = core_int(-1);
  cr_assert_eq(v_i64->getter(addr, &read), 0);
  cr_expect_eq(read.v_int64, 5);
  TVMFFIAny args[2];
  memset(args, 0, sizeof args);
  args[0].type_index = info->type_index;
  args[0].v_obj = obj;
  args[1] = core_int(37);
  TVMFFIAny r = core_int(-1);
  cr_assert_eq(API(TVMFFIFunctionCall)(info->methods[0].method.v_obj, args, 2, &r), 0);
  cr_expect_eq(r.type_index, kTVMFFIInt);
  cr_expect_eq(r.v_int64, 42);
  API(TVMFFIObjectDecRef)(obj);
}

/* jax-tvm-ffi: SKIP with the repository's reason when the wheel is missing. */
static void* load_jax(void) {
  FILE* f = fopen(conf_runfile("../jax_tvm_ffi/status.txt"), "r");
  char status[512] = "";
  if (f == NULL) criterion_skip_test("jax-tvm-ffi: no status.txt in the runfiles");
  if (fgets(status, sizeof status, f) == NULL) status[0] = '\0';
  fclose(f);
  status[strcspn(status, "\n")] = '\0';
  if (strncmp(status, "available:", 10) != 0) criterion_skip_test("jax-tvm-ffi %s", status);
  return load_library("../jax_tvm_ffi/wheel/jax_tvm_ffi/jax_tvm_ffi.so");
}

TEST(dropin, RFL_019_jax_tvm_ffi_counters_answer) {
  void* lib = load_jax();
  static const char* counters[] = {"__tvm_ffi_registered_count",
                                   "__tvm_ffi_get_last_workspace_peak"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny r = core_int(-1);
    cr_assert_eq(export_of(lib, counters[i])(NULL, NULL, 0, &r), 0, "%s failed", counters[i]);
    cr_expect_eq(r.type_index, kTVMFFIInt, "%s", counters[i]);
    cr_expect_eq(r.v_int64, 0, "%s of a fresh process", counters[i]);
  }
}

TEST(dropin, RFL_019_jax_tvm_ffi_refuses_missing_arguments) {
  void* lib = load_jax();
  TVMFFIAny r = core_int(-1);
  cr_expect_eq(export_of(lib, "__tvm_ffi_register_tvm_ffi_handler")(NULL, NULL, 0, &r), -1);
  core_expect_raised("TypeError", "Expected 6 but got 0 arguments");
}
