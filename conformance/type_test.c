/* Clauses of spec/types.md: type keys, indices and type information. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core_support.h"
#include "core_support.h"

static const struct {
  const char* key;
  int32_t index;
  int32_t depth;
} statics[] = {
    {"None", kTVMFFINone, 0},
    {"int", kTVMFFIInt, 0},
    {"bool", kTVMFFIBool, 0},
    {"float", kTVMFFIFloat, 0},
    {"void*", kTVMFFIOpaquePtr, 0},
    {"DataType", kTVMFFIDataType, 0},
    {"Device", kTVMFFIDevice, 0},
    {"DLTensor*", kTVMFFIDLTensorPtr, 0},
    {"const char*", kTVMFFIRawStr, 0},
    {"TVMFFIByteArray*", kTVMFFIByteArrayPtr, 0},
    {"ObjectRValueRef", kTVMFFIObjectRValueRef, 0},
    {"ffi.SmallStr", kTVMFFISmallStr, 0},
    {"ffi.SmallBytes", kTVMFFISmallBytes, 0},
    {"ffi.Unchanged", kTVMFFIUnchanged, 0},
    {"ffi.Object", kTVMFFIObject, 0},
    {"ffi.String", kTVMFFIStr, 1},
    {"ffi.Bytes", kTVMFFIBytes, 1},
    {"ffi.Error", kTVMFFIError, 1},
    {"ffi.Function", kTVMFFIFunction, 1},
    {"ffi.Shape", kTVMFFIShape, 1},
    {"ffi.Tensor", kTVMFFITensor, 1},
    {"ffi.Array", kTVMFFIArray, 1},
    {"ffi.Map", kTVMFFIMap, 1},
    {"ffi.Module", kTVMFFIModule, 1},
    {"ffi.OpaquePyObject", kTVMFFIOpaquePyObject, 1},
    {"ffi.List", kTVMFFIList, 1},
    {"ffi.Dict", kTVMFFIDict, 1},
    {"ffi.VisitInterrupt", kTVMFFIVisitInterrupt, 1},
    {"ffi.BigInt", kTVMFFIBigInt, 1},
};
#define NSTATICS (sizeof statics / sizeof *statics)

static TVMFFIByteArray key_of(const char* key) {
  TVMFFIByteArray b = {key, strlen(key)};
  return b;
}

static int key_eq(const TVMFFIByteArray* got, const char* want) {
  return got->size == strlen(want) && memcmp(got->data, want, got->size) == 0;
}

/* TYP-001: TVMFFITypeKeyToIndex knows every built-in type key. */
TEST(type, TYP_001_static_keys_to_index) {
  for (size_t i = 0; i < NSTATICS; ++i) {
    TVMFFIByteArray k = key_of(statics[i].key);
    int32_t got = -99;
    cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), 0, "`%s` unknown", statics[i].key);
    cr_expect_eq(got, statics[i].index, "`%s`: expected %d, got %d", statics[i].key,
                 statics[i].index, got);
  }
}

/* TYP-002: an unknown key returns -1 with an error raised whose message
 * names the key, and leaves *out_tindex alone. */
TEST(type, TYP_002_unknown_key_refused) {
  static const char* unknown[] = {"no.such.Type", "Any", "ffi.string", ""};
  for (size_t i = 0; i < 4; ++i) {
    TVMFFIByteArray k = key_of(unknown[i]);
    int32_t got = -99;
    cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), -1, "`%s` found", unknown[i]);
    cr_expect_eq(got, -99, "out_tindex written for `%s`", unknown[i]);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "`%s`", unknown[i]);
    EXPECT_RAISED(.says = {quoted});
  }
}

/* TYP-003: that error is a KeyError. */
TEST(type, TYP_003_unknown_key_is_key_error) {
  TVMFFIByteArray k = key_of("no.such.Type");
  int32_t got;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), -1);
  EXPECT_RAISED(.kind = "KeyError", .says = {"no.such.Type"});
}

/* TYP-004: TVMFFIGetTypeInfo of a built-in index gives its index, key and
 * depth (0 for the inline kinds and ffi.Object, 1 for the object types),
 * and a depth-1 type's single ancestor is ffi.Object's record. */
TEST(type, TYP_004_static_type_info) {
  const TVMFFITypeInfo* object = API(TVMFFIGetTypeInfo)(kTVMFFIObject);
  cr_assert_not_null(object);
  for (size_t i = 0; i < NSTATICS; ++i) {
    const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(statics[i].index);
    cr_assert_not_null(info, "no info for %d", statics[i].index);
    cr_expect_eq(info->type_index, statics[i].index);
    cr_expect(key_eq(&info->type_key, statics[i].key), "index %d: key `%.*s`, expected `%s`",
              statics[i].index, (int)info->type_key.size, info->type_key.data, statics[i].key);
    cr_expect_eq(info->type_depth, statics[i].depth, "`%s`: depth %d", statics[i].key,
                 info->type_depth);
    if (statics[i].depth == 1) {
      cr_assert_not_null(info->type_ancestors);
      cr_expect_eq(info->type_ancestors[0], object, "`%s`: ancestor is not ffi.Object",
                   statics[i].key);
    }
  }
}

static int32_t alloc_index(const char* key, int32_t depth, int32_t slots, int32_t parent) {
  TVMFFIByteArray k = key_of(key);
  return API(TVMFFITypeGetOrAllocIndex)(&k, -1, depth, slots, 1, parent);
}

/* TYP-005: query-only mode (parent_type_index -2) returns -2 for an
 * unknown key and registers nothing. */
TEST(type, TYP_005_query_only_unknown) {
  cr_expect_eq(alloc_index("conformance.NotThere", 1, 0, -2), -2);
  TVMFFIByteArray k = key_of("conformance.NotThere");
  int32_t got;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), -1, "query-only registered the key");
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  if (err) API(TVMFFIObjectDecRef)(err);
}

/* TYP-006: a known key returns its index whatever the other arguments,
 * query-only mode included. */
TEST(type, TYP_006_known_key_returns_index) {
  cr_expect_eq(alloc_index("ffi.String", 1, 0, -2), kTVMFFIStr);
  cr_expect_eq(alloc_index("ffi.String", 1, 0, kTVMFFIObject), kTVMFFIStr);
  cr_expect_eq(alloc_index("ffi.Array", 5, 9, kTVMFFIObject), kTVMFFIArray);
  cr_expect_eq(alloc_index("int", 0, 0, -2), kTVMFFIInt);
}

/* TYP-007: a new key below ffi.Object gets a fresh index from
 * kTVMFFIDynObjectBegin (128) on, which TVMFFITypeKeyToIndex and
 * TVMFFIGetTypeInfo then report (depth 1, ancestor ffi.Object). */
TEST(type, TYP_007_allocate_dynamic_type) {
  int32_t a = alloc_index("conformance.TypA", 1, 0, kTVMFFIObject);
  int32_t b = alloc_index("conformance.TypB", 1, 0, kTVMFFIObject);
  cr_assert_geq(a, kTVMFFIDynObjectBegin, "index %d below 128", a);
  cr_assert_geq(b, kTVMFFIDynObjectBegin, "index %d below 128", b);
  cr_expect_neq(a, b);
  cr_expect_eq(alloc_index("conformance.TypA", 1, 0, -2), a, "query-only now finds it");
  TVMFFIByteArray k = key_of("conformance.TypA");
  int32_t got = -1;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), 0);
  cr_expect_eq(got, a);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(a);
  cr_assert_not_null(info);
  cr_expect_eq(info->type_index, a);
  cr_expect_eq(info->type_depth, 1);
  cr_expect(key_eq(&info->type_key, "conformance.TypA"));
  cr_expect_eq(info->type_ancestors[0], API(TVMFFIGetTypeInfo)(kTVMFFIObject));
}

/* TYP-008: a type that reserves N child slots gives its first child the
 * next index (parent + 1); ancestors run root first, ancestors[i] having
 * depth i. */
TEST(type, TYP_008_child_slots_and_ancestors) {
  int32_t parent = alloc_index("conformance.Parent", 1, 3, kTVMFFIObject);
  cr_assert_geq(parent, kTVMFFIDynObjectBegin);
  int32_t child = alloc_index("conformance.Child", 2, 0, parent);
  cr_expect_eq(child, parent + 1, "child index %d, parent %d", child, parent);
  int32_t grand = alloc_index("conformance.Grand", 3, 0, child);
  cr_assert_gt(grand, child);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(grand);
  cr_assert_not_null(info);
  cr_expect_eq(info->type_depth, 3);
  int32_t want[3] = {kTVMFFIObject, parent, child};
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(info->type_ancestors[i]->type_index, want[i], "ancestors[%d] is %d, expected %d",
                 i, info->type_ancestors[i]->type_index, want[i]);
    cr_expect_eq(info->type_ancestors[i]->type_depth, i);
  }
}

/* TYP-009: TVMFFIGetTypeInfo of an index with no type returns NULL with a
 * KeyError raised that names the index. */
TEST(type, TYP_009_unknown_index_info) {
  HOSTILE_INPUT("TVMFFIGetTypeInfo of an unknown index exits the process");
  static const int32_t bad[] = {-1, 100, 5000};
  for (size_t i = 0; i < 3; ++i) {
    cr_expect_null(API(TVMFFIGetTypeInfo)(bad[i]), "info for %d", bad[i]);
    EXPECT_RAISED(.kind = "KeyError", .says = {"type_index"});
  }
}

/* TYP-010: a NULL type_key is refused with ValueError naming it. */
TEST(type, TYP_010_null_key_refused) {
  HOSTILE_INPUT("TVMFFITypeKeyToIndex(NULL, ...) dereferences NULL");
  int32_t got;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(NULL, &got), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"type_key"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(NULL, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"type_key"});
}

/* TYP-011: inconsistent registrations are refused with -1 and an error:
 * an unknown parent, a depth that is not the parent's plus one, a taken
 * static index. */
TEST(type, TYP_011_inconsistent_registration_refused) {
  HOSTILE_INPUT("TVMFFITypeGetOrAllocIndex exits the process on these inputs");
  TVMFFIByteArray k = key_of("conformance.Bad");
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, 9999), -1);
  EXPECT_RAISED(.kind = "KeyError", .says = {"parent_type_index"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 4, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"type_depth"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, kTVMFFIStr, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"static_type_index"});
  cr_expect_eq(alloc_index("conformance.Bad", 1, 0, -2), -2, "a refused key was registered");
}

static int32_t alloc_flagged(const char* key, int32_t depth, int32_t slots, int32_t overflow,
                             int32_t parent) {
  TVMFFIByteArray k = key_of(key);
  return API(TVMFFITypeGetOrAllocIndex)(&k, -1, depth, slots, overflow, parent);
}

/* TYP-012: children take their parent's reserved range in registration
 * order, each as many indices as it reserves (its own and its child slots);
 * once the range is used up, a parent that allows overflow gives its next
 * child a fresh index outside the range. */
TEST(type, TYP_012_children_fill_the_reserved_range) {
  int32_t p = alloc_flagged("conformance.RangeP", 1, 4, 1, kTVMFFIObject);
  cr_assert_geq(p, kTVMFFIDynObjectBegin, "parent index %d", p);
  int32_t a = alloc_flagged("conformance.RangeA", 2, 1, 1, p);
  int32_t b = alloc_flagged("conformance.RangeB", 2, 0, 1, p);
  int32_t c = alloc_flagged("conformance.RangeC", 2, 0, 1, p);
  cr_expect_eq(a, p + 1, "first child %d, parent %d", a, p);
  cr_expect_eq(b, p + 3, "second child %d after one reserving 2 indices, parent %d", b, p);
  cr_expect_eq(c, p + 4, "third child %d, parent %d", c, p);
  int32_t d = alloc_flagged("conformance.RangeD", 2, 0, 1, p);
  cr_expect(d >= kTVMFFIDynObjectBegin && (d < p || d > p + 4),
            "overflowing child %d inside or below the range [%d, %d]", d, p, p + 4);
  int32_t e = alloc_flagged("conformance.RangeE", 1, 0, 1, kTVMFFIObject);
  cr_expect(e >= kTVMFFIDynObjectBegin && e != d && (e < p || e > p + 4),
            "a later type %d collides (parent range [%d, %d], overflow child %d)", e, p, p + 4, d);
  int32_t grand = alloc_flagged("conformance.RangeA1", 3, 0, 1, a);
  cr_expect_eq(grand, a + 1, "the child of a child with one slot: %d, its parent %d", grand, a);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(d);
  cr_assert_not_null(info);
  cr_expect_eq(info->type_depth, 2);
  cr_expect_eq(info->type_ancestors[1]->type_index, p);
}

/* TYP-013: once the reserved range of a parent registered with
 * child_slots_can_overflow 0 is used up, a new child is refused with -1 and
 * an error naming the parent's key, and nothing is registered. */
TEST(type, TYP_013_full_range_without_overflow_refused) {
  HOSTILE_INPUT("TVMFFITypeGetOrAllocIndex may abort when a parent's slots run out");
  int32_t q = alloc_flagged("conformance.FullQ", 1, 1, 0, kTVMFFIObject);
  cr_assert_geq(q, kTVMFFIDynObjectBegin);
  cr_expect_eq(alloc_flagged("conformance.FullQ1", 2, 0, 0, q), q + 1);
  cr_expect_eq(alloc_flagged("conformance.FullQ2", 2, 0, 0, q), -1,
               "a child beyond the parent's only slot was accepted");
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "nothing raised");
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  cr_expect(memmem(cell->message.data, cell->message.size, "`conformance.FullQ`", 19) != NULL &&
                memmem(cell->message.data, cell->message.size, "conformance.FullQ2", 18) != NULL,
            "message names the parent `conformance.FullQ` and the new key conformance.FullQ2: %.*s",
            (int)cell->message.size, cell->message.data);
  API(TVMFFIObjectDecRef)(err);
  cr_expect_eq(alloc_flagged("conformance.FullQ2", 2, 0, 0, -2), -2,
               "the refused key was registered");
  /* The registry works on after the refusal, through growths of its table. */
  char key[48];
  for (int i = 0; i < 600; ++i) {
    snprintf(key, sizeof key, "conformance.AfterFull%d", i);
    cr_assert_geq(alloc_flagged(key, 1, 0, 1, kTVMFFIObject), kTVMFFIDynObjectBegin,
                  "`%s` after the refusal", key);
  }
}

/* TYP-014: a type with no parent (parent_type_index -1, depth 0) may take a
 * free static index below kTVMFFIDynObjectBegin, which then names it. */
TEST(type, TYP_014_root_type_at_static_index) {
  TVMFFIByteArray k = key_of("conformance.StaticRoot");
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, 50, 0, 0, 0, -1), 50);
  int32_t got = -1;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), 0);
  cr_expect_eq(got, 50);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(50);
  cr_assert_not_null(info);
  cr_expect_eq(info->type_depth, 0);
  cr_expect(key_eq(&info->type_key, "conformance.StaticRoot"));
}

/* TYP-015: malformed arguments are refused with -1 and a ValueError naming
 * the argument, registering nothing: a parent_type_index below -2, a
 * negative num_child_slots, a static index at or above
 * kTVMFFIDynObjectBegin, a dynamic type without a parent, a key whose data
 * is NULL with a nonzero size, a key of 2^31 bytes or more; and
 * TVMFFITypeKeyToIndex with a NULL out_tindex. */
TEST(type, TYP_015_malformed_arguments_refused) {
  HOSTILE_INPUT("TVMFFITypeGetOrAllocIndex may exit the process on these inputs");
  TVMFFIByteArray k = key_of("conformance.Malformed");
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, -3), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"parent_type_index"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, -1, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"num_child_slots"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, kTVMFFIDynObjectBegin, 1, 0, 1, kTVMFFIObject),
               -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"static_type_index"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 0, 0, 1, -1), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"parent_type_index"});
  cr_expect_eq(alloc_index("conformance.Malformed", 1, 0, -2), -2, "a refused key was registered");
  TVMFFIByteArray null_data = {NULL, 3};
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&null_data, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"type_key"});
  int32_t got = 7;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&null_data, &got), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"type_key"});
  /* Sizes no key has: refused before a byte past the real 8 is read. */
  static const size_t huge[] = {(size_t)1 << 31, SIZE_MAX};
  for (int i = 0; i < 2; ++i) {
    TVMFFIByteArray too_long = {"conformance", huge[i]};
    cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&too_long, -1, 1, 0, 1, kTVMFFIObject), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"type_key"});
    cr_expect_eq(API(TVMFFITypeKeyToIndex)(&too_long, &got), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"type_key"});
  }
  TVMFFIByteArray str = key_of("ffi.String");
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&str, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out_tindex"});
  cr_expect_eq(got, 7, "out_tindex written on failure");
}

/* TYP-018: any registered type may be a parent, index 0 (None) included:
 * a type at a free static index below it has depth 1 and None as its one
 * ancestor. */
TEST(type, TYP_018_parent_at_index_zero) {
  TVMFFIByteArray k = key_of("conformance.BelowNone");
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, 51, 1, 0, 0, kTVMFFINone), 51);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(51);
  cr_assert_not_null(info);
  cr_expect_eq(info->type_depth, 1);
  cr_expect(key_eq(&info->type_key, "conformance.BelowNone"));
  cr_expect_eq(info->type_ancestors[0]->type_index, kTVMFFINone);
}

/* TYP-020: type_key_hash is a hash of the key: the built-in types, whose
 * keys all differ, have pairwise different hashes, and a type's hash does
 * not change. */
TEST(type, TYP_020_key_hashes_differ) {
  uint64_t hashes[NSTATICS];
  for (size_t i = 0; i < NSTATICS; ++i) {
    const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(statics[i].index);
    cr_assert_not_null(info);
    hashes[i] = info->type_key_hash;
    cr_expect_eq(API(TVMFFIGetTypeInfo)(statics[i].index)->type_key_hash, hashes[i]);
    for (size_t j = 0; j < i; ++j)
      cr_expect_neq(hashes[i], hashes[j], "`%s` and `%s` have the same type_key_hash %#llx",
                    statics[i].key, statics[j].key, (unsigned long long)hashes[i]);
  }
}

/* TYP-021: a key {NULL, 0} is the empty key, like {"", 0}: no type has it,
 * so TVMFFITypeKeyToIndex returns -1 with the error of TYP-002 (the empty
 * key in backquotes), not a refusal of the argument. */
TEST(type, TYP_021_null_empty_key_is_the_empty_key) {
  TVMFFIByteArray k = {NULL, 0};
  int32_t got = 7;
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&k, &got), -1);
  EXPECT_RAISED(.says = {"``"});
  cr_expect_eq(got, 7);
}

/* TYP-022: a type's key, built-in or registered, ends with a NUL byte right
 * after its size. Sixteen consecutive key lengths put that byte at every
 * offset of an allocation granule. */
TEST(type, TYP_022_type_key_nul_terminated) {
  const TVMFFITypeInfo* object = API(TVMFFIGetTypeInfo)(kTVMFFIObject);
  cr_assert_not_null(object);
  cr_expect_eq(object->type_key.data[object->type_key.size], '\0', "ffi.Object's key");
  char key[80];
  for (int extra = 0; extra < 16; ++extra) {
    int n = snprintf(key, sizeof key, "conformance.typ.nul.%02d.", extra);
    memset(key + n, 'k', (size_t)(24 + extra));
    key[n + 24 + extra] = '\0';
    int32_t index = alloc_index(key, 1, 0, kTVMFFIObject);
    cr_assert_geq(index, kTVMFFIDynObjectBegin, "cannot register `%s`", key);
    const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(index);
    cr_assert_not_null(info);
    cr_expect_eq(info->type_key.size, strlen(key));
    cr_expect_eq(info->type_key.data[info->type_key.size], '\0',
                 "the key of %zu bytes is followed by %#x", info->type_key.size,
                 (unsigned char)info->type_key.data[info->type_key.size]);
  }
}

/* TYP-023: every refusal of the type registry's functions names the
 * function, then the offending argument, then its value or what is wrong
 * with it. */
TEST(type, TYP_023_refusal_names_function_argument_value) {
  HOSTILE_INPUT("the type registry may crash or exit the process on these inputs");
  const char* to_index = "TVMFFITypeKeyToIndex";
  const char* alloc = "TVMFFITypeGetOrAllocIndex";
  int32_t got = 7;
  TVMFFIByteArray null_data = {NULL, 3};
  TVMFFIByteArray too_long = {"conformance", (size_t)1 << 31};
  TVMFFIByteArray unknown = key_of("conformance.NoSuchKey");
  TVMFFIByteArray k = key_of("conformance.Refused");
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(NULL, &got), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = to_index, .arg = "type_key", .says = {"NULL"});
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&null_data, &got), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = to_index, .arg = "type_key", .says = {"NULL", "3"});
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&too_long, &got), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = to_index, .arg = "type_key", .says = {"2147483648"});
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&unknown, &got), -1);
  EXPECT_RAISED(.kind = "KeyError", .api = to_index, .arg = "type_key",
                .says = {"`conformance.NoSuchKey`"});
  cr_expect_eq(API(TVMFFITypeKeyToIndex)(&unknown, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = to_index, .arg = "out_tindex", .says = {"NULL"});
  cr_expect_eq(got, 7, "out_tindex written on a refusal");

  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(NULL, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "type_key", .says = {"NULL"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&null_data, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "type_key", .says = {"NULL", "3"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&too_long, -1, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "type_key", .says = {"2147483648"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, 99999), -1);
  EXPECT_RAISED(.kind = "KeyError", .api = alloc, .arg = "parent_type_index", .says = {"99999"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, -3), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "parent_type_index", .says = {"-3"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 4, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "type_depth", .says = {"4"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, -5, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "num_child_slots", .says = {"-5"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, kTVMFFIStr, 1, 0, 1, kTVMFFIObject), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "static_type_index", .says = {"65"});
  cr_expect_eq(API(TVMFFITypeGetOrAllocIndex)(&k, -1, 0, 0, 1, -1), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc, .arg = "parent_type_index", .says = {"-1"});
  cr_expect_eq(alloc_index("conformance.Refused", 1, 0, -2), -2, "a refused key was registered");

  cr_expect_null(API(TVMFFIGetTypeInfo)(99999));
  EXPECT_RAISED(.kind = "KeyError", .api = "TVMFFIGetTypeInfo", .arg = "type_index",
                .says = {"99999"});
}

/* TYP-024: a type that reserves 2^20 child slots is registered, its next
 * sibling taking an index past the range, or refused with -1 and an error
 * that names TVMFFITypeGetOrAllocIndex, then num_child_slots and the
 * number; either way the registry goes on working. */
TEST(type, TYP_024_huge_reservation_registered_or_named) {
  const int32_t slots = 1 << 20;
  int32_t big = alloc_flagged("conformance.HugeRange", 1, slots, 1, kTVMFFIObject);
  if (big >= 0) {
    cr_expect_geq(big, kTVMFFIDynObjectBegin);
    int32_t next = alloc_flagged("conformance.AfterHuge", 1, 0, 1, kTVMFFIObject);
    cr_expect(next < big || next > big + slots, "a sibling %d inside the range [%d, %d]", next, big,
              big + slots);
  } else {
    cr_expect_eq(big, -1);
    EXPECT_RAISED(.api = "TVMFFITypeGetOrAllocIndex", .arg = "num_child_slots",
                  .says = {"1048576"});
    cr_expect_eq(alloc_index("conformance.HugeRange", 1, 0, -2), -2,
                 "the refused key was registered");
  }
  int32_t small = alloc_flagged("conformance.AfterHugeSmall", 1, 0, 1, kTVMFFIObject);
  cr_expect_geq(small, kTVMFFIDynObjectBegin, "registration after it failed: %d", small);
}
