/*
 * Fuzz harness: TVMFFIDataTypeFromString on arbitrary text, and
 * TVMFFIDataTypeToString on arbitrary DLDataType values.
 *
 * The whole input is the text (embedded NUL bytes included: the parser is
 * given a length, never a C string). What parses must round trip:
 *   parse(text) = d, to_string(d) = t, parse(t) = d again, and
 *   to_string(parse(t)) = t (the printed form is a fixed point).
 * What does not parse must raise ValueError. Independently, the first four
 * input bytes as a DLDataType (code, bits, lanes) must print without
 * crashing, and a printed form that parses must be canonical (its value
 * prints as the same text).
 */
#include "fuzz/impl_api.h"

#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"

static const char* const kDtypeKinds[] = {"ValueError", NULL};
static const char* const kPrintKinds[] = {"ValueError", "TypeError", "MemoryError", NULL};

static int same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* Prints `d`; returns the owned string value (caller releases), or a None
 * value when printing was refused (the error is checked and dropped). */
static TVMFFIAny print_dtype(DLDataType d, int must_succeed) {
  TVMFFIAny text = {0};
  int rc = TVMFFIDataTypeToString(&d, &text);
  if (rc != 0) {
    FUZZ_CHECK(!must_succeed, "could not print the parsed dtype (%u, %u, %u)", d.code, d.bits,
               d.lanes);
    fuzz_expect_raised("TVMFFIDataTypeToString", kPrintKinds);
    TVMFFIAny none = {0};
    return none;
  }
  fuzz_expect_nothing_raised("TVMFFIDataTypeToString");
  size_t n = 0;
  FUZZ_CHECK(fuzz_str_of(&text, &n) != NULL &&
                 (text.type_index == kTVMFFISmallStr || text.type_index == kTVMFFIStr),
             "TVMFFIDataTypeToString gave type index %d, not a string", text.type_index);
  return text;
}

/*
 * Three printed forms do not round trip, in upstream 0.1.16 as in the
 * reference: lanes 0xFFFF (-1 as the int16 that marks scalable vectors,
 * parsed from "x65535" or "xvscalex1") prints as no lanes at all; a handle
 * prints as "handle" whatever its bits and lanes; and a scalable vector
 * (lanes >= 0x8000) of a float8/6/4 kind prints as "...xvscalexN", which
 * the parser of those kinds refuses. Apart from the last, such values must
 * still print canonically; every other parsed value must come back exactly.
 */
static int prints_losslessly(DLDataType d) {
  return d.lanes != 0xFFFF && d.code != kDLOpaqueHandle;
}

static int printed_form_may_not_parse(DLDataType d) {
  return d.lanes >= 0x8000 && d.code >= kDLFloat8_e3m4 && d.code <= kDLFloat4_e2m1fn;
}

static void check_round_trip(DLDataType parsed) {
  TVMFFIAny text = print_dtype(parsed, 1);
  size_t n = 0;
  const char* s = fuzz_str_of(&text, &n);
  TVMFFIByteArray again_in = {s, n};
  DLDataType again;
  int rc = TVMFFIDataTypeFromString(&again_in, &again);
  if (rc != 0) fuzz_expect_raised("TVMFFIDataTypeFromString (printed)", kDtypeKinds);
  if (rc != 0 && printed_form_may_not_parse(parsed)) {
    fuzz_release(&text);
    return;
  }
  FUZZ_CHECK(rc == 0, "the printed form '%.*s' does not parse", (int)n, s);
  FUZZ_CHECK(!prints_losslessly(parsed) || same_dtype(parsed, again),
             "'%.*s' parses to (%u, %u, %u), printed from (%u, %u, %u)", (int)n, s, again.code,
             again.bits, again.lanes, parsed.code, parsed.bits, parsed.lanes);
  TVMFFIAny text2 = print_dtype(again, 1);
  size_t n2 = 0;
  const char* s2 = fuzz_str_of(&text2, &n2);
  FUZZ_CHECK(n == n2 && memcmp(s, s2, n) == 0, "printing is not a fixed point: '%.*s' -> '%.*s'",
             (int)n, s, (int)n2, s2);
  fuzz_release(&text2);
  fuzz_release(&text);
}

/* Any DLDataType prints or is refused cleanly. A printed form that parses
 * is canonical: the parsed value prints as the same text. (The value itself
 * may differ: bits 0 reads back as the kind's default width, and the
 * fixed-width float8/6/4 kinds print no bit count, as upstream does.) */
static void check_print_raw(const uint8_t* data, size_t size) {
  if (size < 4) return;
  DLDataType d;
  d.code = data[0];
  d.bits = data[1];
  d.lanes = (uint16_t)(data[2] | (data[3] << 8));
  TVMFFIAny text = print_dtype(d, 0);
  size_t n = 0;
  const char* s = fuzz_str_of(&text, &n);
  if (s != NULL && d.bits != 0) { /* bits 0 reads back as the default width */
    TVMFFIByteArray in = {s, n};
    DLDataType back;
    if (TVMFFIDataTypeFromString(&in, &back) == 0) {
      TVMFFIAny again = print_dtype(back, 1);
      size_t n2 = 0;
      const char* s2 = fuzz_str_of(&again, &n2);
      FUZZ_CHECK(n == n2 && memcmp(s, s2, n) == 0,
                 "(%u, %u, %u) prints as '%.*s', which parses to (%u, %u, %u), printed '%.*s'",
                 d.code, d.bits, d.lanes, (int)n, s, back.code, back.bits, back.lanes, (int)n2, s2);
      fuzz_release(&again);
    } else {
      fuzz_expect_raised("TVMFFIDataTypeFromString (printed raw)", kDtypeKinds);
    }
  }
  fuzz_release(&text);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  static const char* const needed[] = {"TVMFFIDataTypeFromString", "TVMFFIDataTypeToString",
                                       "TVMFFIErrorMoveFromRaised", "TVMFFIObjectDecRef", NULL};
  fuzz_impl_init("dtype", needed);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TVMFFIByteArray in = {(const char*)data, size};
  DLDataType parsed;
  memset(&parsed, 0xA5, sizeof(parsed));
  int rc = TVMFFIDataTypeFromString(&in, &parsed);
  if (rc == 0) {
    fuzz_expect_nothing_raised("TVMFFIDataTypeFromString");
    check_round_trip(parsed);
  } else {
    FUZZ_CHECK(rc == -1, "TVMFFIDataTypeFromString returned %d", rc);
    fuzz_expect_raised("TVMFFIDataTypeFromString", kDtypeKinds);
  }
  check_print_raw(data, size);
  return 0;
}
