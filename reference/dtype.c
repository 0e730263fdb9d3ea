/* Dtype strings. The grammar:
 *
 *   dtype  := "" | "void" | base bits? lanes? | variant vlanes?
 *   base   := "int" | "i" | "uint" | "u" | "float" | "f" | "bfloat" | "bf"
 *           | "bool" | "handle"           (the one-letter forms need a digit)
 *   bits   := decimal 1..255              (0 or absent: the base's default)
 *   lanes  := "x" N | "xvscalex" N        (N in 1..65535; vscale: scalable)
 *   variant:= ("float8_" | "fp8_" | "f8_") ("e3m4" | "e4m3" | "e4m3b11fnuz"
 *             | "e4m3fn" | "e4m3fnuz" | "e5m2" | "e5m2fnuz" | "e8m0fnu")
 *           | ("float6_" | "fp6_" | "f6_") ("e2m3fn" | "e3m2fn")
 *           | ("float4_" | "fp4_" | "f4_") "e2m1fn"
 *   vlanes := "x" N                        (float4 also takes "_x" N)
 */
#include "arg.h"
#include "dtype.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "tffi_string.h"

typedef struct {
  const char* text;
  size_t len;
  size_t at;
} TffiScan;

/* Skips `word` if the input continues with it; says whether it did. */
static int tffi_eat(TffiScan* s, const char* word) {
  size_t n = strlen(word);
  int match = s->len - s->at >= n && memcmp(s->text + s->at, word, n) == 0;
  if (match) s->at += n;
  return match;
}

static int tffi_digit_at(const TffiScan* s, size_t at) {
  return at < s->len && s->text[at] >= '0' && s->text[at] <= '9';
}

static int tffi_bad(const TffiScan* s, const char* why) {
  return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIDataTypeFromString: %s in dtype `%.*s`", why,
                    (int)s->len, s->text);
}

/* Reads a decimal number: no digits read as 0, and any value past `limit`
 * as limit + 1. Leading zeros are free. */
static uint32_t tffi_number(TffiScan* s, uint32_t limit) {
  uint32_t value = 0;
  while (tffi_digit_at(s, s->at)) {
    /* value <= limit + 1 <= 65536 here, so value * 10 + 9 cannot wrap. */
    value = value * 10 + (uint32_t)(s->text[s->at++] - '0');
    if (value > limit) value = limit + 1;
  }
  return value;
}

/* Lanes: "x" N, or for plain types also "xvscalex" N (stored negated).
 * No "x" is one lane; so is a bare "xvscale", as upstream reads it. */
static int tffi_lanes(TffiScan* s, int allow_scalable, uint16_t* lanes) {
  int scalable = allow_scalable && tffi_eat(s, "xvscale");
  *lanes = 1;
  if (!tffi_eat(s, "x")) return 0;
  uint32_t n = tffi_number(s, UINT16_MAX); /* no digits: 0, refused too */
  if (n == 0) return tffi_bad(s, "lanes must be a positive integer");
  if (n > UINT16_MAX) return tffi_bad(s, "lanes out of range for uint16");
  if (scalable && n > 32768) return tffi_bad(s, "scalable lanes out of range");
  *lanes = (uint16_t)(scalable ? (uint16_t)(0x10000u - n) : n);
  return 0;
}

typedef struct {
  const char* name;
  uint8_t code;
  uint8_t bits;
} TffiVariant;

/* Every narrow float format DLPack names, with its total bit width. A
 * name comes before any shorter one it starts with: the first that the
 * input starts with is the longest. */
/* clang-format off */
static const TffiVariant tffi_variants[] = {
    {"float8_e3m4", kDLFloat8_e3m4, 8},
    {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
    {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
    {"float8_e4m3fn", kDLFloat8_e4m3fn, 8},
    {"float8_e4m3", kDLFloat8_e4m3, 8},
    {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
    {"float8_e5m2", kDLFloat8_e5m2, 8},
    {"float8_e8m0fnu", kDLFloat8_e8m0fnu, 8},
    {"float6_e2m3fn", kDLFloat6_e2m3fn, 6},
    {"float6_e3m2fn", kDLFloat6_e3m2fn, 6},
    {"float4_e2m1fn", kDLFloat4_e2m1fn, 4},
};
/* clang-format on */

/* A narrow float: family prefix in any spelling, then the longest format
 * name the rest starts with, then the lanes and the end of the input.
 * `family` is "8_", "6_" or "4_". */
static int tffi_parse_variant(TffiScan* s, const char* family, DLDataType* out) {
  for (size_t i = 0; i < sizeof tffi_variants / sizeof *tffi_variants; ++i) {
    const TffiVariant* v = &tffi_variants[i];
    if (memcmp(v->name + 5, family, 2) != 0) continue;
    TffiScan t = *s;
    if (!tffi_eat(&t, v->name + 7)) continue;
    /* float4 may put a "_" before its lanes (or before nothing at all). */
    if (v->code == kDLFloat4_e2m1fn) tffi_eat(&t, "_");
    uint16_t lanes;
    if (tffi_lanes(&t, 0, &lanes)) return -1;
    if (t.at != t.len) return tffi_bad(&t, "unknown dtype");
    out->code = v->code;
    out->bits = v->bits;
    out->lanes = lanes;
    return 0;
  }
  return tffi_bad(s, "unknown narrow float format");
}

typedef struct {
  const char* prefix;
  uint8_t code;
  uint8_t default_bits;
} TffiBase;

/* Order matters: a longer spelling before any shorter one it starts with.
 * The short spellings (two letters at most) count only before a digit. */
static const TffiBase tffi_bases[] = {
    {"int", kDLInt, 32},
    {"uint", kDLUInt, 32},
    {"bool", kDLBool, 8},
    {"float", kDLFloat, 32},
    {"handle", kDLOpaqueHandle, 64},
    {"bfloat", kDLBfloat, 16},
    {"bf", kDLBfloat, 16},
    {"i", kDLInt, 32},
    {"u", kDLUInt, 32},
    {"f", kDLFloat, 32},
};

/* A narrow float family prefix sets *matched and parses the rest; the
 * result is the parse's own, passed through unchanged. */
static int tffi_parse_family(TffiScan* s, DLDataType* out, int* matched) {
  static const char* const families[] = {"8_", "6_", "4_"};
  static const char* const spellings[] = {"float", "fp", "f"};
  *matched = 1;
  for (size_t f = 0; f < 3; ++f) {
    for (size_t p = 0; p < 3; ++p) {
      TffiScan t = *s;
      if (tffi_eat(&t, spellings[p]) && tffi_eat(&t, families[f]))
        return tffi_parse_variant(&t, families[f], out);
    }
  }
  *matched = 0;
  return 0;
}

int tffi_dtype_parse(const char* text, size_t len, DLDataType* out) {
  TffiScan s = {text, len, 0};
  if (len == 0 || (len == 4 && memcmp(text, "void", 4) == 0)) {
    *out = (DLDataType){kDLOpaqueHandle, 0, 0};
    return 0;
  }
  int matched;
  int rc = tffi_parse_family(&s, out, &matched);
  if (matched) return rc;
  for (size_t i = 0; i < sizeof tffi_bases / sizeof *tffi_bases; ++i) {
    const TffiBase* b = &tffi_bases[i];
    TffiScan t = s;
    int short_form = strlen(b->prefix) <= 2;
    if (!tffi_eat(&t, b->prefix) || (short_form && !tffi_digit_at(&t, t.at))) continue;
    uint32_t bits = tffi_number(&t, UINT8_MAX);
    if (bits > UINT8_MAX) return tffi_bad(&t, "bits out of range for uint8");
    uint16_t lanes;
    if (tffi_lanes(&t, 1, &lanes)) return -1;
    if (t.at != t.len) return tffi_bad(&t, "unknown dtype");
    out->code = b->code;
    out->bits = (uint8_t)(bits ? bits : b->default_bits);
    out->lanes = lanes;
    return 0;
  }
  return tffi_bad(&s, "unknown dtype");
}

static const char* tffi_code_name(uint8_t code) {
  switch (code) {
    case kDLInt: return "int";
    case kDLUInt: return "uint";
    case kDLFloat: return "float";
    case kDLOpaqueHandle: return "handle";
    case kDLBfloat: return "bfloat";
    case kDLBool: return "bool";
    default: break;
  }
  for (size_t i = 0; i < sizeof tffi_variants / sizeof *tffi_variants; ++i)
    if (tffi_variants[i].code == code) return tffi_variants[i].name;
  return NULL;
}

int tffi_dtype_format(DLDataType dtype, char* buf) {
  /* The void type's text is empty: nothing to write. */
  if (dtype.code == kDLOpaqueHandle && dtype.bits == 0 && dtype.lanes == 0) return 0;
  const char* name = tffi_code_name(dtype.code);
  if (name == NULL)
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIDataTypeToString: dtype has unknown type_code=%d",
                      (int)dtype.code);
  int n = snprintf(buf, TFFI_DTYPE_TEXT_MAX, "%s", name);
  if (dtype.code == kDLOpaqueHandle) return n;
  /* Narrow floats and 8-bit bool carry their width in the name. */
  int named_width = dtype.code >= kDLFloat8_e3m4 || (dtype.code == kDLBool && dtype.bits == 8);
  if (!named_width) n += snprintf(buf + n, (size_t)(TFFI_DTYPE_TEXT_MAX - n), "%d", dtype.bits);
  int16_t lanes = (int16_t)dtype.lanes;
  if (lanes > 1)
    n += snprintf(buf + n, (size_t)(TFFI_DTYPE_TEXT_MAX - n), "x%d", lanes);
  else if (lanes < -1)
    n += snprintf(buf + n, (size_t)(TFFI_DTYPE_TEXT_MAX - n), "xvscalex%d", -lanes);
  return n;
}

int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out) {
  if (str == NULL) return tffi_arg_null("TVMFFIDataTypeFromString", "str");
  if (out == NULL) return tffi_arg_null("TVMFFIDataTypeFromString", "out");
  if (str->data == NULL && str->size != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIDataTypeFromString: str->data is NULL with size %zu",
                      str->size);
  if (str->size > TFFI_DTYPE_STR_MAX)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIDataTypeFromString: str is %zu bytes long, more than %d", str->size,
                      TFFI_DTYPE_STR_MAX);
  return tffi_dtype_parse(str->data, str->size, out);
}

int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIDataTypeToString", "out");
  *out = tffi_any_none();
  if (dtype == NULL) return tffi_arg_null("TVMFFIDataTypeToString", "dtype");
  char buf[TFFI_DTYPE_TEXT_MAX];
  int n = tffi_dtype_format(*dtype, buf);
  if (n < 0) return -1;
  return tffi_any_from_bytes(kTVMFFIStr, buf, (size_t)n, out);
}
