/* Clauses of spec/modules.md on the system library (## System library):
 * ffi.SystemLib and the symbols registered with
 * TVMFFIEnvModRegisterSystemLibSymbol, and the context symbols of
 * TVMFFIEnvModRegisterContextSymbol. */
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

/* MOD-024: a registered context symbol is written into later libraries. */
TEST(module_system_lib, MOD_024_context_symbol_filled) {
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

static TVMFFIObjectHandle system_lib_module(const char* prefix) {
  TVMFFIAny a = core_c_str(prefix), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &a, prefix ? 1 : 0, &r));
  cr_assert_eq(r.type_index, kTVMFFIModule);
  return r.v_obj;
}

/* MOD-025: system-library symbols: `__tvm_ffi_<prefix>f`, else `__tvm_ffi_f`. */
TEST(module_system_lib, MOD_025_system_lib_symbols) {
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod025_f", (void*)syslib_plain), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_pfx_conf_mod025_f",
                                                        (void*)syslib_prefixed),
               0);
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod025_g", (void*)syslib_plain), 0);
  TVMFFIObjectHandle with_prefix = system_lib_module("pfx_");
  TVMFFIObjectHandle fn = mod_get_function(with_prefix, "conf_mod025_f", 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 2, "the prefixed symbol must win");
  API(TVMFFIObjectDecRef)(fn);
  fn = mod_get_function(with_prefix, "conf_mod025_g", 0);
  cr_assert_not_null(fn, "no fallback to the unprefixed symbol");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  TVMFFIObjectHandle plain = system_lib_module("");
  fn = mod_get_function(plain, "conf_mod025_f", 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1);
  API(TVMFFIObjectDecRef)(fn);
  cr_expect_null(mod_get_function(plain, "conf_mod025_none", 0));
  API(TVMFFIObjectDecRef)(plain);
  API(TVMFFIObjectDecRef)(with_prefix);
}

/* MOD-026: one module per prefix; no argument means "". */
TEST(module_system_lib, MOD_026_system_lib_is_cached) {
  TVMFFIObjectHandle a = system_lib_module("conf_p_");
  TVMFFIObjectHandle b = system_lib_module("conf_p_");
  TVMFFIObjectHandle c = system_lib_module(NULL);
  TVMFFIObjectHandle d = system_lib_module("");
  TVMFFIObjectHandle e = system_lib_module("conf_q_");
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

static int sys_answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 112;
  return 0;
}

/* The variable a system library exposes as its context symbol, and what
 * the host registered for it. */
static void* mod112_slot;

static int mod112_marker;

static void register_prefix_112(const char* prefix) {
  char symbol[128];
  snprintf(symbol, sizeof symbol, "%sconf112_slot", prefix);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, &mod112_slot), 0);
  snprintf(symbol, sizeof symbol, "__tvm_ffi_%sconf112_f", prefix);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, (void*)sys_answer), 0);
}

/* MOD-112: a context symbol reaches a system library too, and running out
 * of memory never skips it: ffi.SystemLib of a new prefix returns a module
 * whose `<prefix>conf112_slot` holds the registered pointer, with nothing
 * raised, or -1 with MemoryError. */
TEST(module_system_lib, MOD_112_system_lib_context_symbol) {
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf112_slot", &mod112_marker), 0);
  TVMFFIObjectHandle fn = mod_global("ffi.SystemLib");
  register_prefix_112("conf112_plain_");
  TVMFFIAny a = core_c_str("conf112_plain_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &a, 1, &r));
  core_release(&r);
  cr_assert_eq(mod112_slot, &mod112_marker, "the system library's context symbol holds %p",
               mod112_slot);
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      char prefix[64], f[96];
      snprintf(prefix, sizeof prefix, "conf112_%d_%ld_", sticky, w.n);
      snprintf(f, sizeof f, "%sconf112_f", prefix);
      register_prefix_112(prefix);
      mod112_slot = NULL;
      a = core_c_str(prefix);
      int rc = mod_armed_call(&w, fn, &a, 1, &r);
      if (rc != 0) {
        mod_expect_oom_refusal(&w, "ffi.SystemLib", rc, NULL);
        continue;
      }
      cr_assert_eq(mod112_slot, &mod112_marker,
                   "allocation %ld failed: a module, but its context symbol holds %p", w.n,
                   mod112_slot);
      mod_expect_module_with(&w, "ffi.SystemLib", &r, f);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  conf_alloc_done(points, "ffi.SystemLib");
}

static int sys_one(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1;
  return 0;
}

static int sys_two(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 2;
  return 0;
}

/* MOD-120: prefixes of one length are told apart by their text: each
 * ffi.SystemLib module finds its own prefix's f. */
TEST(module_system_lib, MOD_120_same_length_prefixes_apart) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf120a_f", (void*)sys_one), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf120b_f", (void*)sys_two), 0);
  const char* prefixes[2] = {"conf120a_", "conf120b_"};
  TVMFFIObjectHandle mods[2];
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny a = core_c_str(prefixes[i]), r;
    EXPECT_OK(mod_call("ffi.SystemLib", &a, 1, &r));
    mods[i] = r.v_obj;
  }
  cr_expect_neq(mods[0], mods[1], "two prefixes of one length gave one module");
  for (int i = 0; i < 2; ++i) {
    TVMFFIObjectHandle f = mod_get_function(mods[i], "f", 0);
    cr_assert_not_null(f, "%s has no f", prefixes[i]);
    cr_expect_eq(mod_call_int(f, NULL, 0), i + 1, "%s found another prefix's f", prefixes[i]);
    API(TVMFFIObjectDecRef)(f);
    API(TVMFFIObjectDecRef)(mods[i]);
  }
}

/* MOD-125: a system library's blob registered at an address in no loaded
 * object (heap memory, whose extent nothing records) is refused with
 * ValueError naming __tvm_ffi__library_bin, not read unbounded. The heap
 * copy holds a well-formed blob, so only its unknown extent is refused. */
TEST(module_system_lib, MOD_125_blob_of_unknown_extent_refused) {
  mod_premade_setup(conf_runfile("conformance/testdata/lib_like_kinds.bin"));
  unsigned char* heap = malloc(sizeof mod_premade_blob);
  cr_assert_not_null(heap);
  memcpy(heap, mod_premade_blob, sizeof mod_premade_blob);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("conf125___tvm_ffi__library_bin", heap), 0);
  TVMFFIAny a = core_c_str("conf125_"), r;
  int rc = mod_call("ffi.SystemLib", &a, 1, &r);
  core_release(&r);
  cr_expect_eq(rc, -1, "a blob of unknown extent was read");
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, "ValueError", "%s: %s", err.kind, err.message);
  const char* named = strstr(err.message, "__tvm_ffi__library_bin");
  cr_expect(named != NULL, "the message does not name __tvm_ffi__library_bin: %s", err.message);
  /* and says why: text other than blanks after the symbol's name */
  const char* why = named ? named + strlen("__tvm_ffi__library_bin") : "";
  while (*why == ' ') ++why;
  cr_expect(*why != '\0', "the message gives no reason after the symbol's name: %s", err.message);
  API(TVMFFIObjectDecRef)(mod_premade_module);
  /* heap stays registered for the life of the process. */
}

static int system_lib(const TVMFFIAny* prefix, TVMFFIObjectHandle* mod) {
  TVMFFIAny r;
  *mod = NULL;
  int rc = mod_call("ffi.SystemLib", (TVMFFIAny*)prefix, 1, &r);
  if (rc == 0) {
    cr_assert_eq(r.type_index, kTVMFFIModule, "ffi.SystemLib returned type index %d", r.type_index);
    *mod = r.v_obj;
  }
  return rc;
}

/* MOD-036: ffi.SystemLib of a prefix holding a NUL byte never stands for
 * the prefix cut at the NUL: it fails with ValueError, or gives another
 * module that does not find the cut prefix's symbols. */
TEST(module_system_lib, MOD_036_system_prefix_with_nul) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_confnul_f", (void*)mod_answer_8),
               0);
  TVMFFIAny cut = core_c_str("confnul_");
  TVMFFIObjectHandle cut_mod;
  EXPECT_OK(system_lib(&cut, &cut_mod));
  TVMFFIByteArray bytes = {"confnul_\0x", 10};
  TVMFFIAny prefix;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &prefix), 0);
  TVMFFIObjectHandle mod;
  int rc = system_lib(&prefix, &mod);
  core_release(&prefix);
  if (rc != 0) {
    EXPECT_RAISED(.kind = "ValueError");
  } else {
    cr_expect_neq(mod, cut_mod, "the prefix was cut at the NUL");
    cr_expect_null(mod_get_function(mod, "f", 0), "the prefix was cut at the NUL");
    API(TVMFFIObjectDecRef)(mod);
  }
  API(TVMFFIObjectDecRef)(cut_mod);
}

static void* mod037_ctx;

static int mod037_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 3737;
  return 0;
}

/* MOD-037: a system library's `<prefix>__tvm_ffi__library_ctx` symbol, the
 * address of a pointer variable, is set by ffi.SystemLib(prefix) to a
 * value TVMFFIEnvModLookupFromImports accepts. */
TEST(module_system_lib, MOD_037_system_lib_context) {
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("conf37___tvm_ffi__library_ctx", &mod037_ctx), 0);
  mod_register_global("conf_test.mod037", mod037_global);
  TVMFFIAny prefix = core_c_str("conf37_");
  TVMFFIObjectHandle mod;
  EXPECT_OK(system_lib(&prefix, &mod));
  cr_assert_not_null(mod037_ctx, "the system library's context was not set");
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(mod037_ctx, "conf_test.mod037", &fn), 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 3737);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-038: registering a system-library symbol again replaces it: the
 * later pointer is the one a system library finds. */
TEST(module_system_lib, MOD_038_system_symbol_replaced) {
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod038", (void*)mod_answer_7), 0);
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod038", (void*)mod_answer_8), 0);
  TVMFFIAny prefix = core_c_str("");
  TVMFFIObjectHandle mod;
  EXPECT_OK(system_lib(&prefix, &mod));
  TVMFFIObjectHandle fn = mod_get_function(mod, "conf_mod038", 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 8, "the first registration was kept");
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-039: context symbols registered under one name twice are applied in
 * order: a library loaded afterwards holds the later pointer. */
TEST(module_system_lib, MOD_039_context_symbol_registered_twice) {
  static int first, second;
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &first), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &second), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_no_library_has_this", &first), 0);
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "get_context_slot", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(fn, NULL, 0, &r));
  cr_expect_eq(r.v_ptr, &second, "slot holds %p, registered %p last", r.v_ptr, (void*)&second);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-044: the symbol registrations refuse a NULL name with ValueError
 * naming `name`. */
TEST(module_system_lib, MOD_044_registration_null_name) {
  HOSTILE_INPUT("upstream makes a string of the NULL name");
  static int marker;
  cr_expect_eq(API(TVMFFIEnvModRegisterContextSymbol)(NULL, &marker), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvModRegisterContextSymbol", .arg = "name");
  cr_expect_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(NULL, &marker), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvModRegisterSystemLibSymbol", .arg = "name");
}

enum { MANY = 40 };

static int answer_index(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)(intptr_t)self;
  return 0;
}

/* MOD-048: many of everything: 40 imports of one module, 40 functions
 * found through TVMFFIEnvModLookupFromImports, 40 pinned modules, 40
 * system-library symbols and context symbols, each kept and told apart. */
TEST(module_system_lib, MOD_048_many_of_everything) {
  const char* other_path = mod_lib_path("libmod_other.so");
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle many[MANY];
  for (int i = 0; i < MANY; ++i) {
    many[i] = mod_load("libmod_other.so");
    EXPECT_OK(mod_import(basic, many[i]));
    mod_pin("ffi.ModuleGlobalsAdd", many[i]);
  }
  cr_expect_eq(mod_implements(basic, "other_fn", 1), 1);
  for (int i = 0; i < MANY; ++i) {
    char name[64];
    snprintf(name, sizeof name, "conf_test.mod048_%d", i);
    TVMFFIObjectHandle fn = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)((void*)(intptr_t)(1000 + i), answer_index, NULL, &fn),
                 0);
    TVMFFIByteArray n = {name, strlen(name)};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
    API(TVMFFIObjectDecRef)(fn);
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < MANY; ++i) {
      char name[64];
      snprintf(name, sizeof name, "conf_test.mod048_%d", i);
      TVMFFIAny r;
      EXPECT_OK(mod_lookup_call(basic, name, &r));
      cr_expect_eq(r.v_int64, 1000 + i, "%s gave %lld", name, (long long)r.v_int64);
    }
  }
  for (int i = 0; i < MANY; ++i) {
    char name[64];
    snprintf(name, sizeof name, "__tvm_ffi_conf48_f%d", i);
    cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(
                     name, i % 2 ? (void*)mod_answer_7 : (void*)mod_answer_8),
                 0);
    snprintf(name, sizeof name, "conf_mod048_context_%d", i);
    cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)(name, &many[i]), 0);
  }
  static int last;
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &last), 0);
  TVMFFIAny prefix = core_c_str("");
  TVMFFIObjectHandle sys;
  EXPECT_OK(system_lib(&prefix, &sys));
  for (int i = 0; i < MANY; ++i) {
    char name[64];
    snprintf(name, sizeof name, "conf48_f%d", i);
    TVMFFIObjectHandle fn = mod_get_function(sys, name, 0);
    cr_assert_not_null(fn, "%s not found", name);
    cr_expect_eq(mod_call_int(fn, NULL, 0), i % 2 ? 7 : 8, "%s is another symbol", name);
    API(TVMFFIObjectDecRef)(fn);
  }
  API(TVMFFIObjectDecRef)(sys);
  TVMFFIObjectHandle second = mod_load("libmod_basic.so");
  TVMFFIObjectHandle slot = mod_get_function(second, "get_context_slot", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(slot, NULL, 0, &r));
  cr_expect_eq(r.v_ptr, &last);
  API(TVMFFIObjectDecRef)(slot);
  API(TVMFFIObjectDecRef)(second);
  mod_clear_imports(basic);
  for (int i = 0; i < MANY; ++i) {
    mod_pin("ffi.ModuleGlobalsRemove", many[MANY - 1 - i]);
    API(TVMFFIObjectDecRef)(many[MANY - 1 - i]);
  }
  cr_expect(!mod_is_loaded(other_path), "a module among many stayed imported or pinned");
  API(TVMFFIObjectDecRef)(basic);
}

typedef struct {
  uintptr_t addr, end;
} SegmentEnd;

static int segment_end_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  SegmentEnd* q = data;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr - lo < ph->p_memsz) {
      q->end = lo + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

/* One past the last byte of the loaded segment holding `p`. */
static unsigned char* segment_end(const void* p) {
  SegmentEnd q = {(uintptr_t)p, 0};
  cr_assert_neq(dl_iterate_phdr(segment_end_cb, &q), 0, "no loaded segment holds %p", p);
  return (unsigned char*)q.end;
}

/* ffi.SystemLib(prefix) with `<prefix>__tvm_ffi__library_bin` registered as
 * `blob`: must fail with the ValueError of nbytes at offset 0. */
static void expect_blob_past_segment(const char* prefix, void* blob) {
  char symbol[128];
  snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, blob), 0);
  TVMFFIAny a = core_c_str(prefix), r = core_none();
  cr_expect_eq(mod_call("ffi.SystemLib", &a, 1, &r), -1, "%s: the blob was accepted", prefix);
  EXPECT_RAISED(.kind = "ValueError", .says = {"offset 0:", "field nbytes:"});
  core_release(&r);
}

static unsigned char conf87_bss[64];

/* MOD-087: a system-library blob (a registered address) whose nbytes runs
 * one byte past the loaded segment holding it, or which sits on the
 * segment's last byte, is refused as nbytes at offset 0, whatever sized
 * symbol the address lies inside. */
TEST(module_system_lib, MOD_087_system_blob_bounded_by_segment) {
  HOSTILE_INPUT("an unbounded reader runs off the mapped segment");
  /* Inside a sized symbol (512 bytes), 16 bytes before its end. */
  void* h = dlopen(mod_lib_path("libmod_blob_env.so"), RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(h, "%s", dlerror());
  unsigned char* sym = dlsym(h, "__tvm_ffi__library_bin");
  cr_assert_not_null(sym);
  unsigned char* blob = sym + 496;
  uint64_t nbytes = (uint64_t)(segment_end(blob) - blob) - 8 + 1;
  memcpy(blob, &nbytes, sizeof nbytes);
  expect_blob_past_segment("conf87a_", blob);
  /* The last byte of this program's segment holding its zeroed data. */
  (void)conf87_bss[0];
  expect_blob_past_segment("conf87b_", segment_end(conf87_bss) - 1);
  dlclose(h);
}
