/* Clauses of spec/string.md: TVMFFIStringFromByteArray and
 * TVMFFIBytesFromByteArray. */
#include <stdlib.h>
#include <string.h>

#include "core_support.h"
#include "core_support.h"

typedef int (*FromBytes)(const TVMFFIByteArray*, TVMFFIAny*);

/* Checks one small result: kind, length, content, and zero bytes after. */
static void expect_small(const TVMFFIAny* out, int32_t kind, const char* data, size_t n) {
  cr_expect_eq(out->type_index, kind, "type_index: expected %d, got %d", kind, out->type_index);
  cr_expect_eq(out->small_str_len, (uint32_t)n, "small_str_len: expected %zu, got %u", n,
               out->small_str_len);
  cr_expect_eq(memcmp(out->v_bytes, data, n), 0, "content differs");
  for (size_t i = n; i < 8; ++i)
    cr_expect_eq(out->v_bytes[i], 0, "payload byte %zu after the content is %d, not 0", i,
                 out->v_bytes[i]);
}

/* Checks one heap result: kind, zero padding, the cell right after the
 * header, content, NUL terminator and a single strong reference. */
static void expect_heap(const TVMFFIAny* out, int32_t kind, const char* data, size_t n) {
  cr_assert_eq(out->type_index, kind, "type_index: expected %d, got %d", kind, out->type_index);
  cr_expect_eq(out->zero_padding, 0u, "zero_padding of a heap value is %u", out->zero_padding);
  cr_assert_not_null(out->v_obj);
  cr_expect_eq(out->v_obj->type_index, kind, "object header type_index %d", out->v_obj->type_index);
  TVMFFIByteArray cell;
  memcpy(&cell, (const char*)out->v_obj + sizeof(TVMFFIObject), sizeof cell);
  cr_expect_eq(cell.size, n, "cell size: expected %zu, got %zu", n, cell.size);
  cr_assert_not_null(cell.data);
  cr_expect_eq(memcmp(cell.data, data, n), 0, "content differs");
  cr_expect_eq(cell.data[n], '\0', "heap content is not NUL-terminated");
  cr_expect_eq(core_strong(out->v_obj), 1u, "strong count %u", core_strong(out->v_obj));
}

/* STR-001: up to 7 bytes give an inline small string: kTVMFFISmallStr,
 * small_str_len = length, the bytes in v_bytes and zeros after them. */
TEST(string, STR_001_small_string_up_to_7) {
  static const char* inputs[] = {"", "a", "abcdefg"};
  for (size_t i = 0; i < 3; ++i) {
    TVMFFIByteArray in = {inputs[i], strlen(inputs[i])};
    TVMFFIAny out;
    memset(&out, 0xab, sizeof out);
    cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
    expect_small(&out, kTVMFFISmallStr, in.data, in.size);
  }
}

/* STR-002: 8 bytes or more give a heap ffi.String: the TVMFFIByteArray right
 * after the 24-byte header, content copied and NUL-terminated. */
TEST(string, STR_002_heap_string_from_8) {
  static const char* inputs[] = {"abcdefgh", "a somewhat longer string of text"};
  for (size_t i = 0; i < 2; ++i) {
    TVMFFIByteArray in = {inputs[i], strlen(inputs[i])};
    TVMFFIAny out;
    memset(&out, 0xab, sizeof out);
    cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
    expect_heap(&out, kTVMFFIStr, in.data, in.size);
    core_release(&out);
  }
}

/* STR-003: bytes follow the same rule: kTVMFFISmallBytes up to 7 bytes,
 * ffi.Bytes from 8. */
TEST(string, STR_003_bytes_small_and_heap) {
  static const size_t lengths[] = {0, 1, 7, 8, 9};
  static const char data[] = "0123456789";
  for (size_t i = 0; i < 5; ++i) {
    TVMFFIByteArray in = {data, lengths[i]};
    TVMFFIAny out;
    memset(&out, 0xab, sizeof out);
    cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &out), 0);
    if (lengths[i] <= 7) {
      expect_small(&out, kTVMFFISmallBytes, data, lengths[i]);
    } else {
      expect_heap(&out, kTVMFFIBytes, data, lengths[i]);
      core_release(&out);
    }
  }
}

/* STR-004: the length comes from size, not from a NUL: embedded NUL bytes
 * are kept, in small and heap values, strings and bytes. */
TEST(string, STR_004_embedded_nul_kept) {
  static const char data[] = "a\0b\0c\0d\0e\0";
  FromBytes fns[2] = {API(TVMFFIStringFromByteArray), API(TVMFFIBytesFromByteArray)};
  int32_t small[2] = {kTVMFFISmallStr, kTVMFFISmallBytes}, heap[2] = {kTVMFFIStr, kTVMFFIBytes};
  for (int k = 0; k < 2; ++k) {
    TVMFFIByteArray in_small = {data, 5}, in_heap = {data, 11};
    TVMFFIAny out;
    cr_assert_eq(fns[k](&in_small, &out), 0);
    expect_small(&out, small[k], data, 5);
    cr_assert_eq(fns[k](&in_heap, &out), 0);
    expect_heap(&out, heap[k], data, 11);
    core_release(&out);
  }
}

/* STR-005: a 1 MiB input round-trips byte for byte. */
TEST(string, STR_005_one_mebibyte) {
  size_t n = (size_t)1 << 20;
  char* data = malloc(n);
  cr_assert_not_null(data);
  for (size_t i = 0; i < n; ++i) data[i] = (char)(i * 131u + 7u);
  TVMFFIByteArray in = {data, n};
  TVMFFIAny s, b;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &b), 0);
  expect_heap(&s, kTVMFFIStr, data, n);
  expect_heap(&b, kTVMFFIBytes, data, n);
  core_release(&s);
  core_release(&b);
  free(data);
}

/* STR-006: the value is a copy: changing the input afterwards changes
 * neither a small nor a heap value. */
TEST(string, STR_006_result_is_a_copy) {
  char buf[32] = "copy me, please";
  TVMFFIByteArray small_in = {buf, 4}, heap_in = {buf, 15};
  TVMFFIAny small, heap;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&small_in, &small), 0);
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&heap_in, &heap), 0);
  memset(buf, 'X', sizeof buf);
  expect_small(&small, kTVMFFISmallStr, "copy", 4);
  expect_heap(&heap, kTVMFFIStr, "copy me, please", 15);
  core_release(&heap);
}

/* STR-007: {NULL, 0} is the empty string, not an error. */
TEST(string, STR_007_null_data_with_size_zero) {
  TVMFFIByteArray in = {NULL, 0};
  TVMFFIAny out;
  memset(&out, 0xab, sizeof out);
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
  expect_small(&out, kTVMFFISmallStr, "", 0);
  cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &out), 0);
  expect_small(&out, kTVMFFISmallBytes, "", 0);
}

/* STR-008: a NULL input is refused with ValueError naming `input`. */
TEST(string, STR_008_null_input_refused) {
  HOSTILE_INPUT("TVMFFIStringFromByteArray(NULL, ...) dereferences NULL");
  TVMFFIAny out;
  cr_expect_eq(API(TVMFFIStringFromByteArray)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"input"});
  cr_expect_eq(API(TVMFFIBytesFromByteArray)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"input"});
}

/* STR-009: a heap value holds one strong reference that the caller owns:
 * one TVMFFIObjectDecRef releases it (ASan and valgrind see no leak), and
 * an extra reference keeps it alive with its content intact. */
TEST(string, STR_009_caller_owns_one_reference) {
  TVMFFIByteArray in = {"reference counted", 17};
  TVMFFIAny out;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &out), 0);
  cr_assert_eq(core_strong(out.v_obj), 1u);
  cr_assert_eq(API(TVMFFIObjectIncRef)(out.v_obj), 0);
  cr_expect_eq(core_strong(out.v_obj), 2u);
  cr_assert_eq(API(TVMFFIObjectDecRef)(out.v_obj), 0);
  expect_heap(&out, kTVMFFIStr, "reference counted", 17);
  core_release(&out);
}

/* STR-010: strings and bytes, inline and heap, leave nothing allocated
 * once released. */
TEST(string, STR_010_released_values_freed) {
  static const char data[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789";
  FromBytes fns[2] = {API(TVMFFIStringFromByteArray), API(TVMFFIBytesFromByteArray)};
  core_count_begin();
  for (int k = 0; k < 2; ++k) {
    for (size_t n = 0; n <= 40; ++n) {
      TVMFFIByteArray in = {data, n};
      TVMFFIAny out;
      cr_assert_eq(fns[k](&in, &out), 0);
      core_release(&out);
    }
  }
  long made = __atomic_load_n(&core_alloc_count.allocs, __ATOMIC_RELAXED);
  core_count_end("strings and bytes of 0 to 40 bytes made and released");
  cr_expect_geq(made, 2 * 33, "heap values of 8 to 40 bytes: only %ld objects allocated", made);
}

/* STR-012: a NULL out is refused with a ValueError naming out; an input
 * whose data is NULL with a nonzero size with a ValueError naming input,
 * and out is None after it. */
TEST(string, STR_012_malformed_arguments_refused) {
  HOSTILE_INPUT("TVMFFIStringFromByteArray reads through NULL");
  FromBytes fns[2] = {API(TVMFFIStringFromByteArray), API(TVMFFIBytesFromByteArray)};
  for (int k = 0; k < 2; ++k) {
    TVMFFIByteArray in = {"fine input", 10}, null_data = {NULL, 12};
    cr_expect_eq(fns[k](&in, NULL), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
    TVMFFIAny out;
    memset(&out, 0xab, sizeof out);
    cr_expect_eq(fns[k](&null_data, &out), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"input"});
    cr_expect_eq(out.type_index, kTVMFFINone, "out after the refusal: type_index %d",
                 out.type_index);
    memset(&out, 0xab, sizeof out);
    cr_expect_eq(fns[k](NULL, &out), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"input"});
    cr_expect_eq(out.type_index, kTVMFFINone, "out after a NULL input: type_index %d",
                 out.type_index);
  }
}

/* STR-013: a size no allocation can hold (near SIZE_MAX) is refused with
 * -1 and a MemoryError, without reading the data. */
TEST(string, STR_013_impossible_size_refused) {
  HOSTILE_INPUT("a size near SIZE_MAX wraps the allocation size");
  static const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 8, SIZE_MAX - 40, SIZE_MAX / 2};
  FromBytes fns[2] = {API(TVMFFIStringFromByteArray), API(TVMFFIBytesFromByteArray)};
  for (int k = 0; k < 2; ++k) {
    for (size_t i = 0; i < 4; ++i) {
      TVMFFIByteArray in = {"short", sizes[i]};
      TVMFFIAny out;
      memset(&out, 0xab, sizeof out);
      cr_expect_eq(fns[k](&in, &out), -1, "size %zu accepted", sizes[i]);
      EXPECT_RAISED(.kind = "MemoryError");
      cr_expect_eq(out.type_index, kTVMFFINone, "out after the refusal: type_index %d",
                   out.type_index);
    }
  }
  /* Sizes in that range that a header size h (3..64 bytes) multiplied in by
   * mistake would wrap to a few bytes: h * size is h * (SIZE_MAX / h + 1)
   * past a multiple of 2^64. */
  for (int k = 0; k < 2; ++k) {
    for (size_t h = 3; h <= 64; ++h) {
      size_t size = ((size_t)1 << 63) + SIZE_MAX / h + 1;
      TVMFFIByteArray in = {"short", size};
      TVMFFIAny out;
      memset(&out, 0xab, sizeof out);
      cr_expect_eq(fns[k](&in, &out), -1, "size %zu accepted", size);
      EXPECT_RAISED(.kind = "MemoryError");
      cr_expect_eq(out.type_index, kTVMFFINone, "out after the refusal: type_index %d",
                   out.type_index);
    }
  }
}

/* STR-014: each refusal of STR-008 and STR-012 names the function, then
 * the argument, then (for NULL data) the size it came with. */
TEST(string, STR_014_refusal_names_function_then_argument) {
  HOSTILE_INPUT("TVMFFIStringFromByteArray(NULL, ...) dereferences NULL");
  static const char* const names[2] = {"TVMFFIStringFromByteArray", "TVMFFIBytesFromByteArray"};
  FromBytes fns[2] = {API(TVMFFIStringFromByteArray), API(TVMFFIBytesFromByteArray)};
  for (int k = 0; k < 2; ++k) {
    TVMFFIByteArray in = {"fine input", 10}, null_data = {NULL, 12345};
    TVMFFIAny out;
    cr_expect_eq(fns[k](NULL, &out), -1);
    EXPECT_RAISED(.kind = "ValueError", .api = names[k], .arg = "input");
    cr_expect_eq(fns[k](&in, NULL), -1);
    EXPECT_RAISED(.kind = "ValueError", .api = names[k], .arg = "out");
    cr_expect_eq(fns[k](&null_data, &out), -1);
    EXPECT_RAISED(.kind = "ValueError", .api = names[k], .arg = "input", .says = {"12345"});
  }
}
