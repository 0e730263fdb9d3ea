/* Clauses of spec/library_bin.md on the loader of a blob's kind
 * (ffi.Module.load_from_bytes.<kind>): a missing loader named, loads that
 * keep neither the loader nor memory, kinds of any length. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>

#include "alloc_fail.h"
#include "module_support.h"

static int count_in(const char* text, const char* part) {
  int n = 0;
  for (const char* at = strstr(text, part); at; at = strstr(at + 1, part)) ++n;
  return n;
}

/* A one-module blob at `blob`: the root of kind kind[0..len) (no loader),
 * a 1-byte payload. */
static void make_kind_blob(unsigned char* blob, const char* kind, size_t len) {
  unsigned char* at = blob;
  mod_put_u64(&at, 8 + 16 + 8 + 8 + len + 8 + 1); /* nbytes */
  mod_put_u64(&at, 2);                            /* indptr [0, 0]: one module */
  mod_put_u64(&at, 0);
  mod_put_u64(&at, 0);
  mod_put_u64(&at, 0); /* child_indices: none */
  mod_put_u64(&at, len);
  memcpy(at, kind, len);
  at += len;
  mod_put_u64(&at, 1); /* payload: one byte */
  *at = 'p';
}

static __attribute__((aligned(8))) unsigned char long_kind_blob[1024];

/* Makes kind[0..len) the tag followed by 'k's (NUL after), packs a blob of
 * one module of that kind into long_kind_blob and registers it as the
 * system-library symbol `symbol` (a literal: the registry may keep it). */
static void register_long_kind(char* kind, size_t len, const char* tag, const char* symbol) {
  memset(kind, 'k', len);
  memcpy(kind, tag, strlen(tag));
  kind[len] = '\0';
  make_kind_blob(long_kind_blob, kind, len);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, long_kind_blob), 0);
}

/* LIB-086: a kind without a loader is named on its own as well as inside
 * the loader's name ffi.Module.load_from_bytes.<kind> (LIB-006), a long
 * kind (300 bytes) too. */
TEST(library_bin_loaders, LIB_086_missing_loader_names_kind) {
  TVMFFIObjectHandle mod;
  cr_assert_eq(mod_load_path(mod_lib_path("libmod_packed_nokind.so"), &mod), -1);
  ConfError err = conf_take_error();
  cr_expect(strstr(err.message, "ffi.Module.load_from_bytes.no_such_kind") != NULL, "message: %s",
            err.message);
  cr_expect_geq(count_in(err.message, "no_such_kind"), 2,
                "the kind is not named apart from the loader's name: %s", err.message);
  char kind[301];
  register_long_kind(kind, 300, "conf086", "conf086___tvm_ffi__library_bin");
  TVMFFIAny a = core_c_str("conf086_"), r;
  cr_assert_eq(mod_call("ffi.SystemLib", &a, 1, &r), -1, "a kind without loader was loaded");
  kind[200] = '\0'; /* its first 200 bytes, twice at least */
  ConfError refusal = conf_take_error();
  cr_expect_geq(count_in(refusal.message, kind), 2,
                "the 300-byte kind is not named apart from the loader's name: %.600s",
                refusal.message);
}

static int loader087_deleted;

static void loader087_delete(void* self) {
  (void)self;
  ++loader087_deleted;
}

static int fresh_function(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  return 0;
}

/* LIB-087: a load holds no reference to a ffi.Module.load_from_bytes.<kind>
 * loader once it returns: overriding the global then frees the loader. */
TEST(library_bin_loaders, LIB_087_load_keeps_no_loader) {
  /* testdata/lib_like_kinds.bin: `_lib` importing a `_libx` and a `_lix` module. */
  mod_premade_setup(conf_runfile("conformance/testdata/lib_like_kinds.bin"));
  const char* names[2] = {"ffi.Module.load_from_bytes._libx", "ffi.Module.load_from_bytes._lix"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIObjectHandle loader = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, mod_premade_loader, loader087_delete, &loader), 0);
    TVMFFIByteArray n = {names[i], strlen(names[i])};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, loader, 1), 0);
    API(TVMFFIObjectDecRef)(loader);
  }
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("conf087___tvm_ffi__library_bin", mod_premade_blob),
      0);
  TVMFFIAny a = core_c_str("conf087_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &a, 1, &r));
  cr_expect_eq(mod_implements(r.v_obj, "other_fn", 1), 1, "the loaders' modules are not imported");
  core_release(&r);
  TVMFFIObjectHandle fresh = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, fresh_function, NULL, &fresh), 0);
  for (int i = 0; i < 2; ++i) {
    TVMFFIByteArray n = {names[i], strlen(names[i])};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fresh, 1), 0);
  }
  API(TVMFFIObjectDecRef)(fresh);
  cr_expect_eq(loader087_deleted, 2, "%d of the 2 loaders were freed once overridden",
               loader087_deleted);
  API(TVMFFIObjectDecRef)(mod_premade_module);
}

/* LIB-088: loads that fail for want of a loader, in a thread whose stack
 * lies in this binary's static data (below the heap, pthread_attr_setstack)
 * and then on the test's own thread (its stack above the heap), give back
 * everything they allocated: a kind of 120 bytes, too long for any fixed
 * buffer of the loader's name on the stack, leaks nothing over 40 loads.
 * Where the heap lies relative to a thread's stack is up to the process;
 * the runtime may not depend on it. */
#define LIB088_LOADS 40

static _Alignas(4096) unsigned char lib088_stack[1 << 20];

typedef struct {
  int refused; /* loads that returned -1 with an error raised, as they must */
  long live;   /* blocks still allocated after the measured loads */
} Lib088Run;

static int lib088_load_once(void) {
  TVMFFIAny a = core_c_str("conf088_"), r;
  TVMFFIObjectHandle fn = NULL;
  TVMFFIByteArray n = {"ffi.SystemLib", 13};
  if (conf_api.TVMFFIFunctionGetGlobal(&n, &fn) != 0 || fn == NULL) return 0;
  int rc = conf_api.TVMFFIFunctionCall(fn, &a, 1, &r);
  conf_api.TVMFFIObjectDecRef(fn);
  if (rc == 0) {
    if (r.type_index >= kTVMFFIStaticObjectBegin && r.v_obj) conf_api.TVMFFIObjectDecRef(r.v_obj);
    return 0;
  }
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) return 0;
  conf_api.TVMFFIObjectDecRef(err);
  return 1;
}

static void* lib088_thread(void* p) {
  Lib088Run* run = p;
  /* Warm-up: whatever a first load and a first error set up per thread. */
  for (int i = 0; i < 3; ++i) run->refused += lib088_load_once();
  conf_alloc_count_start();
  for (int i = 0; i < LIB088_LOADS; ++i) run->refused += lib088_load_once();
  run->live = conf_alloc_count_stop();
  return NULL;
}

TEST(library_bin_loaders, LIB_088_failed_loads_leak_nothing_on_any_stack) {
  conf_alloc_require();
  char kind[121];
  register_long_kind(kind, 120, "conf088", "conf088___tvm_ffi__library_bin");
  pthread_attr_t attr;
  cr_assert_eq(pthread_attr_init(&attr), 0);
  cr_assert_eq(pthread_attr_setstack(&attr, lib088_stack, sizeof lib088_stack), 0);
  pthread_t t;
  Lib088Run run = {0, 0};
  cr_assert_eq(pthread_create(&t, &attr, lib088_thread, &run), 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  cr_assert_eq(run.refused, 3 + LIB088_LOADS,
               "%d of %d loads of a kind without a loader returned -1 with an error raised",
               run.refused, 3 + LIB088_LOADS);
  cr_expect_leq(run.live, 0, "%ld blocks still allocated after %d failed loads", run.live,
                LIB088_LOADS);
  /* The same on this thread, whose stack lies above the heap. */
  Lib088Run here = {0, 0};
  lib088_thread(&here);
  cr_assert_eq(here.refused, 3 + LIB088_LOADS,
               "%d of %d loads of a kind without a loader returned -1 with an error raised",
               here.refused, 3 + LIB088_LOADS);
  cr_expect_leq(here.live, 0, "%ld blocks still allocated after %d failed loads on the main stack",
                here.live, LIB088_LOADS);
}

/* LIB-089: kinds of every length around what a loader's name could keep
 * in a small fixed buffer (60 to 129 bytes) and of 1 MiB, each
 * the only module of a system library's blob with no loader registered:
 * each load returns -1 with an error raised, the process survives, and no
 * block is written past the size it was allocated with. */
#define LIB089_HUGE (1 << 20)

static _Alignas(8) unsigned char lib089_blob[LIB089_HUGE + 64];

TEST(library_bin_loaders, LIB_089_long_kinds_stay_in_bounds) {
  conf_alloc_require();
  static char kind[LIB089_HUGE];
  memset(kind, 'k', sizeof kind);
  memcpy(kind, "conf089", 7);
  /* 60 to 129 bytes one by one, then 1 MiB. */
  size_t lens[71];
  for (size_t i = 0; i < 70; ++i) lens[i] = 60 + i;
  lens[70] = LIB089_HUGE;
  long before = conf_alloc_overruns();
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    char prefix[32], symbol[64];
    snprintf(prefix, sizeof prefix, "conf089_%zu_", i);
    snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
    make_kind_blob(lib089_blob, kind, lens[i]);
    cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, lib089_blob), 0);
    TVMFFIAny a = core_c_str(prefix), r;
    conf_alloc_guard(1);
    int rc = mod_call("ffi.SystemLib", &a, 1, &r);
    conf_alloc_guard(0);
    cr_expect_eq(rc, -1, "a kind of %zu bytes without a loader was loaded", lens[i]);
    if (rc == 0) core_release(&r);
    ConfError err = conf_take_error();
    cr_expect_neq(err.kind[0], '\0', "-1 with no error raised for a kind of %zu bytes", lens[i]);
  }
  cr_expect_eq(conf_alloc_overruns() - before, 0,
               "%ld blocks were written past the size they were allocated with",
               conf_alloc_overruns() - before);
}

/* LIB-090: the loader of each kind is the one registered under that exact
 * kind: kinds of 60 to 129 bytes (around any fixed buffer a loader's name
 * might be built in) and of 300 bytes, each the only module of a system
 * library's blob with a loader of its own registered, load through
 * ffi.SystemLib, and each load calls its own loader once. */
static int lib090_calls;

static intptr_t lib090_last;

static int lib090_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args, (void)n;
  lib090_calls++;
  lib090_last = (intptr_t)self;
  API(TVMFFIObjectIncRef)(mod_premade_module);
  *result = core_obj(mod_premade_module);
  return 0;
}

TEST(library_bin_loaders, LIB_090_loader_of_the_exact_kind) {
  mod_premade_module = mod_load("libmod_other.so");
  static char kind[301];
  memset(kind, 'q', 300);
  memcpy(kind, "conf090", 7);
  size_t lens[71];
  for (size_t i = 0; i < 70; ++i) lens[i] = 60 + i;
  lens[70] = 300;
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    char loader_name[400], prefix[32], symbol[64];
    snprintf(loader_name, sizeof loader_name, "ffi.Module.load_from_bytes.%.*s", (int)lens[i],
             kind);
    TVMFFIObjectHandle fn = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)((void*)(intptr_t)lens[i], lib090_loader, NULL, &fn), 0);
    TVMFFIByteArray ln = {loader_name, strlen(loader_name)};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&ln, fn, 1), 0);
    API(TVMFFIObjectDecRef)(fn);
    snprintf(prefix, sizeof prefix, "conf090_%zu_", i);
    snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
    make_kind_blob(lib089_blob, kind, lens[i]);
    cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, lib089_blob), 0);
    int before = lib090_calls;
    TVMFFIAny a = core_c_str(prefix), r;
    int rc = mod_call("ffi.SystemLib", &a, 1, &r);
    EXPECT_OK(rc);
    if (rc == 0) core_release(&r);
    cr_expect_eq(lib090_calls - before, 1, "a kind of %zu bytes: its loader ran %d times", lens[i],
                 lib090_calls - before);
    cr_expect_eq(lib090_last, (intptr_t)lens[i], "a kind of %zu bytes got the loader of %ld bytes",
                 lens[i], (long)lib090_last);
  }
  API(TVMFFIObjectDecRef)(mod_premade_module);
}
