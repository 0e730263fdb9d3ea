/* Clauses REC-001 to REC-019 of spec/host.md: the recursive operations on
 * values that upstream's Python package uses for ==, <, hash(), repr() and
 * copy.deepcopy() of FFI containers and classes: "ffi.RecursiveEq",
 * "...Lt/Le/Gt/Ge", "ffi.RecursiveHash", "ffi.ReprPrint", "ffi.DeepCopy".
 * Reflected objects come from upstream's own libtvm_ffi_testing.so, loaded
 * on the implementation under test. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fail.h"
#include "host_support.h"
#include "tensor_support.h"

static int truth(const char* fn, TVMFFIAny a, TVMFFIAny b) {
  TVMFFIAny args[2] = {a, b}, r = host_ok(fn, args, 2);
  cr_assert_eq(r.type_index, kTVMFFIBool, "%s returned type index %d", fn, r.type_index);
  return (int)r.v_int64;
}

static int eq(TVMFFIAny a, TVMFFIAny b) { return truth("ffi.RecursiveEq", a, b); }

static uint64_t hash_of(TVMFFIAny v) {
  return (uint64_t)host_int_of(host_ok("ffi.RecursiveHash", &v, 1), "hash");
}

static TVMFFIAny arr(TVMFFIAny* items, int n) { return host_ok("ffi.Array", items, n); }
static TVMFFIAny lst(TVMFFIAny* items, int n) { return host_ok("ffi.List", items, n); }

static TVMFFIAny ints(const char* ctor, int64_t a, int64_t b, int n) {
  TVMFFIAny items[2] = {core_int(a), core_int(b)};
  return host_ok(ctor, items, n);
}

/* Upstream's StableHashCombine, for the values the clauses fix. */
static uint64_t combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ull + (key << 6) + (key >> 2));
}

/* A testing.TestIntPair(a, b) of upstream's testing library. */
static TVMFFIAny int_pair(int64_t a, int64_t b) {
  static int loaded;
  if (!loaded) {
    loaded = dlopen(conf_runfile("../tvm_ffi_upstream/lib/libtvm_ffi_testing.so"),
                    RTLD_NOW | RTLD_LOCAL) != NULL;
    cr_assert(loaded, "cannot load libtvm_ffi_testing.so: %s", dlerror());
  }
  int32_t index;
  TVMFFIByteArray key = {"testing.TestIntPair", 19};
  cr_assert_eq(API(TVMFFITypeKeyToIndex)(&key, &index), 0);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(index);
  const TVMFFIAny* init = NULL;
  for (int32_t i = 0; i < info->num_methods; ++i)
    if (info->methods[i].name.size == 12 &&
        memcmp(info->methods[i].name.data, "__ffi_init__", 12) == 0)
      init = &info->methods[i].method;
  cr_assert_not_null(init, "testing.TestIntPair has no __ffi_init__");
  TVMFFIAny args[2] = {core_int(a), core_int(b)}, out = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(init->v_obj, args, 2, &out), 0);
  return out;
}

/* A value of kind type_index whose payload is the byte array (bytes are
 * copied into an owned object by the call that receives it). */
static TVMFFIAny byte_ptr(const TVMFFIByteArray* b) {
  TVMFFIAny v = core_none();
  v.type_index = kTVMFFIByteArrayPtr;
  v.v_ptr = (void*)b;
  return v;
}

/* A big int from its little-endian two's complement 64-bit words. */
static TVMFFIAny big(const uint64_t* words, size_t n) {
  TVMFFIByteArray bytes = {(const char*)words, n * 8};
  TVMFFIAny v;
  cr_assert_eq(API(TVMFFIBigIntFromByteArray)(&bytes, &v), 0);
  return v;
}

/* REC-001: equality of values: kinds must match (1 is not true, not 1.0),
 * text and bytes compare by content in any form, NaN equals NaN. */
Test(recursive, REC_001_values_equal) {
  TVMFFIAny s1 = host_str("same text, long enough"), s2 = core_c_str("same text, long enough");
  cr_expect(eq(core_int(3), core_int(3)));
  cr_expect(!eq(core_int(3), core_int(4)));
  cr_expect(!eq(core_int(1), core_bool(1)), "1 == true");
  cr_expect(!eq(core_int(1), core_float(1.0)), "1 == 1.0");
  cr_expect(eq(core_float(__builtin_nan("")), core_float(__builtin_nan(""))), "NaN != NaN");
  cr_expect(eq(s1, s2));
  /* Past the small form's seven bytes: heap bytes are text, not an object
   * without fields (which would equal any other of its type). */
  TVMFFIByteArray b1 = {"sixteen bytes, 1", 16}, b1_again = {"sixteen bytes, 1", 16},
                  b2 = {"sixteen bytes, 2", 16};
  cr_expect(eq(byte_ptr(&b1), byte_ptr(&b1_again)), "equal heap bytes are unequal");
  cr_expect(!eq(byte_ptr(&b1), byte_ptr(&b2)), "heap bytes that differ in the last byte are equal");
  cr_expect(eq(core_none(), core_none()));
  cr_expect(!eq(core_none(), core_int(0)));
  core_release(&s1);
}

/* REC-001, REC-003: values of different kinds are unequal and cannot be
 * ordered whichever comes first (an int and a big int can be). */
Test(recursive, REC_001_kinds_both_ways) {
  TVMFFIAny values[] = {core_int(1), core_bool(1), core_float(1.0), core_c_str("1")};
  TVMFFIAny shape = host_ok("ffi.Shape", values, 1), list = lst(values, 1);
  TVMFFIAny all[6] = {values[0], values[1], values[2], values[3], shape, list};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      if (i == j) continue;
      cr_expect(!eq(all[i], all[j]), "values %d and %d are equal", i, j);
      TVMFFIAny args[2] = {all[i], all[j]};
      host_refused("ffi.RecursiveLt", args, 2, "TypeError", "different types");
    }
  uint64_t w[2] = {0, 1};
  TVMFFIAny b = big(w, 2);
  cr_expect(truth("ffi.RecursiveGt", b, core_int(1)));
  cr_expect(truth("ffi.RecursiveLt", core_int(1), b));
  core_release(&b);
  core_release(&shape);
  core_release(&list);
}

/* REC-002: containers compare element by element (sequences in order,
 * maps by the values of equal keys, whatever their order); an array is
 * never equal to a list. */
Test(recursive, REC_002_containers_equal) {
  TVMFFIAny a1 = ints("ffi.Array", 1, 2, 2), a2 = ints("ffi.Array", 1, 2, 2);
  TVMFFIAny a3 = ints("ffi.Array", 1, 3, 2), l1 = ints("ffi.List", 1, 2, 2);
  TVMFFIAny short1 = ints("ffi.Array", 1, 2, 1);
  cr_expect(eq(a1, a2));
  cr_expect(!eq(a1, a3));
  cr_expect(!eq(a1, l1), "an array equals a list");
  cr_expect(!eq(a1, short1));
  TVMFFIAny kv1[4] = {core_c_str("a"), a1, core_int(2), core_int(3)};
  TVMFFIAny kv2[4] = {core_int(2), core_int(3), core_c_str("a"), a2};
  TVMFFIAny m1 = host_ok("ffi.Map", kv1, 4), m2 = host_ok("ffi.Map", kv2, 4);
  cr_expect(eq(m1, m2), "maps of equal entries in another order differ");
  kv2[1] = core_int(4);
  TVMFFIAny m3 = host_ok("ffi.Map", kv2, 4);
  cr_expect(!eq(m1, m3));
  kv2[0] = core_int(5); /* the same size, a key m1 does not have */
  TVMFFIAny m4 = host_ok("ffi.Map", kv2, 4);
  cr_expect(!eq(m1, m4), "maps of different keys are equal");
  TVMFFIAny nested1 = arr(&m1, 1), nested2 = arr(&m2, 1);
  cr_expect(eq(nested1, nested2));
  for (TVMFFIAny *v = (TVMFFIAny[]){a1, a2, a3, l1, short1, m1, m2, m3, m4, nested1, nested2},
                 *end = v + 11;
       v < end; ++v)
    core_release(v);
}

/* REC-003: ordering: numbers by value, text by bytes, sequences
 * lexicographically with the shorter first; values of different kinds,
 * NaN and unequal maps cannot be ordered (TypeError). */
Test(recursive, REC_003_ordering) {
  cr_expect(truth("ffi.RecursiveLt", core_int(1), core_int(2)));
  cr_expect(!truth("ffi.RecursiveLt", core_int(2), core_int(2)));
  cr_expect(truth("ffi.RecursiveLe", core_int(2), core_int(2)));
  cr_expect(truth("ffi.RecursiveGt", core_c_str("b"), core_c_str("abc")));
  cr_expect(truth("ffi.RecursiveGe", core_float(2.5), core_float(2.5)));
  TVMFFIAny a12 = ints("ffi.Array", 1, 2, 2), a1 = ints("ffi.Array", 1, 0, 1);
  TVMFFIAny a13 = ints("ffi.Array", 1, 3, 2);
  cr_expect(truth("ffi.RecursiveLt", a1, a12), "a prefix is not less");
  cr_expect(truth("ffi.RecursiveLt", a12, a13));
  TVMFFIAny args[2] = {core_int(1), core_c_str("x")};
  host_refused("ffi.RecursiveLt", args, 2, "TypeError", "different types");
  args[0] = args[1] = core_float(__builtin_nan(""));
  host_refused("ffi.RecursiveLt", args, 2, "TypeError", "NaN");
  TVMFFIAny kv1[2] = {core_c_str("k"), core_int(1)}, kv2[2] = {core_c_str("k"), core_int(2)};
  TVMFFIAny m1 = host_ok("ffi.Map", kv1, 2), m2 = host_ok("ffi.Map", kv2, 2);
  args[0] = m1;
  args[1] = m2;
  host_refused("ffi.RecursiveLt", args, 2, "TypeError", "Map/Dict");
  cr_expect(truth("ffi.RecursiveLe", m1, m1));
  for (TVMFFIAny *v = (TVMFFIAny[]){a12, a1, a13, m1, m2}, *end = v + 5; v < end; ++v)
    core_release(v);
}

/* Expects the five comparisons of (a, b) and of (b, a) to agree with
 * a <=> b being `sign`. */
static void expect_order(TVMFFIAny a, TVMFFIAny b, int sign, const char* what) {
  static const char* const fns[] = {"ffi.RecursiveEq", "ffi.RecursiveLt", "ffi.RecursiveLe",
                                    "ffi.RecursiveGt", "ffi.RecursiveGe"};
  for (int swap = 0; swap < 2; ++swap) {
    int s = swap ? -sign : sign;
    int want[5] = {s == 0, s<0, s <= 0, s> 0, s >= 0};
    for (int f = 0; f < 5; ++f) {
      int got = swap ? truth(fns[f], b, a) : truth(fns[f], a, b);
      cr_expect_eq(got, want[f], "%s%s: %s gave %d", what, swap ? " (swapped)" : "", fns[f], got);
    }
  }
}

/* REC-003: the order of every kind: None first, false before true, ints,
 * floats, dtypes (code, bits, lanes) and devices (type, id) field by
 * field, text and bytes by bytes, ints and big ints by value, shapes,
 * arrays and lists lexicographically, reflected objects field by field. */
Test(recursive, REC_003_ordering_of_every_kind) {
  TVMFFIAny dt[4], dev[3];
  DLDataType dts[4] = {{kDLInt, 32, 1}, {kDLFloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 32, 4}};
  DLDevice devs[3] = {{kDLCPU, 5}, {kDLCUDA, 0}, {kDLCUDA, 1}};
  for (int i = 0; i < 4; ++i)
    dt[i] = core_none(), dt[i].type_index = kTVMFFIDataType, dt[i].v_dtype = dts[i];
  for (int i = 0; i < 3; ++i)
    dev[i] = core_none(), dev[i].type_index = kTVMFFIDevice, dev[i].v_device = devs[i];
  expect_order(core_none(), core_int(1), -1, "None, 1");
  expect_order(core_none(), core_none(), 0, "None, None");
  expect_order(core_bool(0), core_bool(1), -1, "false, true");
  expect_order(core_int(-5), core_int(3), -1, "-5, 3");
  expect_order(core_int(7), core_int(7), 0, "7, 7");
  expect_order(core_float(-1.5), core_float(0.5), -1, "-1.5, 0.5");
  expect_order(dt[0], dt[1], -1, "int32, float16");
  expect_order(dt[1], dt[2], -1, "float16, float32");
  expect_order(dt[2], dt[3], -1, "float32, float32x4");
  expect_order(dt[3], dt[3], 0, "float32x4, float32x4");
  expect_order(dev[0], dev[1], -1, "cpu:5, cuda:0");
  expect_order(dev[1], dev[2], -1, "cuda:0, cuda:1");
  expect_order(dev[2], dev[2], 0, "cuda:1, cuda:1");
  expect_order(core_c_str("abc"), core_c_str("abd"), -1, "abc, abd");
  expect_order(core_c_str("ab"), core_c_str("abc"), -1, "ab, abc");
  TVMFFIAny heap = host_str("a heap string of some length");
  expect_order(heap, core_c_str("a heap string of some length"), 0, "heap, C string");
  expect_order(heap, core_c_str("a heap string of some lengtH"), 1, "heap, C string less");
  TVMFFIByteArray ba = {"a\0b", 3}, bb = {"a\0c", 3}, bc = {"a", 1};
  expect_order(byte_ptr(&ba), byte_ptr(&bb), -1, "b\"a\\0b\", b\"a\\0c\"");
  expect_order(byte_ptr(&bc), byte_ptr(&ba), -1, "b\"a\", b\"a\\0b\"");
  uint64_t w[][3] = {{0, 1, 0},         {5, 1, 0},     {6, 1, 0}, {0, 0, 1},
                     {0, ~0ull, ~0ull}, {0, 0, ~0ull}, {0, 0, 0}};
  TVMFFIAny big64 = big(w[0], 2), big64p5 = big(w[1], 2), big64p6 = big(w[2], 2);
  TVMFFIAny big128 = big(w[3], 3), neg64 = big(w[4], 3), neg128 = big(w[5], 3);
  TVMFFIAny big64_again = big(w[0], 2);
  expect_order(core_int(5), big64, -1, "5, 2^64");
  expect_order(neg64, core_int(5), -1, "-2^64, 5");
  expect_order(core_int(-1), big64, -1, "-1, 2^64"); /* the negative one shorter */
  expect_order(big64p5, big64p6, -1, "2^64 + 5, 2^64 + 6");
  expect_order(big64, big128, -1, "2^64, 2^128");
  expect_order(neg128, neg64, -1, "-2^128, -2^64");
  expect_order(neg64, big64, -1, "-2^64, 2^64");
  expect_order(big64, big64_again, 0, "2^64, 2^64");
  TVMFFIAny e23[2] = {core_int(2), core_int(3)}, e24[2] = {core_int(2), core_int(4)};
  TVMFFIAny s23 = host_ok("ffi.Shape", e23, 2), s24 = host_ok("ffi.Shape", e24, 2);
  TVMFFIAny s2 = host_ok("ffi.Shape", e23, 1), s23b = host_ok("ffi.Shape", e23, 2);
  expect_order(s23, s24, -1, "Shape(2, 3), Shape(2, 4)");
  expect_order(s2, s23, -1, "Shape(2), Shape(2, 3)");
  expect_order(s23, s23b, 0, "two Shape(2, 3)");
  TVMFFIAny l12 = ints("ffi.List", 1, 2, 2), l13 = ints("ffi.List", 1, 3, 2),
            l1 = ints("ffi.List", 1, 0, 1);
  TVMFFIAny l12b = ints("ffi.List", 1, 2, 2);
  expect_order(l12, l13, -1, "[1, 2], [1, 3]");
  expect_order(l1, l12, -1, "[1], [1, 2]");
  expect_order(l12, l12b, 0, "two [1, 2]");
  TVMFFIAny p12 = int_pair(1, 2), p21 = int_pair(2, 1), p13 = int_pair(1, 3);
  expect_order(p12, p21, -1, "pair(1, 2), pair(2, 1)");
  expect_order(p12, p13, -1, "pair(1, 2), pair(1, 3)");
  for (TVMFFIAny *
           v = (TVMFFIAny[]){heap, big64, big64p5, big64p6, big128, neg64, neg128, big64_again, s23,
                             s24, s2, s23b, l12, l13, l1, l12b, p12, p21, p13},
          *end = v + 19;
       v < end; ++v)
    core_release(v);
}

/* REC-003: opaque pointers are equal by address and cannot be ordered. */
Test(recursive, REC_003_opaque_pointers) {
  int x, y;
  TVMFFIAny p = core_none(), q = core_none();
  p.type_index = q.type_index = kTVMFFIOpaquePtr;
  p.v_ptr = &x;
  q.v_ptr = &y;
  cr_expect(eq(p, p));
  cr_expect(!eq(p, q));
  cr_expect(!truth("ffi.RecursiveLt", p, p));
  cr_expect(truth("ffi.RecursiveLe", p, p));
  TVMFFIAny args[2] = {p, q};
  host_refused("ffi.RecursiveLt", args, 2, "TypeError", "Cannot order values of type void*");
}

/* REC-004: cycles: a list that holds itself equals another that does, and
 * ordering such lists is a ValueError. */
Test(recursive, REC_004_cycles) {
  TVMFFIAny l1 = lst(NULL, 0), l2 = lst(NULL, 0);
  TVMFFIAny a1[2] = {l1, l1}, a2[2] = {l2, l2}, r;
  r = host_ok("ffi.ListAppend", a1, 2);
  r = host_ok("ffi.ListAppend", a2, 2);
  (void)r;
  cr_expect(eq(l1, l2), "two lists that hold themselves differ");
  TVMFFIAny args[2] = {l1, l2};
  host_refused("ffi.RecursiveLt", args, 2, "ValueError", "cyclic");
  uint64_t h1 = hash_of(l1), h2 = hash_of(l2);
  cr_expect_eq(h1, h2);
  host_ok("ffi.ListClear", &l1, 1);
  host_ok("ffi.ListClear", &l2, 1);
  core_release(&l1);
  core_release(&l2);
}

/* REC-005: hashes of values are upstream's: None, ints, bools and text
 * (any form) from their parts, exactly. */
Test(recursive, REC_005_value_hashes) {
  cr_expect_eq(hash_of(core_none()), combine(0, 0));
  cr_expect_eq(hash_of(core_int(5)), combine(kTVMFFIInt, 5));
  cr_expect_eq(hash_of(core_bool(1)), combine(kTVMFFIBool, 1));
  /* "ab" is one 8-byte word, zero padded, modulo 2^31 - 1. */
  cr_expect_eq(hash_of(core_c_str("ab")), combine(kTVMFFIStr, ('a' | ('b' << 8)) % 2147483647ull));
  TVMFFIAny heap = host_str("text longer than seven");
  cr_expect_eq(hash_of(heap), hash_of(core_c_str("text longer than seven")));
  core_release(&heap);
}

/* The type_key_hash the implementation registered for type_index. */
static uint64_t key_hash(int32_t type_index) {
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(type_index);
  cr_assert_not_null(info, "no type info for type index %d", type_index);
  return info->type_key_hash;
}

static uint64_t bits_of(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* REC-005: floats (every NaN alike, -0.0 as 0.0), dtypes, devices and
 * bytes from their parts; shapes, sequences and maps from their type's
 * key hash, their length and their elements (a sequence's with their
 * positions, a map's entries sorted); reflected objects from the key hash
 * and each field; a list met again inside itself as its key hash. */
Test(recursive, REC_005_hashes_of_every_kind) {
  cr_expect_eq(hash_of(core_float(1.5)), combine(kTVMFFIFloat, bits_of(1.5)));
  cr_expect_eq(hash_of(core_float(-0.0)), combine(kTVMFFIFloat, bits_of(0.0)));
  cr_expect_eq(hash_of(core_float(-__builtin_nan("7"))), combine(kTVMFFIFloat, bits_of(NAN)));
  TVMFFIAny dt = core_none(), dev = core_none();
  dt.type_index = kTVMFFIDataType;
  dt.v_dtype = (DLDataType){kDLFloat, 32, 4};
  dev.type_index = kTVMFFIDevice;
  dev.v_device = (DLDevice){kDLCUDA, 3};
  cr_expect_eq(hash_of(dt), combine(combine(combine(kTVMFFIDataType, kDLFloat), 32), 4));
  cr_expect_eq(hash_of(dev), combine(combine(kTVMFFIDevice, kDLCUDA), 3));
  TVMFFIByteArray ab = {"ab", 2};
  cr_expect_eq(hash_of(byte_ptr(&ab)), combine(kTVMFFIBytes, ('a' | ('b' << 8)) % 2147483647ull));
  uint64_t h5 = combine(kTVMFFIInt, 5), h6 = combine(kTVMFFIInt, 6);
  TVMFFIAny a56 = ints("ffi.Array", 5, 6, 2), l5 = ints("ffi.List", 5, 0, 1);
  cr_expect_eq(hash_of(a56), combine(combine(combine(key_hash(kTVMFFIArray), 2), combine(h5, 0)),
                                     combine(h6, 1)));
  cr_expect_eq(hash_of(l5), combine(combine(key_hash(kTVMFFIList), 1), combine(h5, 0)));
  TVMFFIAny kv[4] = {core_int(5), core_int(6), core_int(6), core_int(5)};
  TVMFFIAny m1 = host_ok("ffi.Map", kv, 2), m2 = host_ok("ffi.Map", kv, 4);
  cr_expect_eq(hash_of(m1), combine(combine(key_hash(kTVMFFIMap), 1), combine(h5, h6)));
  uint64_t e1 = combine(h5, h6), e2 = combine(h6, h5);
  cr_expect_eq(hash_of(m2), combine(combine(combine(key_hash(kTVMFFIMap), 2), e1 < e2 ? e1 : e2),
                                    e1 < e2 ? e2 : e1));
  TVMFFIAny ext[2] = {core_int(2), core_int(3)}, shape = host_ok("ffi.Shape", ext, 2);
  cr_expect_eq(hash_of(shape), combine(combine(combine(key_hash(kTVMFFIShape), 2), 2), 3));
  TVMFFIAny pair = int_pair(1, 2);
  cr_expect_eq(hash_of(pair), combine(combine(key_hash(pair.type_index), combine(kTVMFFIInt, 1)),
                                      combine(kTVMFFIInt, 2)));
  TVMFFIAny self = lst(NULL, 0), ap[2] = {self, self};
  host_ok("ffi.ListAppend", ap, 2);
  uint64_t lk = key_hash(kTVMFFIList);
  cr_expect_eq(hash_of(self), combine(combine(lk, 1), combine(lk, 0)));
  host_ok("ffi.ListClear", &self, 1);
  for (TVMFFIAny *v = (TVMFFIAny[]){a56, l5, m1, m2, shape, pair, self}, *end = v + 7; v < end; ++v)
    core_release(v);
}

/* REC-006: equal values hash alike: containers with equal elements, maps
 * with the same entries in another order, a list holding one array twice
 * and a list holding two equal arrays; different ones (almost always)
 * differ. */
Test(recursive, REC_006_hash_follows_equality) {
  TVMFFIAny a1 = ints("ffi.Array", 1, 2, 2), a2 = ints("ffi.Array", 1, 2, 2);
  TVMFFIAny a3 = ints("ffi.Array", 2, 1, 2);
  cr_expect_eq(hash_of(a1), hash_of(a2));
  cr_expect_neq(hash_of(a1), hash_of(a3));
  TVMFFIAny kv1[4] = {core_int(1), core_int(2), core_c_str("x"), core_int(3)};
  TVMFFIAny kv2[4] = {core_c_str("x"), core_int(3), core_int(1), core_int(2)};
  TVMFFIAny m1 = host_ok("ffi.Map", kv1, 4), m2 = host_ok("ffi.Map", kv2, 4);
  cr_expect_eq(hash_of(m1), hash_of(m2));
  /* The second a1 is one the walk hashed before, not one it is inside. */
  TVMFFIAny twice_items[2] = {a1, a1}, equal_items[2] = {a1, a2};
  TVMFFIAny twice = lst(twice_items, 2), equal = lst(equal_items, 2);
  cr_expect_eq(hash_of(twice), hash_of(equal), "an array met twice hashed unlike its twin");
  for (TVMFFIAny *v = (TVMFFIAny[]){a1, a2, a3, m1, m2, twice, equal}, *end = v + 7; v < end; ++v)
    core_release(v);
}

/* The text ffi.ReprPrint gives for v. */
static void expect_repr(TVMFFIAny v, const char* want) {
  TVMFFIAny r = host_ok("ffi.ReprPrint", &v, 1);
  TVMFFIByteArray b = core_str_bytes(&r);
  cr_expect(b.size == strlen(want) && memcmp(b.data, want, b.size) == 0,
            "ReprPrint gave %.*s, expected %s", (int)b.size, b.data, want);
  core_release(&r);
}

/* REC-007: ReprPrint spells values and containers as upstream does. */
Test(recursive, REC_007_repr) {
  expect_repr(core_none(), "None");
  expect_repr(core_bool(0), "False");
  expect_repr(core_int(-7), "-7");
  expect_repr(core_float(1.5), "1.5");
  expect_repr(core_c_str("a\"b\n\xc3\xa9"), "\"a\\\"b\\n\\u00e9\"");
  expect_repr(core_c_str("\xe2\x82\xac\xf0\x9f\x98\x80"), "\"\\u20ac\\U0001f600\"");
  TVMFFIAny one = ints("ffi.Array", 1, 0, 1), two = ints("ffi.Array", 1, 2, 2);
  TVMFFIAny l = ints("ffi.List", 1, 2, 2);
  expect_repr(one, "(1,)");
  expect_repr(two, "(1, 2)");
  expect_repr(l, "[1, 2]");
  TVMFFIAny kv[4] = {core_c_str("a"), two, core_int(3), core_none()};
  TVMFFIAny m = host_ok("ffi.Map", kv, 4);
  expect_repr(m, "{\"a\": (1, 2), 3: None}");
  TVMFFIAny shape_args[2] = {core_int(2), core_int(3)}, shape = host_ok("ffi.Shape", shape_args, 2);
  expect_repr(shape, "Shape(2, 3)");
  TVMFFIAny missing = host_ok("ffi.GetInvalidObject", NULL, 0);
  expect_repr(missing, "<MISSING>");
  for (TVMFFIAny *v = (TVMFFIAny[]){one, two, l, m, shape, missing}, *end = v + 6; v < end; ++v)
    core_release(v);
}

/* REC-007: floats as a C++ stream prints doubles, devices and dtypes by
 * name, text with every escape, bytes as b"..." literals. */
Test(recursive, REC_007_repr_values) {
  expect_repr(core_bool(1), "True");
  expect_repr(core_float(1e20), "1e+20");
  expect_repr(core_float(1.0 / 3), "0.333333");
  expect_repr(core_float(100.0), "100");
  expect_repr(core_float(1e-5), "1e-05");
  expect_repr(core_float(INFINITY), "inf");
  expect_repr(core_float(-INFINITY), "-inf");
  expect_repr(core_int(INT64_MIN), "-9223372036854775808");
  static const struct {
    int type, id;
    const char* text;
  } devices[] = {{kDLCPU, 0, "cpu:0"},
                 {kDLCUDA, 3, "cuda:3"},
                 {kDLCUDAHost, 0, "cuda_host:0"},
                 {kDLOpenCL, 0, "opencl:0"},
                 {kDLVulkan, 1, "vulkan:1"},
                 {kDLMetal, 2, "metal:2"},
                 {kDLVPI, 0, "vpi:0"},
                 {kDLROCM, 0, "rocm:0"},
                 {kDLROCMHost, 0, "rocm_host:0"},
                 {kDLExtDev, 0, "ext_dev:0"},
                 {kDLCUDAManaged, 0, "cuda_managed:0"},
                 {kDLOneAPI, 0, "oneapi:0"},
                 {kDLWebGPU, 0, "webgpu:0"},
                 {kDLHexagon, 0, "hexagon:0"},
                 {kDLMAIA, 0, "maia:0"},
                 {kDLTrn, 0, "trn:0"}};
  for (size_t i = 0; i < sizeof devices / sizeof *devices; ++i) {
    TVMFFIAny d = core_none();
    d.type_index = kTVMFFIDevice;
    d.v_device.device_type = devices[i].type;
    d.v_device.device_id = devices[i].id;
    expect_repr(d, devices[i].text);
  }
  TVMFFIAny dt = core_none();
  dt.type_index = kTVMFFIDataType;
  dt.v_dtype = (DLDataType){kDLInt, 8, 4};
  expect_repr(dt, "int8x4");
  expect_repr(core_c_str("\t\r\\"), "\"\\t\\r\\\\\"");
  expect_repr(core_c_str("\x01\x1f\x7f~ "), "\"\\x01\\x1f\\x7f~ \"");
  expect_repr(core_c_str("\xff\xc3"
                         "a\xe2\x82"
                         "b"),
              "\"\\xff\\xc3a\\xe2\\x82b\"");
  expect_repr(core_c_str("\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf"), "\"\\u07ff\\uffff\\U0010ffff\"");
  expect_repr(core_c_str("\x1b[1;31mred\x1b[0m\x1b[K"), "\"\\x1b[1;31mred\\x1b[0m\\x1b[K\"");
  expect_repr(core_c_str("\x1b[3x\x1b"), "\"\\x1b[3x\\x1b\"");
  /* A sequence's shape without its ESC is plain text: nothing is escaped. */
  expect_repr(core_c_str("a[1m[0m"), "\"a[1m[0m\"");
  TVMFFIByteArray raw = {"a\"\\\0\x7f\x80 ~", 8};
  expect_repr(byte_ptr(&raw), "b\"a\\x22\\x5c\\x00\\x7f\\x80 ~\"");
}

/* REC-007: big ints in decimal, whatever their size and sign. */
Test(recursive, REC_007_repr_big_ints) {
  unsigned __int128 e36 = (unsigned __int128)1000000000000000000ull * 1000000000000000000ull;
  static const char* const want[] = {"0",
                                     "-1",
                                     "1000000000000000000",
                                     "18446744073709551616",
                                     "1000000000000000000000000000000000001",
                                     "-1000000000000000000000000000000000000"};
  uint64_t w[][2] = {{0, 0},
                     {~0ull, ~0ull},
                     {1000000000000000000ull, 0},
                     {0, 1},
                     {(uint64_t)(e36 + 1), (uint64_t)((e36 + 1) >> 64)},
                     {(uint64_t)-e36, (uint64_t)(-e36 >> 64)}};
  for (size_t i = 0; i < sizeof want / sizeof *want; ++i) {
    TVMFFIAny b = big(w[i], 2);
    expect_repr(b, want[i]);
    core_release(&b);
  }
}

/* REC-007: the most digits a big int of one, two or three words has
 * (its most negative value) are printed, and written within what was
 * allocated for them (guard bytes after every block the thread gets). */
Test(recursive, REC_007_repr_big_ints_in_bounds) {
  conf_alloc_require();
  static const char* const want[] = {"-9223372036854775808",
                                     "-170141183460469231731687303715884105728",
                                     "-3138550867693340381917894711603833208051177722232017256448"};
  uint64_t w[3] = {0, 0, 0};
  long before = conf_alloc_overruns();
  conf_alloc_guard(1);
  for (size_t n = 1; n <= 3; ++n) {
    w[n - 1] = 1ull << 63;
    if (n > 1) w[n - 2] = 0;
    TVMFFIAny b = big(w, n);
    expect_repr(b, want[n - 1]);
    core_release(&b);
  }
  conf_alloc_guard(0);
  cr_expect_eq(conf_alloc_overruns() - before, 0, "%ld blocks written past their size",
               conf_alloc_overruns() - before);
}

/* REC-007: containers empty and nested, an object met again inside
 * itself as "...", one held twice printed twice, shapes of any length,
 * and the keyword marker. */
Test(recursive, REC_007_repr_containers) {
  TVMFFIAny empty_a = arr(NULL, 0), empty_l = lst(NULL, 0), d = host_ok("ffi.Dict", NULL, 0);
  expect_repr(empty_a, "()");
  expect_repr(empty_l, "[]");
  expect_repr(d, "{}");
  TVMFFIAny one = ints("ffi.List", 1, 0, 1), twice[2] = {one, one}, pair = arr(twice, 2);
  expect_repr(pair, "([1], [1])");
  TVMFFIAny set[3] = {d, core_c_str("k"), pair};
  host_ok("ffi.DictSetItem", set, 3);
  expect_repr(d, "{\"k\": ([1], [1])}");
  TVMFFIAny self = lst(NULL, 0), ap[2] = {self, self};
  host_ok("ffi.ListAppend", ap, 2);
  ap[1] = core_int(2);
  host_ok("ffi.ListAppend", ap, 2);
  expect_repr(self, "[..., 2]");
  host_ok("ffi.ListClear", &self, 1);
  TVMFFIAny s0 = host_ok("ffi.Shape", NULL, 0), five = core_int(5),
            s1 = host_ok("ffi.Shape", &five, 1);
  expect_repr(s0, "Shape()");
  expect_repr(s1, "Shape(5)");
  TVMFFIAny kw = host_ok("ffi.GetKwargsObject", NULL, 0);
  expect_repr(kw, "<KWARGS>");
  for (TVMFFIAny *v = (TVMFFIAny[]){empty_a, empty_l, d, one, pair, self, s0, s1, kw}, *end = v + 9;
       v < end; ++v)
    core_release(v);
}

/* REC-007: a tensor as "<dtype>[<shape>]@<device>", an enum singleton as
 * "<type key>.<name>", and with TVM_FFI_REPR_WITH_ADDR=1 a container
 * followed by "@0x" and its address. */
Test(recursive, REC_007_repr_objects) {
  Producer p;
  producer_init(&p);
  TVMFFIAny t = core_obj(tensor_import_v(&p, 0, 0));
  expect_repr(t, "float32[2, 3]@cpu:0");
  core_release(&t);
  int32_t index = core_type_index("ffi.IntEnum");
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(index);
  cr_assert(info->metadata && info->metadata->creator, "ffi.IntEnum has no creator");
  TVMFFIObjectHandle e = NULL;
  cr_assert_eq(info->metadata->creator(&e), 0);
  const TVMFFIFieldInfo* name =
      core_field_of(API(TVMFFIGetTypeInfo)(core_type_index("ffi.Enum")), "_str_index");
  cr_assert(name && !(name->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj),
            "ffi.Enum._str_index has no plain setter");
  TVMFFIAny red = core_c_str("RED");
  cr_assert_eq(((TVMFFIFieldSetter)name->setter)((char*)e + name->offset, &red), 0);
  TVMFFIAny ev = core_obj(e);
  expect_repr(ev, "ffi.IntEnum.RED");
  core_release(&ev);
  TVMFFIAny l = ints("ffi.List", 1, 0, 1);
  setenv("TVM_FFI_REPR_WITH_ADDR", "1", 1);
  TVMFFIAny r = host_ok("ffi.ReprPrint", &l, 1);
  unsetenv("TVM_FFI_REPR_WITH_ADDR");
  char want[64];
  snprintf(want, sizeof want, "[1]@%p", l.v_obj);
  TVMFFIByteArray b = core_str_bytes(&r);
  cr_expect(b.size == strlen(want) && memcmp(b.data, want, b.size) == 0, "gave %.*s, expected %s",
            (int)b.size, b.data, want);
  core_release(&r);
  core_release(&l);
}

/* REC-007: a dtype whose type code names no type is refused, not printed. */
Test(recursive, REC_007_repr_unknown_dtype) {
  TVMFFIAny dt = core_none(), out;
  dt.type_index = kTVMFFIDataType;
  dt.v_dtype = (DLDataType){99, 32, 1};
  cr_expect_eq(host_call("ffi.ReprPrint", &dt, 1, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"unknown type_code=99"});
}

/* REC-008: DeepCopy copies containers (new objects, equal content),
 * shares leaves such as strings, and keeps the sharing and cycles of the
 * original. */
Test(recursive, REC_008_deep_copy) {
  TVMFFIAny s = host_str("a shared heap string"), inner = ints("ffi.List", 1, 2, 2);
  TVMFFIAny items[3] = {inner, inner, s}, outer = arr(items, 3);
  TVMFFIAny copy = host_ok("ffi.DeepCopy", &outer, 1);
  cr_assert_eq(copy.type_index, kTVMFFIArray);
  cr_expect_neq(copy.v_obj, outer.v_obj);
  cr_expect(eq(copy, outer));
  const TVMFFIAny* c = TVMFFISeqGetCellPtr(copy.v_obj)->data;
  cr_expect_neq(c[0].v_obj, inner.v_obj, "the inner list was shared, not copied");
  cr_expect_eq(c[0].v_obj, c[1].v_obj, "one list held twice became two copies");
  cr_expect_eq(c[2].v_obj, s.v_obj, "a string was copied");
  TVMFFIAny self = lst(NULL, 0), ap[2] = {self, self};
  host_ok("ffi.ListAppend", ap, 2);
  TVMFFIAny self_copy = host_ok("ffi.DeepCopy", &self, 1);
  const TVMFFIAny* sc = TVMFFISeqGetCellPtr(self_copy.v_obj)->data;
  cr_expect_eq(sc[0].v_obj, self_copy.v_obj, "the copy of a list holding itself does not");
  host_ok("ffi.ListClear", &self, 1);
  host_ok("ffi.ListClear", &self_copy, 1);
  for (TVMFFIAny *v = (TVMFFIAny[]){s, inner, outer, copy, self, self_copy}, *end = v + 6; v < end;
       ++v)
    core_release(v);
}

/* REC-008: long sequences (past any small inline buffer) are copied
 * whole, in order. */
Test(recursive, REC_008_deep_copy_long) {
  static const int64_t lengths[] = {9, 12, 24, 25, 1000};
  static const char* const ctors[] = {"ffi.Array", "ffi.List"};
  TVMFFIAny items[1000];
  for (int i = 0; i < 1000; ++i) items[i] = core_int(i * 7);
  for (size_t c = 0; c < 2; ++c)
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; ++k) {
      int64_t n = lengths[k];
      TVMFFIAny seq = host_ok(ctors[c], items, (int32_t)n), copy = host_ok("ffi.DeepCopy", &seq, 1);
      cr_assert_eq(copy.type_index, seq.type_index, "%s of %lld", ctors[c], (long long)n);
      const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(copy.v_obj);
      cr_assert_eq(cell->size, n, "%s of %lld: the copy has %lld", ctors[c], (long long)n,
                   (long long)cell->size);
      const TVMFFIAny* got = cell->data;
      for (int64_t i = 0; i < n; ++i)
        cr_expect(got[i].type_index == kTVMFFIInt && got[i].v_int64 == i * 7,
                  "%s of %lld: element %lld differs", ctors[c], (long long)n, (long long)i);
      core_release(&copy);
      core_release(&seq);
    }
}

/* REC-008: values come back as they are, leaves (shapes, big ints, heap
 * strings) are shared, dicts and maps are copied with their order, and
 * containers used as keys are copied too; a dict holding itself is
 * copied into one holding itself. */
Test(recursive, REC_008_deep_copy_kinds) {
  TVMFFIAny five = core_int(5), none = core_none();
  TVMFFIAny c5 = host_ok("ffi.DeepCopy", &five, 1), cn = host_ok("ffi.DeepCopy", &none, 1);
  cr_expect(c5.type_index == kTVMFFIInt && c5.v_int64 == 5, "DeepCopy(5) gave type %d",
            c5.type_index);
  cr_expect_eq(cn.type_index, kTVMFFINone);
  uint64_t w[2] = {0, 1};
  TVMFFIAny ext[2] = {core_int(2), core_int(3)}, shape = host_ok("ffi.Shape", ext, 2),
            b = big(w, 2);
  TVMFFIAny leaves[2] = {shape, b};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny copy = host_ok("ffi.DeepCopy", &leaves[i], 1);
    cr_expect_eq(copy.v_obj, leaves[i].v_obj, "leaf %d was copied", i);
    core_release(&copy);
  }
  TVMFFIAny inner = ints("ffi.List", 1, 2, 2), key = ints("ffi.Array", 7, 0, 1);
  TVMFFIAny kv[6] = {core_c_str("b"), core_int(1), core_c_str("a"), inner, key, core_int(3)};
  const char* ctors[2] = {"ffi.Dict", "ffi.Map"};
  for (int k = 0; k < 2; ++k) {
    TVMFFIAny m = host_ok(ctors[k], kv, 6), copy = host_ok("ffi.DeepCopy", &m, 1);
    cr_assert_eq(copy.type_index, m.type_index, "%s", ctors[k]);
    cr_expect_neq(copy.v_obj, m.v_obj, "%s was shared", ctors[k]);
    expect_repr(copy, "{\"b\": 1, \"a\": [1, 2], (7,): 3}");
    TVMFFIAny q[2] = {copy, key};
    cr_expect_eq(host_int_of(host_ok(k ? "ffi.MapCount" : "ffi.DictCount", q, 2), "count"), 0,
                 "%s: the array key was shared, not copied", ctors[k]);
    core_release(&m);
    core_release(&copy);
  }
  TVMFFIAny d = host_ok("ffi.Dict", NULL, 0), set[3] = {d, core_c_str("self"), d};
  host_ok("ffi.DictSetItem", set, 3);
  TVMFFIAny dc = host_ok("ffi.DeepCopy", &d, 1), get[2] = {dc, core_c_str("self")};
  cr_expect_neq(dc.v_obj, d.v_obj);
  TVMFFIAny held = host_ok("ffi.DictGetItem", get, 2);
  cr_expect_eq(held.v_obj, dc.v_obj, "the copy of a dict holding itself holds %s",
               held.v_obj == d.v_obj ? "the original" : "another object");
  core_release(&held);
  host_ok("ffi.DictClear", &d, 1);
  host_ok("ffi.DictClear", &dc, 1);
  for (TVMFFIAny *v = (TVMFFIAny[]){shape, b, inner, key, d, dc}, *end = v + 6; v < end; ++v)
    core_release(v);
}

/* REC-008: an array holding a function, an error, a module, a plain
 * ffi.Object or a tensor is not copied: none of them can be. */
Test(recursive, REC_008_deep_copy_refuses_other_objects) {
  TVMFFIObjectHandle fn = core_global("ffi.ReprPrint", 0), err = NULL;
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "kept as it is");
  API(TVMFFIErrorMoveFromRaised)(&err);
  TVMFFIAny path = core_c_str(conf_runfile("conformance/testlibs/libmod_basic.so"));
  TVMFFIAny mod = host_ok("ffi.ModuleLoadFromFile", &path, 1);
  TVMFFIAny obj = host_ok("ffi.GetInvalidObject", NULL, 0);
  Producer p;
  producer_init(&p);
  TVMFFIAny t = core_obj(tensor_import_v(&p, 0, 0));
  TVMFFIAny items[5] = {core_obj(fn), core_obj(err), mod, obj, t};
  for (int i = 0; i < 5; ++i) {
    TVMFFIAny a = arr(&items[i], 1), out;
    int rc = host_call("ffi.DeepCopy", &a, 1, &out);
    if (rc == 0) core_release(&out);
    ConfError e = conf_take_error();
    cr_expect(rc == -1 && e.kind[0], "DeepCopy of an array holding type index %d returned %d",
              items[i].type_index, rc);
    core_release(&a);
  }
  for (int i = 0; i < 5; ++i) core_release(&items[i]);
}

/* REC-014: a list or dict inside an array or map that leads back to it is
 * copied into one that holds the array's or map's copy, not the original,
 * and its other elements as they were; the reference it held to the
 * original is given back. */
Test(recursive, REC_014_deep_copy_back_to_enclosing) {
  TVMFFIAny list = lst(NULL, 0), array = arr(&list, 1), ap[2] = {list, array};
  host_ok("ffi.ListAppend", ap, 2);
  ap[1] = core_int(7);
  host_ok("ffi.ListAppend", ap, 2);
  TVMFFIAny array_copy = host_ok("ffi.DeepCopy", &array, 1);
  cr_assert_eq(array_copy.type_index, kTVMFFIArray);
  cr_expect_neq(array_copy.v_obj, array.v_obj, "the array was shared, not copied");
  TVMFFIAny list_copy = ((const TVMFFIAny*)TVMFFISeqGetCellPtr(array_copy.v_obj)->data)[0];
  cr_assert_eq(list_copy.type_index, kTVMFFIList);
  cr_expect_neq(list_copy.v_obj, list.v_obj, "the list was shared, not copied");
  const TVMFFIAny* held = TVMFFISeqGetCellPtr(list_copy.v_obj)->data;
  cr_expect_eq(held[0].v_obj, array_copy.v_obj, "the list's copy holds %s, not the array's copy",
               held[0].v_obj == array.v_obj ? "the original array" : "another object");
  cr_assert_eq(TVMFFISeqGetCellPtr(list_copy.v_obj)->size, 2);
  cr_expect(held[1].type_index == kTVMFFIInt && held[1].v_int64 == 7,
            "the list's copy holds type index %d, not the int 7, after the array",
            held[1].type_index);
  host_ok("ffi.ListClear", &list, 1);
  host_ok("ffi.ListClear", &list_copy, 1);
  cr_expect_eq(core_strong(array.v_obj), 1, "the original array is held %u times, not once",
               core_strong(array.v_obj));

  TVMFFIAny dict = host_ok("ffi.Dict", NULL, 0),
            kv[4] = {host_str("k"), dict, host_str("n"), core_int(2)};
  TVMFFIAny map = host_ok("ffi.Map", kv, 4), set[3] = {dict, kv[2], map};
  host_ok("ffi.DictSetItem", set, 3);
  set[1] = map;
  host_ok("ffi.DictSetItem", set, 3);
  TVMFFIAny map_copy = host_ok("ffi.DeepCopy", &map, 1), get[2] = {map_copy, kv[0]};
  cr_assert_eq(map_copy.type_index, kTVMFFIMap);
  cr_expect_neq(map_copy.v_obj, map.v_obj, "the map was shared, not copied");
  cr_expect_eq(host_int_of(host_ok("ffi.MapSize", &map_copy, 1), "map size"), 2);
  TVMFFIAny dict_copy = host_ok("ffi.MapGetItem", get, 2);
  cr_assert_eq(dict_copy.type_index, kTVMFFIDict);
  cr_expect_neq(dict_copy.v_obj, dict.v_obj, "the dict was shared, not copied");
  TVMFFIAny by_copy[2] = {dict_copy, map_copy}, by_original[2] = {dict_copy, map};
  TVMFFIAny by_n[2] = {dict_copy, kv[2]};
  cr_expect_eq(host_int_of(host_ok("ffi.DictSize", &dict_copy, 1), "size"), 2);
  cr_expect_eq(host_int_of(host_ok("ffi.DictCount", by_original, 2), "count"), 0,
               "the dict's copy has the original map as a key");
  TVMFFIAny value = host_ok("ffi.DictGetItem", by_copy, 2),
            n_value = host_ok("ffi.DictGetItem", by_n, 2);
  cr_expect_eq(value.v_obj, map_copy.v_obj, "the dict's copy has %s as the value",
               value.v_obj == map.v_obj ? "the original map" : "another object");
  cr_expect_eq(n_value.v_obj, map_copy.v_obj, "the dict's copy has %s as the value of \"n\"",
               n_value.v_obj == map.v_obj ? "the original map" : "another object");
  host_ok("ffi.DictClear", &dict, 1);
  host_ok("ffi.DictClear", &dict_copy, 1);
  for (TVMFFIAny *v = (TVMFFIAny[]){list, array, array_copy, kv[0], kv[2], dict, map, map_copy,
                                    dict_copy, value, n_value},
                 *end = v + 11;
       v < end; ++v)
    core_release(v);
}

/* conformance.RecThing {int64 x; int64 y (compare off); int64 z (repr
 * off); int64 w (hash off)} and conformance.RecBare (no fields), types of
 * the test's own. */
typedef struct {
  TVMFFIObject header;
  int64_t x, y, z, w;
} RecThing;

static void thing_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int32_t thing_type(int bare) {
  static int32_t index[2] = {-1, -1};
  if (index[bare] >= 0) return index[bare];
  TVMFFIByteArray key = {bare ? "conformance.RecBare" : "conformance.RecThing", bare ? 19 : 20};
  index[bare] = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(index[bare], 0);
  static const char* const names[] = {"x", "y", "z", "w"};
  static const int64_t flags[] = {0, kTVMFFIFieldFlagBitMaskCompareOff,
                                  kTVMFFIFieldFlagBitMaskReprOff, kTVMFFIFieldFlagBitMaskHashOff};
  for (int i = 0; i < 4 && !bare; ++i)
    host_add_i64_field(index[bare], names[i], 24 + 8 * i, flags[i], NULL, core_none());
  return index[bare];
}

static TVMFFIAny thing(int bare, int64_t x, int64_t y, int64_t z, int64_t w) {
  RecThing* t = calloc(1, sizeof *t);
  t->header.combined_ref_count = 1 | ((uint64_t)1 << 32);
  t->header.type_index = thing_type(bare);
  t->header.deleter = thing_delete;
  t->x = x, t->y = y, t->z = z, t->w = w;
  return core_obj(t);
}

/* A RecThing of type conformance.RecNoGetter: x is a field without a
 * getter, y an int field as RecThing's. */
static TVMFFIAny thing_without_getter(int64_t x, int64_t y) {
  static int32_t index = -1;
  if (index < 0) {
    TVMFFIByteArray key = {"conformance.RecNoGetter", 23};
    index = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 1, 0, 1, kTVMFFIObject);
    cr_assert_geq(index, 0);
    TVMFFIFieldInfo f;
    memset(&f, 0, sizeof f);
    f.name = (TVMFFIByteArray){"x", 1};
    f.size = f.alignment = 8;
    f.offset = 24;
    f.field_static_type_index = kTVMFFIInt;
    cr_assert_eq(API(TVMFFITypeRegisterField)(index, &f), 0);
    host_add_i64_field(index, "y", 32, 0, NULL, core_none());
  }
  TVMFFIAny v = thing(0, x, y, 0, 0);
  ((TVMFFIObject*)v.v_obj)->type_index = v.type_index = index;
  return v;
}

/* REC-019: a field without a getter cannot be read: ReprPrint leaves it
 * out, RecursiveEq and RecursiveHash go by the other fields. */
Test(recursive, REC_019_field_without_getter_skipped) {
  HOSTILE_INPUT("a field's NULL getter is called");
  TVMFFIAny v = thing_without_getter(1, 2), same_y = thing_without_getter(9, 2);
  TVMFFIAny other_y = thing_without_getter(1, 3);
  expect_repr(v, "conformance.RecNoGetter(y=2)");
  cr_expect(eq(v, same_y), "objects differing only in the field without a getter are unequal");
  cr_expect(!eq(v, other_y), "objects differing in y are equal");
  cr_expect_eq(hash_of(v), combine(key_hash(v.type_index), combine(kTVMFFIInt, 2)),
               "the hash of y alone");
  for (TVMFFIAny *o = (TVMFFIAny[]){v, same_y, other_y}, *end = o + 3; o < end; ++o)
    core_release(o);
}

/* REC-019: an object whose type index names no registered type has no
 * type key to print: ReprPrint refuses it, naming the index. */
Test(recursive, REC_019_repr_unregistered_type) {
  HOSTILE_INPUT("the type of an object is looked up and not found");
  TVMFFIAny v = thing(1, 0, 0, 0, 0), out = core_none();
  ((TVMFFIObject*)v.v_obj)->type_index = v.type_index = 60000;
  int rc = host_call("ffi.ReprPrint", &v, 1, &out);
  ConfError e = conf_take_error();
  cr_expect_eq(rc, -1, "ReprPrint of type index 60000 returned %d", rc);
  cr_expect(e.kind[0] && strstr(e.message, "60000"), "raised %s: %s, not naming 60000",
            e.kind[0] ? e.kind : "nothing", e.message);
  ((TVMFFIObject*)v.v_obj)->type_index = thing_type(1);
  core_release(&out);
  core_release(&v);
}

/* REC-009: a reflected object's repr leaves out repr-off fields, its
 * comparison compare-off ones, its hash hash-off and compare-off ones;
 * an object of a type without fields prints as its type key, equals
 * another of its type and hashes as its key hash. */
Test(recursive, REC_009_field_flags) {
  TVMFFIAny a = thing(0, 1, 2, 3, 4), b = thing(0, 1, 9, 3, 4), c = thing(0, 1, 2, 8, 4);
  TVMFFIAny d = thing(0, 1, 2, 3, 7), e = thing(0, 0, 2, 3, 4);
  expect_repr(a, "conformance.RecThing(x=1, y=2, w=4)");
  cr_expect(eq(a, b), "a compare-off field was compared");
  cr_expect(!eq(a, c), "a repr-off field was not compared");
  cr_expect(!eq(a, d), "a hash-off field was not compared");
  cr_expect(truth("ffi.RecursiveLt", e, a));
  cr_expect(truth("ffi.RecursiveLt", a, c));
  uint64_t h1 = combine(kTVMFFIInt, 1), h3 = combine(kTVMFFIInt, 3);
  uint64_t want = combine(combine(key_hash(a.type_index), h1), h3);
  cr_expect_eq(hash_of(a), want, "the hash of x and z alone");
  cr_expect_eq(hash_of(b), want);
  cr_expect_eq(hash_of(d), want);
  cr_expect_neq(hash_of(c), want);
  TVMFFIAny bare1 = thing(1, 0, 0, 0, 0), bare2 = thing(1, 0, 0, 0, 0);
  expect_repr(bare1, "conformance.RecBare");
  cr_expect(eq(bare1, bare2));
  cr_expect_eq(hash_of(bare1), key_hash(bare1.type_index));
  for (TVMFFIAny *v = (TVMFFIAny[]){a, b, c, d, e, bare1, bare2}, *end = v + 7; v < end; ++v)
    core_release(v);
}

/* conformance.RecChild below conformance.RecThing: fields v (new) at 56
 * and x (a second x) at 64, after the parent's. */
typedef struct {
  RecThing parent;
  int64_t v, x2;
} RecChild;

static int32_t child_type(void) {
  static int32_t index = -1;
  if (index >= 0) return index;
  int32_t parent = thing_type(0);
  TVMFFIByteArray key = {"conformance.RecChild", 20};
  index = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 2, 0, 1, parent);
  cr_assert_geq(index, 0);
  static const char* const names[] = {"v", "x"};
  for (int i = 0; i < 2; ++i) host_add_i64_field(index, names[i], 56 + 8 * i, 0, NULL, core_none());
  return index;
}

static TVMFFIAny child(int64_t x, int64_t v, int64_t x2) {
  RecChild* c = calloc(1, sizeof *c);
  c->parent.header.combined_ref_count = 1 | ((uint64_t)1 << 32);
  c->parent.header.type_index = child_type();
  c->parent.header.deleter = thing_delete;
  c->parent.x = x, c->parent.y = 2, c->parent.z = 3, c->parent.w = 4;
  c->v = v, c->x2 = x2;
  return core_obj(c);
}

/* conformance.RecGrand below conformance.RecChild: a field v (a name its
 * parent has) at 72. */
typedef struct {
  RecChild parent;
  int64_t v2;
} RecGrand;

static TVMFFIAny grand(int64_t x, int64_t v) {
  static int32_t index = -1;
  if (index < 0) {
    TVMFFIByteArray key = {"conformance.RecGrand", 20};
    index = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 3, 0, 1, child_type());
    cr_assert_geq(index, 0);
    host_add_i64_field(index, "v", 72, 0, NULL, core_none());
  }
  RecGrand* g = calloc(1, sizeof *g);
  g->parent.parent.header.combined_ref_count = 1 | ((uint64_t)1 << 32);
  g->parent.parent.header.type_index = index;
  g->parent.parent.header.deleter = thing_delete;
  g->parent.parent.x = x, g->parent.parent.y = 2, g->parent.parent.z = 3, g->parent.parent.w = 4;
  g->parent.v = v, g->parent.x2 = 8, g->v2 = 9;
  return core_obj(g);
}

/* REC-009: an object of a derived type prints its parent's fields first,
 * then its own, a name its parent has printed once; it compares by the
 * fields of both. */
Test(recursive, REC_009_derived_fields) {
  TVMFFIAny a = child(1, 5, 6), b = child(1, 7, 6);
  expect_repr(a, "conformance.RecChild(x=1, y=2, w=4, v=5)");
  TVMFFIAny g = grand(1, 5);
  expect_repr(g, "conformance.RecGrand(x=1, y=2, w=4, v=5)");
  core_release(&g);
  cr_expect(!eq(a, b), "the derived type's own field was not compared");
  cr_expect(truth("ffi.RecursiveLt", a, b));
  core_release(&a);
  core_release(&b);
}

/* The field x of a RecThing value, as an int value. */
static TVMFFIAny x_of(const TVMFFIAny* v) { return core_int(((RecThing*)v->v_obj)->x); }

/* How many recursion Functions refused a call without arguments with a
 * TypeError, and how many were tried. */
static int recursion_refusals, recursion_tries;

/* Calls the recursion Function with n values; its result. It is first
 * called with no arguments, which it must refuse. */
static TVMFFIAny recurse(const TVMFFIAny* fn, TVMFFIAny* args, int n) {
  TVMFFIAny out = core_none();
  recursion_tries += 1;
  if (API(TVMFFIFunctionCall)(fn->v_obj, NULL, 0, &out) == -1)
    recursion_refusals += strcmp(conf_take_error().kind, "TypeError") == 0;
  out = core_none();
  conf_expect_ok(API(TVMFFIFunctionCall)(fn->v_obj, args, n, &out), "the recursion");
  return out;
}

/* __ffi_hash__(v, recurse): recurse(x) + 1. */
static int hook_hash(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)n;
  TVMFFIAny x = x_of(&args[0]), h = recurse(&args[1], &x, 1);
  *out = core_int(h.v_int64 + 1);
  return 0;
}

/* __ffi_eq__(a, b, recurse): recurse(a.x, b.x). */
static int hook_eq(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)n;
  TVMFFIAny xs[2] = {x_of(&args[0]), x_of(&args[1])};
  *out = recurse(&args[2], xs, 2);
  return 0;
}

/* __ffi_compare__(a, b, recurse): recurse(b.x, a.x), the order reversed. */
static int hook_compare(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)n;
  TVMFFIAny xs[2] = {x_of(&args[1]), x_of(&args[0])};
  *out = recurse(&args[2], xs, 2);
  return 0;
}

/* __ffi_repr__(v, recurse): "H<" recurse([x]) ">". */
static int hook_repr(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)n;
  TVMFFIAny x = x_of(&args[0]), l = lst(&x, 1), text = recurse(&args[1], &l, 1);
  TVMFFIByteArray b = core_str_bytes(&text);
  char buf[64];
  snprintf(buf, sizeof buf, "H<%.*s>", (int)b.size, b.data);
  core_release(&text);
  core_release(&l);
  *out = host_str(buf);
  return 0;
}

/* Registers `key` below ffi.Object with the four hooks, in the order
 * __ffi_hash__, __ffi_eq__, __ffi_compare__, __ffi_repr__. */
static int32_t hook_type(const char* key, const TVMFFISafeCallType calls[4]) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(index, 0);
  static const char* const names[] = {"__ffi_hash__", "__ffi_eq__", "__ffi_compare__",
                                      "__ffi_repr__"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIObjectHandle f = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, calls[i], NULL, &f), 0);
    TVMFFIAny fv = core_obj(f);
    TVMFFIByteArray name = {names[i], strlen(names[i])};
    cr_assert_eq(API(TVMFFITypeRegisterAttr)(index, &name, &fv), 0);
    core_release(&fv);
  }
  return index;
}

/* A RecThing with field x, made of type `index`. */
static TVMFFIAny thing_of_type(int32_t index, int64_t x) {
  TVMFFIAny v = thing(0, x, 0, 0, 0);
  ((TVMFFIObject*)v.v_obj)->type_index = v.type_index = index;
  return v;
}

/* conformance.RecHooked: a RecThing type whose hash, equality, order and
 * repr are hooks of the test's own. */
static TVMFFIAny hooked(int64_t x) {
  static int32_t index = -1;
  static const TVMFFISafeCallType calls[4] = {hook_hash, hook_eq, hook_compare, hook_repr};
  if (index < 0) index = hook_type("conformance.RecHooked", calls);
  return thing_of_type(index, x);
}

/* REC-009: a type with an __ffi_eq__ hook and no __ffi_hash__ cannot be
 * hashed (ValueError naming __ffi_hash__): its equal values could hash
 * apart. */
Test(recursive, REC_009_eq_without_hash) {
  TVMFFIByteArray key = {"conformance.RecEqOnly", 21};
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(index, 0);
  TVMFFIObjectHandle f = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, hook_eq, NULL, &f), 0);
  TVMFFIAny fv = core_obj(f);
  TVMFFIByteArray name = {"__ffi_eq__", 10};
  cr_assert_eq(API(TVMFFITypeRegisterAttr)(index, &name, &fv), 0);
  core_release(&fv);
  TVMFFIAny v = thing(0, 1, 0, 0, 0);
  ((TVMFFIObject*)v.v_obj)->type_index = v.type_index = index;
  TVMFFIAny items[1] = {v}, a = arr(items, 1);
  host_refused("ffi.RecursiveHash", &a, 1, "ValueError",
               "type 'conformance.RecEqOnly' defines __ffi_eq__ or __ffi_compare__ but not "
               "__ffi_hash__");
  core_release(&a);
  core_release(&v);
}

/* REC-009: a type's __ffi_hash__, __ffi_eq__, __ffi_compare__ and
 * __ffi_repr__ hooks decide, each given a Function that recurses into
 * values: hash (value) -> int, equality (a, b) -> bool, order (a, b) ->
 * int, repr (value) -> str; called without arguments, it refuses with a
 * TypeError. */
Test(recursive, REC_009_hooks) {
  TVMFFIAny h1 = hooked(1), h1b = hooked(1), h2 = hooked(2);
  expect_repr(h1, "H<[1]>");
  cr_expect(eq(h1, h1b));
  cr_expect(!eq(h1, h2));
  cr_expect(truth("ffi.RecursiveGt", h1, h2), "the __ffi_compare__ hook was not used");
  cr_expect(!truth("ffi.RecursiveLt", h1, h2), "the __ffi_compare__ hook was not used");
  cr_expect_eq(hash_of(h1), combine(kTVMFFIInt, 1) + 1);
  /* Inside a container the hook decides for its own pair only. */
  TVMFFIAny in1 = arr(&h1, 1), in1b = arr(&h1b, 1), in2 = arr(&h2, 1);
  cr_expect(eq(in1, in1b));
  cr_expect(!eq(in1, in2), "arrays of objects the __ffi_eq__ hook tells apart are equal");
  cr_expect(truth("ffi.RecursiveGt", in1, in2), "the __ffi_compare__ hook was not used inside");
  for (TVMFFIAny *v = (TVMFFIAny[]){in1, in1b, in2}, *end = v + 3; v < end; ++v) core_release(v);
  cr_expect(recursion_tries > 0 && recursion_refusals == recursion_tries,
            "%d of %d recursion Functions refused a call without arguments", recursion_refusals,
            recursion_tries);
  for (TVMFFIAny *v = (TVMFFIAny[]){h1, h1b, h2}, *end = v + 3; v < end; ++v) core_release(v);
}

/* A hook that refuses every call: ValueError "the hook says no". */
static int hook_refusing(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)args, (void)n, (void)out;
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "the hook says no");
  return -1;
}

/* conformance.RecRefusing: a RecThing type all four of whose hooks raise. */
static TVMFFIAny refusing(int64_t x) {
  static int32_t index = -1;
  static const TVMFFISafeCallType calls[4] = {hook_refusing, hook_refusing, hook_refusing,
                                              hook_refusing};
  if (index < 0) index = hook_type("conformance.RecRefusing", calls);
  return thing_of_type(index, x);
}

/* REC-009: a hook's error is the walk's error: RecursiveEq, the orderings,
 * RecursiveHash and ReprPrint return -1 with it, a value met first in a
 * map or list included (what follows it does not undo the failure). */
Test(recursive, REC_009_hooks_that_raise) {
  TVMFFIAny r1 = refusing(1), r2 = refusing(2), pair[2] = {r1, r2};
  host_refused("ffi.RecursiveEq", pair, 2, "ValueError", "the hook says no");
  host_refused("ffi.RecursiveLt", pair, 2, "ValueError", "the hook says no");
  host_refused("ffi.RecursiveGe", pair, 2, "ValueError", "the hook says no");
  host_refused("ffi.RecursiveHash", &r1, 1, "ValueError", "the hook says no");
  host_refused("ffi.ReprPrint", &r1, 1, "ValueError", "the hook says no");
  TVMFFIAny kv[6] = {core_c_str("first"), r1,         core_c_str("second"), core_int(2),
                     core_c_str("third"), core_int(3)};
  TVMFFIAny m = host_ok("ffi.Map", kv, 6), items[3] = {r1, core_int(2), core_int(3)};
  TVMFFIAny l = lst(items, 3);
  host_refused("ffi.ReprPrint", &m, 1, "ValueError", "the hook says no");
  host_refused("ffi.ReprPrint", &l, 1, "ValueError", "the hook says no");
  for (TVMFFIAny *v = (TVMFFIAny[]){r1, r2, m, l}, *end = v + 4; v < end; ++v) core_release(v);
}

/* REC-009: reflected objects compare, hash and print by their fields. */
Test(recursive, REC_009_reflected_objects) {
  TVMFFIAny p12 = int_pair(1, 2), q12 = int_pair(1, 2), p13 = int_pair(1, 3);
  cr_expect(eq(p12, q12));
  TVMFFIAny p02 = int_pair(0, 2);
  cr_expect(!eq(p12, p13));
  cr_expect(!eq(p02, p12), "objects differing in their first field compare equal");
  cr_expect(truth("ffi.RecursiveLt", p12, p13));
  cr_expect(truth("ffi.RecursiveLt", p02, p12));
  cr_expect_eq(hash_of(p12), hash_of(q12));
  cr_expect_neq(hash_of(p12), hash_of(p13), "the hash leaves a field out");
  cr_expect_neq(hash_of(p02), hash_of(p12), "the hash leaves the first field out");
  expect_repr(p12, "testing.TestIntPair(a=1, b=2)");
  for (TVMFFIAny *v = (TVMFFIAny[]){p12, q12, p13, p02}, *end = v + 4; v < end; ++v)
    core_release(v);
}

/* The List REC-010 and REC-011 use: [1, "a", {"k": 2}, 1.5, None, true,
 * b"xy", "a"] (the string "a" twice: one node). */
static TVMFFIAny sample_list(void) {
  TVMFFIAny kv[2] = {core_c_str("k"), core_int(2)}, m = host_ok("ffi.Map", kv, 2);
  TVMFFIByteArray raw = {"xy", 2};
  TVMFFIAny bytes = core_none();
  bytes.type_index = kTVMFFIByteArrayPtr;
  bytes.v_ptr = &raw;
  TVMFFIAny items[8] = {core_int(1), core_c_str("a"), m,     core_float(1.5),
                        core_none(), core_bool(1),    bytes, core_c_str("a")};
  TVMFFIAny l = lst(items, 8);
  core_release(&m);
  return l;
}

static const char kSampleGraph[] =
    "{\"root_index\":9,\"nodes\":[{\"type\":\"int\",\"data\":1},{\"type\":\"ffi.String\",\"data\":"
    "\"a\"},{\"type\":\"ffi.String\",\"data\":\"k\"},{\"type\":\"int\",\"data\":2},{\"type\":"
    "\"ffi.Map\",\"data\":[2,3]},{\"type\":\"float\",\"data\":1.5},{\"type\":\"None\"},{\"type\":"
    "\"bool\",\"data\":true},{\"type\":\"ffi.Bytes\",\"data\":\"eHk=\"},{\"type\":\"ffi.List\","
    "\"data\":[0,1,4,5,6,7,8,1]}]}";

/* REC-010: ToJSONGraphString writes a container graph as upstream does,
 * byte for byte. */
Test(recursive, REC_010_json_graph_text) {
  TVMFFIAny l = sample_list(), args[2] = {l, core_none()};
  TVMFFIAny text = host_ok("ffi.ToJSONGraphString", args, 2);
  TVMFFIByteArray b = core_str_bytes(&text);
  cr_expect(b.size == strlen(kSampleGraph) && memcmp(b.data, kSampleGraph, b.size) == 0,
            "wrote %.*s", (int)b.size, b.data);
  core_release(&text);
  core_release(&l);
}

/* REC-010: floats as upstream writes them: a whole number with ".0", others
 * with 17 significant digits, and the three that JSON lacks as words. */
Test(recursive, REC_010_json_graph_floats) {
  static const struct {
    double v;
    const char* data;
  } cases[] = {{2.0, "2.0"}, {0.1, "0.10000000000000001"}, {1e300, "1.0000000000000001e+300"},
               {NAN, "NaN"}, {INFINITY, "Infinity"},       {-INFINITY, "-Infinity"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    char want[128];
    snprintf(want, sizeof want, "{\"root_index\":0,\"nodes\":[{\"type\":\"float\",\"data\":%s}]}",
             cases[i].data);
    TVMFFIAny args[2] = {core_float(cases[i].v), core_none()};
    TVMFFIAny text = host_ok("ffi.ToJSONGraphString", args, 2);
    TVMFFIByteArray b = core_str_bytes(&text);
    cr_expect(b.size == strlen(want) && memcmp(b.data, want, b.size) == 0, "%s: wrote %.*s",
              cases[i].data, (int)b.size, b.data);
    core_release(&text);
  }
}

/* REC-011: FromJSONGraphString reads such a graph back into an equal
 * value; big ints, shapes, devices and dtypes come back too. */
Test(recursive, REC_011_json_graph_read) {
  TVMFFIAny graph = core_c_str(kSampleGraph), back = host_ok("ffi.FromJSONGraphString", &graph, 1);
  TVMFFIAny l = sample_list();
  cr_expect(eq(back, l), "the graph read back differs");
  core_release(&back);
  core_release(&l);
  graph = core_c_str(
      "{\"root_index\":5,\"nodes\":[{\"type\":\"ffi.BigInt\",\"data\":\"-1180591620717411303424\"},"
      "{\"type\":\"ffi.Shape\",\"data\":[2,3]},{\"type\":\"Device\",\"data\":[2,1]},"
      "{\"type\":\"DataType\",\"data\":\"float32\"},{\"type\":\"bool\",\"data\":false},"
      "{\"type\":\"ffi.Array\",\"data\":[0,1,2,3,4]}]}");
  back = host_ok("ffi.FromJSONGraphString", &graph, 1);
  expect_repr(back, "(-1180591620717411303424, Shape(2, 3), cuda:1, float32, False)");
  core_release(&back);
  /* \u escapes, surrogate pairs among them, become UTF-8. */
  graph = core_c_str(
      "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.String\",\"data\":"
      "\"a\\u00e9\\ud83d\\ude01\\udbff\\udfffb\\n\"}]}");
  back = host_ok("ffi.FromJSONGraphString", &graph, 1);
  TVMFFIByteArray got = core_str_bytes(&back);
  cr_expect(host_is_str(&back,
                        "a\xc3\xa9\xf0\x9f\x98\x81\xf4\x8f\xbf\xbf"
                        "b\n"),
            "escapes read as %.*s", (int)got.size, got.data);
  core_release(&back);
}

/* The JSON graph ToJSONGraphString writes for v (as a C string to free). */
static void expect_graph(TVMFFIAny v, const char* want) {
  TVMFFIAny args[2] = {v, core_none()}, text = host_ok("ffi.ToJSONGraphString", args, 2);
  TVMFFIByteArray b = core_str_bytes(&text);
  cr_expect(b.size == strlen(want) && memcmp(b.data, want, b.size) == 0, "wrote %.*s, expected %s",
            (int)b.size, b.data, want);
  core_release(&text);
}

/* REC-010: every kind of node as upstream writes it: shapes, devices,
 * dtypes, big ints in decimal, dicts, bytes in base64 (padded), ints of
 * either sign, and text with each JSON escape. */
Test(recursive, REC_010_json_graph_kinds) {
  uint64_t w[2] = {5, 1};
  TVMFFIAny shape_args[2] = {core_int(2), core_int(3)}, shape = host_ok("ffi.Shape", shape_args, 2);
  TVMFFIAny dev = core_none(), dt = core_none(), b = big(w, 2);
  dev.type_index = kTVMFFIDevice;
  dev.v_device = (DLDevice){kDLCUDA, 1};
  dt.type_index = kTVMFFIDataType;
  dt.v_dtype = (DLDataType){kDLFloat, 32, 1};
  TVMFFIAny kv[2] = {core_c_str("k"), core_int(-5)}, d = host_ok("ffi.Dict", kv, 2);
  TVMFFIByteArray b1 = {"\xfb", 1}, b2 = {"\xfb\xff", 2}, b3 = {"\xfb\xff\xbf", 3};
  TVMFFIAny items[9] = {shape,
                        dev,
                        dt,
                        b,
                        d,
                        byte_ptr(&b1),
                        byte_ptr(&b2),
                        byte_ptr(&b3),
                        core_c_str("q\"\\\n\r\t\b\f\x01/\xc3\xa9")};
  TVMFFIAny a = arr(items, 9);
  expect_graph(a,
               "{\"root_index\":11,\"nodes\":["
               "{\"type\":\"ffi.Shape\",\"data\":[2,3]},"
               "{\"type\":\"Device\",\"data\":[2,1]},"
               "{\"type\":\"DataType\",\"data\":\"float32\"},"
               "{\"type\":\"ffi.BigInt\",\"data\":\"18446744073709551621\"},"
               "{\"type\":\"ffi.String\",\"data\":\"k\"},"
               "{\"type\":\"int\",\"data\":-5},"
               "{\"type\":\"ffi.Dict\",\"data\":[4,5]},"
               "{\"type\":\"ffi.Bytes\",\"data\":\"+w==\"},"
               "{\"type\":\"ffi.Bytes\",\"data\":\"+\\/8=\"},"
               "{\"type\":\"ffi.Bytes\",\"data\":\"+\\/+\\/\"},"
               "{\"type\":\"ffi.String\",\"data\":\"q\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\/\xc3\xa9\"},"
               "{\"type\":\"ffi.Array\",\"data\":[0,1,2,3,6,7,8,9,10]}]}");
  for (TVMFFIAny *v = (TVMFFIAny[]){shape, b, d, a}, *end = v + 4; v < end; ++v) core_release(v);
}

/* REC-010: equal values and one object are one node: [1, 1, true, 1.5,
 * 1.5, "a", "a", L, L, M] with L an empty list and M a map {None: L} */
Test(recursive, REC_010_json_graph_shared_nodes) {
  TVMFFIAny l = lst(NULL, 0), kv[2] = {core_none(), l}, m = host_ok("ffi.Map", kv, 2);
  TVMFFIAny heap_a = host_str("a");
  TVMFFIAny items[10] = {core_int(1),
                         core_int(1),
                         core_bool(1),
                         core_float(1.5),
                         core_float(1.5),
                         core_c_str("a"),
                         heap_a,
                         l,
                         l,
                         m};
  TVMFFIAny a = arr(items, 10);
  expect_graph(a,
               "{\"root_index\":7,\"nodes\":["
               "{\"type\":\"int\",\"data\":1},"
               "{\"type\":\"bool\",\"data\":true},"
               "{\"type\":\"float\",\"data\":1.5},"
               "{\"type\":\"ffi.String\",\"data\":\"a\"},"
               "{\"type\":\"ffi.List\",\"data\":[]},"
               "{\"type\":\"None\"},"
               "{\"type\":\"ffi.Map\",\"data\":[5,4]},"
               "{\"type\":\"ffi.Array\",\"data\":[0,0,1,2,2,3,3,4,4,6]}]}");
  for (TVMFFIAny *v = (TVMFFIAny[]){l, m, heap_a, a}, *end = v + 4; v < end; ++v) core_release(v);
}

/* REC-017: an object value whose pointer is NULL (a null reference) is
 * None: printed as None, written as a None node, unequal to (1,) either
 * way round. */
Test(recursive, REC_017_null_object_values) {
  static const int32_t kinds[] = {kTVMFFIArray, kTVMFFIObject};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny null_ref = core_none();
    null_ref.type_index = kinds[i];
    expect_repr(null_ref, "None");
    expect_graph(null_ref, "{\"root_index\":0,\"nodes\":[{\"type\":\"None\"}]}");
  }
  TVMFFIAny null_array = core_none(), one = ints("ffi.Array", 1, 0, 1);
  null_array.type_index = kTVMFFIArray;
  cr_expect(!eq(one, null_array), "(1,) equals a null array reference");
  cr_expect(!eq(null_array, one), "a null array reference equals (1,)");
  core_release(&one);
}

/* REC-011: the reader takes whitespace between tokens, keys it does not
 * know (of any JSON kind), a node's data before its type, every JSON
 * escape, padded base64, big ints past 64 bits and the extreme int64. */
Test(recursive, REC_011_json_graph_read_kinds) {
  TVMFFIAny graph = core_c_str(
      " {\"extra\" : [1, {\"a\": \"b\"}, true, null, -2.5e3] ,\r\n \"root_index\" :\t7 , "
      "\"nodes\" : [ { \"type\" : \"ffi.String\" , \"data\" : \"q\\\"\\\\\\/\\b\\f\\r\\t\\n\" ,"
      " \"note\" : {\"x\": [1, \"y\"]} } ,\n {\"data\": \"+/8=\", \"type\": \"ffi.Bytes\"}, "
      "{\"type\": \"ffi.BigInt\", \"data\": \"18446744073709551621\"}, "
      "{\"type\": \"int\", \"data\": -9223372036854775808}, "
      "{\"type\": \"ffi.Dict\", \"data\": [0, 1]}, {\"type\": \"float\", \"data\": -2.5e-3}, "
      "{\"type\": \"ffi.Map\", \"data\": []}, "
      "{\"type\": \"ffi.Array\", \"data\": [0, 1, 2, 3, 4, 5, 6]} ] } ");
  TVMFFIAny back = host_ok("ffi.FromJSONGraphString", &graph, 1);
  expect_repr(
      back,
      "(\"q\\\"\\\\/\\x08\\x0c\\r\\t\\n\", b\"\\xfb\\xff\", 18446744073709551621, "
      "-9223372036854775808, {\"q\\\"\\\\/\\x08\\x0c\\r\\t\\n\": b\"\\xfb\\xff\"}, -0.0025, {})");
  core_release(&back);
}

/* The value of a one-node graph {"type": type, "data": data}, printed. */
static void expect_node_repr(const char* type, const char* data, const char* want) {
  char text[256];
  snprintf(text, sizeof text, "{\"root_index\":0,\"nodes\":[{\"type\":\"%s\",\"data\":%s}]}", type,
           data);
  TVMFFIAny graph = core_c_str(text), back = host_ok("ffi.FromJSONGraphString", &graph, 1);
  expect_repr(back, want);
  core_release(&back);
}

/* REC-011: big ints of either sign and of 1 to 3 words, dtypes with
 * lanes, devices, floats in exponent form, and bytes of each padding. */
Test(recursive, REC_011_json_graph_read_values) {
  expect_node_repr("ffi.BigInt", "\"-18446744073709551621\"", "-18446744073709551621");
  expect_node_repr("ffi.BigInt", "\"340282366920938463463374607431768211457\"",
                   "340282366920938463463374607431768211457");
  expect_node_repr("ffi.BigInt", "\"-9223372036854775809\"", "-9223372036854775809");
  expect_node_repr("ffi.BigInt", "\"9223372036854775808\"", "9223372036854775808");
  expect_node_repr("DataType", "\"int8x4\"", "int8x4");
  expect_node_repr("Device", "[1, 0]", "cpu:0");
  expect_node_repr("float", "1e3", "1000");
  expect_node_repr("float", "-0.5", "-0.5");
  expect_node_repr("ffi.Bytes", "\"YQ==\"", "b\"a\"");
  expect_node_repr("ffi.Bytes", "\"YWI=\"", "b\"ab\"");
  expect_node_repr("ffi.Bytes", "\"YWJj\"", "b\"abc\"");
  expect_node_repr("ffi.Bytes", "\"\"", "b\"\"");
  expect_node_repr("ffi.String", "\"\"", "\"\"");
  expect_node_repr("ffi.Shape", "[]", "Shape()");
}

/* Expects FromJSONGraphString(text) to return -1 with an error of `kind`
 * (NULL: any kind). */
static void expect_graph_refused(const char* text, const char* kind) {
  TVMFFIAny arg = core_c_str(text), out;
  int rc = host_call("ffi.FromJSONGraphString", &arg, 1, &out);
  if (rc == 0) core_release(&out);
  ConfError e = conf_take_error();
  cr_expect(rc == -1 && e.kind[0] && (kind == NULL || strcmp(e.kind, kind) == 0),
            "%s: returned %d, raised %s: %s (expected -1 and %s)", text, rc,
            e.kind[0] ? e.kind : "nothing", e.message, kind ? kind : "an error");
}

/* REC-012: text that is no JSON graph (malformed, a root or a reference
 * naming no node before it) is refused with a ValueError, not read. */
/* REC-012: an object with no members names no root. */
Test(recursive, REC_012_empty_object_names_no_root) {
  TVMFFIAny text = core_c_str("{}");
  host_refused("ffi.FromJSONGraphString", &text, 1, "ValueError", "root_index");
}

Test(recursive, REC_012_json_graph_refusals) {
  static const char* const bad[] = {
      "{",
      "[1]",
      "{\"root_index\":3,\"nodes\":[]}",
      "{\"root_index\":-1,\"nodes\":[]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"abc}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.String\",\"data\":\"a\\qb\"}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[}]}",
      "{\"root_index\":1,\"nodes\":[{\"type\":\"int\",\"data\":1},"
      "{\"type\":\"ffi.Array\",\"data\":[0,2]}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[-1]}]}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) expect_graph_refused(bad[i], "ValueError");
}

/* REC-015: a node without its type or data, or whose data is not of its
 * type, is refused with an error (upstream: KeyError, TypeError). */
Test(recursive, REC_015_json_graph_bad_nodes) {
  static const char* const bad[] = {
      "{\"root_index\":0,\"nodes\":[{\"data\":1}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"int\"}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":99999999999999999999}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":1.5}]}",
      "{\"root_index\":0,\"nodes\":[{\"type\":\"float\",\"data\":\"x\"}]}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) expect_graph_refused(bad[i], NULL);
}

/* REC-016: a container node that names itself is refused with a
 * ValueError, not built (it is not yet made). */
Test(recursive, REC_016_json_graph_self_reference) {
  expect_graph_refused("{\"root_index\":0,\"nodes\":[{\"type\":\"ffi.Array\",\"data\":[0]}]}",
                       "ValueError");
}

static int do_nothing(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)args, (void)n, (void)out;
  return 0;
}

/* Expects a and b RecursiveEq, neither before the other; releases both. */
static void expect_fieldless_pair(TVMFFIAny a, TVMFFIAny b, const char* what) {
  cr_expect(eq(a, b), "two %s are not RecursiveEq", what);
  cr_expect(!truth("ffi.RecursiveLt", a, b) && !truth("ffi.RecursiveLt", b, a),
            "one of two %s orders before the other", what);
  core_release(&a);
  core_release(&b);
}

/* REC-009: Functions and errors have no fields: two of a kind are
 * RecursiveEq, and neither orders before the other. */
Test(recursive, REC_009_functions_and_errors_compare_as_fieldless) {
  TVMFFIObjectHandle f = NULL, g = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, do_nothing, NULL, &f), 0);
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, hook_refusing, NULL, &g), 0);
  expect_fieldless_pair(core_obj(f), core_obj(g), "Functions");
  TVMFFIByteArray kind = {"ValueError", 10}, message = {"the same words", 14}, trace = {"", 0};
  TVMFFIObjectHandle e1 = NULL, e2 = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&kind, &message, &trace, &e1), 0);
  cr_assert_eq(API(TVMFFIErrorCreate)(&kind, &message, &trace, &e2), 0);
  expect_fieldless_pair(core_obj(e1), core_obj(e2), "errors");
}

/* REC-013: a DeepCopy that fails part way gives back what it copied, also
 * a copy of a list that holds itself (a cycle no count would free). */
Test(recursive, REC_013_failed_copy_keeps_nothing) {
  /* Twice, counting the second time: the first may fill lasting caches. */
  for (int round = 0; round < 2; ++round) {
    if (round == 1) core_count_begin();
    TVMFFIObjectHandle f = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, do_nothing, NULL, &f), 0);
    TVMFFIAny fn = core_obj(f), l = lst(NULL, 0), twice[2] = {l, l};
    host_ok("ffi.ListAppend", twice, 2);
    /* (l, fn): l's copy is whole, holding itself, when fn is refused. */
    TVMFFIAny items[2] = {l, fn}, a = arr(items, 2), out = core_none();
    cr_expect_eq(host_call("ffi.DeepCopy", &a, 1, &out), -1, "DeepCopy copied a Function");
    EXPECT_RAISED(.kind = NULL);     /* upstream: InternalError */
    host_ok("ffi.ListClear", &l, 1); /* the list's hold on itself */
    for (TVMFFIAny *v = (TVMFFIAny[]){a, l, fn}, *end = v + 3; v < end; ++v) core_release(v);
  }
  core_count_end("a failed DeepCopy of a list that holds itself");
}

/* REC-013: the walks give back every object they make but their result:
 * the memo of a hash, the copies a comparison does not keep. */
Test(recursive, REC_013_walks_keep_nothing) {
  static const char* const fns[] = {
      "ffi.RecursiveEq", "ffi.RecursiveLt",       "ffi.RecursiveHash",      "ffi.ReprPrint",
      "ffi.DeepCopy",    "ffi.ToJSONGraphString", "ffi.FromJSONGraphString"};
  /* Twice: the first round may fill caches that live as long as the
   * runtime (type attributes made on first use); the second counts. */
  for (int round = 0; round < 2; ++round) {
    if (round == 1) core_count_begin();
    TVMFFIAny inner = ints("ffi.List", 1, 2, 2),
              kv[2] = {core_c_str("a key long enough for the heap"), inner};
    TVMFFIAny m = host_ok("ffi.Map", kv, 2), items[3] = {m, inner, core_int(3)};
    TVMFFIAny a = arr(items, 3), b = arr(items, 3);
    for (size_t i = 0; i < sizeof fns / sizeof *fns; ++i) {
      TVMFFIAny args[2] = {a, b};
      int32_t n = i < 2 ? 2 : 1;
      if (i >= 5) args[1] = core_none(), n = 2; /* ToJSONGraphString(value, None) */
      TVMFFIAny graph = core_none();
      if (i == 6) graph = host_ok("ffi.ToJSONGraphString", args, 2), args[0] = graph, n = 1;
      long before = round ? core_count_live() : 0;
      TVMFFIAny out = host_ok(fns[i], args, n);
      core_release(&out);
      if (round)
        cr_expect_eq(core_count_live(), before, "%s keeps %ld objects", fns[i],
                     core_count_live() - before);
      core_release(&graph);
    }
    for (TVMFFIAny *v = (TVMFFIAny[]){inner, m, a, b}, *end = v + 4; v < end; ++v) core_release(v);
  }
  core_count_end("the recursive walks");
}

/* A list nested `depth` deep: depth + 1 lists, each the only element of
 * the one before; the innermost holds `leaf` unless it is None. */
static TVMFFIAny nested_list(int depth, TVMFFIAny leaf) {
  TVMFFIAny root = lst(NULL, 0), cur = root;
  for (int i = 0; i <= depth; ++i) {
    TVMFFIAny inner = i < depth ? lst(NULL, 0) : leaf, args[2] = {cur, inner};
    if (i == depth && leaf.type_index == kTVMFFINone) break;
    TVMFFIAny none = host_ok("ffi.ListAppend", args, 2);
    core_release(&none);
    if (cur.v_obj != root.v_obj) core_release(&cur);
    cur = inner;
  }
  if (cur.v_obj != root.v_obj && cur.type_index == kTVMFFIList) core_release(&cur);
  return root;
}

/* The RecursiveHash of an empty list nested `depth` deep, from REC-005. */
static uint64_t nested_hash(int depth) {
  uint64_t key = key_hash(kTVMFFIList), h = combine(key, 0);
  for (int i = 0; i < depth; ++i) h = combine(combine(key, 1), combine(h, 0));
  return h;
}

/* How deep REC-018 nests: 100,000, a tenth of it under valgrind (the
 * stress divisor) and ASan. Those runs look for leaks and bad reads, which
 * a tenth (past any old C-stack bound) shows as well, at a hundredth of the
 * time: the map under the walks' memos costs more than linear time there
 * (and an implementation whose release of a chain of lists recurses in C
 * may overflow the stack with ASan's larger frames). */
static int deep_nesting_depth(void) {
#ifdef __SANITIZE_ADDRESS__
  return 10000;
#else
  return core_stress_rounds(10) * 10000;
#endif
}

/* REC-018: a list nested 100,000 deep is walked whole: RecursiveEq to
 * another built alike and not to one whose innermost list holds 1, which
 * it is RecursiveLt; hashed as REC-005 says; deep-copied into a new list
 * equal to it whose element is new too; printed whole 10,000 deep. */
Test(recursive, REC_018_deep_nesting) {
  enum { kPrinted = 10000 };
  const int kDeep = deep_nesting_depth();
  TVMFFIAny a = nested_list(kDeep, core_none()), b = nested_list(kDeep, core_none());
  TVMFFIAny d = nested_list(kDeep, core_int(1)), args[2] = {a, b};
  cr_expect(eq(a, b), "two lists nested %d deep differ", kDeep);
  cr_expect(!truth("ffi.RecursiveLt", a, b), "a list nested %d deep is below its twin", kDeep);
  cr_expect(truth("ffi.RecursiveLe", a, b));
  cr_expect(!eq(a, d), "a list nested %d deep equals one holding 1 at the bottom", kDeep);
  cr_expect(truth("ffi.RecursiveLt", a, d), "[] at the bottom is not below [1]");
  cr_expect_eq(hash_of(a), nested_hash(kDeep), "hash of a list nested %d deep", kDeep);
  cr_expect_eq(hash_of(b), hash_of(a));
  TVMFFIAny copy = host_ok("ffi.DeepCopy", args, 1);
  cr_assert_eq(copy.type_index, kTVMFFIList, "DeepCopy returned type index %d", copy.type_index);
  cr_expect_neq(copy.v_obj, a.v_obj, "DeepCopy returned its argument");
  const TVMFFIAny* first = (const TVMFFIAny*)TVMFFISeqGetCellPtr(copy.v_obj)->data;
  cr_expect_neq(first->v_obj, ((const TVMFFIAny*)TVMFFISeqGetCellPtr(a.v_obj)->data)->v_obj,
                "the copy shares its element with the original");
  cr_expect(eq(copy, a), "the copy of a list nested %d deep differs from it", kDeep);
  TVMFFIAny small = nested_list(kPrinted, core_none());
  char* want = malloc(2 * (kPrinted + 1) + 1);
  cr_assert_not_null(want);
  memset(want, '[', kPrinted + 1);
  memset(want + kPrinted + 1, ']', kPrinted + 1);
  want[2 * (kPrinted + 1)] = '\0';
  expect_repr(small, want);
  free(want);
  for (TVMFFIAny *v = (TVMFFIAny[]){a, b, d, copy, small}, *end = v + 5; v < end; ++v)
    core_release(v);
}
