/* Clauses TAT of spec/reflection.md: type attribute columns. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_support.h"
#include "core_support.h"

static TVMFFIByteArray text(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  return b;
}

static int32_t new_type(const char* key) {
  TVMFFIByteArray k = text(key);
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(index, kTVMFFIDynObjectBegin, "cannot register type `%s`", key);
  return index;
}

static int reg(int32_t type_index, const char* name, TVMFFIAny value) {
  TVMFFIByteArray n = text(name);
  return API(TVMFFITypeRegisterAttr)(type_index, &n, &value);
}

static const TVMFFITypeAttrColumn* column(const char* name) {
  TVMFFIByteArray n = text(name);
  return API(TVMFFIGetTypeAttrColumn)(&n);
}

/* The entry of `type_index` in `c`, or NULL when the column does not cover it. */
static const TVMFFIAny* entry(const TVMFFITypeAttrColumn* c, int32_t type_index) {
  if (type_index < c->begin_index || type_index >= c->begin_index + c->size) return NULL;
  return &c->data[type_index - c->begin_index];
}

static int all_zero(const void* p, size_t n) {
  const unsigned char* b = p;
  for (size_t i = 0; i < n; ++i)
    if (b[i]) return 0;
  return 1;
}

/* TAT-001: TVMFFIGetTypeAttrColumn of a name that has no column returns NULL and raises no error */
TEST(type_attr, TAT_001_unknown_name_is_null) {
  cr_expect_null(column("conformance.attr.never_registered"));
  TVMFFIObjectHandle err = core_take_raised();
  cr_expect_null(err, "TVMFFIGetTypeAttrColumn raised an error for an unknown name");
  if (err) API(TVMFFIObjectDecRef)(err);
}

/* TAT-002: after TVMFFITypeRegisterAttr(type_index, name, value) returns 0,
 * TVMFFIGetTypeAttrColumn(name) returns a column that covers type_index and whose entry for it
 * equals the value */
TEST(type_attr, TAT_002_value_found_through_column) {
  int32_t t = new_type("conformance.attr.Value");
  cr_assert_eq(reg(t, "conformance.attr.value", core_int(31)), 0);
  cr_assert_eq(reg(kTVMFFIStr, "conformance.attr.value", core_int(65)), 0);
  const TVMFFITypeAttrColumn* c = column("conformance.attr.value");
  cr_assert_not_null(c);
  const TVMFFIAny* e = entry(c, t);
  cr_assert_not_null(e, "the column [%d, %d) does not cover type %d", c->begin_index,
                     c->begin_index + c->size, t);
  cr_expect_eq(e->type_index, kTVMFFIInt);
  cr_expect_eq(e->v_int64, 31);
  e = entry(c, kTVMFFIStr);
  cr_assert_not_null(e);
  cr_expect_eq(e->v_int64, 65);
}

/* TAT-003: TVMFFITypeAttrColumn is 16 bytes: data at offset 0, int32 size at 8, int32
 * begin_index at 12 */
TEST(type_attr, TAT_003_column_layout) {
  cr_expect_eq(sizeof(TVMFFITypeAttrColumn), 16);
  cr_expect_eq(offsetof(TVMFFITypeAttrColumn, data), 0);
  cr_expect_eq(offsetof(TVMFFITypeAttrColumn, size), 8);
  cr_expect_eq(offsetof(TVMFFITypeAttrColumn, begin_index), 12);
  int32_t t = new_type("conformance.attr.Layout");
  cr_assert_eq(reg(t, "conformance.attr.layout", core_int(1)), 0);
  const unsigned char* raw = (const unsigned char*)column("conformance.attr.layout");
  cr_assert_not_null(raw);
  int32_t size, begin;
  memcpy(&size, raw + 8, 4);
  memcpy(&begin, raw + 12, 4);
  cr_expect_eq(size - 1 + begin, t, "bytes 8..16 hold size %d and begin_index %d for type %d", size,
               begin, t);
}

/* TAT-004: a column's begin_index is 0 and its size is one more than the highest type index
 * registered in it, so that code built against the headers before 0.1.9 (a size_t size at 8,
 * data indexed from 0) reads it right */
TEST(type_attr, TAT_004_begin_zero_size_past_highest) {
  int32_t a = new_type("conformance.attr.A");
  int32_t b = new_type("conformance.attr.B");
  cr_assert_eq(reg(a, "conformance.attr.span", core_int(1)), 0);
  const TVMFFITypeAttrColumn* c = column("conformance.attr.span");
  cr_assert_not_null(c);
  cr_expect_eq(c->begin_index, 0);
  cr_expect_eq(c->size, a + 1);
  cr_assert_eq(reg(b, "conformance.attr.span", core_int(2)), 0);
  cr_expect_eq(c->begin_index, 0);
  cr_expect_eq(c->size, b + 1);
  cr_assert_eq(reg(kTVMFFIStr, "conformance.attr.span", core_int(3)), 0);
  cr_expect_eq(c->size, b + 1, "a lower index shrank or grew the column to %d", c->size);
  /* What code built before begin_index existed reads: a size_t at 8. */
  size_t old_size;
  memcpy(&old_size, (const char*)c + 8, sizeof old_size);
  cr_expect_eq(old_size, (size_t)(b + 1));
  cr_expect_eq(c->data[b].v_int64, 2);
}

/* TAT-005: the entries a column covers for type indices that have no value are None with all 16
 * bytes zero */
TEST(type_attr, TAT_005_missing_entries_are_zero_none) {
  /* Dirty the free heap first, so storage the column takes unwritten
   * cannot pass for zeros by luck. */
  enum { kBlocks = 64 };
  void* blocks[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    size_t n = (size_t)(1024 << (i % 5));
    blocks[i] = malloc(n);
    if (blocks[i]) memset(blocks[i], 0xff, n);
  }
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  int32_t t = new_type("conformance.attr.Sparse");
  cr_assert_eq(reg(t, "conformance.attr.sparse", core_int(9)), 0);
  const TVMFFITypeAttrColumn* c = column("conformance.attr.sparse");
  cr_assert_not_null(c);
  for (int32_t i = c->begin_index; i < c->begin_index + c->size; ++i) {
    if (i == t) continue;
    cr_expect(all_zero(entry(c, i), sizeof(TVMFFIAny)), "entry %d is not a zero None", i);
  }
}

/* TAT-006: TVMFFIGetTypeAttrColumn returns the same pointer for a name every time, and a column
 * looked up before later registrations shows them once data and size are read again */
TEST(type_attr, TAT_006_same_column_sees_later_registrations) {
  int32_t a = new_type("conformance.attr.Early");
  cr_assert_eq(reg(a, "conformance.attr.live", core_int(1)), 0);
  const TVMFFITypeAttrColumn* first = column("conformance.attr.live");
  cr_assert_not_null(first);
  int32_t b = new_type("conformance.attr.Late");
  cr_assert_eq(reg(b, "conformance.attr.live", core_int(2)), 0);
  cr_expect_eq(column("conformance.attr.live"), first, "the column moved");
  const TVMFFIAny* e = entry(first, b);
  cr_assert_not_null(e, "the column looked up earlier does not cover the later type");
  cr_expect_eq(e->v_int64, 2);
  cr_expect_eq(entry(first, a)->v_int64, 1);
}

/* TAT-007: the column holds an owned copy of the value: an object gains one strong reference, a
 * raw C string is stored as a string */
TEST(type_attr, TAT_007_value_is_owned) {
  int32_t t = new_type("conformance.attr.Owned");
  TVMFFIByteArray s = text("an attribute value long enough for the heap");
  TVMFFIAny str;
  memset(&str, 0, sizeof str);
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&s, &str), 0);
  cr_assert_eq(str.type_index, kTVMFFIStr);
  cr_assert_eq(reg(t, "conformance.attr.owned", str), 0);
  cr_expect_eq(core_strong(str.v_obj), 2, "reference count %u, expected 2", core_strong(str.v_obj));
  core_release(&str);
  const TVMFFIAny* e = entry(column("conformance.attr.owned"), t);
  cr_assert_not_null(e);
  TVMFFIByteArray kept = core_str_bytes(e);
  cr_expect_eq(kept.size, s.size);
  int32_t u = new_type("conformance.attr.RawStr");
  TVMFFIAny raw;
  memset(&raw, 0, sizeof raw);
  raw.type_index = kTVMFFIRawStr;
  raw.v_c_str = "raw";
  cr_assert_eq(reg(u, "conformance.attr.owned", raw), 0);
  e = entry(column("conformance.attr.owned"), u);
  cr_assert_not_null(e);
  cr_expect(e->type_index == kTVMFFISmallStr || e->type_index == kTVMFFIStr,
            "a raw C string was stored as type_index %d", e->type_index);
  kept = core_str_bytes(e);
  cr_expect(kept.size == 3 && memcmp(kept.data, "raw", 3) == 0);
}

/* TAT-008: TVMFFITypeRegisterAttr for a type index whose entry in that column is not None
 * returns -1 with a RuntimeError whose message contains the attribute name, and the first value
 * stays */
TEST(type_attr, TAT_008_second_value_refused) {
  int32_t t = new_type("conformance.attr.Twice");
  cr_assert_eq(reg(t, "conformance.attr.twice", core_int(1)), 0);
  cr_expect_eq(reg(t, "conformance.attr.twice", core_int(2)), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"conformance.attr.twice"});
  TVMFFIAny none;
  memset(&none, 0, sizeof none);
  cr_expect_eq(reg(t, "conformance.attr.twice", none), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"conformance.attr.twice"});
  cr_expect_eq(entry(column("conformance.attr.twice"), t)->v_int64, 1);
}

/* TAT-009: registering None leaves the entry None, and a value registered for the same type and
 * name afterwards is accepted (as of 0.1.16) */
TEST(type_attr, TAT_009_none_leaves_entry_free) {
  int32_t t = new_type("conformance.attr.NoneFirst");
  TVMFFIAny none;
  memset(&none, 0, sizeof none);
  cr_assert_eq(reg(t, "conformance.attr.none_first", none), 0);
  const TVMFFITypeAttrColumn* c = column("conformance.attr.none_first");
  cr_assert_not_null(c);
  const TVMFFIAny* e = entry(c, t);
  cr_expect(e == NULL || e->type_index == kTVMFFINone);
  cr_expect_eq(reg(t, "conformance.attr.none_first", core_int(5)), 0);
  e = entry(c, t);
  cr_assert_not_null(e);
  cr_expect_eq(e->v_int64, 5);
}

/* TAT-010: TVMFFITypeRegisterAttr with type_index kTVMFFINone (0) makes sure the column exists
 * and stores nothing: a name never used before then has a column of size 0 */
TEST(type_attr, TAT_010_none_index_only_makes_column) {
  cr_assert_eq(reg(kTVMFFINone, "conformance.attr.declared", core_int(1)), 0);
  const TVMFFITypeAttrColumn* c = column("conformance.attr.declared");
  cr_assert_not_null(c, "registering for kTVMFFINone made no column");
  cr_expect_eq(c->size, 0);
  cr_expect_eq(c->begin_index, 0);
}

/* TAT-011: TVMFFIGetTypeAttrColumn returns a column from the start for each of the names C++
 * code built on upstream's headers looks up while it loads: `__any_equal__`, `__any_hash__`,
 * `__data_from_json__`, `__data_to_json__`, `__ffi_compare__`, `__ffi_convert__`,
 * `__ffi_enum__`, `__ffi_eq__`, `__ffi_hash__`, `__ffi_init__`, `__ffi_new__`, `__ffi_repr__`,
 * `__ffi_shallow_copy__`, `__ffi_type_final__`, `__s_equal__`, `__s_hash__`,
 * `__s_maybe_inplace_mutate__`, `__s_mutate__`, `__s_visit__` */
TEST(type_attr, TAT_011_builtin_columns_exist) {
  static const char* names[] = {
      "__any_equal__",
      "__any_hash__",
      "__data_from_json__",
      "__data_to_json__",
      "__ffi_compare__",
      "__ffi_convert__",
      "__ffi_enum__",
      "__ffi_eq__",
      "__ffi_hash__",
      "__ffi_init__",
      "__ffi_new__",
      "__ffi_repr__",
      "__ffi_shallow_copy__",
      "__ffi_type_final__",
      "__s_equal__",
      "__s_hash__",
      "__s_maybe_inplace_mutate__",
      "__s_mutate__",
      "__s_visit__",
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
    cr_expect_not_null(column(names[i]), "no column `%s`", names[i]);
}

/* TAT-012: TVMFFITypeRegisterAttr of a type_index that names no registered type returns -1 with
 * a KeyError naming type_index, and no column is made or grown */
TEST(type_attr, TAT_012_unknown_type_refused) {
  HOSTILE_INPUT("upstream grows the column to any index it is given");
  int32_t last = new_type("conformance.attr.Last");
  int32_t bad[] = {-3, 100, last + 1, last + 100000};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    char index[16];
    snprintf(index, sizeof index, "%d", (int)bad[i]);
    cr_expect_eq(reg(bad[i], "conformance.attr.unknown", core_int(1)), -1, "type_index %s", index);
    EXPECT_RAISED(.kind = "KeyError", .says = {index});
  }
  cr_expect_null(column("conformance.attr.unknown"), "a refused registration made a column");
}

/* TAT-013: a NULL attr_name or attr_value, or an attr_name whose data is NULL with a nonzero
 * size, makes TVMFFITypeRegisterAttr return -1 and TVMFFIGetTypeAttrColumn return NULL, each
 * with a ValueError naming the argument */
TEST(type_attr, TAT_013_null_arguments_refused) {
  HOSTILE_INPUT("upstream dereferences the NULL");
  int32_t t = new_type("conformance.attr.Nulls");
  TVMFFIAny v = core_int(1);
  TVMFFIByteArray n = text("conformance.attr.nulls");
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, NULL, &v), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &n, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_value"});
  TVMFFIByteArray broken = {NULL, 5};
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &broken, &v), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(NULL));
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(&broken));
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
  /* Any nonzero size, one byte included. */
  TVMFFIByteArray one = {NULL, 1};
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &one, &v), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(&one));
  EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
  cr_expect_null(column("conformance.attr.nulls"));
}

/* TAT-016: an attr_name of 2^31 bytes or more is refused with -1 and a
 * ValueError naming attr_name (TVMFFIGetTypeAttrColumn: NULL), before a
 * byte past the real ones is read. */
TEST(type_attr, TAT_016_huge_name_refused) {
  HOSTILE_INPUT("the name is copied with its claimed size");
  int32_t t = new_type("conformance.attr.HugeName");
  static const size_t huge[] = {(size_t)1 << 31, SIZE_MAX};
  for (int i = 0; i < 2; ++i) {
    TVMFFIByteArray big = {"__tiny__", huge[i]};
    TVMFFIAny v = core_int(1);
    cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &big, &v), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"attr_name"});
    cr_expect_null(API(TVMFFIGetTypeAttrColumn)(&big));
    TVMFFIObjectHandle err = core_take_raised();
    if (err) API(TVMFFIObjectDecRef)(err);
  }
}

/* TAT-017: a 4096-byte attr_name works like any other. */
TEST(type_attr, TAT_017_long_name_taken) {
  int32_t t = new_type("conformance.attr.LongName");
  static char name[4096];
  memset(name, 'n', sizeof name);
  memcpy(name, "conformance.attr.long", 21);
  TVMFFIByteArray n = {name, sizeof name};
  TVMFFIAny v = core_int(4096);
  cr_assert_eq(API(TVMFFITypeRegisterAttr)(t, &n, &v), 0, "a 4096-byte attr_name refused");
  const TVMFFITypeAttrColumn* c = API(TVMFFIGetTypeAttrColumn)(&n);
  cr_assert_not_null(c, "no column under the 4096-byte name");
  const TVMFFIAny* e = entry(c, t);
  cr_assert_not_null(e);
  cr_expect_eq(e->type_index, kTVMFFIInt);
  cr_expect_eq(e->v_int64, 4096);
  TVMFFIByteArray shorter = {name, sizeof name - 1};
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(&shorter), "found by a name one byte shorter");
}

/* TAT-018: TVMFFITypeRegisterAttr with type_index kTVMFFINone stores
 * nothing, so it takes any attr_value, even one whose type index names no
 * value kind (20): it returns 0 and the column exists with size 0. */
TEST(type_attr, TAT_018_none_index_ignores_value) {
  TVMFFIAny odd;
  memset(&odd, 0, sizeof odd);
  odd.type_index = 20; /* names no kind */
  cr_expect_eq(reg(kTVMFFINone, "conformance.attr.declared_odd", odd), 0,
               "a value that is never stored was refused");
  const TVMFFITypeAttrColumn* c = column("conformance.attr.declared_odd");
  cr_assert_not_null(c, "registering for kTVMFFINone made no column");
  cr_expect_eq(c->size, 0);
}

/* TAT-020: every refusal of TVMFFITypeRegisterAttr and
 * TVMFFIGetTypeAttrColumn names the function, then the offending argument,
 * then its value or what is wrong with it. */
TEST(type_attr, TAT_020_refusal_names_function_argument_value) {
  HOSTILE_INPUT("upstream dereferences NULL arguments");
  const char* reg_api = "TVMFFITypeRegisterAttr";
  const char* col_api = "TVMFFIGetTypeAttrColumn";
  int32_t t = new_type("conformance.attr.Named");
  TVMFFIAny v = core_int(1);
  TVMFFIByteArray n = text("conformance.attr.named");
  TVMFFIByteArray broken = {NULL, 5};
  TVMFFIByteArray huge = {"__tiny__", (size_t)1 << 31};
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, NULL, &v), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = reg_api, .arg = "attr_name", .says = {"NULL"});
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &broken, &v), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = reg_api, .arg = "attr_name", .says = {"NULL", "5"});
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &huge, &v), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = reg_api, .arg = "attr_name", .says = {"2147483648"});
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &n, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = reg_api, .arg = "attr_value", .says = {"NULL"});
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t + 100000, &n, &v), -1);
  char index[16];
  snprintf(index, sizeof index, "%d", (int)(t + 100000));
  EXPECT_RAISED(.kind = "KeyError", .api = reg_api, .arg = "type_index", .says = {index});
  TVMFFIAny no_kind;
  memset(&no_kind, 0, sizeof no_kind);
  no_kind.type_index = 20;
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &n, &no_kind), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = reg_api, .arg = "attr_value", .says = {"20"});
  cr_assert_eq(API(TVMFFITypeRegisterAttr)(t, &n, &v), 0);
  cr_expect_eq(API(TVMFFITypeRegisterAttr)(t, &n, &v), -1);
  snprintf(index, sizeof index, "%d", (int)t);
  EXPECT_RAISED(.kind = "RuntimeError", .api = reg_api, .arg = "attr_name",
                .says = {"`conformance.attr.named`", index});
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(NULL));
  EXPECT_RAISED(.kind = "ValueError", .api = col_api, .arg = "attr_name", .says = {"NULL"});
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(&broken));
  EXPECT_RAISED(.kind = "ValueError", .api = col_api, .arg = "attr_name", .says = {"NULL", "5"});
  cr_expect_null(API(TVMFFIGetTypeAttrColumn)(&huge));
  EXPECT_RAISED(.kind = "ValueError", .api = col_api, .arg = "attr_name", .says = {"2147483648"});
}

/* TAT-021: a process holds many attribute columns: 200 new names, each
 * given a value for one type, are all taken, and each column then gives
 * its own value back. */
TEST(type_attr, TAT_021_many_columns) {
  enum { COLUMNS = 200 };
  int32_t t = new_type("conformance.attr.ManyColumns");
  char name[64];
  for (int i = 0; i < COLUMNS; ++i) {
    snprintf(name, sizeof name, "conformance.attr.many_%d", i);
    int rc = reg(t, name, core_int(1000 + i));
    TVMFFIObjectHandle err = core_take_raised();
    cr_assert_eq(rc, 0, "column %d (`%s`) refused: %.*s", i, name,
                 err ? (int)TVMFFIErrorGetCellPtr(err)->message.size : 0,
                 err ? TVMFFIErrorGetCellPtr(err)->message.data : "");
  }
  for (int i = 0; i < COLUMNS; ++i) {
    snprintf(name, sizeof name, "conformance.attr.many_%d", i);
    const TVMFFITypeAttrColumn* c = column(name);
    cr_assert_not_null(c, "no column `%s`", name);
    const TVMFFIAny* e = entry(c, t);
    cr_assert_not_null(e, "column `%s` does not cover type %d", name, t);
    cr_expect(e->type_index == kTVMFFIInt && e->v_int64 == 1000 + i,
              "column `%s` holds type index %d value %lld, expected int %d", name, e->type_index,
              (long long)e->v_int64, 1000 + i);
  }
}
