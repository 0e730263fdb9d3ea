/* Clauses GLB-001 to GLB-010 and GLB-012 of spec/host.md (the global functions a host
 * such as upstream's Python package looks up before anything else) and
 * FN-130 of spec/functions.md (no NULL function handle is ever called). */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_support.h"

/* The object a sentinel function returns (a new reference). */
static TVMFFIAny sentinel(const char* name) {
  TVMFFIAny v = host_ok(name, NULL, 0);
  cr_assert_eq(v.type_index, kTVMFFIObject, "%s returned type index %d, not ffi.Object (64)", name,
               v.type_index);
  cr_assert_not_null(v.v_obj);
  return v;
}

/* GLB-001: the missing and keyword-argument markers are plain ffi.Object
 * instances, the same object on every call, distinct from each other. */
Test(host_globals, GLB_001_sentinels) {
  TVMFFIAny a = sentinel("ffi.GetInvalidObject"), b = sentinel("ffi.GetInvalidObject");
  TVMFFIAny k = sentinel("ffi.GetKwargsObject"), k2 = sentinel("ffi.GetKwargsObject");
  cr_expect_eq(a.v_obj, b.v_obj, "ffi.GetInvalidObject returns a new object each call");
  cr_expect_eq(k.v_obj, k2.v_obj, "ffi.GetKwargsObject returns a new object each call");
  cr_expect_neq(a.v_obj, k.v_obj, "the two markers are one object");
  uint32_t before = core_strong(a.v_obj);
  core_release(&b);
  cr_expect_eq(core_strong(a.v_obj), before - 1, "each call hands out a reference of its own");
  TVMFFIAny extra = core_int(1), out;
  cr_expect_eq(host_call("ffi.GetInvalidObject", &extra, 1, &out), -1);
  ConfError e = conf_take_error();
  cr_expect(e.kind[0] != '\0', "an extra argument raised nothing");
  for (TVMFFIAny *v = (TVMFFIAny[]){a, k, k2}, *end = v + 3; v < end; ++v) core_release(v);
}

/* The names the functor lists, as one buffer "name\n...". */
static int64_t list_names(char* seen, size_t cap, const char* want, int* found) {
  TVMFFIAny f = host_ok("ffi.FunctionListGlobalNamesFunctor", NULL, 0);
  cr_assert_eq(f.type_index, kTVMFFIFunction);
  TVMFFIAny arg = core_int(-1), count = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(f.v_obj, &arg, 1, &count), 0);
  int64_t n = host_int_of(count, "functor(-1)");
  *found = 0;
  size_t used = 0;
  for (int64_t i = 0; i < n; ++i) {
    TVMFFIAny idx = core_int(i), name = core_none();
    cr_assert_eq(API(TVMFFIFunctionCall)(f.v_obj, &idx, 1, &name), 0);
    TVMFFIByteArray b = core_str_bytes(&name);
    cr_assert(name.type_index == kTVMFFIStr || name.type_index == kTVMFFISmallStr);
    if (b.size == strlen(want) && memcmp(b.data, want, b.size) == 0) *found = 1;
    if (used + b.size + 1 < cap) {
      memcpy(seen + used, b.data, b.size);
      used += b.size;
      seen[used++] = '\n';
      seen[used] = '\0';
    }
    core_release(&name);
  }
  TVMFFIAny past = core_int(n), out = core_none();
  cr_expect_eq(API(TVMFFIFunctionCall)(f.v_obj, &past, 1, &out), -1, "functor(count) returned 0");
  EXPECT_RAISED(.kind = "IndexError");
  core_release(&f);
  return n;
}

static int noop_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)args, (void)n;
  memset(out, 0, sizeof *out);
  return 0;
}

static TVMFFIObjectHandle noop_function(void) {
  TVMFFIObjectHandle f = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, noop_call, NULL, &f), 0);
  return f;
}

/* GLB-002: the names functor: (-1) the count, (i) the i-th name, every
 * registered global among them (one registered just now too). */
Test(host_globals, GLB_002_list_names) {
  static char seen[1 << 16];
  TVMFFIObjectHandle f = noop_function();
  TVMFFIByteArray name = {"conformance.glb_002", 19};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&name, f, 1), 0);
  int found;
  int64_t n = list_names(seen, sizeof seen, "conformance.glb_002", &found);
  cr_expect(found, "the names lack one registered just before");
  cr_expect_geq(n, 10);
  static const char* const core[] = {"ffi.Array", "ffi.Map", "ffi.FunctionListGlobalNamesFunctor"};
  for (size_t i = 0; i < sizeof core / sizeof *core; ++i) {
    char line[64];
    snprintf(line, sizeof line, "%s\n", core[i]);
    cr_expect(strstr(seen, line) != NULL, "the names lack %s", core[i]);
  }
  API(TVMFFIObjectDecRef)(f);
}

/* GLB-003: ffi.FunctionRemoveGlobal: true and gone, then false. */
Test(host_globals, GLB_003_remove_global) {
  TVMFFIObjectHandle f = noop_function();
  TVMFFIByteArray name = {"conformance.glb_003", 19};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&name, f, 1), 0);
  uint32_t held = core_strong(f);
  TVMFFIAny arg = core_c_str("conformance.glb_003");
  TVMFFIAny r = host_ok("ffi.FunctionRemoveGlobal", &arg, 1);
  cr_expect(r.type_index == kTVMFFIBool && r.v_int64 == 1, "removing a global gave %d/%lld",
            r.type_index, (long long)r.v_int64);
  TVMFFIObjectHandle again = NULL;
  cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&name, &again), 0);
  cr_expect_null(again, "the removed global is still found");
  cr_expect_eq(core_strong(f), held - 1, "the registry kept its reference");
  r = host_ok("ffi.FunctionRemoveGlobal", &arg, 1);
  cr_expect(r.type_index == kTVMFFIBool && r.v_int64 == 0);
  API(TVMFFIObjectDecRef)(f);
  /* A name past 1 MiB may be refused (-1 and an error) or be absent
   * (false); a false leaves nothing raised behind it. */
  size_t len = ((size_t)1 << 20) + 1;
  char* text = malloc(len);
  cr_assert_not_null(text);
  memset(text, 'g', len);
  TVMFFIByteArray long_name = {text, len};
  TVMFFIAny big = core_none(), out = core_none();
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&long_name, &big), 0);
  free(text);
  if (host_call("ffi.FunctionRemoveGlobal", &big, 1, &out) == 0) {
    cr_expect(out.type_index == kTVMFFIBool && out.v_int64 == 0, "a name never set was removed");
    TVMFFIObjectHandle left = core_take_raised();
    cr_expect_null(left, "a false came with an error left raised");
    if (left != NULL && left != (TVMFFIObjectHandle)(uintptr_t)0x1) API(TVMFFIObjectDecRef)(left);
  } else {
    EXPECT_RAISED(.kind = "ValueError", .says = {"ffi.FunctionRemoveGlobal"});
  }
  core_release(&big);
}

/* GLB-004: ffi.GetGlobalFuncMetadata gives the metadata registered with
 * TVMFFIFunctionSetGlobalFromMethodInfo, "" for TVMFFIFunctionSetGlobal,
 * and a RuntimeError naming an unknown function. */
Test(host_globals, GLB_004_global_metadata) {
  TVMFFIObjectHandle f = noop_function();
  TVMFFIMethodInfo info;
  memset(&info, 0, sizeof info);
  info.name = (TVMFFIByteArray){"conformance.glb_004", 19};
  info.metadata = (TVMFFIByteArray){"{\"a\": 1}", 8};
  info.method.type_index = kTVMFFIFunction;
  info.method.v_obj = f;
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 1), 0);
  TVMFFIAny arg = core_c_str("conformance.glb_004"),
            meta = host_ok("ffi.GetGlobalFuncMetadata", &arg, 1);
  cr_expect(host_is_str(&meta, "{\"a\": 1}"), "metadata read back differently");
  core_release(&meta);
  TVMFFIByteArray plain = {"conformance.glb_004b", 20};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&plain, f, 1), 0);
  arg = core_c_str("conformance.glb_004b");
  meta = host_ok("ffi.GetGlobalFuncMetadata", &arg, 1);
  cr_expect(host_is_str(&meta, ""), "a function registered without metadata has some");
  core_release(&meta);
  arg = core_c_str("conformance.no_such_function");
  host_refused("ffi.GetGlobalFuncMetadata", &arg, 1, "RuntimeError",
               "conformance.no_such_function");
  API(TVMFFIObjectDecRef)(f);
}

/* GLB-005: ffi.String and ffi.Bytes hand back the text, owned. */
Test(host_globals, GLB_005_string_bytes) {
  TVMFFIAny arg = core_c_str("a string longer than seven"), out = host_ok("ffi.String", &arg, 1);
  cr_expect(host_is_str(&out, "a string longer than seven"));
  core_release(&out);
  TVMFFIByteArray raw = {"b\0ytes", 6};
  TVMFFIAny b = core_none();
  b.type_index = kTVMFFIByteArrayPtr;
  b.v_ptr = &raw;
  out = host_ok("ffi.Bytes", &b, 1);
  TVMFFIByteArray got = core_str_bytes(&out);
  cr_expect(out.type_index == kTVMFFIBytes || out.type_index == kTVMFFISmallBytes);
  cr_expect(got.size == 6 && memcmp(got.data, "b\0ytes", 6) == 0);
  core_release(&out);
  /* Text is not bytes, whatever its form; nor is any other value. */
  TVMFFIAny heap = host_str("a string long enough for the heap"), small = host_str("short");
  TVMFFIAny arr = host_ok("ffi.Array", NULL, 0);
  for (TVMFFIAny *v = (TVMFFIAny[]){heap, small, arr, core_int(5)}, *end = v + 4; v < end; ++v) {
    cr_expect_eq(host_call("ffi.Bytes", v, 1, &out), -1, "ffi.Bytes took type index %d",
                 v->type_index);
    EXPECT_RAISED(.kind = "TypeError");
  }
  for (TVMFFIAny *v = (TVMFFIAny[]){heap, small, arr}, *end = v + 3; v < end; ++v) core_release(v);
}

/* GLB-006: ffi.GetRegisteredTypeKeys lists every type key, built-in and
 * registered at run time. */
Test(host_globals, GLB_006_type_keys) {
  TVMFFIByteArray key = {"conformance.Glb006", 18};
  cr_assert_geq(API(TVMFFITypeGetOrAllocIndex)(&key, -1, 1, 0, 1, kTVMFFIObject), 0);
  TVMFFIAny keys = host_ok("ffi.GetRegisteredTypeKeys", NULL, 0);
  cr_assert_eq(keys.type_index, kTVMFFIArray);
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(keys.v_obj);
  static const char* const want[] = {"None", "int", "ffi.Object", "ffi.Map", "conformance.Glb006"};
  for (size_t w = 0; w < sizeof want / sizeof *want; ++w) {
    int found = 0;
    for (int64_t i = 0; i < cell->size && !found; ++i)
      found = host_is_str((const TVMFFIAny*)cell->data + i, want[w]);
    cr_expect(found, "the type keys lack %s", want[w]);
  }
  core_release(&keys);
}

static int echo_self(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)args;
  memset(out, 0, sizeof *out);
  out->type_index = kTVMFFIInt;
  out->v_int64 = (int64_t)(intptr_t)self + n;
  return 0;
}

static int glb_007_deleted;
static void count_delete(void* self) { glb_007_deleted += self != NULL; }

/* GLB-007: ffi.FunctionFromExternC makes a Function of a C callback from
 * raw pointers, as TVMFFIFunctionCreate does. */
Test(host_globals, GLB_007_function_from_extern_c) {
  TVMFFIAny args[3] = {core_none(), core_none(), core_none()};
  args[0].type_index = args[1].type_index = args[2].type_index = kTVMFFIOpaquePtr;
  args[0].v_ptr = (void*)(intptr_t)40;
  args[1].v_ptr = (void*)echo_self;
  args[2].v_ptr = (void*)count_delete;
  TVMFFIAny f = host_ok("ffi.FunctionFromExternC", args, 3), two[2] = {core_int(0), core_int(0)};
  cr_assert_eq(f.type_index, kTVMFFIFunction);
  TVMFFIAny out = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(f.v_obj, two, 2, &out), 0);
  cr_expect_eq(out.v_int64, 42, "the callback saw self %lld", (long long)out.v_int64 - 2);
  core_release(&f);
  cr_expect_eq(glb_007_deleted, 1, "the deleter ran %d times", glb_007_deleted);
}

/* FN-130: TVMFFIFunctionCall with a NULL function returns -1 with a
 * ValueError naming TVMFFIFunctionCall and func (in a child: an
 * implementation may crash instead). */
Test(host_globals, FN_130_null_function_refused) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    TVMFFIAny out;
    memset(&out, 0, sizeof out);
    int rc = API(TVMFFIFunctionCall)(NULL, NULL, 0, &out);
    ConfError e = conf_take_error();
    int named = strstr(e.message, "TVMFFIFunctionCall") && strstr(e.message, "func");
    _exit(rc == -1 && strcmp(e.kind, "ValueError") == 0 && named ? 0 : 1);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(!WIFSIGNALED(status), "TVMFFIFunctionCall(NULL) killed the process with signal %d",
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "TVMFFIFunctionCall(NULL) did not return -1 with a ValueError naming it and func");
}

/* ERR-081: a backtrace walked from a library names the library's exported
 * function that asked for it. */
Test(host_globals, ERR_081_backtrace_names_frames) {
  TVMFFIAny text = host_interop("backtrace_here", NULL, 0);
  TVMFFIByteArray b = core_str_bytes(&text);
  cr_expect(memmem(b.data, b.size, "__tvm_ffi_backtrace_here", 24) != NULL,
            "the backtrace does not name the exported caller:\n%.*s", (int)b.size, b.data);
  core_release(&text);
}

/* Whether `word` stands in `text` as a word of its own. */
static int has_word(const char* text, const char* word) {
  size_t n = strlen(word);
  for (const char* at = strstr(text, word); at; at = strstr(at + 1, word)) {
    char around[2] = {at == text ? ' ' : at[-1], at[n]};
    int inner = 0;
    for (int i = 0; i < 2; ++i)
      inner |= (around[i] >= 'a' && around[i] <= 'z') || (around[i] >= 'A' && around[i] <= 'Z') ||
               (around[i] >= '0' && around[i] <= '9') || around[i] == '_';
    if (!inner) return 1;
  }
  return 0;
}

/* Calling fn (named `label`) refuses argument #pos with a TypeError that
 * names the function, the position and `param`. */
static void expect_param(TVMFFIObjectHandle fn, const char* label, TVMFFIAny* args, int32_t n,
                         int pos, const char* param) {
  TVMFFIAny out = core_none();
  int rc = API(TVMFFIFunctionCall)(fn, args, n, &out);
  if (rc == 0) core_release(&out);
  ConfError e = conf_take_error();
  char where[8];
  snprintf(where, sizeof where, "#%d", pos);
  cr_expect_eq(rc, -1, "%s %s: returned %d", label, where, rc);
  cr_expect_str_eq(e.kind, "TypeError", "%s %s: %s: %s", label, where, e.kind, e.message);
  cr_expect(strstr(e.message, label) != NULL && strstr(e.message, where) != NULL,
            "%s: the message does not name the function and %s: %s", label, where, e.message);
  cr_expect(has_word(e.message, param), "%s: the message does not name %s (%s): %s", label, where,
            param, e.message);
}

static void expect_global_param(const char* name, TVMFFIAny* args, int32_t n, int pos,
                                const char* param) {
  TVMFFIObjectHandle fn = core_global(name, 1);
  expect_param(fn, name, args, n, pos, param);
  API(TVMFFIObjectDecRef)(fn);
}

/* GLB-010: a host global refusing an argument of the wrong type names its
 * parameter as well as its position. */
Test(host_globals, GLB_010_refusals_name_the_parameter) {
  TVMFFIAny one = core_int(1), text = core_c_str("x");
  expect_global_param("ffi.String", &one, 1, 0, "value");
  expect_global_param("ffi.Bytes", &one, 1, 0, "value");
  expect_global_param("ffi.FunctionRemoveGlobal", &one, 1, 0, "name");
  expect_global_param("ffi.GetGlobalFuncMetadata", &one, 1, 0, "name");
  expect_global_param("ffi.FromJSONGraphString", &one, 1, 0, "text");
  expect_global_param("ffi.ListSize", &one, 1, 0, "list");
  expect_global_param("ffi.MapSize", &one, 1, 0, "map");
  expect_global_param("ffi.DictSize", &one, 1, 0, "dict");
  expect_global_param("ffi._RegisterFFIInit", &text, 1, 0, "type_index");
  expect_global_param("ffi.MakeFieldGetter", &text, 1, 0, "field_type_index");
  TVMFFIAny setter[3] = {text, core_int(0), core_int(0)};
  expect_global_param("ffi.MakeFieldSetter", setter, 3, 0, "field_type_index");
  setter[0] = core_int(kTVMFFIInt), setter[1] = text;
  expect_global_param("ffi.MakeFieldSetter", setter, 3, 1, "type_converter");
  setter[1] = core_int(0), setter[2] = text;
  expect_global_param("ffi.MakeFieldSetter", setter, 3, 2, "f_convert");
  TVMFFIAny columns[2] = {text, core_int(32)};
  expect_global_param("ffi._PyClassRegisterTypeAttrColumns", columns, 2, 0, "type_index");
  columns[0] = core_int(kTVMFFIObject), columns[1] = text;
  expect_global_param("ffi._PyClassRegisterTypeAttrColumns", columns, 2, 1, "total_size");
  TVMFFIAny make[3] = {core_float(1.5)};
  expect_global_param("ffi.MakeObjectFromPackedArgs", make, 1, 0, "type");
  make[0] = core_c_str("ffi.Object"), make[1] = one, make[2] = one;
  expect_global_param("ffi.MakeObjectFromPackedArgs", make, 3, 1, "name");
  TVMFFIAny list = host_ok("ffi.List", &one, 1), at[3] = {list, text, core_int(1)};
  expect_global_param("ffi.ListGetItem", at, 2, 1, "index");
  expect_global_param("ffi.ListEraseRange", at, 3, 1, "start");
  at[1] = core_int(0), at[2] = text;
  expect_global_param("ffi.ListEraseRange", at, 3, 2, "stop");
  TVMFFIAny names = host_ok("ffi.FunctionListGlobalNamesFunctor", NULL, 0);
  expect_param(names.v_obj, "ffi.FunctionListGlobalNamesFunctor", &text, 1, 0, "index");
  TVMFFIAny kv[2] = {one, one}, map = host_ok("ffi.Map", kv, 2);
  TVMFFIAny iter = host_ok("ffi.MapForwardIterFunctor", &map, 1);
  expect_param(iter.v_obj, "ffi.MapForwardIterFunctor", &text, 1, 0, "command");
  for (TVMFFIAny *v = (TVMFFIAny[]){list, names, map, iter}, *end = v + 4; v < end; ++v)
    core_release(v);
}

/* GLB-012: every host global refuses one argument too many, and one too
 * few, with -1 and a TypeError, before it reads any. */
Test(host_globals, GLB_012_argument_counts) {
  static const struct {
    const char* name;
    int32_t arity;
  } fns[] = {{"ffi.GetInvalidObject", 0},
             {"ffi.GetKwargsObject", 0},
             {"ffi.String", 1},
             {"ffi.Bytes", 1},
             {"ffi.ReprPrint", 1},
             {"ffi.RecursiveHash", 1},
             {"ffi.RecursiveEq", 2},
             {"ffi.RecursiveLt", 2},
             {"ffi.RecursiveLe", 2},
             {"ffi.RecursiveGt", 2},
             {"ffi.RecursiveGe", 2},
             {"ffi.DeepCopy", 1},
             {"ffi.ToJSONGraphString", 2},
             {"ffi.FromJSONGraphString", 1},
             {"ffi.ListSize", 1},
             {"ffi.ListGetItem", 2},
             {"ffi.ListSetItem", 3},
             {"ffi.ListAppend", 2},
             {"ffi.ListInsert", 3},
             {"ffi.ListPop", 2},
             {"ffi.ListErase", 2},
             {"ffi.ListEraseRange", 3},
             {"ffi.ListReplaceSlice", 4},
             {"ffi.ListReverse", 1},
             {"ffi.ListClear", 1},
             {"ffi.ListReserve", 2},
             {"ffi.ListContains", 2},
             {"ffi.MapSize", 1},
             {"ffi.MapGetItem", 2},
             {"ffi.MapCount", 2},
             {"ffi.MapGetItemOrMissing", 2},
             {"ffi.MapForwardIterFunctor", 1},
             {"ffi.DictSize", 1},
             {"ffi.DictGetItem", 2},
             {"ffi.DictCount", 2},
             {"ffi.DictGetItemOrMissing", 2},
             {"ffi.DictForwardIterFunctor", 1},
             {"ffi.DictSetItem", 3},
             {"ffi.DictErase", 2},
             {"ffi.DictClear", 1},
             {"ffi.MakeFieldGetter", 1},
             {"ffi.MakeFieldSetter", 3},
             {"ffi._PyClassRegisterTypeAttrColumns", 2},
             {"ffi._RegisterFFIInit", 1}};
  TVMFFIAny args[8];
  for (int i = 0; i < 8; ++i) args[i] = core_int(0);
  for (size_t i = 0; i < sizeof fns / sizeof *fns; ++i) {
    for (int delta = -1; delta <= 1; delta += 2) {
      int32_t n = fns[i].arity + delta;
      if (n < 0) continue;
      TVMFFIAny out;
      int rc = host_call(fns[i].name, args, n, &out);
      if (rc == 0) core_release(&out);
      ConfError e = conf_take_error();
      cr_expect(rc == -1 && strcmp(e.kind, "TypeError") == 0,
                "%s with %d arguments: returned %d, raised %s: %s", fns[i].name, n, rc,
                e.kind[0] ? e.kind : "nothing", e.message);
    }
  }
}
