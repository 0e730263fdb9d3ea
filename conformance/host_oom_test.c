/* Clause GLB-011 of spec/host.md: the host-facing global functions when
 * memory runs out. Each call runs with its 1st, 2nd, ... allocation failing
 * (once, and every one from there on; see alloc_fail.h) and must return 0
 * with its whole result or -1 with a MemoryError, and work right after. */
#include <stdint.h>
#include <string.h>

#include "alloc_fail.h"
#include "host_support.h"

/* One call of a walk: 0 or -1, its results released. No cr_ calls while
 * armed: they allocate. */
typedef int (*HostStep)(void* ctx);

/* The last call that returned neither 0 nor -1: steps fold every failure
 * into -1, so a wrong return value must be caught where it is made. */
static struct {
  const char* name;
  int rc;
} wrong;

static int quiet(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIObjectHandle fn = NULL;
  TVMFFIByteArray key = {name, strlen(name)};
  if (API(TVMFFIFunctionGetGlobal)(&key, &fn) != 0 || fn == NULL) return -1;
  memset(out, 0, sizeof *out);
  int rc = API(TVMFFIFunctionCall)(fn, args, n, out);
  API(TVMFFIObjectDecRef)(fn);
  if (rc != 0 && rc != -1) wrong.name = name, wrong.rc = rc;
  return rc;
}

static void drop(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj != NULL)
    API(TVMFFIObjectDecRef)(v->v_obj);
  memset(v, 0, sizeof *v);
}

/* Calls global `ctx` with no arguments; a Function result is called with
 * -1 and 0 as well (the name listing's functor). */
static int step_no_args(void* ctx) {
  TVMFFIAny out, a = core_int(-1), r;
  if (quiet(ctx, NULL, 0, &out) != 0) return -1;
  int rc = 0;
  for (int i = 0; i < 2 && rc == 0 && out.type_index == kTVMFFIFunction; ++i, a = core_int(0)) {
    memset(&r, 0, sizeof r);
    rc = API(TVMFFIFunctionCall)(out.v_obj, &a, 1, &r);
    drop(&r);
  }
  drop(&out);
  return rc;
}

/* The name listing must be whole when it is made at all: as many names as
 * the listing of an unfailed call, made before the walk, counted. */
static int64_t names_whole;

static int step_names(void* ctx) {
  TVMFFIAny out, a = core_int(-1), r;
  if (quiet(ctx, NULL, 0, &out) != 0) return -1;
  memset(&r, 0, sizeof r);
  int rc = API(TVMFFIFunctionCall)(out.v_obj, &a, 1, &r);
  if (rc == 0 && (r.type_index != kTVMFFIInt || r.v_int64 != names_whole))
    wrong.name = "a listing short of names, or the count", wrong.rc = (int)r.v_int64;
  drop(&r);
  drop(&out);
  return rc;
}

static int step_map_of_ten(void* ctx) {
  (void)ctx;
  static const char* const keys[] = {"short", "a key long enough for the heap",
                                     "another key long enough for the heap", "tiny",
                                     "a third key long enough for the heap"};
  TVMFFIAny kv[20], m;
  for (int i = 0; i < 10; ++i) {
    kv[2 * i] = i % 2 ? core_c_str(keys[i / 2]) : core_int(i);
    kv[2 * i + 1] = core_int(i);
  }
  if (quiet("ffi.Map", kv, 20, &m) != 0) return -1;
  TVMFFIAny size;
  int rc = quiet("ffi.MapSize", &m, 1, &size);
  drop(&m);
  return rc != 0 ? -1 : size.v_int64 == 10 ? 0 : 2;
}

static int step_dict_growth(void* ctx) {
  (void)ctx;
  TVMFFIAny d, none;
  if (quiet("ffi.Dict", NULL, 0, &d) != 0) return -1;
  int rc = 0;
  for (int i = 0; i < 20 && rc == 0; ++i) {
    TVMFFIAny set[3] = {d, core_int(i), core_c_str("a value long enough for the heap")};
    rc = quiet("ffi.DictSetItem", set, 3, &none);
  }
  for (int i = 0; i < 20 && rc == 0; i += 3) {
    TVMFFIAny erase[2] = {d, core_int(i)};
    rc = quiet("ffi.DictErase", erase, 2, &none);
  }
  drop(&d);
  return rc;
}

static int step_list_changes(void* ctx) {
  (void)ctx;
  TVMFFIAny l, none;
  if (quiet("ffi.List", NULL, 0, &l) != 0) return -1;
  int rc = 0;
  for (int i = 0; i < 12 && rc == 0; ++i) {
    TVMFFIAny ins[3] = {l, core_int(0), core_c_str("an element long enough for the heap")};
    rc = quiet("ffi.ListInsert", ins, 3, &none);
  }
  TVMFFIAny rep[4] = {l, core_int(1), core_int(3), l};
  if (rc == 0) rc = quiet("ffi.ListReplaceSlice", rep, 4, &none);
  drop(&l);
  return rc;
}

/* [{"a key long enough for the heap": (1, 2), 3: "x"}, 5, "a long string value"] */
static int make_nested(TVMFFIAny* out) {
  TVMFFIAny pair[2] = {core_int(1), core_int(2)}, arr, map;
  if (quiet("ffi.Array", pair, 2, &arr) != 0) return -1;
  TVMFFIAny kv[4] = {core_c_str("a key long enough for the heap"), arr, core_int(3),
                     core_c_str("x")};
  int rc = quiet("ffi.Map", kv, 4, &map);
  drop(&arr);
  if (rc != 0) return -1;
  TVMFFIAny items[3] = {map, core_int(5), core_c_str("a long string value")};
  rc = quiet("ffi.List", items, 3, out);
  drop(&map);
  return rc;
}

/* Global `ctx` on two equal nested values (RecursiveEq, RecursiveLe), or
 * on one (with None after it for ToJSONGraphString). */
static int step_on_nested(void* ctx) {
  const char* fn = ctx;
  TVMFFIAny a, b, out;
  if (make_nested(&a) != 0) return -1;
  if (make_nested(&b) != 0) {
    drop(&a);
    return -1;
  }
  int two = strcmp(fn, "ffi.RecursiveEq") == 0 || strcmp(fn, "ffi.RecursiveLe") == 0;
  TVMFFIAny args[2] = {a, b};
  if (strcmp(fn, "ffi.ToJSONGraphString") == 0) args[1] = core_none(), two = 1;
  int rc = quiet(fn, args, two ? 2 : 1, &out);
  if (rc == 0 && out.type_index == kTVMFFIBool && out.v_int64 != 1) rc = 2;
  drop(&out);
  drop(&a);
  drop(&b);
  return rc;
}

static int step_read_graph(void* ctx) {
  (void)ctx;
  TVMFFIAny
      text = core_c_str(
          "{\"root_index\":3,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"a long string "
          "\\u00e9\"},{\"type\":\"ffi.Bytes\",\"data\":\"eHk=\"},{\"type\":\"ffi.Map\",\"data\":"
          "[0,1]},{\"type\":\"ffi.List\",\"data\":[0,1,2]}]}"),
      out;
  if (quiet("ffi.FromJSONGraphString", &text, 1, &out) != 0) return -1;
  int rc = out.type_index == kTVMFFIList ? 0 : 2;
  drop(&out);
  return rc;
}

/* ReprPrint of [(1, 2), (1, 2)], one array held twice: the second is
 * printed from what the first left, so that must be whole or refused. */
static int step_repr_shared(void* ctx) {
  (void)ctx;
  static const char want[] = "[(1, 2), (1, 2)]";
  TVMFFIAny pair[2] = {core_int(1), core_int(2)}, arr, list, out;
  if (quiet("ffi.Array", pair, 2, &arr) != 0) return -1;
  TVMFFIAny items[2] = {arr, arr};
  int rc = quiet("ffi.List", items, 2, &list);
  drop(&arr);
  if (rc != 0) return -1;
  rc = quiet("ffi.ReprPrint", &list, 1, &out);
  drop(&list);
  if (rc != 0) return -1;
  TVMFFIByteArray text = core_str_bytes(&out);
  if (text.size != sizeof want - 1 || memcmp(text.data, want, text.size) != 0)
    wrong.name = "ReprPrint of an array held twice: text that is not [(1, 2), (1, 2)], length",
    wrong.rc = (int)text.size;
  drop(&out);
  return 0;
}

/* ffi.String of a C string, or ffi.Bytes of a byte array, heap-sized. */
static int step_string(void* ctx) {
  static const TVMFFIByteArray bytes = {"bytes long enough to live on the heap", 37};
  TVMFFIAny text = core_c_str(bytes.data), out;
  if (strcmp(ctx, "ffi.Bytes") == 0)
    text.type_index = kTVMFFIByteArrayPtr, text.v_ptr = (void*)&bytes;
  if (quiet(ctx, &text, 1, &out) != 0) return -1;
  drop(&out);
  return 0;
}

/* One walk of `step` over its allocations, failing one and then every one
 * from there on; with `count`, a failed step must also give back every
 * block it allocated (counted over the whole process). Returns the points
 * where an allocation failed. */
static long walk_once(const char* what, HostStep step, void* ctx, int count) {
  long points = 0;
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      wrong.name = NULL;
      if (count) conf_alloc_count_start();
      conf_alloc_arm(&w);
      int rc = step(ctx);
      conf_alloc_disarm(&w);
      ConfError e = conf_take_error();
      long kept = count ? conf_alloc_count_stop() : 0;
      const char* on = sticky ? " and on" : "";
      cr_assert(wrong.name == NULL, "%s, allocation %ld failed%s: %s returned %d", what, w.n, on,
                wrong.name, wrong.rc);
      cr_assert(rc == 0 || rc == -1, "%s, allocation %ld failed%s: a wrong result (%d)", what, w.n,
                on, rc);
      cr_assert(rc == 0 || strcmp(e.kind, "MemoryError") == 0,
                "%s, allocation %ld failed%s: -1 with %s (%s), not a MemoryError", what, w.n, on,
                e.kind[0] ? e.kind : "nothing raised", e.message);
      cr_assert_eq(kept, 0, "%s, allocation %ld failed%s: %ld blocks never given back", what, w.n,
                   on, kept);
    }
    points += w.points;
  }
  return points;
}

/* Walks `step` from a cold start (a first call's lazy set-up fails too),
 * then, once a call has filled any cache, again counting what each failed
 * call leaves behind; then it must work with memory to spare. */
static void walk(const char* what, HostStep step, void* ctx) {
  long points = walk_once(what, step, ctx, 0);
  for (int round = 0; round < 2; ++round) {
    int rc = step(ctx);
    ConfError e = conf_take_error();
    cr_assert_eq(rc, 0, "%s fails after the walk: %s: %s", what, e.kind, e.message);
    if (round == 0) walk_once(what, step, ctx, 1);
  }
  conf_alloc_done(points, what);
}

/* GLB-011: the markers and listings. */
Test(host_oom, GLB_011_markers_and_listings) {
  conf_alloc_require();
  static const char* const fns[] = {"ffi.GetInvalidObject", "ffi.GetKwargsObject",
                                    "ffi.FunctionListGlobalNamesFunctor",
                                    "ffi.GetRegisteredTypeKeys"};
  for (size_t i = 0; i < sizeof fns / sizeof *fns; ++i) walk(fns[i], step_no_args, (void*)fns[i]);
  TVMFFIAny minus_one = core_int(-1);
  TVMFFIAny names = host_ok("ffi.FunctionListGlobalNamesFunctor", NULL, 0);
  TVMFFIAny count = core_none();
  conf_expect_ok(API(TVMFFIFunctionCall)(names.v_obj, &minus_one, 1, &count), "names(-1)");
  names_whole = host_int_of(count, "the count of names");
  core_release(&names);
  walk("ffi.FunctionListGlobalNamesFunctor, counted", step_names,
       "ffi.FunctionListGlobalNamesFunctor");
  walk("ffi.String", step_string, "ffi.String");
  walk("ffi.Bytes", step_string, "ffi.Bytes");
}

/* GLB-011: maps, dicts and lists made and changed. */
Test(host_oom, GLB_011_containers) {
  conf_alloc_require();
  walk("ffi.Map of ten entries", step_map_of_ten, NULL);
  walk("ffi.Dict grown and erased", step_dict_growth, NULL);
  walk("ffi.List grown and spliced", step_list_changes, NULL);
}

/* GLB-011: the recursive walks over a nested value. */
Test(host_oom, GLB_011_recursive_walks) {
  conf_alloc_require();
  static const char* const fns[] = {"ffi.RecursiveEq", "ffi.RecursiveLe", "ffi.RecursiveHash",
                                    "ffi.ReprPrint",   "ffi.DeepCopy",    "ffi.ToJSONGraphString"};
  for (size_t i = 0; i < sizeof fns / sizeof *fns; ++i) {
    API(TVMFFIObjectDecRef)(core_global(fns[i], 1)); /* SKIP where it is missing */
    walk(fns[i], step_on_nested, (void*)fns[i]);
  }
  walk("ffi.FromJSONGraphString", step_read_graph, NULL);
  walk("ffi.ReprPrint of an array held twice", step_repr_shared, NULL);
}
