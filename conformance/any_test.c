/* Clauses of spec/any.md on ownership: TVMFFIAnyViewToOwnedAny for every
 * view kind, and the zero-padding invariant of produced values. */
#include <string.h>

#include "core_support.h"

static TVMFFIAny view_of(int32_t kind) {
  TVMFFIAny v;
  memset(&v, 0, sizeof v);
  v.type_index = kind;
  return v;
}

static TVMFFIAny to_owned(const TVMFFIAny* view) {
  TVMFFIAny out;
  memset(&out, 0xcd, sizeof out);
  int rc = API(TVMFFIAnyViewToOwnedAny)(view, &out);
  cr_assert_eq(rc, 0, "TVMFFIAnyViewToOwnedAny returned %d for type_index %d", rc,
               view->type_index);
  return out;
}

static TVMFFIObject* new_heap_string(const char* text) {
  TVMFFIByteArray in = {text, strlen(text)};
  TVMFFIAny out;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIStr, "\"%s\" should be a heap string", text);
  return out.v_obj;
}

/* ANY-010: inline values (None, int, bool, float, void*, DataType, Device)
 * are copied: all 16 bytes of the owned value equal the view's. */
TEST(any, ANY_010_inline_values_copied_bit_for_bit) {
  TVMFFIAny views[7];
  views[0] = view_of(kTVMFFINone);
  views[1] = view_of(kTVMFFIInt);
  views[1].v_int64 = -1234567890123LL;
  views[2] = view_of(kTVMFFIBool);
  views[2].v_int64 = 1;
  views[3] = view_of(kTVMFFIFloat);
  views[3].v_float64 = 3.25;
  views[4] = view_of(kTVMFFIOpaquePtr);
  views[4].v_ptr = (void*)0x5678;
  views[5] = view_of(kTVMFFIDataType);
  views[5].v_dtype = (DLDataType){kDLFloat, 16, 4};
  views[6] = view_of(kTVMFFIDevice);
  views[6].v_device = (DLDevice){kDLCUDA, 3};
  for (int i = 0; i < 7; ++i) {
    TVMFFIAny out = to_owned(&views[i]);
    cr_expect_eq(memcmp(&out, &views[i], sizeof out), 0, "type_index %d not copied exactly",
                 views[i].type_index);
  }
}

/* ANY-011: a DLTensor* view stays a DLTensor* view: same type index, same
 * pointer; no tensor object is made, so the caller keeps the DLTensor
 * alive for as long as the result is used. */
TEST(any, ANY_011_dltensor_pointer_stays_borrowed) {
  DLTensor tensor;
  memset(&tensor, 0, sizeof tensor);
  TVMFFIAny v = view_of(kTVMFFIDLTensorPtr);
  v.v_ptr = &tensor;
  TVMFFIAny out = to_owned(&v);
  cr_expect_eq(out.type_index, kTVMFFIDLTensorPtr, "type_index: got %d", out.type_index);
  cr_expect_eq(out.v_ptr, (void*)&tensor, "the pointer changed");
  cr_expect_eq(out.zero_padding, 0u);
}

/* ANY-012: a const char* becomes a string: inline kTVMFFISmallStr when
 * strlen is at most 7, a heap ffi.String otherwise, content equal. */
TEST(any, ANY_012_raw_string_becomes_string) {
  TVMFFIAny v = view_of(kTVMFFIRawStr);
  v.v_c_str = "seven!!";
  TVMFFIAny small = to_owned(&v);
  cr_expect_eq(small.type_index, kTVMFFISmallStr);
  cr_expect_eq(small.small_str_len, 7u);
  cr_expect_eq(memcmp(small.v_bytes, "seven!!", 8), 0, "content and trailing NUL");
  v.v_c_str = "eight!!!";
  TVMFFIAny heap = to_owned(&v);
  cr_assert_eq(heap.type_index, kTVMFFIStr);
  TVMFFIByteArray b = core_str_bytes(&heap);
  cr_expect_eq(b.size, 8u);
  cr_expect_eq(memcmp(b.data, "eight!!!", 9), 0);
  cr_expect_neq(b.data, v.v_c_str, "the heap string must own a copy");
  core_release(&heap);
}

/* ANY-013: a TVMFFIByteArray* becomes bytes: kTVMFFISmallBytes up to 7
 * bytes, ffi.Bytes beyond, embedded NULs kept. */
TEST(any, ANY_013_byte_array_becomes_bytes) {
  TVMFFIByteArray small_in = {"xy\0z", 4}, heap_in = {
                                               "0\0"
                                               "1234567",
                                               9};
  TVMFFIAny v = view_of(kTVMFFIByteArrayPtr);
  v.v_ptr = &small_in;
  TVMFFIAny small = to_owned(&v);
  cr_expect_eq(small.type_index, kTVMFFISmallBytes);
  cr_expect_eq(small.small_str_len, 4u);
  cr_expect_eq(memcmp(small.v_bytes, "xy\0z\0\0\0\0", 8), 0);
  v.v_ptr = &heap_in;
  TVMFFIAny heap = to_owned(&v);
  cr_assert_eq(heap.type_index, kTVMFFIBytes);
  TVMFFIByteArray b = core_str_bytes(&heap);
  cr_expect_eq(b.size, 9u);
  cr_expect_eq(memcmp(b.data, heap_in.data, 9), 0);
  core_release(&heap);
}

/* ANY-014: an object view gives the same object with one more strong
 * reference; the view's type index is kept. */
TEST(any, ANY_014_object_gains_a_reference) {
  TVMFFIObject* obj = new_heap_string("an object to share");
  TVMFFIAny v = view_of(kTVMFFIStr);
  v.v_obj = obj;
  TVMFFIAny out = to_owned(&v);
  cr_expect_eq(out.type_index, kTVMFFIStr);
  cr_expect_eq(out.v_obj, obj);
  cr_expect_eq(core_strong(obj), 2u, "strong count: expected 2, got %u", core_strong(obj));
  core_release(&out);
  cr_expect_eq(core_strong(obj), 1u);
  API(TVMFFIObjectDecRef)(obj);
}

/* ANY-015: an rvalue reference moves the object: the result holds it under
 * its own type index, the source slot becomes NULL, and the strong count
 * does not change. */
TEST(any, ANY_015_rvalue_reference_moves) {
  TVMFFIObject* obj = new_heap_string("moved, not copied");
  TVMFFIObject* slot = obj;
  TVMFFIAny v = view_of(kTVMFFIObjectRValueRef);
  v.v_ptr = &slot;
  TVMFFIAny out = to_owned(&v);
  cr_expect_eq(out.type_index, kTVMFFIStr, "type_index: got %d", out.type_index);
  cr_expect_eq(out.v_obj, obj);
  cr_expect_null(slot, "the source slot must be cleared");
  cr_expect_eq(core_strong(obj), 1u, "strong count: expected 1, got %u", core_strong(obj));
  core_release(&out);
}

/* ANY-016: converting an rvalue reference whose slot is already NULL
 * returns -1 with an error raised whose message says "already moved". */
TEST(any, ANY_016_moved_rvalue_refused) {
  TVMFFIObject* slot = NULL;
  TVMFFIAny v = view_of(kTVMFFIObjectRValueRef);
  v.v_ptr = &slot;
  TVMFFIAny out;
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  EXPECT_RAISED(.says = {"already moved"});
}

/* ANY-017: that error is a ValueError. */
TEST(any, ANY_017_moved_rvalue_is_value_error) {
  TVMFFIObject* slot = NULL;
  TVMFFIAny v = view_of(kTVMFFIObjectRValueRef);
  v.v_ptr = &slot;
  TVMFFIAny out;
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"already moved"});
}

/* ANY-018: a small string or bytes value holds its length in bytes 4..7 and
 * its content in v_bytes followed by zeros, so the content is always
 * NUL-terminated inside the value. */
TEST(any, ANY_018_small_values_nul_terminated) {
  for (size_t n = 0; n <= 7; ++n) {
    TVMFFIByteArray in = {"ABCDEFG", n};
    TVMFFIAny out;
    memset(&out, 0xff, sizeof out);
    cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
    cr_expect_eq(out.small_str_len, (uint32_t)n);
    cr_expect_eq(strlen(out.v_bytes), n, "strlen of the inline content: %zu for length %zu",
                 strlen(out.v_bytes), n);
  }
}

/* ANY-019: values the implementation produces keep the zero-padding
 * invariant: bytes 4..7 are zero for every kind but the small ones, and a
 * pointer payload leaves no stray bytes. */
TEST(any, ANY_019_produced_values_zero_padded) {
  TVMFFIByteArray in = {"long enough to be heap", 22};
  TVMFFIAny s, b;
  memset(&s, 0xff, sizeof s);
  memset(&b, 0xff, sizeof b);
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &b), 0);
  cr_expect_eq(s.zero_padding, 0u);
  cr_expect_eq(b.zero_padding, 0u);
  TVMFFIAny v = view_of(kTVMFFIRawStr);
  v.v_c_str = "another heap string";
  TVMFFIAny owned = to_owned(&v);
  cr_expect_eq(owned.zero_padding, 0u);
  DLDataType dt = {kDLFloat, 32, 1};
  TVMFFIAny text;
  memset(&text, 0xff, sizeof text);
  cr_assert_eq(API(TVMFFIDataTypeToString)(&dt, &text), 0);
  if (text.type_index == kTVMFFISmallStr) {
    cr_expect_eq(memcmp(text.v_bytes, "float32", 8), 0, "float32 and a NUL, nothing else");
  } else {
    cr_expect_eq(text.type_index, kTVMFFIStr, "type_index %d is not a string", text.type_index);
    cr_expect_eq(text.zero_padding, 0u);
  }
  core_release(&text);
  core_release(&s);
  core_release(&b);
  core_release(&owned);
}

/* ANY-020: a NULL any_view or out is refused with ValueError naming it. */
TEST(any, ANY_020_null_arguments_refused) {
  HOSTILE_INPUT("TVMFFIAnyViewToOwnedAny(NULL, ...) dereferences NULL");
  TVMFFIAny out, v = view_of(kTVMFFIInt);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"any_view"});
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
}

/* ANY-021: a const char* view holding NULL is refused with ValueError. */
TEST(any, ANY_021_null_raw_string_refused) {
  HOSTILE_INPUT("a const char* view holding NULL is passed to strlen");
  TVMFFIAny out, v = view_of(kTVMFFIRawStr);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"const char*"});
}

/* ANY-022: a view whose type index names no kind (14..63, or below -1) is
 * refused with TypeError naming the index. */
TEST(any, ANY_022_unknown_type_index_refused) {
  static const int32_t bad[] = {14, 20, 63, -5};
  for (size_t i = 0; i < 4; ++i) {
    TVMFFIAny out, v = view_of(bad[i]);
    cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1, "type_index %d accepted", bad[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"type_index"});
  }
}

/* ANY-024: an rvalue-reference view whose v_ptr is NULL is refused with -1
 * and a ValueError naming the rvalue reference; out is None after it (and
 * after the refusals of ANY-020 and ANY-021). */
TEST(any, ANY_024_null_rvalue_slot_refused) {
  HOSTILE_INPUT("a NULL rvalue slot is dereferenced");
  TVMFFIAny v = view_of(kTVMFFIObjectRValueRef), out;
  v.v_ptr = NULL;
  memset(&out, 0xab, sizeof out);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"rvalue"});
  cr_expect_eq(out.type_index, kTVMFFINone, "out after the refusal: type_index %d", out.type_index);
  memset(&out, 0xab, sizeof out);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"any_view"});
  cr_expect_eq(out.type_index, kTVMFFINone, "out after a NULL any_view: type_index %d",
               out.type_index);
  TVMFFIAny raw = view_of(kTVMFFIRawStr);
  memset(&out, 0xab, sizeof out);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&raw, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"const char*"});
  cr_expect_eq(out.type_index, kTVMFFINone, "out after a NULL const char*: type_index %d",
               out.type_index);
}

/* ANY-025: a TVMFFIByteArray* view holding NULL, or pointing at {NULL, n}
 * with n > 0, is refused with -1 and a ValueError naming TVMFFIByteArray;
 * {NULL, 0} is the empty bytes value. */
TEST(any, ANY_025_null_byte_array_refused) {
  HOSTILE_INPUT("a NULL TVMFFIByteArray* is dereferenced");
  TVMFFIAny v = view_of(kTVMFFIByteArrayPtr), out;
  memset(&out, 0xab, sizeof out);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"TVMFFIByteArray"});
  cr_expect_eq(out.type_index, kTVMFFINone);
  TVMFFIByteArray bad = {NULL, 9}, empty = {NULL, 0};
  v.v_ptr = &bad;
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"TVMFFIByteArray"});
  v.v_ptr = &empty;
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), 0);
  cr_expect_eq(out.type_index, kTVMFFISmallBytes, "type_index %d", out.type_index);
  cr_expect_eq(out.small_str_len, 0u);
}

/* ANY-026: owned values made by TVMFFIAnyViewToOwnedAny (heap strings and
 * bytes from const char* and TVMFFIByteArray* views, shared objects) leave
 * nothing allocated once released, and lie within their storage. */
TEST(any, ANY_026_owned_values_freed) {
  static const char text[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  core_count_begin();
  TVMFFIByteArray in = {"a heap string shared by reference", 33};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  for (size_t n = 0; n <= 36; ++n) {
    char buf[40];
    memcpy(buf, text, n);
    buf[n] = '\0';
    TVMFFIAny raw = view_of(kTVMFFIRawStr), out;
    raw.v_c_str = buf;
    cr_assert_eq(API(TVMFFIAnyViewToOwnedAny)(&raw, &out), 0);
    core_release(&out);
    TVMFFIByteArray bytes = {text, n};
    TVMFFIAny ba = view_of(kTVMFFIByteArrayPtr);
    ba.v_ptr = &bytes;
    cr_assert_eq(API(TVMFFIAnyViewToOwnedAny)(&ba, &out), 0);
    core_release(&out);
    cr_assert_eq(API(TVMFFIAnyViewToOwnedAny)(&s, &out), 0);
    core_release(&out);
  }
  cr_expect_eq(core_strong(s.v_obj), 1u, "the shared string's count is %u", core_strong(s.v_obj));
  core_release(&s);
  core_count_end("owned copies of 0 to 36 bytes and of a shared object, released");
}

/* Takes the raised error and checks its kind, and that its message says
 * TVMFFIAnyViewToOwnedAny, after it `param`, and after that `reason`. */
static void expect_in_order(const char* kind, const char* param, const char* reason) {
  static const char api[] = "TVMFFIAnyViewToOwnedAny";
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)1, "nothing raised (%s: %s)",
            param, reason);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  char msg[512];
  size_t n = cell->message.size < sizeof msg ? cell->message.size : sizeof msg - 1;
  memcpy(msg, cell->message.data, n);
  msg[n] = '\0';
  cr_expect(cell->kind.size == strlen(kind) && memcmp(cell->kind.data, kind, strlen(kind)) == 0,
            "kind %.*s, expected %s (message: %s)", (int)cell->kind.size, cell->kind.data, kind,
            msg);
  const char* at = strstr(msg, api);
  const char* p = at ? strstr(at + strlen(api), param) : NULL;
  cr_expect(p != NULL && strstr(p + strlen(param), reason) != NULL,
            "the message does not name %s, then %s, then say \"%s\": %s", api, param, reason, msg);
  API(TVMFFIObjectDecRef)(err);
}

/* ANY-027: each refusal of TVMFFIAnyViewToOwnedAny names the function,
 * then the argument, then what is wrong with it. */
TEST(any, ANY_027_refusals_name_function_argument_reason) {
  HOSTILE_INPUT("upstream dereferences NULL slots and copies unknown kinds");
  TVMFFIAny out, v = view_of(kTVMFFIObjectRValueRef);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  expect_in_order("ValueError", "any_view", "rvalue");
  TVMFFIObject* moved = NULL;
  v.v_ptr = &moved;
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  expect_in_order("ValueError", "any_view", "already moved");
  v = view_of(kTVMFFIRawStr);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  expect_in_order("ValueError", "any_view", "const char*");
  v = view_of(kTVMFFIByteArrayPtr);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1);
  expect_in_order("ValueError", "any_view", "TVMFFIByteArray");
  static const int32_t bad[] = {14, 63, -5};
  static const char* const bad_text[] = {"14", "63", "-5"};
  for (size_t i = 0; i < 3; ++i) {
    v = view_of(bad[i]);
    cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), -1, "type_index %d accepted", bad[i]);
    expect_in_order("TypeError", "type_index", bad_text[i]);
  }
}

/* ANY-028: a view of each inline kind up to kTVMFFIUnchanged (13), the
 * last one defined, is copied bit for bit. */
TEST(any, ANY_028_inline_kinds_copied_verbatim) {
  static const int32_t kinds[] = {kTVMFFINone,       kTVMFFIInt,         kTVMFFIBool,
                                  kTVMFFIFloat,      kTVMFFIOpaquePtr,   kTVMFFIDataType,
                                  kTVMFFIDevice,     kTVMFFIDLTensorPtr, kTVMFFISmallStr,
                                  kTVMFFISmallBytes, kTVMFFIUnchanged};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    TVMFFIAny v = view_of(kinds[i]), out;
    if (kinds[i] == kTVMFFISmallStr || kinds[i] == kTVMFFISmallBytes) {
      v.small_str_len = 3;
      memcpy(v.v_bytes, "abc", 3);
    } else if (kinds[i] != kTVMFFINone) {
      v.v_int64 = 0x1234567 + (int64_t)i;
    }
    memset(&out, 0xab, sizeof out);
    cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&v, &out), 0, "type_index %d refused", kinds[i]);
    cr_expect(memcmp(&out, &v, sizeof v) == 0, "type_index %d: the copy differs", kinds[i]);
  }
}

/* ANY-029: an object-kind view holding NULL is never dereferenced: 0 with
 * the same NULL value, or -1 with an error raised and out None. */
TEST(any, ANY_029_null_object_view_not_dereferenced) {
  HOSTILE_INPUT("an object-kind view holding NULL may be dereferenced");
  TVMFFIAny v = view_of(kTVMFFIArray), out;
  memset(&out, 0xab, sizeof out);
  int rc = API(TVMFFIAnyViewToOwnedAny)(&v, &out);
  if (rc == 0) {
    cr_expect(out.type_index == kTVMFFIArray && out.v_obj == NULL, "type %d object %p",
              out.type_index, (void*)out.v_obj);
  } else {
    cr_expect_eq(rc, -1);
    TVMFFIObjectHandle err = core_take_raised();
    cr_expect(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)1, "-1 with nothing raised");
    if (err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)1) API(TVMFFIObjectDecRef)(err);
    cr_expect_eq(out.type_index, kTVMFFINone);
  }
}
