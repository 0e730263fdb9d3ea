/* Every allocation of the host-facing global functions failed in turn (and
 * every one from some point on): maps, dicts and lists built and changed,
 * the recursive comparison, hash, printing and copying, the name and type
 * listings, objects built from reflection. Each call returns 0 with the
 * right result or -1 with a MemoryError, and works right after; ASan's
 * leak check (--config=asan) sees that nothing is lost on the way. */
#include <criterion/criterion.h>
#include <string.h>

#include "any.h"
#include "fault_test_support.h"
#include "registry.h"
#include "unit_test_support.h"

static TVMFFIObject* global(const char* name) {
  TVMFFIObject* fn = NULL;
  cr_assert_eq(tffi_global_get(name, strlen(name), &fn), 0);
  cr_assert_not_null(fn, "%s is not registered", name);
  return fn;
}

static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIObject* fn = global(name);
  *out = tffi_any_none();
  int rc = TVMFFIFunctionCall(fn, args, n, out);
  tffi_decref(fn);
  return rc;
}

static TVMFFIAny num(int64_t v) {
  TVMFFIAny a = tffi_any_none();
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

static TVMFFIAny text_of(const char* s);

static TVMFFIAny text(const char* s) { return text_of(s); }

static TVMFFIAny text_of(const char* s) {
  TVMFFIAny a = tffi_any_none();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

/* A nested value: [{"key-long-enough-to-be-heap": (1, 2), 3: "x"}, 5, ...]
 * made fresh by each call, or -1. */
static int make_nested(TVMFFIAny* out) {
  TVMFFIAny pair[2] = {num(1), num(2)}, arr, map;
  if (call("ffi.Array", pair, 2, &arr) != 0) return -1;
  TVMFFIAny kv[4] = {text("key-long-enough-to-be-heap"), arr, num(3), text("x")};
  int rc = call("ffi.Map", kv, 4, &map);
  tffi_any_release(&arr);
  if (rc != 0) return -1;
  TVMFFIAny items[7] = {map, num(5), num(6), num(7), num(8), num(9), text("another long string")};
  rc = call("ffi.List", items, 7, out);
  tffi_any_release(&map);
  return rc;
}

static int op_map_of_ten(void* ctx) {
  (void)ctx;
  TVMFFIAny kv[20], m;
  for (int i = 0; i < 10; ++i)
    kv[2 * i] = i % 2 ? text("a longer string key") : num(i), kv[2 * i + 1] = num(i);
  kv[1 * 2 + 0] = text("short");
  if (call("ffi.Map", kv, 20, &m) != 0) return -1;
  tffi_any_release(&m);
  return 0;
}

static int op_dict_growth(void* ctx) {
  (void)ctx;
  TVMFFIAny d;
  if (call("ffi.Dict", NULL, 0, &d) != 0) return -1;
  int rc = 0;
  for (int i = 0; i < 20 && rc == 0; ++i) {
    TVMFFIAny set[3] = {d, num(i), text("a value long enough for the heap")}, none;
    rc = call("ffi.DictSetItem", set, 3, &none);
  }
  for (int i = 0; i < 20 && rc == 0; i += 3) {
    TVMFFIAny erase[2] = {d, num(i)}, none;
    rc = call("ffi.DictErase", erase, 2, &none);
  }
  tffi_any_release(&d);
  return rc;
}

static int op_list_ops(void* ctx) {
  (void)ctx;
  TVMFFIAny l, none;
  if (call("ffi.List", NULL, 0, &l) != 0) return -1;
  int rc = 0;
  for (int i = 0; i < 12 && rc == 0; ++i) {
    TVMFFIAny ins[3] = {l, num(0), text("an element long enough")};
    rc = call("ffi.ListInsert", ins, 3, &none);
  }
  TVMFFIAny rep[4] = {l, num(1), num(3), l};
  if (rc == 0) rc = call("ffi.ListReplaceSlice", rep, 4, &none);
  tffi_any_release(&l);
  return rc;
}

/* The nested value through one function of one argument (two: twice). */
static int op_on_nested(void* ctx) {
  const char* fn = ctx;
  TVMFFIAny a, b, out;
  if (make_nested(&a) != 0) return -1;
  if (make_nested(&b) != 0) {
    tffi_any_release(&a);
    return -1;
  }
  TVMFFIAny args[2] = {a, b};
  int two = strcmp(fn, "ffi.RecursiveEq") == 0 || strcmp(fn, "ffi.RecursiveLe") == 0;
  if (strcmp(fn, "ffi.ToJSONGraphString") == 0) args[1] = tffi_any_none(), two = 1;
  int rc = call(fn, args, two ? 2 : 1, &out);
  if (rc == 0 && two && out.type_index == kTVMFFIBool)
    cr_assert_eq(out.v_int64, 1, "%s of equal values is false", fn);
  tffi_any_release(&out);
  tffi_any_release(&a);
  tffi_any_release(&b);
  return rc;
}

static int op_no_args(void* ctx) {
  TVMFFIAny out;
  if (call(ctx, NULL, 0, &out) != 0) return -1;
  tffi_any_release(&out);
  return 0;
}

/* EnumState's __ffi_init__ (an object, a list and two dicts), then that
 * state through ffi.MakeObjectFromPackedArgs again, its fields named. */
static int op_enum_state(void* ctx) {
  (void)ctx;
  int32_t index;
  TVMFFIByteArray key = {"ffi.EnumState", 13};
  if (TVMFFITypeKeyToIndex(&key, &index) != 0) return -1;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  if (info == NULL) return -1;
  cr_assert_eq(info->num_methods, 1);
  TVMFFIAny state = tffi_any_none(), out;
  if (TVMFFIFunctionCall(info->methods[0].method.v_obj, NULL, 0, &state) != 0) return -1;
  TVMFFIAny fields[3];
  for (int i = 0; i < 3; ++i)
    info->fields[i].getter((char*)state.v_obj + info->fields[i].offset, &fields[i]);
  TVMFFIAny args[7] = {
      text("ffi.EnumState"), text("entries"), fields[0], text("indexes"), fields[1],
      text("attrs"),         fields[2]};
  int rc = call("ffi.MakeObjectFromPackedArgs", args, 7, &out);
  if (rc == 0) tffi_any_release(&out);
  for (int i = 0; i < 3; ++i) tffi_any_release(&fields[i]);
  tffi_any_release(&state);
  return rc;
}

Test(fault_host, containers) {
  fault_walk_both("ffi.Map of ten", op_map_of_ten, NULL);
  fault_walk_both("ffi.Dict grown and erased", op_dict_growth, NULL);
  fault_walk_both("ffi.List changed", op_list_ops, NULL);
}

Test(fault_host, recursive_walks) {
  static const char* const fns[] = {"ffi.RecursiveEq", "ffi.RecursiveLe", "ffi.RecursiveHash",
                                    "ffi.ReprPrint",   "ffi.DeepCopy",    "ffi.ToJSONGraphString"};
  for (size_t i = 0; i < sizeof fns / sizeof *fns; ++i)
    fault_walk_both(fns[i], op_on_nested, (void*)fns[i]);
}

static int op_read_graph(void* ctx) {
  TVMFFIAny text = text_of(ctx), out;
  if (call("ffi.FromJSONGraphString", &text, 1, &out) != 0) return -1;
  tffi_any_release(&out);
  return 0;
}

Test(fault_host, json_graph_read) {
  fault_walk_both("ffi.FromJSONGraphString", op_read_graph,
                  "{\"root_index\":4,\"nodes\":[{\"type\":\"ffi.BigInt\",\"data\":"
                  "\"-1180591620717411303424\"},{\"type\":\"ffi.String\",\"data\":\"a long "
                  "string \\u00e9\"},{\"type\":\"ffi.Bytes\",\"data\":\"eHk=\"},{\"type\":"
                  "\"ffi.Map\",\"data\":[1,2]},{\"type\":\"ffi.List\",\"data\":[0,1,2,3]}]}");
}

Test(fault_host, listings_and_objects) {
  fault_walk_both("ffi.FunctionListGlobalNamesFunctor", op_no_args,
                  "ffi.FunctionListGlobalNamesFunctor");
  fault_walk_both("ffi.GetRegisteredTypeKeys", op_no_args, "ffi.GetRegisteredTypeKeys");
  fault_walk_both("ffi.MakeObjectFromPackedArgs(ffi.EnumState)", op_enum_state, NULL);
}
