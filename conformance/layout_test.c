/* Clauses of spec/any.md and spec/object.md on layout: sizes, offsets and
 * constants, checked three ways: against the numbers at compile time,
 * against upstream's own c_api.h (layout_upstream.c), and at run time on
 * objects the implementation under test makes. */
#include <stddef.h>
#include <string.h>

#include "impl.h"
#include "layout_upstream.h"

/* ---- compile time: the reference headers against the numbers ---- */
_Static_assert(sizeof(TVMFFIAny) == 16, "ANY-001");
_Static_assert(_Alignof(TVMFFIAny) == 8, "ANY-001");
_Static_assert(offsetof(TVMFFIAny, type_index) == 0, "ANY-002");
_Static_assert(offsetof(TVMFFIAny, zero_padding) == 4, "ANY-002");
_Static_assert(offsetof(TVMFFIAny, small_str_len) == 4, "ANY-002");
_Static_assert(offsetof(TVMFFIAny, v_int64) == 8, "ANY-002");
_Static_assert(offsetof(TVMFFIAny, v_obj) == 8, "ANY-002");
_Static_assert(offsetof(TVMFFIAny, v_bytes) == 8, "ANY-002");
_Static_assert(sizeof(TVMFFIObject) == 24, "OBJ-001");
_Static_assert(offsetof(TVMFFIObject, combined_ref_count) == 0, "OBJ-001");
_Static_assert(offsetof(TVMFFIObject, type_index) == 8, "OBJ-001");
_Static_assert(offsetof(TVMFFIObject, __padding) == 12, "OBJ-001");
_Static_assert(offsetof(TVMFFIObject, deleter) == 16, "OBJ-001");
_Static_assert(sizeof(TVMFFIByteArray) == 16, "OBJ-002");
_Static_assert(sizeof(TVMFFIShapeCell) == 16, "OBJ-002");
_Static_assert(sizeof(TVMFFISeqCell) == 32, "OBJ-002");
_Static_assert(sizeof(TVMFFIErrorCell) == 72, "OBJ-002");
_Static_assert(sizeof(TVMFFIFunctionCell) == 16, "OBJ-002");
_Static_assert(sizeof(TVMFFIOpaqueObjectCell) == 8, "OBJ-002");
_Static_assert(sizeof(TVMFFIObjectAllocHeader) == 8, "OBJ-020");

/* The facts as the reference headers state them, in the same order. */
static const ConfLayoutFact ours[] = {
#define FACT(expr) {#expr, (long long)(expr)},
#include "layout_facts.inc"
#undef FACT
};

/* ANY-001: sizeof(TVMFFIAny) is 16 and its alignment 8. */
TEST(layout, ANY_001_any_is_16_bytes) {
  cr_expect_eq(sizeof(TVMFFIAny), 16u);
  cr_expect_eq(_Alignof(TVMFFIAny), 8u);
}

/* ANY-002: type_index at 0, zero_padding/small_str_len at 4, the payload
 * union at 8. Checked on a value the implementation fills. */
TEST(layout, ANY_002_field_offsets_on_a_produced_value) {
  TVMFFIByteArray in = {"abc", 3};
  unsigned char raw[16];
  TVMFFIAny out;
  memset(&out, 0xee, sizeof out);
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
  memcpy(raw, &out, sizeof raw);
  int32_t tindex;
  uint32_t len;
  memcpy(&tindex, raw + 0, 4);
  memcpy(&len, raw + 4, 4);
  cr_expect_eq(tindex, 11, "type_index at offset 0: expected kTVMFFISmallStr (11), got %d", tindex);
  cr_expect_eq(len, 3u, "small_str_len at offset 4: expected 3, got %u", len);
  cr_expect_eq(memcmp(raw + 8, "abc", 4), 0, "payload at offset 8 holds the bytes and a NUL");
}

/* ANY-003: every TVMFFITypeIndex value. */
TEST(layout, ANY_003_type_index_values) {
  static const struct {
    int value, want;
    const char* name;
  } table[] = {
      {kTVMFFIAny, -1, "Any"},
      {kTVMFFINone, 0, "None"},
      {kTVMFFIInt, 1, "Int"},
      {kTVMFFIBool, 2, "Bool"},
      {kTVMFFIFloat, 3, "Float"},
      {kTVMFFIOpaquePtr, 4, "OpaquePtr"},
      {kTVMFFIDataType, 5, "DataType"},
      {kTVMFFIDevice, 6, "Device"},
      {kTVMFFIDLTensorPtr, 7, "DLTensorPtr"},
      {kTVMFFIRawStr, 8, "RawStr"},
      {kTVMFFIByteArrayPtr, 9, "ByteArrayPtr"},
      {kTVMFFIObjectRValueRef, 10, "ObjectRValueRef"},
      {kTVMFFISmallStr, 11, "SmallStr"},
      {kTVMFFISmallBytes, 12, "SmallBytes"},
      {kTVMFFIUnchanged, 13, "Unchanged"},
      {kTVMFFIStaticObjectBegin, 64, "StaticObjectBegin"},
      {kTVMFFIObject, 64, "Object"},
      {kTVMFFIStr, 65, "Str"},
      {kTVMFFIBytes, 66, "Bytes"},
      {kTVMFFIError, 67, "Error"},
      {kTVMFFIFunction, 68, "Function"},
      {kTVMFFIShape, 69, "Shape"},
      {kTVMFFITensor, 70, "Tensor"},
      {kTVMFFIArray, 71, "Array"},
      {kTVMFFIMap, 72, "Map"},
      {kTVMFFIModule, 73, "Module"},
      {kTVMFFIOpaquePyObject, 74, "OpaquePyObject"},
      {kTVMFFIList, 75, "List"},
      {kTVMFFIDict, 76, "Dict"},
      {kTVMFFIVisitInterrupt, 77, "VisitInterrupt"},
      {kTVMFFIBigInt, 78, "BigInt"},
      {kTVMFFIStaticObjectEnd, 79, "StaticObjectEnd"},
      {kTVMFFIDynObjectBegin, 128, "DynObjectBegin"},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; ++i)
    cr_expect_eq(table[i].value, table[i].want, "kTVMFFI%s: expected %d, got %d", table[i].name,
                 table[i].want, table[i].value);
}

/* ANY-004: the suite's c_api.h and upstream's agree on every size, offset
 * and constant of layout_facts.inc. */
TEST(layout, ANY_004_headers_match_upstream) {
  size_t n = 0;
  const ConfLayoutFact* theirs = conf_upstream_layout(&n);
  size_t mine = sizeof ours / sizeof *ours;
  cr_assert_eq(n, mine, "fact lists differ in length: %zu vs %zu", n, mine);
  cr_assert_gt(n, 150u, "too few facts compared (%zu)", n);
  for (size_t i = 0; i < n; ++i) {
    cr_assert_str_eq(theirs[i].expr, ours[i].expr);
    cr_expect_eq(ours[i].value, theirs[i].value, "%s: reference header says %lld, upstream %lld",
                 ours[i].expr, ours[i].value, theirs[i].value);
  }
}

/* OBJ-001: the object header is 24 bytes: combined_ref_count (uint64) at 0,
 * type_index at 8, padding at 12, deleter at 16. Checked on an object the
 * implementation makes. */
TEST(layout, OBJ_001_header_on_a_produced_object) {
  TVMFFIObjectHandle obj = NULL;
  cr_assert_eq(API(TVMFFIObjectCreateOpaque)((void*)0x1234, kTVMFFIOpaquePyObject, NULL, &obj), 0);
  const unsigned char* raw = obj;
  uint64_t count;
  int32_t tindex;
  void* deleter;
  memcpy(&count, raw + 0, 8);
  memcpy(&tindex, raw + 8, 4);
  memcpy(&deleter, raw + 16, sizeof deleter);
  cr_expect_eq(count, ((uint64_t)1 << 32) | 1u, "count at offset 0: got %#llx",
               (unsigned long long)count);
  cr_expect_eq(tindex, kTVMFFIOpaquePyObject, "type_index at offset 8: got %d", tindex);
  cr_expect_not_null(deleter, "deleter at offset 16 is NULL");
  API(TVMFFIObjectDecRef)(obj);
}

/* OBJ-002: each kind's cell starts right after the header (offset 24):
 * a heap string's TVMFFIByteArray ... */
TEST(layout, OBJ_002_string_cell_at_24) {
  static const char text[] = "twelve chars";
  TVMFFIByteArray in = {text, 12};
  TVMFFIAny out;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIStr);
  TVMFFIByteArray cell;
  memcpy(&cell, (char*)out.v_obj + 24, sizeof cell);
  cr_expect_eq(cell.size, 12u);
  cr_expect_eq(memcmp(cell.data, text, 13), 0, "cell data must be the text and a NUL");
  API(TVMFFIObjectDecRef)(out.v_obj);
}

/* OBJ-002: ... an error's TVMFFIErrorCell ... */
TEST(layout, OBJ_002_error_cell_at_24) {
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, NULL);
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {"bad thing", 9}, bt = {"", 0};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&kind, &msg, &bt, &err), 0);
  cr_assert_eq(((TVMFFIObject*)err)->type_index, kTVMFFIError);
  TVMFFIErrorCell cell;
  memcpy(&cell, (char*)err + 24, sizeof cell);
  cr_expect_eq(cell.kind.size, 10u);
  cr_expect_eq(memcmp(cell.kind.data, "ValueError", 10), 0);
  cr_expect_eq(cell.message.size, 9u);
  cr_expect_eq(memcmp(cell.message.data, "bad thing", 9), 0);
  cr_expect_null(cell.cause_chain);
  cr_expect_null(cell.extra_context);
  API(TVMFFIObjectDecRef)(err);
}

static int layout_safe_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 42;
  return 0;
}

/* OBJ-002: ... a function's TVMFFIFunctionCell, whose safe_call the caller
 * may invoke directly with the object as handle ... */
TEST(layout, OBJ_002_function_cell_at_24) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, layout_safe_call, NULL, &fn), 0);
  cr_assert_eq(((TVMFFIObject*)fn)->type_index, kTVMFFIFunction);
  TVMFFIFunctionCell cell;
  memcpy(&cell, (char*)fn + 24, sizeof cell);
  cr_assert_not_null(cell.safe_call);
  TVMFFIAny result = {0};
  cr_expect_eq(cell.safe_call(fn, NULL, 0, &result), 0);
  cr_expect_eq(result.type_index, kTVMFFIInt);
  cr_expect_eq(result.v_int64, 42);
  API(TVMFFIObjectDecRef)(fn);
}

/* OBJ-002: ... and an opaque object's TVMFFIOpaqueObjectCell. */
TEST(layout, OBJ_002_opaque_cell_at_24) {
  TVMFFIObjectHandle obj = NULL;
  cr_assert_eq(API(TVMFFIObjectCreateOpaque)((void*)0xabcd, kTVMFFIOpaquePyObject, NULL, &obj), 0);
  void* handle;
  memcpy(&handle, (char*)obj + 24, sizeof handle);
  cr_expect_eq(handle, (void*)0xabcd);
  API(TVMFFIObjectDecRef)(obj);
}
