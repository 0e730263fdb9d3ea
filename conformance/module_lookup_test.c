/* Clauses of spec/modules.md on finding a module's functions (## Lookup):
 * ffi.ModuleGetFunction, ffi.ModuleImplementsFunction and the metadata and
 * doc getters, with and without query_imports. */
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

/* MOD-010: None for an unknown name, with and without imports. */
TEST(module_lookup, MOD_010_unknown_name_is_none) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  cr_expect_null(mod_get_function(basic, "no_such_function", 0));
  cr_expect_null(mod_get_function(basic, "no_such_function", 1));
  mod_release3(basic, other, third);
}

/* MOD-011: own functions only without query_imports; with it, the module
 * first and then imports in order. */
TEST(module_lookup, MOD_011_query_imports_order) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
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
  TVMFFIAny arg = core_int(1);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 2);
  API(TVMFFIObjectDecRef)(fn);
  /* depth first: basic -> other -> third; third_fn is reached. */
  fn = mod_get_function(basic, "third_fn", 1);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 43);
  API(TVMFFIObjectDecRef)(fn);
  mod_release3(basic, other, third);
}

/* MOD-012: ImplementsFunction agrees with GetFunction. */
TEST(module_lookup, MOD_012_implements_matches_get) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
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
  mod_release3(basic, other, third);
}

/* MOD-116: with query_imports the search goes through an import's imports:
 * top (libmod_basic) imports mid (libmod_basic) which imports leaf
 * (libmod_other); only leaf has other_fn and its doc. */
TEST(module_lookup, MOD_116_info_search_is_deep) {
  TVMFFIObjectHandle leaf = mod_load("libmod_other.so");
  TVMFFIObjectHandle mid = mod_load("libmod_basic.so");
  TVMFFIObjectHandle top = mod_load("libmod_basic.so");
  TVMFFIAny a[2] = {core_obj(mid), core_obj(leaf)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  a[0] = core_obj(top);
  a[1] = core_obj(mid);
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  TVMFFIAny q[3] = {core_obj(top), core_c_str("other_fn"), core_bool(1)};
  EXPECT_OK(mod_call("ffi.ModuleGetFunctionDoc", q, 3, &r));
  char buf[128];
  const char* doc = mod_take_str(&r, buf, sizeof buf);
  cr_expect(doc != NULL && strcmp(doc, "other_fn lives in mod_other.") == 0,
            "the doc of an import's import was not found: %s", doc ? doc : "(not a str)");
  q[2] = core_bool(0);
  EXPECT_OK(mod_call("ffi.ModuleGetFunctionDoc", q, 3, &r));
  cr_expect_eq(r.type_index, kTVMFFINone, "found without query_imports");
  core_release(&r);
  cr_expect_eq(mod_implements(top, "other_fn", 1), 1, "an import's import's function not found");
  TVMFFIObjectHandle* all[] = {&top, &mid, &leaf};
  for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(*all[i]);
}

/* MOD-118: a metadata or doc getter returning something other than a str
 * fails the query with a TypeError naming the function and saying a str was
 * expected. */
TEST(module_lookup, MOD_118_getter_type_error_says_what) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* queries[2][2] = {{"ffi.ModuleGetFunctionMetadata", "bad_meta"},
                               {"ffi.ModuleGetFunctionDoc", "bytes_doc"}};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny q[3] = {core_obj(mod), core_c_str(queries[i][1]), core_bool(0)}, r;
    cr_expect_eq(mod_call(queries[i][0], q, 3, &r), -1, "%s(%s) succeeded", queries[i][0],
                 queries[i][1]);
    core_release(&r);
    ConfError err = conf_take_error();
    cr_expect_str_eq(err.kind, "TypeError");
    cr_expect(strstr(err.message, queries[i][1]) != NULL && mod_has_word(err.message, "str"),
              "%s: the message does not name %s and say str: %s", queries[i][0], queries[i][1],
              err.message);
  }
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-123: a metadata or doc query of a name holding a NUL byte finds
 * nothing: never the getter of the name cut at the NUL. */
TEST(module_lookup, MOD_123_info_name_with_nul_not_cut) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* globals[2] = {"ffi.ModuleGetFunctionDoc", "ffi.ModuleGetFunctionMetadata"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny q[3] = {core_obj(mod), mod_str_of("add_one\0x", 9), core_bool(1)}, r;
    int rc = mod_call(globals[i], q, 3, &r);
    core_release(&q[1]);
    EXPECT_OK(rc);
    cr_expect_eq(r.type_index, kTVMFFINone, "%s of \"add_one\\0x\" found add_one's (type %d)",
                 globals[i], r.type_index);
    core_release(&r);
  }
  API(TVMFFIObjectDecRef)(mod);
}

static int info_call(const char* global, TVMFFIObjectHandle mod, const char* name, int qi,
                     char* buf, size_t cap) {
  TVMFFIAny args[3] = {core_obj(mod), core_c_str(name), core_bool(qi)}, r;
  EXPECT_OK(mod_call(global, args, 3, &r));
  if (r.type_index == kTVMFFINone) return 0;
  cr_assert_not_null(mod_take_str(&r, buf, cap), "%s(%s) returned type index %d", global, name,
                     r.type_index);
  return 1;
}

/* MOD-028: metadata and doc queries search imports like
 * ffi.ModuleGetFunction: own first, imports only with query_imports. */
TEST(module_lookup, MOD_028_info_queries_search_imports) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(mod_import(m[0], m[1]));
  char buf[256];
  cr_expect_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "other_fn", 0, buf, sizeof buf), 0,
               "an import's doc was found without query_imports");
  cr_assert_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "other_fn", 1, buf, sizeof buf), 1,
               "the import's doc was not found with query_imports");
  cr_expect_str_eq(buf, "other_fn lives in mod_other.");
  cr_assert_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "add_one", 1, buf, sizeof buf), 1);
  cr_expect_str_eq(buf, "Returns its integer argument plus one.");
  cr_assert_eq(info_call("ffi.ModuleGetFunctionMetadata", m[0], "add_one", 1, buf, sizeof buf), 1);
  cr_expect_str_eq(buf, "{\"arg_types\": [\"int\"], \"ret\": \"int\"}");
  EXPECT_OK(info_call("ffi.ModuleGetFunctionMetadata", m[0], "other_fn", 1, buf, sizeof buf));
  EXPECT_OK(info_call("ffi.ModuleGetFunctionDoc", m[0], "nothing_here", 1, buf, sizeof buf));
  mod_clear_imports(m[0]);
  cr_expect_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "other_fn", 1, buf, sizeof buf), 0,
               "the doc of a cleared import was still found");
  mod_release_all(m, 2);
}

/* MOD-046: query_imports may be given as an int: nonzero means true. */
TEST(module_lookup, MOD_046_query_imports_as_int) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(mod_import(m[0], m[1]));
  const int64_t flags[3] = {0, 1, 2};
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny args[3] = {core_obj(m[0]), core_c_str("other_fn"), core_int(flags[i])}, r;
    EXPECT_OK(mod_call("ffi.ModuleImplementsFunction", args, 3, &r));
    cr_expect_eq(r.type_index, kTVMFFIBool);
    cr_expect_eq(r.v_int64, flags[i] != 0, "query_imports given as the int %lld",
                 (long long)flags[i]);
  }
  mod_clear_imports(m[0]);
  mod_release_all(m, 2);
}
