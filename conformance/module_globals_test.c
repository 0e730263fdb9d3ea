/* Clauses of spec/modules.md on the ffi.Module* globals as such (## The
 * ffi.Module* globals): which are registered, the module queries (kind,
 * property mask, source), pinning with ffi.ModuleGlobalsAdd and
 * ffi.ModuleGlobalsRemove, and how they refuse bad arguments. */
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

static const char* const module_globals[] = {
    "ffi.ModuleLoadFromFile",
    "ffi.Module.load_from_file.so",
    "ffi.ModuleGetFunction",
    "ffi.ModuleImplementsFunction",
    "ffi.ModuleGetFunctionMetadata",
    "ffi.ModuleGetFunctionDoc",
    "ffi.ModuleGetKind",
    "ffi.ModuleGetPropertyMask",
    "ffi.ModuleInspectSource",
    "ffi.ModuleGetWriteFormats",
    "ffi.ModuleWriteToFile",
    "ffi.ModuleImportModule",
    "ffi.ModuleClearImports",
    "ffi.ModuleGlobalsAdd",
    "ffi.ModuleGlobalsRemove",
    "ffi.SystemLib",
};

/* MOD-001: every module global is registered under its exact name. */
TEST(module_globals, MOD_001_globals_registered) {
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

static int64_t call_int_global(const char* name, TVMFFIObjectHandle mod) {
  TVMFFIAny a = core_obj(mod), r;
  EXPECT_OK(mod_call(name, &a, 1, &r));
  cr_assert_eq(r.type_index, kTVMFFIInt, "%s returned type index %d", name, r.type_index);
  return r.v_int64;
}

/* MOD-017: property mask 3. */
TEST(module_globals, MOD_017_property_mask) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  cr_expect_eq(call_int_global("ffi.ModuleGetPropertyMask", mod), 3);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-018: InspectSource "", GetWriteFormats [], WriteToFile RuntimeError. */
TEST(module_globals, MOD_018_source_and_write) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny a[3] = {core_obj(mod), core_c_str("asm"), core_none()}, r;
  char buf[64];
  EXPECT_OK(mod_call("ffi.ModuleInspectSource", a, 2, &r));
  const char* s = mod_take_str(&r, buf, sizeof buf);
  cr_assert_not_null(s, "InspectSource did not return a str");
  cr_expect_str_eq(s, "");
  EXPECT_OK(mod_call("ffi.ModuleGetWriteFormats", a, 1, &r));
  cr_assert_eq(r.type_index, kTVMFFIArray, "GetWriteFormats returned type index %d", r.type_index);
  cr_expect_eq(((TVMFFISeqCell*)((char*)r.v_obj + sizeof(TVMFFIObject)))->size, 0);
  core_release(&r);
  a[1] = core_c_str("/tmp/conf_never_written.so");
  a[2] = core_c_str("so");
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-019: GlobalsAdd keeps the module and its library alive until
 * GlobalsRemove. */
TEST(module_globals, MOD_019_globals_keep_alive) {
  const char* path = mod_lib_path("libmod_other.so");
  TVMFFIObjectHandle mod = mod_load("libmod_other.so");
  TVMFFIAny a = core_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleGlobalsAdd", &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  API(TVMFFIObjectDecRef)(mod);
  cr_expect(!mod_is_loaded(path), "still loaded after ffi.ModuleGlobalsRemove and release");
  /* Added and released by the host: the runtime keeps it. */
  mod = mod_load("libmod_other.so");
  a = core_obj(mod);
  EXPECT_OK(mod_call("ffi.ModuleGlobalsAdd", &a, 1, &r));
  API(TVMFFIObjectDecRef)(mod);
  cr_expect(mod_is_loaded(path), "unloaded although ffi.ModuleGlobalsAdd holds the module");
}

/* MOD-020: a non-module argument is a TypeError naming argument #0. */
TEST(module_globals, MOD_020_non_module_is_type_error) {
  const char* names[] = {"ffi.ModuleGetKind", "ffi.ModuleGetPropertyMask", "ffi.ModuleClearImports",
                         "ffi.ModuleGlobalsAdd"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny a = core_int(5), r;
    cr_expect_eq(mod_call(names[i], &a, 1, &r), -1, "%s accepted an int", names[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#0"});
  }
  TVMFFIAny a[3] = {core_c_str("x"), core_c_str("add_one"), core_bool(0)}, r;
  cr_expect_eq(mod_call("ffi.ModuleGetFunction", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "TypeError");
}

/* MOD-114: a refused argument of an ffi.Module* global is named by its
 * parameter as well as its position. */
TEST(module_globals, MOD_114_refusals_name_the_parameter) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* lookups[] = {"ffi.ModuleGetFunction", "ffi.ModuleImplementsFunction",
                           "ffi.ModuleGetFunctionMetadata", "ffi.ModuleGetFunctionDoc"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny a[3] = {core_int(1), core_c_str("add_one"), core_bool(1)};
    mod_expect_names_param(lookups[i], a, 3, 0, "mod", "TypeError");
    a[0] = core_obj(mod);
    a[1] = core_int(2);
    mod_expect_names_param(lookups[i], a, 3, 1, "name", "TypeError");
    a[1] = core_c_str("add_one");
    a[2] = core_c_str("yes");
    mod_expect_names_param(lookups[i], a, 3, 2, "query_imports", "TypeError");
  }
  TVMFFIAny a[3] = {core_obj(mod), core_int(1), core_c_str("so")};
  mod_expect_names_param("ffi.ModuleInspectSource", a, 2, 1, "format", "TypeError");
  mod_expect_names_param("ffi.ModuleWriteToFile", a, 3, 1, "file_name", "TypeError");
  a[1] = core_c_str("/tmp/conf_mod114_never_written.so");
  a[2] = core_int(1);
  mod_expect_names_param("ffi.ModuleWriteToFile", a, 3, 2, "format", "TypeError");
  a[1] = core_int(1);
  mod_expect_names_param("ffi.ModuleImportModule", a, 2, 1, "other", "TypeError");
  TVMFFIAny one[2] = {core_int(1), core_obj(mod)};
  mod_expect_names_param("ffi.ModuleImportModule", one, 2, 0, "mod", "TypeError");
  const char* single[] = {"ffi.ModuleGetKind",         "ffi.ModuleGetPropertyMask",
                          "ffi.ModuleGetWriteFormats", "ffi.ModuleClearImports",
                          "ffi.ModuleGlobalsAdd",      "ffi.ModuleGlobalsRemove"};
  for (int i = 0; i < 6; ++i) mod_expect_names_param(single[i], one, 1, 0, "mod", "TypeError");
  mod_expect_names_param("ffi.ModuleLoadFromFile", one, 1, 0, "file_name", "TypeError");
  mod_expect_names_param("ffi.SystemLib", one, 1, 0, "symbol_prefix", "TypeError");
  TVMFFIAny so[2] = {core_int(1), core_c_str("so")};
  mod_expect_names_param("ffi.Module.load_from_file.so", so, 2, 0, "path", "TypeError");
  so[0] = core_c_str("/no/such/lib.so");
  so[1] = core_int(1);
  mod_expect_names_param("ffi.Module.load_from_file.so", so, 2, 1, "format", "TypeError");
  API(TVMFFIObjectDecRef)(mod);
}

static int gives_int(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 121;
  return 0;
}

/* MOD-121: ffi.SystemLib takes at most one argument, and a host loader
 * that returns something other than a module is refused by a TypeError
 * saying a Module was expected. */
TEST(module_globals, MOD_121_system_lib_count_and_loader_type) {
  TVMFFIAny two[2] = {core_c_str("conf121_"), core_c_str("x")}, r;
  cr_expect_eq(mod_call("ffi.SystemLib", two, 2, &r), -1, "ffi.SystemLib took two arguments");
  core_release(&r);
  EXPECT_RAISED(.kind = "TypeError", .says = {"ffi.SystemLib"});
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, gives_int, NULL, &loader), 0);
  static const char name[] = "ffi.Module.load_from_file.conf121";
  TVMFFIByteArray n = {name, sizeof name - 1};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, loader, 1), 0);
  API(TVMFFIObjectDecRef)(loader);
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path("/no/such/lib.conf121", &mod), -1, "an int was taken for a module");
  EXPECT_RAISED(.kind = "TypeError", .says = {"Module"});
}

static int by_address(const void* a, const void* b) {
  uintptr_t x = (uintptr_t) * (void*const*)a, y = (uintptr_t) * (void*const*)b;
  return x < y ? -1 : x > y;
}

/* MOD-033 (any position): with three modules pinned, in address order or
 * the reverse, ffi.ModuleGlobalsRemove of the lowest, middle or highest
 * address unpins that module alone. */
TEST(module_globals, MOD_033_remove_pins_only_its_module) {
  const char* files[3] = {"libmod_basic.so", "libmod_other.so", "libmod_third.so"};
  for (int reverse = 0; reverse < 2; ++reverse) {
    for (int target = 0; target < 3; ++target) {
      struct {
        TVMFFIObjectHandle mod;
        const char* path;
      } m[3];
      for (int i = 0; i < 3; ++i) {
        m[i].mod = mod_load(files[i]);
        m[i].path = mod_lib_path(files[i]);
      }
      qsort(m, 3, sizeof m[0], by_address);
      TVMFFIAny a, r;
      for (int k = 0; k < 3; ++k) {
        a = core_obj(m[reverse ? 2 - k : k].mod);
        EXPECT_OK(mod_call("ffi.ModuleGlobalsAdd", &a, 1, &r));
      }
      for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(m[i].mod); /* pinned only */
      a = core_obj(m[target].mod);
      EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r));
      for (int i = 0; i < 3; ++i) {
        cr_expect_eq(mod_is_loaded(m[i].path), i != target,
                     "pinned %s, removed the module at address rank %d: rank %d %s",
                     reverse ? "highest first" : "lowest first", target, i,
                     i == target ? "is still pinned" : "was unpinned");
      }
      for (int i = 0; i < 3; ++i) {
        if (i == target || !mod_is_loaded(m[i].path)) continue;
        a = core_obj(m[i].mod);
        EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r));
      }
    }
  }
}

/* MOD-031: wrong argument counts and types of the ffi.Module* globals are
 * TypeError; a wrong type names its position. */
TEST(module_globals, MOD_031_argument_errors) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny r;
  static const struct {
    const char* fn;
    int32_t want;
  } counts[] = {
      {"ffi.ModuleGetFunction", 3},
      {"ffi.ModuleImplementsFunction", 3},
      {"ffi.ModuleGetFunctionMetadata", 3},
      {"ffi.ModuleGetFunctionDoc", 3},
      {"ffi.ModuleGetKind", 1},
      {"ffi.ModuleGetPropertyMask", 1},
      {"ffi.ModuleInspectSource", 2},
      {"ffi.ModuleGetWriteFormats", 1},
      {"ffi.ModuleWriteToFile", 3},
      {"ffi.ModuleImportModule", 2},
      {"ffi.ModuleClearImports", 1},
      {"ffi.ModuleGlobalsAdd", 1},
      {"ffi.ModuleGlobalsRemove", 1},
      {"ffi.ModuleLoadFromFile", 1},
      {"ffi.Module.load_from_file.so", 2},
  };
  TVMFFIAny many[5] = {core_obj(mod), core_c_str("add_one"), core_bool(0), core_c_str("x"),
                       core_c_str("y")};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    int32_t n = counts[i].want + 1;
    cr_expect_eq(mod_call(counts[i].fn, many, n, &r), -1, "%s accepted %d arguments", counts[i].fn,
                 n);
    ConfError err = conf_take_error();
    cr_expect_str_eq(err.kind, "TypeError", "%s with %d arguments", counts[i].fn, n);
    char want[32], got[32];
    snprintf(want, sizeof want, "expected %d", (int)counts[i].want);
    snprintf(got, sizeof got, "got %d", (int)n);
    cr_expect(strcasestr(err.message, want) != NULL && strstr(err.message, got) != NULL,
              "%s: the message does not say %s, %s: %s", counts[i].fn, want, got, err.message);
    core_release(&r);
  }
  /* A wrong type at each position of (mod, name, query_imports). */
  const char* lookups[] = {"ffi.ModuleGetFunction", "ffi.ModuleImplementsFunction",
                           "ffi.ModuleGetFunctionMetadata", "ffi.ModuleGetFunctionDoc"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny a[3] = {core_obj(mod), core_int(7), core_bool(0)};
    cr_expect_eq(mod_call(lookups[i], a, 3, &r), -1, "%s accepted an int name", lookups[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
    a[1] = core_c_str("add_one");
    a[2] = core_c_str("yes");
    cr_expect_eq(mod_call(lookups[i], a, 3, &r), -1, "%s accepted a str flag", lookups[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#2", "bool", lookups[i]});
    /* None is no bool either (only bool and int are). */
    a[2] = (TVMFFIAny){.type_index = kTVMFFINone};
    cr_expect_eq(mod_call(lookups[i], a, 3, &r), -1, "%s accepted a None flag", lookups[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#2"});
  }
  TVMFFIAny a[3] = {core_obj(mod), core_int(3), core_c_str("so")};
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1", "ffi.Module"});
  cr_expect_eq(mod_call("ffi.ModuleInspectSource", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
  TVMFFIAny no_mod[2] = {core_int(3), core_c_str("so")};
  cr_expect_eq(mod_call("ffi.ModuleInspectSource", no_mod, 2, &r), -1,
               "ffi.ModuleInspectSource accepted an int module");
  EXPECT_RAISED(.kind = "TypeError", .says = {"#0"});
  a[1] = core_int(1);
  a[2] = core_c_str("so");
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
  a[1] = core_c_str("/tmp/conf_never_written.so");
  a[2] = core_int(1);
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#2"});
  TVMFFIAny not_mod = core_int(5);
  const char* pins[] = {"ffi.ModuleGlobalsAdd", "ffi.ModuleGlobalsRemove", "ffi.ModuleGetKind"};
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(mod_call(pins[i], &not_mod, 1, &r), -1);
    /* The expected type, with or without backquotes around it. */
    ConfError err = conf_take_error();
    cr_expect((strcasestr(err.message, "expected ffi.Module") != NULL ||
               strcasestr(err.message, "expected `ffi.Module`") != NULL) &&
                  strstr(err.message, "#0"),
              "%s: %s", pins[i], err.message);
  }
  TVMFFIAny path = core_int(1);
  cr_expect_eq(mod_call("ffi.ModuleLoadFromFile", &path, 1, &r), -1);
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_eq(mod_call("ffi.SystemLib", &path, 1, &r), -1, "ffi.SystemLib accepted an int prefix");
  EXPECT_RAISED(.kind = "TypeError");
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-033: ffi.ModuleGlobalsAdd of a module already added keeps one
 * entry, which one ffi.ModuleGlobalsRemove drops; removing a module never
 * added returns None and changes nothing; removing one leaves the others. */
TEST(module_globals, MOD_033_globals_entries) {
  const char* paths[3] = {mod_lib_path("libmod_basic.so"), mod_lib_path("libmod_other.so"),
                          mod_lib_path("libmod_third.so")};
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle other = mod_load("libmod_other.so");
  TVMFFIObjectHandle third = mod_load("libmod_third.so");
  mod_pin("ffi.ModuleGlobalsRemove", other); /* never added */
  mod_pin("ffi.ModuleGlobalsAdd", basic);
  mod_pin("ffi.ModuleGlobalsAdd", other);
  mod_pin("ffi.ModuleGlobalsAdd", other);
  mod_pin("ffi.ModuleGlobalsAdd", third);
  mod_pin("ffi.ModuleGlobalsRemove", other);
  API(TVMFFIObjectDecRef)(other);
  cr_expect(!mod_is_loaded(paths[1]), "a module added twice stayed pinned after one remove");
  mod_pin("ffi.ModuleGlobalsRemove", basic);
  API(TVMFFIObjectDecRef)(basic);
  cr_expect(!mod_is_loaded(paths[0]), "ffi.ModuleGlobalsRemove did not unpin the first entry");
  API(TVMFFIObjectDecRef)(third);
  cr_expect(mod_is_loaded(paths[2]), "removing other modules unpinned this one");
}

/* MOD-045: an argument tagged as a module whose pointer is NULL is a
 * TypeError naming its position, not a crash. */
TEST(module_globals, MOD_045_null_module_argument) {
  HOSTILE_INPUT("upstream calls through the NULL module");
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny null_mod = core_none(), r;
  null_mod.type_index = kTVMFFIModule;
  const char* one[] = {"ffi.ModuleGetKind", "ffi.ModuleClearImports", "ffi.ModuleGlobalsAdd"};
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(mod_call(one[i], &null_mod, 1, &r), -1, "%s accepted a NULL module", one[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#0"});
  }
  TVMFFIAny a[2] = {core_obj(mod), null_mod};
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
  API(TVMFFIObjectDecRef)(mod);
}
