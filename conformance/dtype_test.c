/* Clauses of spec/dtype.md: TVMFFIDataTypeFromString and
 * TVMFFIDataTypeToString. */
#include <stdlib.h>
#include <string.h>

#include "core_support.h"
#include "core_support.h"

typedef struct {
  const char* text;
  uint8_t code, bits;
  uint16_t lanes;
} Case;

static int parse(const char* text, size_t n, DLDataType* out) {
  TVMFFIByteArray in = {text, n};
  return API(TVMFFIDataTypeFromString)(&in, out);
}

static void expect_parse(const Case* c) {
  DLDataType got = {0xee, 0xee, 0xeeee};
  int rc = parse(c->text, strlen(c->text), &got);
  cr_expect_eq(rc, 0, "\"%s\" refused", c->text);
  if (rc != 0) {
    EXPECT_RAISED(.kind = "ValueError", .says = {""});
    return;
  }
  cr_expect(got.code == c->code && got.bits == c->bits && got.lanes == c->lanes,
            "\"%s\": expected {%u, %u, %u}, got {%u, %u, %u}", c->text, c->code, c->bits, c->lanes,
            got.code, got.bits, got.lanes);
}

/* Formats dtype and checks the text. */
static void expect_format(DLDataType dtype, const char* want) {
  TVMFFIAny out;
  memset(&out, 0, sizeof out);
  int rc = API(TVMFFIDataTypeToString)(&dtype, &out);
  cr_expect_eq(rc, 0, "{%u, %u, %u} refused", dtype.code, dtype.bits, dtype.lanes);
  if (rc != 0) {
    EXPECT_RAISED(.kind = "ValueError", .says = {""});
    return;
  }
  TVMFFIByteArray text = core_str_bytes(&out);
  cr_expect(out.type_index == kTVMFFISmallStr || out.type_index == kTVMFFIStr,
            "result type_index %d is not a string", out.type_index);
  cr_expect(text.size == strlen(want) && memcmp(text.data, want, text.size) == 0,
            "{%u, %u, %u}: expected \"%s\", got \"%.*s\"", dtype.code, dtype.bits, dtype.lanes,
            want, (int)text.size, text.data ? text.data : "");
  core_release(&out);
}

/* Moves the raised error out: a ValueError whose message holds `part` and
 * `also` (NULL: no second part) and not `absent` (NULL: no such check). */
static void expect_value_error3(const char* input, const char* part, const char* also,
                                const char* absent) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1, "\"%s\": nothing raised",
            input);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  TVMFFIByteArray m = cell->message;
  cr_expect(cell->kind.size == 10 && memcmp(cell->kind.data, "ValueError", 10) == 0,
            "\"%s\": error kind %.*s", input, (int)cell->kind.size, cell->kind.data);
  cr_expect(memmem(m.data, m.size, part, strlen(part)) != NULL,
            "\"%s\": message lacks \"%s\": %.*s", input, part, (int)m.size, m.data);
  if (also != NULL)
    cr_expect(memmem(m.data, m.size, also, strlen(also)) != NULL,
              "\"%s\": message lacks \"%s\": %.*s", input, also, (int)m.size, m.data);
  if (absent != NULL)
    cr_expect(memmem(m.data, m.size, absent, strlen(absent)) == NULL,
              "\"%s\": message holds \"%s\", past the input: %.*s", input, absent, (int)m.size,
              m.data);
  API(TVMFFIObjectDecRef)(err);
}

static void expect_value_error(const char* input, const char* part, const char* absent) {
  expect_value_error3(input, part, NULL, absent);
}

/* The canonical spelling of every type code, with its default width. */
static const Case canonical[] = {
    {"int8", kDLInt, 8, 1},
    {"int16", kDLInt, 16, 1},
    {"int32", kDLInt, 32, 1},
    {"int64", kDLInt, 64, 1},
    {"uint1", kDLUInt, 1, 1},
    {"uint8", kDLUInt, 8, 1},
    {"uint64", kDLUInt, 64, 1},
    {"float16", kDLFloat, 16, 1},
    {"float32", kDLFloat, 32, 1},
    {"float64", kDLFloat, 64, 1},
    {"bfloat16", kDLBfloat, 16, 1},
    {"bool", kDLBool, 8, 1},
    {"float8_e3m4", kDLFloat8_e3m4, 8, 1},
    {"float8_e4m3", kDLFloat8_e4m3, 8, 1},
    {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8, 1},
    {"float8_e4m3fn", kDLFloat8_e4m3fn, 8, 1},
    {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8, 1},
    {"float8_e5m2", kDLFloat8_e5m2, 8, 1},
    {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8, 1},
    {"float8_e8m0fnu", kDLFloat8_e8m0fnu, 8, 1},
    {"float6_e2m3fn", kDLFloat6_e2m3fn, 6, 1},
    {"float6_e3m2fn", kDLFloat6_e3m2fn, 6, 1},
    {"float4_e2m1fn", kDLFloat4_e2m1fn, 4, 1},
};
#define NCANON (sizeof canonical / sizeof *canonical)

/* DT-001: every canonical name parses to its exact {code, bits, lanes}. */
TEST(dtype, DT_001_canonical_names_parse) {
  for (size_t i = 0; i < NCANON; ++i) expect_parse(&canonical[i]);
}

/* DT-002: TVMFFIDataTypeToString gives back the canonical name, so
 * FromString(ToString(t)) == t for each of them. */
TEST(dtype, DT_002_canonical_names_round_trip) {
  for (size_t i = 0; i < NCANON; ++i) {
    DLDataType t = {canonical[i].code, canonical[i].bits, canonical[i].lanes};
    expect_format(t, canonical[i].text);
  }
  expect_format((DLDataType){kDLOpaqueHandle, 64, 1}, "handle");
}

/* DT-003: a lane count "xN" (N from 1 to 65535) sets lanes; ToString writes
 * "xN" for 1 < N <= 32767 and the text parses back to the same value. */
TEST(dtype, DT_003_vector_lanes) {
  static const Case cases[] = {
      {"float16x4", kDLFloat, 16, 4},
      {"int8x16", kDLInt, 8, 16},
      {"uint32x1", kDLUInt, 32, 1},
      {"boolx4", kDLBool, 8, 4},
      {"bfloat16x2", kDLBfloat, 16, 2},
      {"float8_e4m3fnx4", kDLFloat8_e4m3fn, 8, 4},
      {"int8x32767", kDLInt, 8, 32767},
      {"int8x65535", kDLInt, 8, 65535},
      /* Zero digits inside a count: 10, 100, 1024, 60000. */
      {"float32x10", kDLFloat, 32, 10},
      {"int8x100", kDLInt, 8, 100},
      {"uint16x1024", kDLUInt, 16, 1024},
      {"int8x60000", kDLInt, 8, 60000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) expect_parse(&cases[i]);
  expect_format((DLDataType){kDLFloat, 16, 4}, "float16x4");
  expect_format((DLDataType){kDLBool, 8, 4}, "boolx4");
  expect_format((DLDataType){kDLFloat8_e4m3fn, 8, 4}, "float8_e4m3fnx4");
  expect_format((DLDataType){kDLInt, 8, 32767}, "int8x32767");
  expect_format((DLDataType){kDLFloat, 32, 10}, "float32x10");
}

/* DT-004: "xvscalexN" marks a scalable vector: lanes holds -N as int16;
 * ToString writes "xvscalexN" back. */
TEST(dtype, DT_004_scalable_vectors) {
  static const Case cases[] = {
      {"float32xvscalex4", kDLFloat, 32, (uint16_t)-4},
      {"int8xvscalex16", kDLInt, 8, (uint16_t)-16},
  };
  for (size_t i = 0; i < 2; ++i) expect_parse(&cases[i]);
  expect_format((DLDataType){kDLFloat, 32, (uint16_t)-4}, "float32xvscalex4");
  expect_format((DLDataType){kDLInt, 8, (uint16_t)-16}, "int8xvscalex16");
}

/* DT-005: the short spellings: i/u/f/bf followed by a digit, fp8_/f8_,
 * fp6_/f6_, fp4_/f4_, and "_xN" lanes after a float4 name. */
TEST(dtype, DT_005_short_spellings) {
  static const Case cases[] = {
      {"i8", kDLInt, 8, 1},
      {"u16", kDLUInt, 16, 1},
      {"f16x4", kDLFloat, 16, 4},
      {"bf16", kDLBfloat, 16, 1},
      {"fp8_e4m3fn", kDLFloat8_e4m3fn, 8, 1},
      {"f8_e5m2x2", kDLFloat8_e5m2, 8, 2},
      {"fp6_e2m3fn", kDLFloat6_e2m3fn, 6, 1},
      {"f6_e3m2fn", kDLFloat6_e3m2fn, 6, 1},
      {"fp4_e2m1fn", kDLFloat4_e2m1fn, 4, 1},
      {"f4_e2m1fn", kDLFloat4_e2m1fn, 4, 1},
      {"float4_e2m1fn_x2", kDLFloat4_e2m1fn, 4, 2},
      {"float4_e2m1fnx2", kDLFloat4_e2m1fn, 4, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) expect_parse(&cases[i]);
  expect_format((DLDataType){kDLFloat4_e2m1fn, 4, 2}, "float4_e2m1fnx2");
}

/* DT-006: widths default when absent or 0: int, uint and float 32, bfloat
 * 16, handle 64, bool 8. */
TEST(dtype, DT_006_default_widths) {
  static const Case cases[] = {
      {"int", kDLInt, 32, 1},
      {"uint", kDLUInt, 32, 1},
      {"float", kDLFloat, 32, 1},
      {"bfloat", kDLBfloat, 16, 1},
      {"handle", kDLOpaqueHandle, 64, 1},
      {"bool", kDLBool, 8, 1},
      {"int0", kDLInt, 32, 1},
      {"floatx2", kDLFloat, 32, 2},
      /* the short spellings take the same defaults for a width of 0 */
      {"i0", kDLInt, 32, 1},
      {"u0", kDLUInt, 32, 1},
      {"f0", kDLFloat, 32, 1},
      {"f0x2", kDLFloat, 32, 2},
      {"bf0", kDLBfloat, 16, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) expect_parse(&cases[i]);
}

/* DT-007: "" and "void" are the void type {kDLOpaqueHandle, 0, 0}, which
 * ToString writes as "". */
TEST(dtype, DT_007_void) {
  static const Case cases[] = {{"", kDLOpaqueHandle, 0, 0}, {"void", kDLOpaqueHandle, 0, 0}};
  expect_parse(&cases[0]);
  expect_parse(&cases[1]);
  expect_format((DLDataType){kDLOpaqueHandle, 0, 0}, "");
}

static const char* const malformed[] = {
    "garbage",
    "complex64",
    "Int8",
    " int8",
    "int8 ",
    "int-8",
    "uint8x4x2",
    "float8_e9m9",
    "float6_e4m3",
    "float4_e3m2fn",
    "int8x",
    "int8x0",
    "float8_e4m3x0",
    "int8x65536",
    "int256",
    "bool8x",
    "f8_",
    "handlex",
    "int4294967296",
    /* the short spellings without the digit they need */
    "i",
    "ix4",
    "u",
    "ux2",
    "f",
    "fx2",
    "bf",
    "bfx2",
    /* four letters like "void" that are not it */
    "vold",
    "voix",
    "Void",
    /* "void" only as the whole string */
    "voidx4",
    "void8",
    "voidfoo",
    "void ",
    /* past a narrow float name: only "xN" (and "_xN" or "_" for float4) */
    "float4_e2m1fn_y",
    "float4_e2m1fn__x2",
    "float4_e2m1fn_x",
    "float4_e2m1fn_x0",
    "float8_e4m3fn_x2",
    "float6_e2m3fn_x2",
    "float8_e4m3fnx4y",
    "float8_e4m3fnuzq",
    "float8_e4m3fnxvscale",
    /* just past each limit, in every spelling and after leading zeros */
    "int256",
    "uint256",
    "float256",
    "bfloat256",
    "bool256",
    "handle256",
    "u256",
    "int0256",
    "int8x065536",
    "float8_e4m3fnx65536",
    "fp4_e2m1fn_x65536",
    "int8xvscalex65536",
    "int8xvscalex0",
    "int8xvscalex",
    "int8xvscaley",
    "int8x00",
    /* digit runs past 32 bits, one of which wraps to 8 in 32 bits */
    "int4294967304",
    "int8x4294967297",
    "int99999999999999999999",
};
#define NMALFORMED (sizeof malformed / sizeof *malformed)

/* DT-008: malformed strings are refused: -1 and a ValueError. */
TEST(dtype, DT_008_malformed_refused) {
  for (size_t i = 0; i < NMALFORMED; ++i) {
    DLDataType got = {7, 7, 7};
    int rc = parse(malformed[i], strlen(malformed[i]), &got);
    cr_expect_eq(rc, -1, "\"%s\" accepted as {%u, %u, %u}", malformed[i], got.code, got.bits,
                 got.lanes);
    if (rc == -1) EXPECT_RAISED(.kind = "ValueError");
  }
}

/* DT-014: the ValueError's message quotes the input exactly as given. */
TEST(dtype, DT_014_error_quotes_input) {
  for (size_t i = 0; i < NMALFORMED; ++i) {
    DLDataType got;
    /* An accepted string is a failure here too, not a vacuous pass: the
     * clause is about the ValueError every one of them must raise. */
    int rc = parse(malformed[i], strlen(malformed[i]), &got);
    cr_expect_eq(rc, -1, "\"%s\": expected -1 with a ValueError quoting it, got %d", malformed[i],
                 rc);
    if (rc == -1) EXPECT_RAISED(.kind = "ValueError", .says = {malformed[i]});
  }
}

/* DT-009: ToString refuses a type code with no name (kDLComplex, and codes
 * 18 to 128): -1 and a ValueError naming the type code. */
TEST(dtype, DT_009_unnamed_code_refused) {
  static const uint8_t codes[] = {kDLComplex, 18, 100, 128};
  for (size_t i = 0; i < 4; ++i) {
    DLDataType t = {codes[i], 64, 1};
    TVMFFIAny out;
    memset(&out, 0, sizeof out);
    cr_expect_eq(API(TVMFFIDataTypeToString)(&t, &out), -1, "code %u accepted", codes[i]);
    EXPECT_RAISED(.kind = "ValueError", .says = {"type_code"});
  }
}

/* DT-010: any width from 1 to 255 is kept as written for the plain codes,
 * and ToString writes it back. */
TEST(dtype, DT_010_any_width_kept) {
  static const Case cases[] = {
      {"float33", kDLFloat, 33, 1},
      {"int255", kDLInt, 255, 1},
      {"uint7", kDLUInt, 7, 1},
      {"bool16", kDLBool, 16, 1},
  };
  for (size_t i = 0; i < 4; ++i) expect_parse(&cases[i]);
  expect_format((DLDataType){kDLFloat, 33, 1}, "float33");
  expect_format((DLDataType){kDLInt, 255, 1}, "int255");
  expect_format((DLDataType){kDLBool, 16, 1}, "bool16");
}

/* DT-011: ToString's result is an owned string value (inline or heap) that
 * the caller releases; long names come back whole. */
TEST(dtype, DT_011_result_is_owned_string) {
  expect_format((DLDataType){kDLFloat8_e4m3b11fnuz, 8, 16}, "float8_e4m3b11fnuzx16");
  expect_format((DLDataType){kDLFloat6_e3m2fn, 6, (uint16_t)-2}, "float6_e3m2fnxvscalex2");
}

/* DT-012: NULL arguments are refused with ValueError naming them; ToString
 * leaves out None when it refuses a NULL dtype. */
TEST(dtype, DT_012_null_arguments_refused) {
  HOSTILE_INPUT("TVMFFIDataTypeFromString(NULL, ...) dereferences NULL");
  DLDataType t = {kDLInt, 8, 1};
  TVMFFIByteArray in = {"int8", 4};
  TVMFFIAny out;
  cr_expect_eq(API(TVMFFIDataTypeFromString)(NULL, &t), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"str"});
  cr_expect_eq(API(TVMFFIDataTypeFromString)(&in, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  memset(&out, 0xcd, sizeof out);
  cr_expect_eq(API(TVMFFIDataTypeToString)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"dtype"});
  cr_expect_eq(out.type_index, kTVMFFINone, "out after a NULL dtype: type_index %d",
               out.type_index);
  DLDataType f32 = {kDLFloat, 32, 1};
  cr_expect_eq(API(TVMFFIDataTypeToString)(&f32, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
}

/* DT-013: the parser reads only the `size` bytes it was given: a name
 * embedded in a longer buffer parses by its length, and a 100000-byte
 * string is refused with ValueError. */
TEST(dtype, DT_013_bounded_input) {
  DLDataType t;
  cr_expect_eq(parse("int16x4 trailing", 7, &t), 0);
  cr_expect(t.code == kDLInt && t.bits == 16 && t.lanes == 4, "got {%u, %u, %u}", t.code, t.bits,
            t.lanes);
  /* A digit right after the given size is not part of the number. */
  cr_expect_eq(parse("int16x45", 7, &t), 0);
  cr_expect(t.code == kDLInt && t.bits == 16 && t.lanes == 4, "int16x4|5: got {%u, %u, %u}", t.code,
            t.bits, t.lanes);
  /* The "_" that may start a float4 lane count is past the size here. */
  cr_expect_eq(parse("float4_e2m1fn_x2", 13, &t), 0);
  cr_expect(t.code == kDLFloat4_e2m1fn && t.bits == 4 && t.lanes == 1,
            "float4_e2m1fn|_x2: got {%u, %u, %u}", t.code, t.bits, t.lanes);
  cr_expect_eq(parse("int168", 5, &t), 0);
  cr_expect(t.code == kDLInt && t.bits == 16 && t.lanes == 1, "int16|8: got {%u, %u, %u}", t.code,
            t.bits, t.lanes);
  /* Nothing past the size ends a narrow float name or a lane count. */
  static const struct {
    const char* text;
    size_t n;
    Case want;
  } cut[] = {
      {"float8_e4m3fnq", 13, {"float8_e4m3fn|q", kDLFloat8_e4m3fn, 8, 1}},
      {"float4_e2m1fnx2y", 15, {"float4_e2m1fnx2|y", kDLFloat4_e2m1fn, 4, 2}},
      {"float6_e3m2fnx2y", 15, {"float6_e3m2fnx2|y", kDLFloat6_e3m2fn, 6, 2}},
      {"int8x16y", 7, {"int8x16|y", kDLInt, 8, 16}},
  };
  for (size_t i = 0; i < sizeof cut / sizeof *cut; ++i) {
    DLDataType got = {7, 7, 7};
    cr_expect_eq(parse(cut[i].text, cut[i].n, &got), 0, "%s refused", cut[i].want.text);
    cr_expect(got.code == cut[i].want.code && got.bits == cut[i].want.bits &&
                  got.lanes == cut[i].want.lanes,
              "%s: expected {%u, %u, %u}, got {%u, %u, %u}", cut[i].want.text, cut[i].want.code,
              cut[i].want.bits, cut[i].want.lanes, got.code, got.bits, got.lanes);
  }
  size_t n = 100000;
  char* big = malloc(n);
  cr_assert_not_null(big);
  memset(big, 'z', n);
  cr_expect_eq(parse(big, n, &t), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {""});
  free(big);
}

/* DT-015: the largest scalable lane count, "xvscalex32768", parses to
 * lanes 0x8000 (-32768 as int16) and ToString writes it back. */
TEST(dtype, DT_015_largest_scalable_count) {
  static const Case c = {"int8xvscalex32768", kDLInt, 8, 0x8000};
  expect_parse(&c);
  expect_format((DLDataType){kDLInt, 8, 0x8000}, "int8xvscalex32768");
}

/* DT-016: a scalable lane count past 32768 ("xvscalex32769") has no int16
 * encoding and is refused with ValueError. */
TEST(dtype, DT_016_scalable_count_past_int16_refused) {
  DLDataType got = {7, 7, 7};
  int rc = parse("int8xvscalex32769", 17, &got);
  cr_expect_eq(rc, -1, "\"int8xvscalex32769\" accepted as {%u, %u, %u}", got.code, got.bits,
               got.lanes);
  if (rc == -1) expect_value_error3("int8xvscalex32769", "int8xvscalex32769", "out of range", NULL);
}

/* DT-030: the narrow float formats take only plain "xN" lanes: a scalable
 * "xvscalexN" after one is refused with ValueError. */
TEST(dtype, DT_030_narrow_float_not_scalable) {
  static const char* const inputs[] = {"float8_e4m3fnxvscalex4", "float4_e2m1fnxvscalex2",
                                       "fp6_e2m3fnxvscalex8"};
  for (size_t i = 0; i < sizeof inputs / sizeof *inputs; ++i) {
    DLDataType got = {7, 7, 7};
    int rc = parse(inputs[i], strlen(inputs[i]), &got);
    cr_expect_eq(rc, -1, "\"%s\" accepted as {%u, %u, %u}", inputs[i], got.code, got.bits,
                 got.lanes);
    if (rc == -1) EXPECT_RAISED(.kind = "ValueError", .says = {""});
  }
}

/* DT-031: "xvscale" with no lane count after it is either read as one lane
 * (the pinned release does) or refused with a ValueError quoting the input. */
TEST(dtype, DT_031_xvscale_without_count) {
  static const char* const inputs[] = {"int8xvscale", "float32xvscale"};
  static const DLDataType as_one_lane[] = {{kDLInt, 8, 1}, {kDLFloat, 32, 1}};
  for (size_t i = 0; i < 2; ++i) {
    DLDataType got = {7, 7, 7};
    if (parse(inputs[i], strlen(inputs[i]), &got) == 0) {
      cr_expect(
          got.code == as_one_lane[i].code && got.bits == as_one_lane[i].bits && got.lanes == 1,
          "\"%s\": got {%u, %u, %u}", inputs[i], got.code, got.bits, got.lanes);
    } else {
      EXPECT_RAISED(.kind = "ValueError", .says = {inputs[i]});
    }
  }
}

/* DT-032: ToString writes no lane suffix for lanes 0 and for 0xFFFF (-1 as
 * int16): neither is a vector of more than one lane. */
TEST(dtype, DT_032_degenerate_lanes_unwritten) {
  expect_format((DLDataType){kDLInt, 8, 0xFFFF}, "int8");
  expect_format((DLDataType){kDLInt, 8, 0}, "int8");
  expect_format((DLDataType){kDLInt, 8, 0xFFFE}, "int8xvscalex2");
}

/* DT-033: the ValueError of a refused string says why, in the words both
 * the pinned release and the reference use. */
TEST(dtype, DT_033_refusal_says_why) {
  static const struct {
    const char *text, *why;
  } cases[] = {
      {"garbage", "unknown"},
      {"uint8x4x2", "unknown"},
      {"int8xvscaley", "unknown"},
      {"float8_e9m9", "unknown"},
      {"float6_e4m3", "unknown"},
      {"float4_e3m2fn", "unknown"},
      {"float8_e4m3fnx4y", "unknown"},
      {"float4_e2m1fn_y", "unknown"},
      {"int256", "out of range"},
      {"bfloat256", "out of range"},
      {"handle256", "out of range"},
      {"int0256", "out of range"},
      {"int8x65536", "out of range"},
      {"float8_e4m3fnx65536", "out of range"},
      {"float4_e2m1fn_x65536", "out of range"},
      {"int4294967304", "out of range"},
      {"int8x", "positive integer"},
      {"int8x0", "positive integer"},
      {"int8x00", "positive integer"},
      {"float8_e4m3x0", "positive integer"},
      {"float4_e2m1fn_x", "positive integer"},
      {"int8xvscalex0", "positive integer"},
      {"handlex", "positive integer"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    DLDataType got = {7, 7, 7};
    int rc = parse(cases[i].text, strlen(cases[i].text), &got);
    cr_expect_eq(rc, -1, "\"%s\": expected -1, got %d with {%u, %u, %u}", cases[i].text, rc,
                 got.code, got.bits, got.lanes);
    if (rc == -1) expect_value_error(cases[i].text, cases[i].why, NULL);
  }
}

/* Zero-padded forms of a number: `zeros` leading zeros before `digits`. */
static char* padded(const char* head, size_t zeros, const char* digits, const char* tail) {
  size_t nh = strlen(head), nd = strlen(digits), nt = strlen(tail);
  char* s = malloc(nh + zeros + nd + nt + 1);
  cr_assert_not_null(s);
  memcpy(s, head, nh);
  memset(s + nh, '0', zeros);
  memcpy(s + nh + zeros, digits, nd);
  memcpy(s + nh + zeros + nd, tail, nt + 1);
  return s;
}

/* DT-034: each limit is exact in every spelling: width 255 and lane count
 * 65535 parse, leading zeros of any number change nothing, and a string
 * of any length is read. */
TEST(dtype, DT_034_limits_are_exact) {
  static const Case cases[] = {
      {"int255", kDLInt, 255, 1},
      {"uint255", kDLUInt, 255, 1},
      {"float255", kDLFloat, 255, 1},
      {"bfloat255", kDLBfloat, 255, 1},
      {"bool255", kDLBool, 255, 1},
      {"handle255", kDLOpaqueHandle, 255, 1},
      {"i255", kDLInt, 255, 1},
      {"u255", kDLUInt, 255, 1},
      {"f255", kDLFloat, 255, 1},
      {"bf255", kDLBfloat, 255, 1},
      {"bf8", kDLBfloat, 8, 1},
      {"int0255", kDLInt, 255, 1},
      {"int254", kDLInt, 254, 1},
      {"int250x10", kDLInt, 250, 10},
      {"int8x065535", kDLInt, 8, 65535},
      {"int8x65534", kDLInt, 8, 65534},
      {"int8x0001", kDLInt, 8, 1},
      {"bfloat16x65535", kDLBfloat, 16, 65535},
      {"bf16x4", kDLBfloat, 16, 4},
      {"float8_e4m3fnx65535", kDLFloat8_e4m3fn, 8, 65535},
      {"fp4_e2m1fn_x65535", kDLFloat4_e2m1fn, 4, 65535},
      {"float4_e2m1fn_", kDLFloat4_e2m1fn, 4, 1},
      {"int8xvscalex00032768", kDLInt, 8, 0x8000},
      {"int8xvscalex1", kDLInt, 8, 0xFFFF},
      {"float8_e4m3fnuzx6553", kDLFloat8_e4m3fnuz, 8, 6553},
      /* every digit, 9 included, inside a width and a lane count */
      {"uint19x59999", kDLUInt, 19, 59999},
      {"int8x9", kDLInt, 8, 9},
      {"float9x12345", kDLFloat, 9, 12345},
      {"bf99x6789", kDLBfloat, 99, 6789},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) expect_parse(&cases[i]);
  /* 300 zeros before a width and before a lane count: longer than any
   * name, and far more digits than any integer type holds. */
  char* s = padded("int", 300, "8x", "");
  char* t = padded(s, 300, "4", "");
  const Case long_case = {t, kDLInt, 8, 4};
  expect_parse(&long_case);
  free(s);
  free(t);
  s = padded("uint", 300, "255", "");
  const Case long_width = {s, kDLUInt, 255, 1};
  expect_parse(&long_width);
  free(s);
  s = padded("float", 300, "256", "");
  DLDataType got = {7, 7, 7};
  cr_expect_eq(parse(s, strlen(s), &got), -1, "float0...0256 accepted as {%u, %u, %u}", got.code,
               got.bits, got.lanes);
  EXPECT_RAISED(.kind = "ValueError");
  free(s);
}

/* DT-035: ToString's edge cases: a handle is "handle" whatever its width
 * and lanes unless it is the void {3, 0, 0}; a width of 0 is written as
 * 0; an 8-bit bool is "bool" for one lane, 0 or 0xFFFF; int16 lanes past
 * -1 are scalable; the longest name comes back whole. */
TEST(dtype, DT_035_to_string_edges) {
  static const struct {
    DLDataType t;
    const char* text;
  } cases[] = {
      {{kDLOpaqueHandle, 0, 1}, "handle"},
      {{kDLOpaqueHandle, 64, 0}, "handle"},
      {{kDLOpaqueHandle, 32, 4}, "handle"},
      {{kDLUInt, 0, 1}, "uint0"},
      {{kDLFloat, 0, 0}, "float0"},
      {{kDLInt, 0, 0}, "int0"},
      {{kDLBfloat, 0, 0}, "bfloat0"},
      {{kDLBool, 0, 0}, "bool0"},
      {{kDLFloat8_e5m2, 0, 0}, "float8_e5m2"},
      {{kDLFloat4_e2m1fn, 0, 1}, "float4_e2m1fn"},
      {{kDLBfloat, 16, 0}, "bfloat16"},
      {{kDLBool, 8, 0}, "bool"},
      {{kDLBool, 8, 0xFFFF}, "bool"},
      {{kDLBool, 8, 2}, "boolx2"},
      {{kDLInt, 8, 0x8001}, "int8xvscalex32767"},
      {{kDLInt, 255, 0x7FFF}, "int255x32767"},
      {{kDLFloat8_e8m0fnu, 8, 0x8000}, "float8_e8m0fnuxvscalex32768"},
      {{kDLFloat8_e4m3b11fnuz, 8, 0x8000}, "float8_e4m3b11fnuzxvscalex32768"},
      {{kDLFloat8_e5m2, 8, 0xFFFE}, "float8_e5m2xvscalex2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i)
    expect_format(cases[i].t, cases[i].text);
}

/* DT-036: ToString's refusal of a type code with no name holds the code
 * as "type_code=N". */
TEST(dtype, DT_036_unnamed_code_value_in_message) {
  static const uint8_t codes[] = {kDLComplex, 18, 99, 128};
  static const char* const parts[] = {"type_code=5", "type_code=18", "type_code=99",
                                      "type_code=128"};
  for (size_t i = 0; i < 4; ++i) {
    DLDataType t = {codes[i], 16, 2};
    TVMFFIAny out;
    memset(&out, 0, sizeof out);
    cr_expect_eq(API(TVMFFIDataTypeToString)(&t, &out), -1, "code %u accepted", codes[i]);
    EXPECT_RAISED(.kind = "ValueError", .says = {parts[i]});
  }
}

/* DT-037: {NULL, 0} is the empty string: the void type. */
TEST(dtype, DT_037_null_empty_is_void) {
  DLDataType got = {7, 7, 7};
  TVMFFIByteArray empty = {NULL, 0};
  cr_expect_eq(API(TVMFFIDataTypeFromString)(&empty, &got), 0, "{NULL, 0} refused");
  cr_expect(got.code == kDLOpaqueHandle && got.bits == 0 && got.lanes == 0,
            "{NULL, 0}: expected {3, 0, 0}, got {%u, %u, %u}", got.code, got.bits, got.lanes);
}

/* DT-014: "exactly as given" is the size bytes and nothing past them. */
TEST(dtype, DT_014_quote_ends_at_size) {
  DLDataType got = {7, 7, 7};
  cr_expect_eq(parse("int8y;trailing", 5, &got), -1, "\"int8y\" accepted");
  expect_value_error("int8y", "int8y", "int8y;");
  cr_expect_eq(parse("float8_e9m9;trailing", 11, &got), -1, "\"float8_e9m9\" accepted");
  expect_value_error("float8_e9m9", "float8_e9m9", "float8_e9m9;");
}

/* DT-038: a data pointer of NULL with a nonzero size, and a size past
 * INT_MAX, are refused with -1 and a ValueError naming str, without
 * reading the data. */
TEST(dtype, DT_038_impossible_sizes_refused) {
  HOSTILE_INPUT("TVMFFIDataTypeFromString({NULL, 4}) reads through NULL");
  DLDataType got = {7, 7, 7};
  TVMFFIByteArray null_data = {NULL, 4};
  cr_expect_eq(API(TVMFFIDataTypeFromString)(&null_data, &got), -1, "{NULL, 4} accepted");
  expect_value_error("{NULL, 4}", "str", NULL);
  TVMFFIByteArray huge = {"int8", (size_t)INT32_MAX + 1};
  cr_expect_eq(API(TVMFFIDataTypeFromString)(&huge, &got), -1, "{\"int8\", 2^31} accepted");
  expect_value_error3("{\"int8\", 2^31}", "str", "2147483648", NULL);
}

/* DT-039: each refusal of DT-012 and DT-038 names the function, then the
 * argument. */
TEST(dtype, DT_039_refusal_names_function_then_argument) {
  HOSTILE_INPUT("TVMFFIDataTypeFromString(NULL, ...) dereferences NULL");
  DLDataType t = {kDLInt, 8, 1};
  TVMFFIByteArray in = {"int8", 4}, null_data = {NULL, 3};
  TVMFFIAny out;
  cr_expect_eq(API(TVMFFIDataTypeFromString)(NULL, &t), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIDataTypeFromString", .arg = "str");
  cr_expect_eq(API(TVMFFIDataTypeFromString)(&in, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIDataTypeFromString", .arg = "out");
  cr_expect_eq(API(TVMFFIDataTypeFromString)(&null_data, &t), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIDataTypeFromString", .arg = "str");
  cr_expect_eq(API(TVMFFIDataTypeToString)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIDataTypeToString", .arg = "dtype");
  cr_expect_eq(API(TVMFFIDataTypeToString)(&t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIDataTypeToString", .arg = "out");
}
