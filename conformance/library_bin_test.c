/* Clauses of spec/library_bin.md: decoding `__tvm_ffi__library_bin` at
 * load. Well-formed trees come from the libmod_packed libraries of
 * testlibs/ (blobs made by `libbin pack`); malformed blobs are the .bin files
 * of testdata/, loaded through libmod_blob_env.so in a child process (see
 * module_support.h). */
#include <malloc.h>

#include "alloc_fail.h"
#include "module_support.h"

/* ---- the test loader for kind "testkind" ---- */

#define MAX_CALLS 8
static struct {
  int calls;
  size_t size[MAX_CALLS];
  unsigned char data[MAX_CALLS][64];
  int32_t type[MAX_CALLS];
  TVMFFIObjectHandle returned[MAX_CALLS]; /* a reference each, for inspection */
} seen;

/* The k-th call returns libmod_other.so (k even) or libmod_third.so. */
static int testkind_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int k = seen.calls++;
  if (n != 1 || k >= MAX_CALLS) {
    API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "testkind loader: want one argument");
    return -1;
  }
  seen.type[k] = args[0].type_index;
  if (args[0].type_index == kTVMFFISmallBytes) {
    seen.size[k] = args[0].small_str_len;
    memcpy(seen.data[k], args[0].v_bytes, seen.size[k]);
  } else if (args[0].type_index == kTVMFFIBytes) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(args[0].v_obj);
    seen.size[k] = b->size < 64 ? b->size : 64;
    memcpy(seen.data[k], b->data, seen.size[k]);
  }
  TVMFFIObjectHandle fn = mod_global("ffi.ModuleLoadFromFile");
  TVMFFIAny path = core_c_str(mod_lib_path(k % 2 == 0 ? "libmod_other.so" : "libmod_third.so"));
  int rc = API(TVMFFIFunctionCall)(fn, &path, 1, result);
  API(TVMFFIObjectDecRef)(fn);
  if (rc == 0) {
    seen.returned[k] = result->v_obj;
    API(TVMFFIObjectIncRef)(result->v_obj);
  }
  return rc;
}

/* Registers `call` as the loader of `kind`. */
static void register_loader_for(const char* kind, TVMFFISafeCallType call) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, call, NULL, &fn), 0);
  char name[128];
  snprintf(name, sizeof name, "ffi.Module.load_from_bytes.%s", kind);
  TVMFFIByteArray n = {name, strlen(name)};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
  API(TVMFFIObjectDecRef)(fn);
}

static void register_loader(TVMFFISafeCallType call) { register_loader_for("testkind", call); }

static void release_seen(void) {
  for (int k = 0; k < seen.calls && k < MAX_CALLS; ++k) {
    if (seen.returned[k]) API(TVMFFIObjectDecRef)(seen.returned[k]);
    seen.returned[k] = NULL;
  }
}

/* ---- well-formed trees ---- */

/* LIB-001: the blob is decoded and module 0 is returned. */
TEST(library_bin, LIB_001_blob_decoded_root_returned) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed.so");
  cr_expect_eq(((TVMFFIObject*)root)->type_index, kTVMFFIModule);
  cr_expect_eq(seen.calls, 2, "the loader ran %d times for 2 custom entries", seen.calls);
  /* root = entry 0 (_lib): own add_one; other_fn only through imports. */
  cr_expect_eq(mod_implements(root, "add_one", 0), 1);
  cr_expect_eq(mod_implements(root, "other_fn", 0), 0);
  cr_expect_eq(mod_implements(root, "other_fn", 1), 1);
  API(TVMFFIObjectDecRef)(root);
  release_seen();
}

/* LIB-002: `_lib` is the library's own module. */
TEST(library_bin, LIB_002_lib_entry_is_the_library) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed.so");
  TVMFFIObjectHandle fn = mod_get_function(root, "add_one", 0);
  cr_assert_not_null(fn, "the library's add_one is not on the root");
  TVMFFIAny arg = core_int(9);
  cr_expect_eq(mod_call_int(fn, &arg, 1), 10);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(root);
  release_seen();
}

/* LIB-003: loaders get exactly the payload bytes, in entry order. */
TEST(library_bin, LIB_003_loader_gets_payload_bytes) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed.so");
  cr_assert_eq(seen.calls, 2);
  for (int k = 0; k < 2; ++k) {
    cr_expect(seen.type[k] == kTVMFFIBytes || seen.type[k] == kTVMFFISmallBytes,
              "call %d got type index %d, not Bytes", k, seen.type[k]);
  }
  cr_expect_eq(seen.size[0], 11);
  cr_expect_eq(memcmp(seen.data[0], "payload-one", 11), 0);
  cr_expect_eq(seen.size[1], 4);
  cr_expect_eq(memcmp(seen.data[1], "\x00\xff\x00\x41", 4), 0, "binary payload altered");
  API(TVMFFIObjectDecRef)(root);
  release_seen();
}

/* LIB-004: imports follow indptr/child_indices in order: root -> [1, 2],
 * 1 -> [2], 2 -> []. */
TEST(library_bin, LIB_004_import_tree_rebuilt) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed.so");
  cr_assert_eq(seen.calls, 2);
  TVMFFIObjectHandle m1 = seen.returned[0], m2 = seen.returned[1];
  TVMFFIObjectHandle fn = mod_get_function(root, "which", 1);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "root's first import is not module 1");
  API(TVMFFIObjectDecRef)(fn);
  cr_expect_eq(mod_implements(m1, "third_fn", 0), 0);
  cr_expect_eq(mod_implements(m1, "third_fn", 1), 1, "module 1 does not import module 2");
  cr_expect_eq(mod_implements(m2, "other_fn", 1), 0, "module 2 imports something");
  cr_expect_eq(mod_implements(m2, "add_one", 1), 0);
  API(TVMFFIObjectDecRef)(root);
  release_seen();
}

static int relay_calls;

/* LIB-096: the loader a first entry's loader puts in its place. */
static int relay_second(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  ++relay_calls;
  return testkind_loader(self, args, n, result);
}

/* LIB-096: loads its entry, and registers relay_second for the kind. */
static int relay_first(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  register_loader(relay_second);
  return testkind_loader(self, args, n, result);
}

/* LIB-096: each entry gets the loader registered under its kind's name
 * when that entry is loaded, even when an earlier entry's loader changed
 * it: libmod_packed.so's second testkind entry goes to relay_second. */
TEST(library_bin, LIB_096_loader_looked_up_per_entry) {
  register_loader(relay_first);
  TVMFFIObjectHandle root = mod_load("libmod_packed.so");
  cr_expect_eq(seen.calls, 2, "the loaders ran %d times for 2 custom entries", seen.calls);
  cr_expect_eq(relay_calls, 1, "the re-registered loader ran %d times, not once", relay_calls);
  cr_expect_eq(memcmp(seen.data[1], "\x00\xff\x00\x41", 4), 0, "second payload altered");
  API(TVMFFIObjectDecRef)(root);
  release_seen();
}

/* LIB-005: library_ctx is the `_lib` module, not the root. */
TEST(library_bin, LIB_005_ctx_is_lib_module) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed_ctx.so");
  cr_assert_eq(seen.calls, 2);
  TVMFFIObjectHandle call = mod_get_function(root, "call_import", 1);
  cr_assert_not_null(call, "the library's call_import is not reachable from the root");
  TVMFFIAny arg = core_c_str("third_fn"), r;
  cr_expect_eq(mod_call_int(call, &arg, 1), 43); /* an import of _lib */
  arg = core_c_str("other_fn");                  /* the root's own: not an import */
  cr_expect_eq(mod_call_fn(call, &arg, 1, &r), -1, "lookup searched the root's functions");
  EXPECT_RAISED(.kind = "RuntimeError");
  API(TVMFFIObjectDecRef)(call);
  API(TVMFFIObjectDecRef)(root);
  release_seen();
}

/* LIB-006: a kind without loader: the error names the loader. */
TEST(library_bin, LIB_006_missing_loader_named) {
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_packed_nokind.so"), &mod), -1);
  EXPECT_RAISED(.says = {"ffi.Module.load_from_bytes.no_such_kind"});
}

static int failing_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  API(TVMFFIErrorSetRaisedFromCStr)("KeyError", "testkind loader refuses payload");
  return -1;
}

/* LIB-007: the loader's error fails the load unchanged. */
TEST(library_bin, LIB_007_loader_error_propagates) {
  register_loader(failing_loader);
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_packed.so"), &mod), -1);
  EXPECT_RAISED(.kind = "KeyError", .says = {"testkind loader refuses payload"});
}

/* LIB-097: the strong count of a module a loader handed back (the test
 * holds one reference of its own to each). */
static uint32_t strong_count(TVMFFIObjectHandle obj) {
  return (
      uint32_t)(__atomic_load_n(&((const TVMFFIObject*)obj)->combined_ref_count, __ATOMIC_ACQUIRE) &
                0xffffffffu);
}

/* LIB-097: the first entry loads, the second is refused. */
static int second_fails_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  if (seen.calls == 1) {
    ++seen.calls;
    API(TVMFFIErrorSetRaisedFromCStr)("KeyError", "second entry refused");
    return -1;
  }
  return testkind_loader(self, args, n, result);
}

/* LIB-097: a load keeps no reference of its own to the modules its loaders
 * returned: once the modules that import one are released, or once a later
 * entry fails the load, each is held only by the test's own reference. */
TEST(library_bin, LIB_097_load_keeps_no_module_references) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed.so");
  cr_assert_eq(seen.calls, 2);
  API(TVMFFIObjectDecRef)(root);
  /* Module 1 imports module 2 (LIB-004): once module 1 goes, module 2 is
   * the test's alone. */
  cr_expect_eq(strong_count(seen.returned[0]), 1,
               "module 1 holds %u references after the root was released",
               strong_count(seen.returned[0]));
  API(TVMFFIObjectDecRef)(seen.returned[0]);
  seen.returned[0] = NULL;
  cr_expect_eq(strong_count(seen.returned[1]), 1,
               "module 2 holds %u references after the root and module 1 were released",
               strong_count(seen.returned[1]));
  release_seen();
  memset(&seen, 0, sizeof seen);

  register_loader(second_fails_loader);
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_packed.so"), &mod), -1);
  EXPECT_RAISED(.kind = "KeyError");
  cr_assert_not_null(seen.returned[0], "the first entry was not loaded");
  cr_expect_eq(strong_count(seen.returned[0]), 1,
               "the first entry's module holds %u references after the load failed",
               strong_count(seen.returned[0]));
  release_seen();
}

static int int_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 3;
  return 0;
}

/* LIB-008: a loader returning a non-module: TypeError. */
TEST(library_bin, LIB_008_loader_non_module_is_type_error) {
  register_loader(int_loader);
  TVMFFIObjectHandle mod;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_packed.so"), &mod), -1);
  EXPECT_RAISED(.kind = "TypeError");
}

/* MOD-084: that TypeError says what was expected: a Module. */
TEST(library_bin, MOD_084_non_module_error_names_module) {
  register_loader(int_loader);
  TVMFFIObjectHandle mod;
  cr_assert_eq(mod_load_path(mod_lib_path("libmod_packed.so"), &mod), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"Module"});
}

static const char* blob_path(const char* name) {
  static char buf[4096];
  char rel[256];
  snprintf(rel, sizeof rel, "conformance/testdata/%s", name);
  snprintf(buf, sizeof buf, "%s", conf_runfile(rel));
  return buf;
}

/* Loads libmod_blob_env.so with the blob in this process (well-formed
 * blobs only). */
static int load_blob_here(const char* name, TVMFFIObjectHandle* mod) {
  setenv("CONF_TEST_LIBRARY_BIN", blob_path(name), 1);
  return mod_load_path(mod_lib_path("libmod_blob_env.so"), mod);
}

/* LIB-009: an empty payload reaches the loader as empty Bytes. */
TEST(library_bin, LIB_009_empty_payload) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle mod;
  EXPECT_OK(load_blob_here("empty_payload.bin", &mod));
  cr_expect_eq(seen.calls, 1);
  cr_expect(seen.type[0] == kTVMFFIBytes || seen.type[0] == kTVMFFISmallBytes, "type index %d",
            seen.type[0]);
  cr_expect_eq(seen.size[0], 0);
  cr_expect_eq(mod_implements(mod, "other_fn", 1), 1);
  API(TVMFFIObjectDecRef)(mod);
  release_seen();
}

/* LIB-010: bytes past 8 + nbytes are padding. */
TEST(library_bin, LIB_010_padding_ignored) {
  TVMFFIObjectHandle mod;
  EXPECT_OK(load_blob_here("padded.bin", &mod));
  cr_expect_eq(mod_implements(mod, "ping", 0), 1);
  API(TVMFFIObjectDecRef)(mod);
}

/* LIB-084: a blob with an empty vector (padded.bin: no child indices)
 * loads where malloc(0) returns NULL, as C allows: a decoder must not take
 * that NULL for running out of memory. */
TEST(library_bin, LIB_084_zero_size_allocations) {
  conf_alloc_require(); /* the interposer owns malloc */
  TVMFFIObjectHandle mod;
  setenv("CONF_TEST_LIBRARY_BIN", blob_path("padded.bin"), 1);
  TVMFFIAny arg = core_c_str(mod_lib_path("libmod_blob_env.so")), r = core_none();
  TVMFFIObjectHandle load = mod_global("ffi.ModuleLoadFromFile");
  conf_alloc_zero_null(1);
  int rc = conf_api.TVMFFIFunctionCall(load, &arg, 1, &r);
  conf_alloc_zero_null(0);
  API(TVMFFIObjectDecRef)(load);
  EXPECT_OK(rc);
  cr_assert_eq(r.type_index, kTVMFFIModule);
  mod = r.v_obj;
  cr_expect_eq(mod_implements(mod, "ping", 0), 1);
  API(TVMFFIObjectDecRef)(mod);
}

/* LIB-036: only the kind `_lib` itself is the library: kinds that start
 * like it (`_libx`, `_lix`) are ordinary kinds whose payloads go to their
 * loaders. */
TEST(library_bin, LIB_036_lib_like_kinds_are_ordinary) {
  register_loader_for("_libx", testkind_loader);
  register_loader_for("_lix", testkind_loader);
  TVMFFIObjectHandle mod;
  EXPECT_OK(load_blob_here("lib_like_kinds.bin", &mod));
  cr_expect_eq(seen.calls, 2, "the loaders ran %d times for 2 entries", seen.calls);
  cr_expect(seen.size[0] == 2 && memcmp(seen.data[0], "p1", 2) == 0, "the _libx payload");
  cr_expect(seen.size[1] == 2 && memcmp(seen.data[1], "p2", 2) == 0, "the _lix payload");
  cr_expect_eq(mod_implements(mod, "ping", 0), 1, "the root is not the library");
  cr_expect_eq(mod_implements(mod, "other_fn", 1), 1, "the _libx module is not imported");
  cr_expect_eq(mod_implements(mod, "third_fn", 1), 1, "the _lix module is not imported");
  API(TVMFFIObjectDecRef)(mod);
  release_seen();
}

/* The loader of kind "dagkind": call k returns a fresh load of
 * libmod_other.so (k even) or libmod_third.so (k odd), and counts. */
static int dag_calls;
static int dagkind_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  int k = dag_calls++;
  TVMFFIObjectHandle fn = mod_global("ffi.ModuleLoadFromFile");
  TVMFFIAny path = core_c_str(mod_lib_path(k % 2 == 0 ? "libmod_other.so" : "libmod_third.so"));
  int rc = API(TVMFFIFunctionCall)(fn, &path, 1, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* LIB-081: a well-formed blob whose 64 modules share imports along about
 * 2^44 paths (the root, `_lib`, imports module 63; module k imports k - 1
 * and k - 2) loads: each entry's loader runs once and the imports are
 * those listed. The lookups below stop at their first match, so they take
 * a few steps on any implementation; a loader that walks every path of
 * the graph never returns (the timeout guards against a hang, it is no
 * performance threshold: a correct load takes milliseconds). */
TEST(library_bin, LIB_081_shared_imports_load_once, .timeout = 300) {
  dag_calls = 0;
  register_loader_for("dagkind", dagkind_loader);
  setenv("CONF_TEST_LIBRARY_BIN", blob_path("long_shared_imports.bin"), 1);
  TVMFFIObjectHandle mod;
  EXPECT_OK(mod_load_path(mod_lib_path("libmod_blob_env_large.so"), &mod));
  cr_expect_eq(dag_calls, 63, "the loader ran %d times for 63 entries", dag_calls);
  cr_expect_eq(mod_implements(mod, "ping", 0), 1, "the root is not the library");
  TVMFFIObjectHandle fn = mod_get_function(mod, "which", 1);
  cr_assert_not_null(fn, "`which` is not reachable from the root");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "the root's import is not module 63 (call 62)");
  API(TVMFFIObjectDecRef)(fn);
  fn = mod_get_function(mod, "third_fn", 1);
  cr_assert_not_null(fn, "module 63 does not import module 62");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 43);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* LIB-004: a module imported by several modules is loaded once and
 * imported by each: 0 -> [1, 3], 1 -> [2], 3 -> [1]. */
TEST(library_bin, LIB_004_shared_import_loaded_once) {
  register_loader(testkind_loader);
  TVMFFIObjectHandle mod;
  EXPECT_OK(load_blob_here("shared_import.bin", &mod));
  cr_assert_eq(seen.calls, 3, "the loader ran %d times for 3 entries", seen.calls);
  TVMFFIObjectHandle fn = mod_get_function(mod, "which", 1);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "the root's first import is not module 1");
  API(TVMFFIObjectDecRef)(fn);
  cr_expect_eq(mod_implements(mod, "third_fn", 1), 1, "module 1 does not import module 2");
  cr_expect_eq(mod_implements(seen.returned[0], "third_fn", 1), 1,
               "module 1 does not import module 2");
  cr_expect_eq(mod_implements(seen.returned[2], "third_fn", 0), 0);
  cr_expect_eq(mod_implements(seen.returned[2], "third_fn", 1), 1,
               "module 3 does not import module 1");
  API(TVMFFIObjectDecRef)(mod);
  release_seen();
}

/* ---- malformed blobs, each loaded in a child process ---- */

typedef struct {
  const char* clause;
  const char* file;
  size_t offset;
  const char* field;
} Malformed;

static const Malformed malformed[] = {
    {"LIB-020", "empty_indptr.bin", 8, "import_tree.indptr"},
    {"LIB-021", "zero_modules.bin", 8, "import_tree.indptr"},
    {"LIB-022", "indptr_nonzero_start.bin", 16, "import_tree.indptr"},
    {"LIB-023", "indptr_decreasing.bin", 32, "import_tree.indptr"},
    {"LIB-023", "indptr_decreasing_inner.bin", 32, "import_tree.indptr"},
    {"LIB-024", "indptr_past_children.bin", 32, "import_tree.indptr"},
    {"LIB-024", "indptr_short_of_children.bin", 24, "import_tree.indptr"},
    {"LIB-025", "child_out_of_range.bin", 40, "import_tree.child_indices"},
    {"LIB-025", "child_out_of_range_second.bin", 48, "import_tree.child_indices"},
    {"LIB-025", "child_index_equal_count.bin", 40, "import_tree.child_indices"},
    {"LIB-026", "import_cycle.bin", 72, "import_tree.child_indices"},
    {"LIB-026", "self_import.bin", 40, "import_tree.child_indices"},
    {"LIB-026", "import_cycle_late.bin", 72, "import_tree.child_indices"},
    {"LIB-026", "import_cycle_unreachable.bin", 64, "import_tree.child_indices"},
    {"LIB-026", "import_cycle_then_shared.bin", 80, "import_tree.child_indices"},
    {"LIB-026", "self_import_twice.bin", 56, "import_tree.child_indices"},
    {"LIB-027", "huge_string.bin", 40, "kind"},
    {"LIB-027", "huge_payload.bin", 56, "payload"},
    {"LIB-027", "huge_string_high_bit.bin", 40, "kind"},
    {"LIB-028", "huge_vector.bin", 8, "import_tree.indptr"},
    {"LIB-028", "huge_children.bin", 32, "import_tree.child_indices"},
    {"LIB-028", "children_count_past_end.bin", 32, "import_tree.child_indices"},
    {"LIB-029", "nbytes_past_symbol.bin", 0, "nbytes"},
    {"LIB-030", "trailing_bytes.bin", 52, "entries"},
    {"LIB-031", "duplicate_lib.bin", 60, "kind"},
    {"LIB-032", "empty_kind.bin", 40, "kind"},
    {"LIB-033", "truncated.bin", 8, "import_tree.indptr"},
    {"LIB-033", "truncated_after_indptr.bin", 32, "import_tree.child_indices"},
    {"LIB-033", "truncated_children.bin", 40, "import_tree.child_indices"},
    {"LIB-033", "truncated_kind_length.bin", 56, "kind"},
    {"LIB-033", "truncated_kind_length_7.bin", 56, "kind"},
    {"LIB-033", "truncated_kind.bin", 56, "kind"},
    {"LIB-033", "truncated_payload_length.bin", 84, "payload"},
    {"LIB-033", "truncated_payload.bin", 84, "payload"},
};

/* Whether `rest`, the text after "field F:", says why: something other
 * than blanks. */
static int has_reason(const char* rest) {
  while (*rest == ' ') ++rest;
  return *rest != '\0';
}

/* A load of `file` through `lib` in a child process whose fresh heap
 * blocks are garbage (0xA5), not the zeros a new heap often holds, so a
 * decoder reading bytes it never wrote goes wrong visibly. */
static ModOutcome load_malformed(const char* lib, const char* file) {
  conf_alloc_scribble(1);
  ModOutcome o = mod_load_isolated(mod_lib_path(lib), blob_path(file));
  conf_alloc_scribble(0);
  return o;
}

/* Checks every malformed blob of `clause`: the child survived, the load
 * returned -1 with ValueError, and the message says "offset N:" and
 * "field F:" (the form `library_bin: offset N: field F: reason`). */
static void expect_malformed_in(const char* lib, const char* clause) {
  register_loader(testkind_loader); /* inherited by the child */
  int checked = 0;
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; ++i) {
    const Malformed* m = &malformed[i];
    if (strcmp(m->clause, clause) != 0) continue;
    checked++;
    ModOutcome o = load_malformed(lib, m->file);
    cr_assert(o.exited, "%s: the loading process was killed by signal %d", m->file, o.signal);
    cr_assert_eq(o.rc, -1, "%s: the load succeeded (returned type index %d)", m->file,
                 o.result_type);
    cr_expect_str_eq(o.error.kind, "ValueError", "%s: raised %s: %s", m->file, o.error.kind,
                     o.error.message);
    char want[64];
    snprintf(want, sizeof want, "offset %zu:", m->offset);
    cr_expect(strstr(o.error.message, want) != NULL, "%s: message lacks '%s': %s", m->file, want,
              o.error.message);
    snprintf(want, sizeof want, "field %s:", m->field);
    cr_expect(strstr(o.error.message, want) != NULL, "%s: message lacks '%s': %s", m->file, want,
              o.error.message);
  }
  cr_assert_gt(checked, 0, "no blob for %s", clause);
}

static void expect_malformed(const char* clause) {
  expect_malformed_in("libmod_blob_env.so", clause);
}

/* LIB-020: empty indptr. */
TEST(library_bin, LIB_020_empty_indptr) { expect_malformed("LIB-020"); }

/* LIB-021: zero modules. */
TEST(library_bin, LIB_021_zero_modules) { expect_malformed("LIB-021"); }

/* LIB-022: indptr not starting at 0. */
TEST(library_bin, LIB_022_indptr_nonzero_start) { expect_malformed("LIB-022"); }

/* LIB-023: decreasing indptr. */
TEST(library_bin, LIB_023_indptr_decreasing) { expect_malformed("LIB-023"); }

/* LIB-024: indptr pointing past child_indices. */
TEST(library_bin, LIB_024_indptr_past_children) { expect_malformed("LIB-024"); }

/* LIB-025: a child index out of range (the first, or a later one). */
TEST(library_bin, LIB_025_child_out_of_range) { expect_malformed("LIB-025"); }

/* LIB-026: an import cycle: through others, a self-import, one found after
 * a finished subtree, one not reachable from module 0. */
TEST(library_bin, LIB_026_import_cycle) { expect_malformed("LIB-026"); }

/* LIB-027: a 2^40-byte kind or payload length. */
TEST(library_bin, LIB_027_huge_string_length) { expect_malformed("LIB-027"); }

/* LIB-028: a 2^40-element indptr or child_indices. */
TEST(library_bin, LIB_028_huge_vector_count) { expect_malformed("LIB-028"); }

/* LIB-029: nbytes larger than the symbol. */
TEST(library_bin, LIB_029_nbytes_past_symbol) {
  expect_malformed("LIB-029");
  /* The same where the loaded segment goes on far past the symbol: the
   * symbol's size, not the segment's end, bounds the blob. */
  expect_malformed_in("libmod_blob_env_tail.so", "LIB-029");
}

/* LIB-030: trailing bytes inside nbytes. */
TEST(library_bin, LIB_030_trailing_bytes) { expect_malformed("LIB-030"); }

/* LIB-031: a second `_lib`. */
TEST(library_bin, LIB_031_duplicate_lib) { expect_malformed("LIB-031"); }

/* LIB-032: an empty kind. */
TEST(library_bin, LIB_032_empty_kind) { expect_malformed("LIB-032"); }

/* LIB-033: nbytes ending inside a field: indptr, before or inside
 * child_indices, a kind's length or bytes, the payload's length or bytes. */
TEST(library_bin, LIB_033_truncated) { expect_malformed("LIB-033"); }

/* LIB-080: a long import tree (an indptr of 2000 entries, 1999 modules)
 * whose nbytes ends before the first kind is refused like a short one: the
 * loading process survives and gets a ValueError at offset 16024, field
 * kind. The vectors are decoded in full before the entries fail, so a
 * decoder that writes them past what it allocated corrupts the heap. */
TEST(library_bin, LIB_080_long_import_tree_truncated) {
  register_loader(testkind_loader); /* inherited by the child */
  ModOutcome o = load_malformed("libmod_blob_env_large.so", "long_indptr_truncated.bin");
  cr_assert(o.exited, "the loading process was killed by signal %d", o.signal);
  cr_assert_eq(o.rc, -1, "the load succeeded (returned type index %d)", o.result_type);
  cr_expect_str_eq(o.error.kind, "ValueError", "raised %s: %s", o.error.kind, o.error.message);
  cr_expect(strstr(o.error.message, "offset 16024:") != NULL, "message lacks 'offset 16024:': %s",
            o.error.message);
  cr_expect(strstr(o.error.message, "field kind:") != NULL, "message lacks 'field kind:': %s",
            o.error.message);
}

/* LIB-082: every refusal of a malformed blob says why: the message goes
 * on after "field F:" with a reason. */
TEST(library_bin, LIB_082_refusals_say_why) {
  register_loader(testkind_loader); /* inherited by the children */
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; ++i) {
    const Malformed* m = &malformed[i];
    ModOutcome o = load_malformed("libmod_blob_env.so", m->file);
    cr_assert(o.exited, "%s: the loading process was killed by signal %d", m->file, o.signal);
    cr_assert_eq(o.rc, -1, "%s: the load succeeded", m->file);
    char want[64];
    snprintf(want, sizeof want, "field %s:", m->field);
    const char* at = strstr(o.error.message, want);
    cr_expect(at != NULL && has_reason(at + strlen(want)), "%s: no reason after '%s': %s", m->file,
              want, o.error.message);
  }
}

/* LIB-085: the reason tells an empty kind (LIB-032) from a kind whose
 * length is cut short or runs past the blob (LIB-027, LIB-033): only the
 * first says "empty". */
TEST(library_bin, LIB_085_empty_kind_told_apart) {
  register_loader(testkind_loader); /* inherited by the children */
  int checked = 0;
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; ++i) {
    const Malformed* m = &malformed[i];
    int empty = strcmp(m->clause, "LIB-032") == 0;
    int cut = (strcmp(m->clause, "LIB-027") == 0 || strcmp(m->clause, "LIB-033") == 0) &&
              strcmp(m->field, "kind") == 0;
    if (!empty && !cut) continue;
    checked++;
    ModOutcome o = load_malformed("libmod_blob_env.so", m->file);
    cr_assert(o.exited, "%s: the loading process was killed by signal %d", m->file, o.signal);
    cr_assert_eq(o.rc, -1, "%s: the load succeeded", m->file);
    const char* at = strstr(o.error.message, "field kind:");
    cr_assert(at != NULL, "%s: message lacks 'field kind:': %s", m->file, o.error.message);
    int says_empty = strstr(at, "empty") != NULL;
    cr_expect_eq(says_empty, empty, "%s: the reason %s 'empty': %s", m->file,
                 empty ? "lacks" : "says", o.error.message);
  }
  cr_assert_gt(checked, 4);
}

/* LIB-034: no malformed blob crashes the loading process. */
TEST(library_bin, LIB_034_no_blob_crashes) {
  register_loader(testkind_loader);
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; ++i) {
    ModOutcome o = load_malformed("libmod_blob_env.so", malformed[i].file);
    cr_expect(o.exited, "%s: the loading process was killed by signal %d", malformed[i].file,
              o.signal);
  }
}

/* ---- a refusal that runs out of memory ---- */

/* LIB-083: a malformed blob is refused however memory runs out: ffi.SystemLib
 * of a new prefix whose `<prefix>__tvm_ffi__library_bin` is import_cycle.bin
 * (0 -> 1 -> 2 -> 1), with any allocation failing (once, or from there on),
 * returns -1 with ValueError or MemoryError, never a module; with nothing
 * failing, ValueError. */
TEST(library_bin, LIB_083_refusal_out_of_memory) {
  conf_alloc_require();
  mod_premade_setup(blob_path("import_cycle.bin"));
  register_loader(mod_premade_loader);
  TVMFFIObjectHandle fn = mod_global("ffi.SystemLib");
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      char prefix[64], symbol[128];
      snprintf(prefix, sizeof prefix, "lib83_%d_%ld_", sticky, w.n);
      snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
      cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, mod_premade_blob), 0);
      TVMFFIAny a = core_c_str(prefix), r = core_none();
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIFunctionCall(fn, &a, 1, &r);
      conf_alloc_disarm(&w);
      int32_t got = r.type_index;
      if (rc == 0) core_release(&r);
      cr_assert_eq(rc, -1,
                   "allocation %ld failed (%ld injected): the load succeeded (type index "
                   "%d)",
                   w.n, w.injected, got);
      ConfError err = conf_take_error();
      if (w.injected == 0) {
        cr_assert_str_eq(err.kind, "ValueError", "nothing failed: raised %s: %s", err.kind,
                         err.message);
      } else {
        cr_assert(strcmp(err.kind, "ValueError") == 0 || strcmp(err.kind, "MemoryError") == 0,
                  "allocation %ld failed: raised %s: %s", w.n, err.kind, err.message);
      }
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod_premade_module);
  conf_alloc_done(points, "ffi.SystemLib");
}

/* ---- memory given back ---- */

enum { LOAD_ROUNDS = 200 };

/* One ffi.ModuleLoadFromFile(path) through `load`, the module or the
 * error released; returns the call's return code. No cr_ calls: they
 * allocate. */
static int load_once(TVMFFIObjectHandle load, const char* path) {
  TVMFFIAny arg = core_c_str(path), result = core_none();
  int rc = conf_api.TVMFFIFunctionCall(load, &arg, 1, &result);
  if (rc == 0 && result.type_index >= kTVMFFIStaticObjectBegin && result.v_obj != NULL)
    conf_api.TVMFFIObjectDecRef(result.v_obj);
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  if (err) conf_api.TVMFFIObjectDecRef(err);
  release_seen();
  seen.calls = 0;
  return rc;
}

/* In a forked child (CONF_TEST_LIBRARY_BIN=blob when blob is not NULL):
 * one load of `path`, then LOAD_ROUNDS more, each result released.
 * Returns the growth of the heap in use over those rounds in bytes, or -1
 * when the child died or a later load ended differently from the first. */
static long load_growth(TVMFFIObjectHandle load, const char* path, const char* blob) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    close(fds[0]);
    if (blob) setenv("CONF_TEST_LIBRARY_BIN", blob, 1);
    int first = load_once(load, path);
    size_t before = mallinfo2().uordblks;
    long growth = 0;
    for (int i = 0; i < LOAD_ROUNDS; ++i) {
      if (load_once(load, path) != first) growth = -1;
    }
    size_t after = mallinfo2().uordblks;
    if (growth == 0) growth = after > before ? (long)(after - before) : 0;
    if (write(fds[1], &growth, sizeof growth) != (ssize_t)sizeof growth) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  long growth = -1;
  if (read(fds[0], &growth, sizeof growth) != (ssize_t)sizeof growth) growth = -1;
  close(fds[0]);
  waitpid(pid, NULL, 0);
  return growth;
}

/* Blobs whose loads fail at each stage of decoding: after indptr, in its
 * checks, in the cycle search, among the entries, at the end. */
static const char* const failing_blobs[] = {
    "truncated_after_indptr.bin", "indptr_decreasing.bin", "child_out_of_range.bin",
    "import_cycle.bin",           "duplicate_lib.bin",     "truncated_payload.bin",
    "trailing_bytes.bin",
};

/* LIB-035: a load gives its memory back: 200 more loads of a library with a
 * module tree (each module released), of a library with only `_lib`, and
 * of each malformed blob of every decoding stage, leave the
 * heap in use (glibc mallinfo2) within 8 bytes a round of where the first
 * load left it. */
TEST(library_bin, LIB_035_loads_give_memory_back) {
  conf_alloc_require(); /* glibc owns the heap: no sanitizer, no valgrind */
  register_loader(testkind_loader);
  TVMFFIObjectHandle load = mod_global("ffi.ModuleLoadFromFile");
  long limit = 8 * LOAD_ROUNDS;
  long g = load_growth(load, mod_lib_path("libmod_packed.so"), NULL);
  cr_expect(g >= 0 && g <= limit, "libmod_packed.so: heap grew by %ld bytes over %d loads", g,
            LOAD_ROUNDS);
  g = load_growth(load, mod_lib_path("libmod_blob_env.so"), blob_path("padded.bin"));
  cr_expect(g >= 0 && g <= limit, "padded.bin: heap grew by %ld bytes over %d loads", g,
            LOAD_ROUNDS);
  for (size_t i = 0; i < sizeof failing_blobs / sizeof failing_blobs[0]; ++i) {
    g = load_growth(load, mod_lib_path("libmod_blob_env.so"), blob_path(failing_blobs[i]));
    cr_expect(g >= 0 && g <= limit,
              "%s: heap grew by %ld bytes over %d loads (-1: a "
              "load ended differently or the process died)",
              failing_blobs[i], g, LOAD_ROUNDS);
  }
  API(TVMFFIObjectDecRef)(load);
}
