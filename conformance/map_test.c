/* Clauses MAP-001 to MAP-015 of spec/host.md: maps and dicts made and used
 * through the runtime's global functions, in the layout of upstream's
 * headers, shared in both directions with C++ code built on those headers
 * (conformance/testlibs/container_interop.cc). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_support.h"

#define SMALL_TAG ((uint64_t)1 << 63)

/* The fields after the header, as upstream's MapBaseObj lays them out. */
typedef struct {
  TVMFFIObject header;
  void* data;
  uint64_t size;
  uint64_t slots;
  void (*data_deleter)(void*);
} MapBase;

static const MapBase* base_of(TVMFFIAny m) { return (const MapBase*)m.v_obj; }

/* The key of entry i as container_interop.cc makes it: an int for even i,
 * a string for odd i (short ones small, long ones on the heap). */
static TVMFFIAny key_of(int64_t i) {
  if (i % 2 == 0) return core_int(i);
  char text[64];
  snprintf(text, sizeof text, i % 4 == 1 ? "k%lld" : "a-longer-key-%lld", (long long)i);
  return host_str(text);
}

/* ffi.Map or ffi.Dict of key_of(i) -> i * 10 for i in [0, n). */
static TVMFFIAny make_range(const char* ctor, int64_t n) {
  TVMFFIAny* args = calloc((size_t)(2 * n + 1), sizeof *args);
  for (int64_t i = 0; i < n; ++i) {
    args[2 * i] = key_of(i);
    args[2 * i + 1] = core_int(i * 10);
  }
  TVMFFIAny m = host_ok(ctor, args, (int32_t)(2 * n));
  for (int64_t i = 0; i < n; ++i) core_release(&args[2 * i]);
  free(args);
  return m;
}

static int64_t size_of(const char* fn, TVMFFIAny m) { return host_int_of(host_ok(fn, &m, 1), fn); }

static TVMFFIAny get(const char* fn, TVMFFIAny m, TVMFFIAny key) {
  TVMFFIAny args[2] = {m, key};
  return host_ok(fn, args, 2);
}

/* How many i in [begin, end) the runtime finds with key_of(i) -> i * 10. */
static int64_t count_range(const char* prefix, TVMFFIAny m, int64_t begin, int64_t end) {
  char fn[64];
  snprintf(fn, sizeof fn, "ffi.%sGetItemOrMissing", prefix);
  int64_t found = 0;
  for (int64_t i = begin; i < end; ++i) {
    TVMFFIAny key = key_of(i), v = get(fn, m, key);
    found += v.type_index == kTVMFFIInt && v.v_int64 == i * 10;
    core_release(&v);
    core_release(&key);
  }
  return found;
}

/* Calls a Function value with one int argument. */
static TVMFFIAny call_fn(TVMFFIAny f, int64_t arg) {
  TVMFFIAny a = core_int(arg), out = core_none();
  int rc = API(TVMFFIFunctionCall)(f.v_obj, &a, 1, &out);
  ConfError e;
  if (rc != 0) e = conf_take_error();
  cr_assert_eq(rc, 0, "iteration functor(%lld) returned %d: %s", (long long)arg, rc,
               rc ? e.message : "");
  return out;
}

/* The keys of the map, through the iteration functor, into keys[0..max). */
static int64_t iterate_keys(const char* fn, TVMFFIAny m, TVMFFIAny* keys, int64_t max) {
  int64_t n = size_of(strstr(fn, "Dict") ? "ffi.DictSize" : "ffi.MapSize", m), got = 0;
  TVMFFIAny f = host_ok(fn, &m, 1);
  cr_assert_eq(f.type_index, kTVMFFIFunction);
  for (int64_t i = 0; i < n && got < max; ++i) {
    keys[got++] = call_fn(f, 0);
    TVMFFIAny more = call_fn(f, 2);
    cr_assert_eq(more.type_index, kTVMFFIBool);
    cr_expect_eq(more.v_int64, i + 1 < n, "step %lld of %lld: more = %lld", (long long)i,
                 (long long)n, (long long)more.v_int64);
    if (!more.v_int64) break;
  }
  core_release(&f);
  return got;
}

static int same_key(const TVMFFIAny* a, const TVMFFIAny* b) {
  if (a->type_index == kTVMFFIInt || b->type_index == kTVMFFIInt)
    return a->type_index == b->type_index && a->v_int64 == b->v_int64;
  TVMFFIByteArray x = core_str_bytes(a), y = core_str_bytes(b);
  return x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
}

/* MAP-001: construction, size and look-up; a key given twice keeps its
 * first place and takes the last value. */
Test(map, MAP_001_make_size_get) {
  TVMFFIAny args[8] = {core_int(1), core_int(10), core_c_str("two"),   core_int(20),
                       core_int(1), core_int(11), core_c_str("three"), core_int(30)};
  TVMFFIAny m = host_ok("ffi.Map", args, 8), keys[4];
  cr_assert_eq(m.type_index, kTVMFFIMap);
  cr_expect_eq(size_of("ffi.MapSize", m), 3);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_int(1)), "[1]"), 11);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_c_str("three")), "[three]"), 30);
  cr_assert_eq(iterate_keys("ffi.MapForwardIterFunctor", m, keys, 4), 3);
  cr_expect(keys[0].type_index == kTVMFFIInt && keys[0].v_int64 == 1);
  cr_expect(host_is_str(&keys[1], "two") && host_is_str(&keys[2], "three"));
  for (int i = 0; i < 3; ++i) core_release(&keys[i]);
  TVMFFIAny empty = host_ok("ffi.Map", NULL, 0);
  cr_expect_eq(size_of("ffi.MapSize", empty), 0);
  core_release(&empty);
  core_release(&m);
}

/* MAP-002: absent keys: KeyError, a count of 0, the missing marker. */
Test(map, MAP_002_absent_keys) {
  TVMFFIAny args[2] = {core_c_str("a"), core_int(1)};
  TVMFFIAny m = host_ok("ffi.Map", args, 2), q[2] = {m, core_c_str("b")};
  host_refused("ffi.MapGetItem", q, 2, "KeyError", NULL);
  cr_expect_eq(host_int_of(host_ok("ffi.MapCount", q, 2), "count b"), 0);
  q[1] = core_c_str("a");
  cr_expect_eq(host_int_of(host_ok("ffi.MapCount", q, 2), "count a"), 1);
  q[1] = core_c_str("b");
  TVMFFIAny missing = host_ok("ffi.MapGetItemOrMissing", q, 2);
  TVMFFIAny marker = host_ok("ffi.GetInvalidObject", NULL, 0);
  cr_expect(missing.type_index >= kTVMFFIStaticObjectBegin && missing.v_obj == marker.v_obj,
            "an absent key gives type index %d, not the missing marker", missing.type_index);
  core_release(&missing);
  core_release(&marker);
  core_release(&m);
}

/* MAP-003: keys are the same key as upstream's AnyEqual says: text by
 * content in every form, 1, true and 1.0 apart, objects by identity. */
Test(map, MAP_003_key_equality) {
  TVMFFIAny heap = host_str("a-heap-string-key"), small = host_str("sk");
  TVMFFIAny arr = host_ok("ffi.Array", NULL, 0), arr2 = host_ok("ffi.Array", NULL, 0);
  TVMFFIAny args[12] = {heap,        core_int(1), small,           core_int(2),
                        core_int(1), core_int(3), core_bool(1),    core_int(4),
                        arr,         core_int(5), core_float(1.0), core_int(6)};
  TVMFFIAny m = host_ok("ffi.Map", args, 12);
  cr_expect_eq(size_of("ffi.MapSize", m), 6);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_c_str("a-heap-string-key")), "heap"), 1);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_c_str("sk")), "small"), 2);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_int(1)), "int"), 3);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_bool(1)), "bool"), 4);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, core_float(1.0)), "float"), 6);
  cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, arr), "array"), 5);
  TVMFFIAny q[2] = {m, arr2};
  cr_expect_eq(host_int_of(host_ok("ffi.MapCount", q, 2), "other array"), 0);
  /* A small map compares every key it holds: objects still by identity. */
  TVMFFIAny one[2] = {arr, core_int(5)};
  TVMFFIAny sm = host_ok("ffi.Map", one, 2);
  TVMFFIAny sq[2] = {sm, arr2};
  cr_expect_eq(host_int_of(host_ok("ffi.MapCount", sq, 2), "other array, small map"), 0);
  for (TVMFFIAny *v = (TVMFFIAny[]){heap, small, arr, arr2, m, sm}, *end = v + 6; v < end; ++v)
    core_release(v);
}

/* MAP-004: up to 4 entries a map is small: slots carries bit 63, size is
 * the entry count, data holds the pairs in insertion order. */
Test(map, MAP_004_small_layout) {
  for (int64_t n = 0; n <= 4; ++n) {
    TVMFFIAny m = make_range("ffi.Map", n);
    const MapBase* b = base_of(m);
    cr_expect(b->slots & SMALL_TAG, "%lld entries: slots %llx has no small tag", (long long)n,
              (unsigned long long)b->slots);
    cr_expect_eq(b->size, (uint64_t)n);
    cr_expect_geq(b->slots & ~SMALL_TAG, (uint64_t)(n > 2 ? n : 2));
    const TVMFFIAny* kv = b->data;
    for (int64_t i = 0; i < n; ++i) {
      TVMFFIAny key = key_of(i);
      cr_expect(same_key(&kv[2 * i], &key), "%lld entries: pair %lld out of order", (long long)n,
                (long long)i);
      cr_expect(kv[2 * i + 1].type_index == kTVMFFIInt && kv[2 * i + 1].v_int64 == i * 10);
      core_release(&key);
    }
    core_release(&m);
  }
}

/* MAP-005: past 4 entries a map is dense (no tag, slots a power of two
 * above the size), iterated in insertion order. */
Test(map, MAP_005_dense_layout_order) {
  static const int64_t sizes[] = {5, 17, 100, 1000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    int64_t n = sizes[s];
    TVMFFIAny m = make_range("ffi.Map", n);
    const MapBase* b = base_of(m);
    cr_expect(!(b->slots & SMALL_TAG) && b->slots > (uint64_t)n && (b->slots & (b->slots - 1)) == 0,
              "%lld entries: slots %llx", (long long)n, (unsigned long long)b->slots);
    cr_expect_eq(b->size, (uint64_t)n);
    cr_expect_eq(count_range("Map", m, 0, n), n);
    TVMFFIAny* keys = calloc((size_t)n, sizeof *keys);
    cr_assert_eq(iterate_keys("ffi.MapForwardIterFunctor", m, keys, n), n);
    for (int64_t i = 0; i < n; ++i) {
      TVMFFIAny key = key_of(i);
      cr_expect(same_key(&keys[i], &key), "%lld entries: key %lld out of order", (long long)n,
                (long long)i);
      core_release(&key);
      core_release(&keys[i]);
    }
    free(keys);
    core_release(&m);
  }
}

/* MAP-006: C++ code built on upstream's headers finds every key of maps and
 * dicts the runtime made, small and dense, and walks them in order. */
Test(map, MAP_006_runtime_maps_read_by_cpp) {
  static const int64_t sizes[] = {3, 4, 5, 17, 300, 16000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    int64_t n = sizes[s];
    for (int dict = 0; dict < 2; ++dict) {
      TVMFFIAny m = make_range(dict ? "ffi.Dict" : "ffi.Map", n);
      TVMFFIAny args[3] = {m, core_int(0), core_int(n + 4)};
      int64_t found = host_int_of(
          host_interop(dict ? "dict_count_range" : "map_count_range", args, 3), "found");
      cr_expect_eq(found, n, "C++ found %lld of %lld keys in a %s", (long long)found, (long long)n,
                   dict ? "dict" : "map");
      core_release(&m);
    }
  }
  TVMFFIAny m = make_range("ffi.Map", 9), keys = host_interop("map_keys", &m, 1);
  TVMFFIAny nk = keys;
  cr_expect_eq(size_of("ffi.ArraySize", nk), 9);
  for (int64_t i = 0; i < 9; ++i) {
    TVMFFIAny q[2] = {keys, core_int(i)}, k = host_ok("ffi.ArrayGetItem", q, 2), want = key_of(i);
    cr_expect(same_key(&k, &want), "C++ walks entry %lld out of order", (long long)i);
    core_release(&k);
    core_release(&want);
  }
  core_release(&keys);
  core_release(&m);
}

/* MAP-015: C++ code finds keys of every kind in maps the runtime made,
 * small and dense, by its own hashing: floats (0.0 and -0.0 two keys),
 * bools, None, dtypes, devices, bytes and str of lengths around the
 * 8-byte word (small and heap forms), and an opaque pointer. */
Test(map, MAP_015_key_kinds_found_by_cpp) {
  static char target;
  TVMFFIAny keys[20];
  int n = 0;
  keys[n++] = core_float(1.5);
  keys[n++] = core_float(0.0);
  keys[n++] = core_float(-0.0);
  keys[n++] = core_float(NAN);
  keys[n++] = core_bool(1);
  keys[n++] = core_bool(0);
  keys[n++] = core_none();
  keys[n] = core_none();
  keys[n].type_index = kTVMFFIDataType;
  keys[n++].v_dtype = (DLDataType){kDLFloat, 16, 2};
  keys[n] = core_none();
  keys[n].type_index = kTVMFFIDevice;
  keys[n++].v_device = (DLDevice){kDLCUDA, 2};
  keys[n] = core_none();
  keys[n].type_index = kTVMFFIOpaquePtr;
  keys[n++].v_ptr = &target;
  static const char text[] = "0123456789abcdefghij";
  static const size_t lengths[] = {2, 8, 13, 16, 20};
  static TVMFFIByteArray bytes[5];
  for (size_t i = 0; i < 5; ++i) {
    bytes[i] = (TVMFFIByteArray){text, lengths[i]};
    keys[n] = core_none();
    keys[n].type_index = kTVMFFIByteArrayPtr;
    keys[n++].v_ptr = &bytes[i];
  }
  for (size_t i = 0; i < 5; ++i) {
    TVMFFIByteArray b = {text + 1, lengths[i]};
    cr_assert_eq(API(TVMFFIStringFromByteArray)(&b, &keys[n++]), 0);
  }
  for (int small = 0; small < 2; ++small) {
    int count = small ? 4 : n;
    TVMFFIAny args[40];
    for (int i = 0; i < count; ++i) args[2 * i] = keys[i], args[2 * i + 1] = core_int(i);
    TVMFFIAny m = host_ok("ffi.Map", args, 2 * count), fresh = host_ok("ffi.Array", keys, count);
    cr_expect_eq(size_of("ffi.MapSize", m), count, "%d keys made %lld entries", count,
                 (long long)size_of("ffi.MapSize", m));
    TVMFFIAny q[2] = {m, fresh};
    int64_t found = host_int_of(host_interop("map_count_keys", q, 2), "found");
    cr_expect_eq(found, count, "C++ found %lld of the %d keys of a %s map", (long long)found, count,
                 small ? "small" : "dense");
    for (int i = 0; i < count; ++i) {
      TVMFFIAny v = get("ffi.MapGetItemOrMissing", m, keys[i]);
      cr_expect(v.type_index == kTVMFFIInt && v.v_int64 == i, "the runtime lost key %d", i);
      core_release(&v);
    }
    core_release(&fresh);
    core_release(&m);
  }
  for (int i = n - 5; i < n; ++i) core_release(&keys[i]);
}

/* MAP-001: the iteration functor's f(1) is the value of the current key,
 * in small and dense maps and dicts alike. */
Test(map, MAP_001_iteration_values) {
  static const int64_t sizes[] = {3, 9};
  for (int k = 0; k < 4; ++k) {
    int dict = k & 1;
    int64_t n = sizes[k >> 1];
    TVMFFIAny m = make_range(dict ? "ffi.Dict" : "ffi.Map", n);
    TVMFFIAny f = host_ok(dict ? "ffi.DictForwardIterFunctor" : "ffi.MapForwardIterFunctor", &m, 1);
    for (int64_t i = 0; i < n; ++i) {
      TVMFFIAny key = call_fn(f, 0), value = call_fn(f, 1), want = key_of(i);
      cr_expect(same_key(&key, &want), "%lld entries: key %lld", (long long)n, (long long)i);
      cr_expect(value.type_index == kTVMFFIInt && value.v_int64 == i * 10,
                "%lld entries: value %lld", (long long)n, (long long)i);
      TVMFFIAny more = call_fn(f, 2);
      cr_expect_eq(more.v_int64, i + 1 < n);
      core_release(&key);
      core_release(&value);
      core_release(&want);
    }
    core_release(&f);
    core_release(&m);
  }
}

/* MAP-001: the iteration functor takes any command but 0 and 1 as a step
 * (-1 and 3 as 2 is). */
Test(map, MAP_001_other_commands_step) {
  static const int64_t commands[] = {-1, 3};
  for (size_t c = 0; c < 2; ++c) {
    TVMFFIAny m = make_range("ffi.Map", 3);
    TVMFFIAny f = host_ok("ffi.MapForwardIterFunctor", &m, 1);
    TVMFFIAny more = call_fn(f, commands[c]);
    cr_expect(more.type_index == kTVMFFIBool && more.v_int64 == 1, "command %lld did not step",
              (long long)commands[c]);
    TVMFFIAny key = call_fn(f, 0), want = key_of(1);
    cr_expect(same_key(&key, &want), "command %lld: not at the second entry",
              (long long)commands[c]);
    for (TVMFFIAny *v = (TVMFFIAny[]){key, want, f, m}, *end = v + 4; v < end; ++v) core_release(v);
  }
}

/* MAP-007: maps and dicts made by C++ code (small and dense) are read by
 * the runtime's functions. 16000 entries fill a table of 16384 slots
 * nearly to its load limit: its chains take long jumps, each chosen by
 * C++ code from the jump table both sides share. */
Test(map, MAP_007_cpp_maps_read_by_runtime) {
  static const int64_t sizes[] = {2, 4, 50, 16000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    TVMFFIAny n = core_int(sizes[s]);
    TVMFFIAny m = host_interop("map_make_range", &n, 1), d = host_interop("dict_make_range", &n, 1);
    cr_expect_eq(size_of("ffi.MapSize", m), sizes[s]);
    cr_expect_eq(size_of("ffi.DictSize", d), sizes[s]);
    cr_expect_eq(count_range("Map", m, 0, sizes[s] + 3), sizes[s]);
    cr_expect_eq(count_range("Dict", d, 0, sizes[s] + 3), sizes[s]);
    TVMFFIAny keys[50];
    if (sizes[s] > 50) {
      core_release(&m);
      core_release(&d);
      continue;
    }
    cr_assert_eq(iterate_keys("ffi.MapForwardIterFunctor", m, keys, 50), sizes[s]);
    for (int64_t i = 0; i < sizes[s]; ++i) {
      TVMFFIAny want = key_of(i);
      cr_expect(same_key(&keys[i], &want), "entry %lld out of order", (long long)i);
      core_release(&want);
      core_release(&keys[i]);
    }
    core_release(&m);
    core_release(&d);
  }
}

/* MAP-008: a dict changes in place: every handle sees a set, an erase (of
 * a key there or not) and a clear. */
Test(map, MAP_008_dict_in_place) {
  TVMFFIAny d = make_range("ffi.Dict", 2);
  cr_assert_eq(d.type_index, kTVMFFIDict);
  TVMFFIAny alias = d;
  TVMFFIAny set[3] = {d, core_c_str("new"), core_int(7)};
  TVMFFIAny r = host_ok("ffi.DictSetItem", set, 3);
  cr_expect_eq(r.type_index, kTVMFFINone);
  cr_expect_eq(size_of("ffi.DictSize", alias), 3);
  cr_expect_eq(host_int_of(get("ffi.DictGetItem", alias, core_c_str("new")), "new"), 7);
  set[2] = core_int(8);
  host_ok("ffi.DictSetItem", set, 3);
  cr_expect_eq(size_of("ffi.DictSize", alias), 3);
  cr_expect_eq(host_int_of(get("ffi.DictGetItem", alias, core_c_str("new")), "new"), 8);
  TVMFFIAny erase[2] = {d, core_c_str("absent")};
  host_ok("ffi.DictErase", erase, 2);
  cr_expect_eq(size_of("ffi.DictSize", d), 3);
  erase[1] = core_int(0);
  host_ok("ffi.DictErase", erase, 2);
  cr_expect_eq(size_of("ffi.DictSize", d), 2);
  cr_expect_eq(host_int_of(host_ok("ffi.DictCount", erase, 2), "count 0"), 0);
  host_refused("ffi.DictGetItem", erase, 2, "KeyError", NULL);
  host_ok("ffi.DictClear", &d, 1);
  cr_expect_eq(size_of("ffi.DictSize", alias), 0);
  core_release(&d);
}

/* Expects the dict's keys, in iteration order, to be key_of(i) for the
 * i in want[0..n), each found with its value i * 10. */
static void expect_dict_keys(TVMFFIAny d, const int64_t* want, int64_t n, const char* what) {
  cr_assert_eq(size_of("ffi.DictSize", d), n, "%s: size", what);
  if (n == 0) return;
  TVMFFIAny keys[64];
  int64_t got = iterate_keys("ffi.DictForwardIterFunctor", d, keys, 64);
  cr_expect_eq(got, n, "%s: iterated %lld keys", what, (long long)got);
  for (int64_t i = 0; i < got; ++i) {
    TVMFFIAny k = key_of(want[i]), v = get("ffi.DictGetItemOrMissing", d, k);
    cr_expect(same_key(&keys[i], &k), "%s: key %lld is not key_of(%lld)", what, (long long)i,
              (long long)want[i]);
    cr_expect(v.type_index == kTVMFFIInt && v.v_int64 == want[i] * 10, "%s: key_of(%lld) not found",
              what, (long long)want[i]);
    core_release(&v);
    core_release(&k);
    core_release(&keys[i]);
  }
}

/* MAP-008: a dict grown one key at a time from empty (small, then dense)
 * finds every key and iterates in insertion order after each addition;
 * erasing keys (from the small form and the dense one) keeps the others
 * in order. */
Test(map, MAP_008_dict_grows_and_shrinks) {
  TVMFFIAny d = host_ok("ffi.Dict", NULL, 0);
  int64_t want[40];
  for (int64_t i = 0; i < 40; ++i) {
    TVMFFIAny k = key_of(i), set[3] = {d, k, core_int(i * 10)};
    host_ok("ffi.DictSetItem", set, 3);
    core_release(&k);
    want[i] = i;
    char what[32];
    snprintf(what, sizeof what, "after %lld additions", (long long)i + 1);
    expect_dict_keys(d, want, i + 1, what);
    if (i == 3) {
      cr_expect(base_of(d)->slots & SMALL_TAG, "a dict of 4 is not small");
      cr_expect_geq(base_of(d)->slots & ~SMALL_TAG, 4);
      TVMFFIAny small = make_range("ffi.Dict", 4), er[2] = {small, core_int(2)};
      host_ok("ffi.DictErase", er, 2);
      expect_dict_keys(small, (int64_t[]){0, 1, 3}, 3, "small dict less key_of(2)");
      core_release(&small);
    }
  }
  int64_t left[40], n = 0;
  for (int64_t i = 0; i < 40; ++i) {
    if (i % 3 == 1) {
      TVMFFIAny k = key_of(i), er[2] = {d, k};
      host_ok("ffi.DictErase", er, 2);
      core_release(&k);
    } else {
      left[n++] = i;
    }
  }
  expect_dict_keys(d, left, n, "after erasing every third key");
  TVMFFIAny range[3] = {d, core_int(0), core_int(40)};
  cr_expect_eq(host_int_of(host_interop("dict_count_range", range, 3), "found"), n,
               "C++ lost keys after the erasures");
  for (int64_t i = 0; i < n; ++i) {
    TVMFFIAny k = key_of(left[i]), er[2] = {d, k};
    host_ok("ffi.DictErase", er, 2);
    core_release(&k);
  }
  expect_dict_keys(d, NULL, 0, "after erasing every key");
  for (int round = 0; round < 2; ++round) {
    for (int64_t i = 0; i < 20; ++i) {
      TVMFFIAny k = key_of(i), set[3] = {d, k, core_int(i * 10)};
      host_ok("ffi.DictSetItem", set, 3);
      core_release(&k);
    }
    expect_dict_keys(d, want, 20, round ? "refilled after a clear" : "refilled after erasures");
    cr_expect_eq(host_int_of(host_interop("dict_count_range", range, 3), "found"), 20,
                 "C++ lost keys of the refilled dict");
    host_ok("ffi.DictClear", &d, 1);
  }
  core_release(&d);
}

/* MAP-010: a dict grown by "ffi.DictSetItem" to 20000 entries, through
 * every growth of its table, holds every key where C++ code finds it. */
Test(map, MAP_010_large_dict_found_by_cpp) {
  TVMFFIAny d = host_ok("ffi.Dict", NULL, 0);
  for (int64_t i = 0; i < 20000; ++i) {
    TVMFFIAny k = key_of(i), set[3] = {d, k, core_int(i * 10)};
    host_ok("ffi.DictSetItem", set, 3);
    core_release(&k);
  }
  TVMFFIAny range[3] = {d, core_int(0), core_int(20000)};
  cr_expect_eq(size_of("ffi.DictSize", d), 20000);
  cr_expect_eq(host_int_of(host_interop("dict_count_range", range, 3), "found"), 20000);
  cr_expect_eq(count_range("Dict", d, 0, 20000), 20000);
  core_release(&d);
}

/* MAP-009: C++ code grows a dict the runtime made (3 entries) to 100 in
 * place, turning it dense itself, and erases from it; the runtime reads
 * every state back. */
Test(map, MAP_009_cpp_grows_runtime_dict) {
  TVMFFIAny d = make_range("ffi.Dict", 3);
  TVMFFIAny args[3] = {d, core_int(3), core_int(100)};
  host_interop("dict_insert_range", args, 3);
  cr_expect_eq(size_of("ffi.DictSize", d), 100);
  cr_expect_eq(count_range("Dict", d, 0, 104), 100);
  args[1] = core_int(10);
  args[2] = core_int(60);
  host_interop("dict_erase_range", args, 3);
  cr_expect_eq(size_of("ffi.DictSize", d), 50);
  cr_expect_eq(count_range("Dict", d, 0, 10), 10);
  cr_expect_eq(count_range("Dict", d, 10, 60), 0);
  cr_expect_eq(count_range("Dict", d, 60, 100), 40);
  core_release(&d);
}

/* MAP-010: the runtime grows a dict to 300 entries and erases from it
 * (dense form); C++ code finds exactly the keys that remain, and the
 * runtime finds what C++ then adds. */
Test(map, MAP_010_runtime_grows_dict_read_by_cpp) {
  TVMFFIAny d = host_ok("ffi.Dict", NULL, 0);
  for (int64_t i = 0; i < 300; ++i) {
    TVMFFIAny key = key_of(i), set[3] = {d, key, core_int(i * 10)};
    host_ok("ffi.DictSetItem", set, 3);
    core_release(&key);
  }
  for (int64_t i = 0; i < 300; i += 3) {
    TVMFFIAny key = key_of(i), erase[2] = {d, key};
    host_ok("ffi.DictErase", erase, 2);
    core_release(&key);
  }
  cr_expect_eq(size_of("ffi.DictSize", d), 200);
  TVMFFIAny args[3] = {d, core_int(0), core_int(300)};
  cr_expect_eq(host_int_of(host_interop("dict_count_range", args, 3), "C++ count"), 200);
  args[1] = core_int(300);
  args[2] = core_int(400);
  host_interop("dict_insert_range", args, 3);
  cr_expect_eq(count_range("Dict", d, 300, 400), 100);
  cr_expect_eq(size_of("ffi.DictSize", d), 300);
  core_release(&d);
}

/* MAP-011: setting a key already there keeps its place in a small dict
 * and moves it last in a dense one, as upstream's tables order them. */
Test(map, MAP_011_update_order) {
  for (int dense = 0; dense < 2; ++dense) {
    int64_t n = dense ? 8 : 3;
    TVMFFIAny d = make_range("ffi.Dict", n), set[3] = {d, core_int(0), core_int(-1)}, keys[8];
    host_ok("ffi.DictSetItem", set, 3);
    cr_assert_eq(iterate_keys("ffi.DictForwardIterFunctor", d, keys, 8), n);
    int64_t at = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (keys[i].type_index == kTVMFFIInt && keys[i].v_int64 == 0) at = i;
      core_release(&keys[i]);
    }
    cr_expect_eq(at, dense ? n - 1 : 0, "%s dict: the updated key is at %lld",
                 dense ? "dense" : "small", (long long)at);
    core_release(&d);
  }
}

/* MAP-012: the map functions take maps only and the dict functions dicts
 * only (TypeError); ffi.Map refuses an odd argument count. */
Test(map, MAP_012_refusals) {
  TVMFFIAny m = make_range("ffi.Map", 2), d = make_range("ffi.Dict", 2),
            arr = host_ok("ffi.Array", NULL, 0);
  host_refused("ffi.MapSize", &d, 1, "TypeError", NULL);
  host_refused("ffi.DictSize", &m, 1, "TypeError", NULL);
  host_refused("ffi.MapSize", &arr, 1, "TypeError", NULL);
  TVMFFIAny on_dict[2] = {d, core_int(0)}, on_map[2] = {m, core_int(0)},
            on_arr[2] = {arr, core_int(0)};
  static const char* const map_reads[] = {"ffi.MapCount", "ffi.MapGetItem",
                                          "ffi.MapGetItemOrMissing"};
  for (size_t i = 0; i < 3; ++i) {
    host_refused(map_reads[i], on_dict, 2, "TypeError", NULL);
    host_refused(map_reads[i], on_arr, 2, "TypeError", NULL);
  }
  static const char* const dict_reads[] = {"ffi.DictCount", "ffi.DictGetItem",
                                           "ffi.DictGetItemOrMissing"};
  for (size_t i = 0; i < 3; ++i) host_refused(dict_reads[i], on_map, 2, "TypeError", NULL);
  TVMFFIAny odd[3] = {core_int(1), core_int(2), core_int(3)}, out;
  cr_expect_eq(host_call("ffi.Map", odd, 3, &out), -1);
  ConfError e = conf_take_error();
  cr_expect(e.kind[0] != '\0', "an odd argument count raised nothing");
  for (TVMFFIAny *v = (TVMFFIAny[]){m, d, arr}, *end = v + 3; v < end; ++v) core_release(v);
}

/* MAP-012: the iteration functor of dicts refuses a map and that of maps
 * a dict (TypeError). */
Test(map, MAP_012_functors_refuse_the_other_kind) {
  TVMFFIAny m = make_range("ffi.Map", 2), d = make_range("ffi.Dict", 2);
  host_refused("ffi.DictForwardIterFunctor", &m, 1, "TypeError", NULL);
  host_refused("ffi.MapForwardIterFunctor", &d, 1, "TypeError", NULL);
  core_release(&m);
  core_release(&d);
}

/* MAP-013: a map holds a reference to each object key and value, and gives
 * them back when it goes. */
Test(map, MAP_013_owned_entries) {
  TVMFFIAny k = host_ok("ffi.Array", NULL, 0), v = host_ok("ffi.Array", NULL, 0);
  uint32_t k0 = core_strong(k.v_obj), v0 = core_strong(v.v_obj);
  for (int n = 1; n <= 6; n += 5) {
    TVMFFIAny args[12];
    for (int i = 0; i < n; ++i) args[2 * i] = core_int(i + 100), args[2 * i + 1] = core_int(i);
    args[0] = k;
    args[1] = v;
    TVMFFIAny m = host_ok("ffi.Map", args, 2 * n);
    cr_expect_eq(core_strong(k.v_obj), k0 + 1);
    cr_expect_eq(core_strong(v.v_obj), v0 + 1);
    TVMFFIAny got = get("ffi.MapGetItem", m, k);
    cr_expect_eq(got.v_obj, v.v_obj);
    core_release(&got);
    core_release(&m);
    cr_expect_eq(core_strong(k.v_obj), k0);
    cr_expect_eq(core_strong(v.v_obj), v0);
  }
  core_release(&k);
  core_release(&v);
}

/* MAP-014: big ints are keys by value: two big int objects of one value
 * are the same key, in small and dense maps. */
Test(map, MAP_014_big_int_keys) {
  int64_t words[2] = {5, 1};
  TVMFFIByteArray bytes = {(const char*)words, sizeof words};
  TVMFFIAny a, b;
  cr_assert_eq(API(TVMFFIBigIntFromByteArray)(&bytes, &a), 0);
  cr_assert_eq(API(TVMFFIBigIntFromByteArray)(&bytes, &b), 0);
  cr_assert_eq(a.type_index, kTVMFFIBigInt);
  cr_assert_neq(a.v_obj, b.v_obj);
  for (int n = 1; n <= 8; n += 7) {
    TVMFFIAny args[16];
    for (int i = 0; i < n; ++i) args[2 * i] = core_int(i), args[2 * i + 1] = core_int(i);
    args[0] = a;
    args[1] = core_int(99);
    TVMFFIAny m = host_ok("ffi.Map", args, 2 * n);
    cr_expect_eq(host_int_of(get("ffi.MapGetItem", m, b), "big int"), 99,
                 "%d entries: an equal big int is another key", n);
    core_release(&m);
  }
  core_release(&a);
  core_release(&b);
}
