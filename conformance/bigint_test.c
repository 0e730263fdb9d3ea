/* Clauses of spec/bigint.md: TVMFFIBigIntFromByteArray and
 * TVMFFIBigIntGetContentByteArray. */
#include <string.h>

#include "core_support.h"

static int from_words(const int64_t* words, size_t n, TVMFFIAny* out) {
  TVMFFIByteArray in = {(const char*)words, n * sizeof(int64_t)};
  memset(out, 0xcd, sizeof *out);
  return API(TVMFFIBigIntFromByteArray)(&in, out);
}

/* BIG-001: a value that fits in int64 (including redundant sign words and
 * the empty input, which is zero) comes back as an inline int. */
TEST(bigint, BIG_001_small_values_are_ints) {
  static const struct {
    int64_t words[3];
    size_t n;
    int64_t want;
  } cases[] = {
      {{0}, 0, 0},           {{42}, 1, 42},           {{-7}, 1, -7},
      {{-7, -1}, 2, -7},     {{5, 0, 0}, 3, 5},       {{INT64_MIN, -1}, 2, INT64_MIN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    TVMFFIAny out;
    cr_assert_eq(from_words(cases[i].words, cases[i].n, &out), 0);
    cr_expect_eq(out.type_index, kTVMFFIInt, "case %zu: type_index %d", i, out.type_index);
    cr_expect_eq(out.zero_padding, 0u);
    cr_expect_eq(out.v_int64, cases[i].want, "case %zu: %lld", i, (long long)out.v_int64);
  }
}

/* BIG-002: a value beyond int64 is an ffi.BigInt object holding the words
 * in their shortest form (redundant sign-extension words dropped, a sign
 * guard word kept), which TVMFFIBigIntGetContentByteArray returns. */
TEST(bigint, BIG_002_large_values_are_objects) {
  static const int64_t in[4] = {1, 2, 0, 0};
  TVMFFIAny out;
  cr_assert_eq(from_words(in, 4, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIBigInt, "type_index %d", out.type_index);
  cr_expect_eq(out.v_obj->type_index, kTVMFFIBigInt);
  TVMFFIByteArray got = API(TVMFFIBigIntGetContentByteArray)(&out);
  cr_expect_eq(got.size, 16u, "content of %zu bytes", got.size);
  cr_expect_eq(memcmp(got.data, in, 16), 0);
  core_release(&out);
  /* 2^63 needs a guard word of 0 so it does not read as negative. */
  static const int64_t guard[3] = {INT64_MIN, 0, 0};
  cr_assert_eq(from_words(guard, 3, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIBigInt);
  got = API(TVMFFIBigIntGetContentByteArray)(&out);
  cr_expect_eq(got.size, 16u);
  cr_expect_eq(memcmp(got.data, guard, 16), 0);
  core_release(&out);
}

/* BIG-003: TVMFFIBigIntGetContentByteArray of an inline int is its one
 * word. */
TEST(bigint, BIG_003_content_of_int) {
  TVMFFIAny v;
  memset(&v, 0, sizeof v);
  v.type_index = kTVMFFIInt;
  v.v_int64 = -12345;
  TVMFFIByteArray got = API(TVMFFIBigIntGetContentByteArray)(&v);
  cr_expect_eq(got.size, 8u);
  cr_expect_eq(got.data, (const char*)&v.v_int64);
}

/* BIG-004: an input whose size is not a multiple of 8 is refused with -1
 * and a ValueError. */
TEST(bigint, BIG_004_partial_word_refused) {
  TVMFFIByteArray in = {"12345", 5};
  TVMFFIAny out;
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&in, &out), -1);
  core_expect_raised("ValueError", "64-bit words");
}
