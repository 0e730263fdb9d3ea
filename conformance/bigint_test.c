/* Clauses of spec/bigint.md: TVMFFIBigIntFromByteArray and
 * TVMFFIBigIntGetContentByteArray. */
#include <string.h>
#include <sys/mman.h>

#include "alloc_fail.h"
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
      {{0}, 0, 0},       {{42}, 1, 42},     {{-7}, 1, -7},
      {{-7, -1}, 2, -7}, {{5, 0, 0}, 3, 5}, {{INT64_MIN, -1}, 2, INT64_MIN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    TVMFFIAny out;
    cr_assert_eq(from_words(cases[i].words, cases[i].n, &out), 0);
    cr_expect_eq(out.type_index, kTVMFFIInt, "case %zu: type_index %d", i, out.type_index);
    cr_expect_eq(out.zero_padding, 0u);
    cr_expect_eq(out.v_int64, cases[i].want, "case %zu: %lld", i, (long long)out.v_int64);
  }
  /* However many they are: 2^24 + 1 zero words (zero pages, never written)
   * are still 0. */
  size_t n = ((size_t)1 << 24) + 1;
  void* zeros = mmap(NULL, n * 8, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  cr_assert_neq(zeros, MAP_FAILED, "mmap of %zu bytes failed", n * 8);
  TVMFFIAny out;
  int rc = from_words(zeros, n, &out);
  munmap(zeros, n * 8);
  cr_assert_eq(rc, 0, "%zu zero words refused", n);
  cr_expect_eq(out.type_index, kTVMFFIInt, "%zu zero words: type_index %d", n, out.type_index);
  cr_expect_eq(out.v_int64, 0);
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
  EXPECT_RAISED(.kind = "ValueError", .says = {"64-bit words"});
}

/* BIG-005: the shortest form keeps the sign: a top word that only repeats
 * the sign of the word below goes, any other stays; the words may sit at
 * any alignment in the input. */
TEST(bigint, BIG_005_shortest_form_keeps_the_sign) {
  static const struct {
    int64_t words[5];
    size_t n, keep; /* keep 1: an inline int */
  } cases[] = {
      {{5, -1}, 2, 2},
      {{0, -1}, 2, 2},
      {{-5, -1, -1}, 3, 1},
      {{1, -2, -1, -1}, 4, 2},
      {{0, 0, 1, 0, 0}, 5, 3},
      {{INT64_MAX, 0, 0}, 3, 1},
      {{INT64_MIN, -1, -1}, 3, 1},
      {{-1, 0}, 2, 2},
      {{7, 8, 9, -1}, 4, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    char unaligned[1 + 5 * sizeof(int64_t)];
    memcpy(unaligned + 1, cases[i].words, cases[i].n * sizeof(int64_t));
    TVMFFIByteArray in = {unaligned + 1, cases[i].n * sizeof(int64_t)};
    TVMFFIAny out;
    memset(&out, 0xcd, sizeof out);
    cr_assert_eq(API(TVMFFIBigIntFromByteArray)(&in, &out), 0, "case %zu", i);
    if (cases[i].keep == 1) {
      cr_expect_eq(out.type_index, kTVMFFIInt, "case %zu: type_index %d", i, out.type_index);
      cr_expect_eq(out.v_int64, cases[i].words[0], "case %zu: %lld", i, (long long)out.v_int64);
      continue;
    }
    cr_assert_eq(out.type_index, kTVMFFIBigInt, "case %zu: type_index %d", i, out.type_index);
    cr_expect_eq(out.zero_padding, 0u);
    TVMFFIByteArray got = API(TVMFFIBigIntGetContentByteArray)(&out);
    cr_expect_eq(got.size, cases[i].keep * sizeof(int64_t), "case %zu: %zu bytes, expected %zu", i,
                 got.size, cases[i].keep * sizeof(int64_t));
    cr_expect_eq(memcmp(got.data, cases[i].words, cases[i].keep * sizeof(int64_t)), 0,
                 "case %zu: words differ", i);
    core_release(&out);
  }
}

/* BIG-006: big integers leave nothing allocated once released, and stay
 * within the storage they were allocated with. */
TEST(bigint, BIG_006_released_values_freed) {
  int64_t words[40];
  for (size_t i = 0; i < 40; ++i) words[i] = (int64_t)(i * 0x0101010101010101ull + 3);
  core_count_begin();
  for (size_t n = 2; n <= 40; ++n) {
    TVMFFIAny out;
    cr_assert_eq(from_words(words, n, &out), 0);
    cr_assert_eq(out.type_index, kTVMFFIBigInt);
    TVMFFIByteArray got = API(TVMFFIBigIntGetContentByteArray)(&out);
    cr_expect_eq(got.size, n * sizeof(int64_t));
    cr_expect_eq(memcmp(got.data, words, n * sizeof(int64_t)), 0, "%zu words differ", n);
    core_release(&out);
  }
  core_count_end("big integers of 2 to 40 words made and released");
}

/* BIG-007: a NULL out, a NULL input, or input data NULL with a nonzero
 * size are refused with -1 and a ValueError naming the argument; out is
 * None after any refusal. */
TEST(bigint, BIG_007_malformed_arguments_refused) {
  HOSTILE_INPUT("TVMFFIBigIntFromByteArray dereferences NULL");
  TVMFFIByteArray in = {"\1\0\0\0\0\0\0\0", 8}, null_data = {NULL, 16}, partial = {"12345", 5};
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&in, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  TVMFFIAny out;
  memset(&out, 0xcd, sizeof out);
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"input"});
  cr_expect_eq(out.type_index, kTVMFFINone, "out after a NULL input: type_index %d",
               out.type_index);
  memset(&out, 0xcd, sizeof out);
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&null_data, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"input"});
  cr_expect_eq(out.type_index, kTVMFFINone);
  memset(&out, 0xcd, sizeof out);
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&partial, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"64-bit words"});
  cr_expect_eq(out.type_index, kTVMFFINone);
}

/* BIG-008: TVMFFIBigIntGetContentByteArray of NULL or of a value that is
 * neither an int nor a big integer is {NULL, 0}. */
TEST(bigint, BIG_008_content_of_other_values_empty) {
  TVMFFIByteArray got;
  TVMFFIByteArray text = {"a heap string, not a number", 27};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&text, &s), 0);
  got = API(TVMFFIBigIntGetContentByteArray)(&s);
  cr_expect(got.data == NULL && got.size == 0, "a string: {%p, %zu}", (void*)got.data, got.size);
  core_release(&s);
  TVMFFIAny f;
  memset(&f, 0, sizeof f);
  f.type_index = kTVMFFIFloat;
  f.v_float64 = 2.5;
  got = API(TVMFFIBigIntGetContentByteArray)(&f);
  cr_expect(got.data == NULL && got.size == 0, "a float: {%p, %zu}", (void*)got.data, got.size);
  /* An object of a type index past kTVMFFIBigInt (a dynamic type) is not a
   * big integer either; its cell is never read, so filler bytes suffice. */
  static int64_t cell[16];
  memset(cell, 0x01, sizeof cell);
  TVMFFIAny dyn;
  memset(&dyn, 0, sizeof dyn);
  dyn.type_index = kTVMFFIDynObjectBegin;
  dyn.v_obj = (TVMFFIObject*)(void*)cell;
  got = API(TVMFFIBigIntGetContentByteArray)(&dyn);
  cr_expect(got.data == NULL && got.size == 0, "a dynamic object: {%p, %zu}", (void*)got.data,
            got.size);
  HOSTILE_INPUT("TVMFFIBigIntGetContentByteArray(NULL) dereferences NULL");
  got = API(TVMFFIBigIntGetContentByteArray)(NULL);
  cr_expect(got.data == NULL && got.size == 0, "NULL value: {%p, %zu}", (void*)got.data, got.size);
}

/* BIG-009: with any one allocation failing, or every one from some point
 * on, a value that needs an object comes back whole (0) or not at all (-1,
 * MemoryError, out None), and the call works right after. */
TEST(bigint, BIG_009_allocation_failure) {
  /* A library without the function skips for that reason, in every build. */
  (void)API(TVMFFIBigIntFromByteArray);
  conf_alloc_require();
  static const int64_t words[3] = {1, -7, 5};
  TVMFFIByteArray in = {(const char*)words, sizeof words};
  long points = 0;
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIAny out;
      memset(&out, 0xcd, sizeof out);
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIBigIntFromByteArray(&in, &out);
      conf_alloc_disarm(&w);
      if (rc == 0) {
        cr_assert_eq(out.type_index, kTVMFFIBigInt, "allocation %ld failed: 0 with type index %d",
                     w.n, out.type_index);
        TVMFFIByteArray b = API(TVMFFIBigIntGetContentByteArray)(&out);
        cr_assert(b.size == sizeof words && memcmp(b.data, words, sizeof words) == 0,
                  "allocation %ld failed: a wrong value", w.n);
        core_release(&out);
        core_take_raised();
      } else {
        cr_assert_eq(rc, -1, "allocation %ld failed: returned %d", w.n, rc);
        EXPECT_RAISED(.kind = "MemoryError");
        cr_expect_eq(out.type_index, kTVMFFINone, "allocation %ld failed: out type index %d", w.n,
                     out.type_index);
      }
      cr_assert_eq(from_words(words, 3, &out), 0, "right after allocation %ld failed", w.n);
      core_release(&out);
    }
    points += w.points;
  }
  conf_alloc_done(points, "TVMFFIBigIntFromByteArray");
}

/* BIG-010: a value tagged as a big integer that holds no object has no
 * content: {NULL, 0}, nothing read through the NULL. */
TEST(bigint, BIG_010_content_of_null_big_integer_empty) {
  HOSTILE_INPUT("a kTVMFFIBigInt value holding NULL is dereferenced");
  TVMFFIAny v;
  memset(&v, 0, sizeof v);
  v.type_index = kTVMFFIBigInt;
  TVMFFIByteArray got = API(TVMFFIBigIntGetContentByteArray)(&v);
  cr_expect(got.data == NULL && got.size == 0, "a NULL big integer: {%p, %zu}", (void*)got.data,
            got.size);
}

/* BIG-011: a one-word value is written into *out alone: the value right
 * after it in memory keeps its bytes. */
TEST(bigint, BIG_011_no_write_past_out) {
  static const int64_t word = -123456789;
  TVMFFIByteArray in = {(const char*)&word, sizeof word};
  TVMFFIAny outs[2];
  memset(outs, 0x5a, sizeof outs);
  TVMFFIAny after = outs[1];
  cr_assert_eq(API(TVMFFIBigIntFromByteArray)(&in, &outs[0]), 0);
  cr_expect(outs[0].type_index == kTVMFFIInt && outs[0].v_int64 == word, "type %d value %lld",
            outs[0].type_index, (long long)outs[0].v_int64);
  cr_expect(memcmp(&outs[1], &after, sizeof after) == 0, "the value after out was written");
}
