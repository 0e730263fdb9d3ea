/* Clauses of spec/symbols.md: which exported symbol a name means. Every
 * case loads conformance/testlibs/libmod_basic.so. */
#include "alloc_fail.h"
#include "core_support.h"
#include "module_support.h"

/* SYM-001: ffi.ModuleGetFunction(mod, name, false) returns a Function that
 * calls `__tvm_ffi_<name>` with the caller's arguments and result. */
TEST(symbol, SYM_001_prefixed_symbol_is_the_function) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "add_one", 0);
  cr_assert_not_null(fn, "add_one not found");
  cr_expect_eq(((TVMFFIObject*)fn)->type_index, kTVMFFIFunction);
  TVMFFIAny arg = core_int(41);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 42);
  arg = core_int(-8);
  cr_expect_eq(mod_call_int(fn, &arg, 1), -7);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-002: the exported symbol is called with a NULL handle. */
TEST(symbol, SYM_002_symbol_gets_null_handle) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "handle_is_null", 0);
  cr_assert_not_null(fn);
  TVMFFIAny result;
  EXPECT_OK(mod_call_fn(fn, NULL, 0, &result));
  cr_assert_eq(result.type_index, kTVMFFIBool);
  cr_expect_eq(result.v_int64, 1, "the symbol saw a non-NULL handle");
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-003: `__tvm_ffi_main` is found as `main`. */
TEST(symbol, SYM_003_main_is_the_default_entry) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "main", 0);
  cr_assert_not_null(fn, "main not found");
  TVMFFIAny args[2] = {core_int(1), core_int(2)};
  cr_expect_eq(mod_call_int(fn, args, 2), 7002); /* 7000 + num_args */
  cr_expect_eq(mod_implements(mod, "main", 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-004: a safe-call symbol without the prefix is not a function of the
 * module. */
TEST(symbol, SYM_004_unprefixed_symbol_is_not_exported) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  cr_expect_null(mod_get_function(mod, "plain_add_one", 0));
  cr_expect_null(mod_get_function(mod, "plain_add_one", 1));
  cr_expect_eq(mod_implements(mod, "plain_add_one", 1), 0);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-005: the prefix is added exactly once; the full symbol name and the
 * empty name find nothing. */
TEST(symbol, SYM_005_prefix_added_exactly_once) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  cr_expect_null(mod_get_function(mod, "__tvm_ffi_add_one", 0));
  cr_expect_null(mod_get_function(mod, "", 0));
  cr_expect_eq(mod_implements(mod, "__tvm_ffi_add_one", 0), 0);
  cr_expect_eq(mod_implements(mod, "", 0), 0);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-006: a name that is no C identifier is looked up verbatim. */
TEST(symbol, SYM_006_non_identifier_name_found_verbatim) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "add.v2", 0);
  cr_assert_not_null(fn, "add.v2 not found");
  TVMFFIAny arg = core_int(40);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 42);
  cr_expect_null(mod_get_function(mod, "add_v2", 0), "the name was mangled");
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-007: a name holding a NUL byte finds nothing (not `__tvm_ffi_a` for
 * "a\0b"). */
TEST(symbol, SYM_007_name_with_nul_finds_nothing) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle plain = mod_get_function(mod, "a", 0);
  cr_assert_not_null(plain, "the control name `a` is not found");
  API(TVMFFIObjectDecRef)(plain);
  TVMFFIObjectHandle fn = mod_get_function_n(mod, "a\0b", 3, 0);
  cr_expect_null(fn, "\"a\\0b\" found a function (the name was cut at the NUL)");
  if (fn) API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-008: a data symbol with the prefix is not returned as a function
 * (the test never calls what it gets). */
TEST(symbol, SYM_008_data_symbol_is_not_a_function) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* names[] = {"data_symbol", "_library_ctx"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIObjectHandle fn = mod_get_function(mod, names[i], 0);
    cr_expect_null(fn, "data symbol __tvm_ffi_%s was returned as a function", names[i]);
    if (fn) API(TVMFFIObjectDecRef)(fn);
    cr_expect_eq(mod_implements(mod, names[i], 0), 0, "ImplementsFunction(%s) is true", names[i]);
  }
  API(TVMFFIObjectDecRef)(mod);
}

static int info_call(const char* global, TVMFFIObjectHandle mod, const char* name, int qi,
                     TVMFFIAny* result) {
  TVMFFIAny args[3] = {core_obj(mod), core_c_str(name), core_bool(qi)};
  return mod_call(global, args, 3, result);
}

/* SYM-009: metadata comes from `__tvm_ffi__metadata_<name>`; None when
 * absent. */
TEST(symbol, SYM_009_metadata_symbol) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny r;
  char buf[256];
  EXPECT_OK(info_call("ffi.ModuleGetFunctionMetadata", mod, "add_one", 0, &r));
  const char* s = mod_take_str(&r, buf, sizeof buf);
  cr_assert_not_null(s, "metadata is not a str");
  cr_expect_str_eq(s, "{\"arg_types\": [\"int\"], \"ret\": \"int\"}");
  EXPECT_OK(info_call("ffi.ModuleGetFunctionMetadata", mod, "main", 0, &r));
  cr_expect_eq(r.type_index, kTVMFFINone, "metadata of main: type index %d", r.type_index);
  core_release(&r);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-010: the doc string comes from `__tvm_ffi__doc_<name>`. */
TEST(symbol, SYM_010_doc_symbol) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny r;
  char buf[256];
  EXPECT_OK(info_call("ffi.ModuleGetFunctionDoc", mod, "add_one", 1, &r));
  const char* s = mod_take_str(&r, buf, sizeof buf);
  cr_assert_not_null(s, "doc is not a str");
  cr_expect_str_eq(s, "Returns its integer argument plus one.");
  /* A str held inline (kTVMFFISmallStr) is a str too. */
  EXPECT_OK(info_call("ffi.ModuleGetFunctionDoc", mod, "small_doc", 0, &r));
  s = mod_take_str(&r, buf, sizeof buf);
  cr_assert_not_null(s, "the inline doc is not a str");
  cr_expect_str_eq(s, "tiny");
  EXPECT_OK(info_call("ffi.ModuleGetFunctionDoc", mod, "no_such_fn", 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  core_release(&r);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-011: a failing getter fails the query with its own error; a getter
 * returning a non-str fails it with TypeError. */
TEST(symbol, SYM_011_getter_errors_propagate) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny r;
  cr_expect_eq(info_call("ffi.ModuleGetFunctionDoc", mod, "fail", 0, &r), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"mod_basic: doc getter failed"});
  cr_expect_eq(info_call("ffi.ModuleGetFunctionMetadata", mod, "bad_meta", 0, &r), -1);
  EXPECT_RAISED(.kind = "TypeError");
  /* Bytes are not a str, even when they are small enough to live inline. */
  cr_expect_eq(info_call("ffi.ModuleGetFunctionDoc", mod, "bytes_doc", 0, &r), -1);
  EXPECT_RAISED(.kind = "TypeError");
  core_release(&r);
  API(TVMFFIObjectDecRef)(mod);
}

static int sym012_answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1212;
  return 0;
}

/* SYM-012: `__tvm_ffi__library_ctx` is set to a non-NULL value that
 * TVMFFIEnvModLookupFromImports accepts (here it falls back to a global). */
TEST(symbol, SYM_012_library_ctx_is_filled) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "get_ctx", 0);
  cr_assert_not_null(fn);
  TVMFFIAny result;
  EXPECT_OK(mod_call_fn(fn, NULL, 0, &result));
  cr_assert_eq(result.type_index, kTVMFFIOpaquePtr);
  cr_expect_not_null(result.v_ptr, "__tvm_ffi__library_ctx was left NULL");
  API(TVMFFIObjectDecRef)(fn);
  TVMFFIObjectHandle global = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, sym012_answer, NULL, &global), 0);
  TVMFFIByteArray name = {"conf_test.sym012", 16};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&name, global, 1), 0);
  API(TVMFFIObjectDecRef)(global);
  fn = mod_get_function(mod, "call_import", 0);
  TVMFFIAny arg = core_c_str("conf_test.sym012");
  cr_expect_eq(mod_call_int(fn, &arg, 1), 1212);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-013: an error raised by the exported function reaches the caller. */
TEST(symbol, SYM_013_symbol_error_reaches_caller) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "fail", 0);
  cr_assert_not_null(fn);
  TVMFFIAny result;
  cr_expect_eq(mod_call_fn(fn, NULL, 0, &result), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"mod_basic: fail was asked to fail"});
  TVMFFIObjectHandle add = mod_get_function(mod, "add_one", 0);
  TVMFFIAny bad = core_c_str("x");
  cr_expect_eq(mod_call_fn(add, &bad, 1, &result), -1);
  EXPECT_RAISED(.kind = "TypeError");
  API(TVMFFIObjectDecRef)(add);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-014: each lookup gives its own Function; all call the same symbol and
 * releasing one leaves the other working. */
TEST(symbol, SYM_014_each_lookup_is_independent) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle a = mod_get_function(mod, "add_one", 0);
  TVMFFIObjectHandle b = mod_get_function(mod, "add_one", 0);
  cr_assert(a && b);
  API(TVMFFIObjectDecRef)(a);
  TVMFFIAny arg = core_int(1);
  cr_expect_eq(mod_call_int(b, &arg, 1), 2);
  API(TVMFFIObjectDecRef)(b);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-015: an untyped symbol (hand-written assembly) is taken as code. */
TEST(symbol, SYM_015_untyped_symbol_is_a_function) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  cr_skip_test("the untyped test symbol is written for x86-64 and AArch64 only");
#endif
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "notype_fn", 0);
  cr_assert_not_null(fn, "the untyped symbol __tvm_ffi_notype_fn was not found");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1616);
  cr_expect_eq(mod_implements(mod, "notype_fn", 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-016: a name of any length means exactly its own symbol: of the names
 * "a", "aa", ... only "a" is exported, so only it is found, and the
 * metadata and doc queries of every length find nothing. */
TEST(symbol, SYM_016_names_of_every_length) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  char name[300];
  for (size_t len = 1; len < sizeof name; ++len) {
    memset(name, 'a', len);
    name[len] = '\0';
    for (int qi = 0; qi < 2; ++qi) {
      TVMFFIObjectHandle fn = mod_get_function(mod, name, qi);
      cr_assert_eq(fn != NULL, len == 1, "length %zu: found %d", len, fn != NULL);
      if (fn) {
        cr_expect_eq(mod_call_int(fn, NULL, 0), 100);
        API(TVMFFIObjectDecRef)(fn);
      }
    }
    TVMFFIAny args[3] = {core_obj(mod), core_c_str(name), core_bool(1)}, r;
    EXPECT_OK(mod_call("ffi.ModuleGetFunctionDoc", args, 3, &r));
    cr_assert_eq(r.type_index, kTVMFFINone, "length %zu: a doc was found", len);
    EXPECT_OK(mod_call("ffi.ModuleGetFunctionMetadata", args, 3, &r));
    cr_assert_eq(r.type_index, kTVMFFINone, "length %zu: metadata was found", len);
  }
  API(TVMFFIObjectDecRef)(mod);
}

/* SYM-017: the refusal of a NULL name by TVMFFIEnvModRegisterContextSymbol
 * and TVMFFIEnvModRegisterSystemLibSymbol names the function, then `name`,
 * then that it is NULL. */
TEST(symbol, SYM_017_null_name_refusal_names_function_then_name) {
  HOSTILE_INPUT("upstream makes a string of the NULL name");
  static int marker;
  cr_expect_eq(API(TVMFFIEnvModRegisterContextSymbol)(NULL, &marker), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvModRegisterContextSymbol", .arg = "name",
                .says = {"NULL"});
  cr_expect_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(NULL, &marker), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvModRegisterSystemLibSymbol", .arg = "name",
                .says = {"NULL"});
}

static int sym18_answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1818;
  return 0;
}

/* SYM-018: TVMFFIEnvModRegisterSystemLibSymbol with an allocation failing
 * (once, or from some allocation on) returns -1 with a MemoryError raised,
 * or 0 with the symbol registered: the system library then finds it. */
TEST(symbol, SYM_018_system_symbol_registration_out_of_memory) {
  (void)API(TVMFFIEnvModRegisterSystemLibSymbol);
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      char symbol[64];
      snprintf(symbol, sizeof symbol, "__tvm_ffi_conf18_s%d_%ld", sticky, w.n);
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIEnvModRegisterSystemLibSymbol(symbol, (void*)sym18_answer);
      conf_alloc_disarm(&w);
      TVMFFIObjectHandle err = core_take_raised();
      if (rc == 0) {
        cr_assert_null(err, "allocation %ld failed: 0 but an error was raised", w.n);
        TVMFFIAny prefix = core_c_str("conf18_"), r;
        EXPECT_OK(mod_call("ffi.SystemLib", &prefix, 1, &r));
        TVMFFIObjectHandle fn = mod_get_function(r.v_obj, symbol + strlen("__tvm_ffi_conf18_"), 0);
        cr_assert_not_null(fn, "allocation %ld failed: 0 but `%s` is not in the system library",
                           w.n, symbol);
        API(TVMFFIObjectDecRef)(fn);
        API(TVMFFIObjectDecRef)(r.v_obj);
        continue;
      }
      cr_assert_eq(rc, -1, "allocation %ld failed: returned %d", w.n, rc);
      cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1,
                "allocation %ld failed: -1 with nothing raised", w.n);
      const TVMFFIErrorCell* cell = conf_error_cell(err);
      cr_assert(cell->kind.size == 11 && memcmp(cell->kind.data, "MemoryError", 11) == 0,
                "allocation %ld failed: raised %.*s", w.n, (int)cell->kind.size, cell->kind.data);
      API(TVMFFIObjectDecRef)(err);
    }
    points += w.points;
  }
  conf_alloc_done(points, "TVMFFIEnvModRegisterSystemLibSymbol");
}
