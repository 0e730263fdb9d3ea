/* Unit tests of the dtype parser and printer. */
#include "dtype.h"

#include <criterion/criterion.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "object.h"
#include "unit_test_support.h"

static DLDataType parse_ok(const char* text) {
  DLDataType t = {0, 0, 0};
  cr_assert_eq(tffi_dtype_parse(text, strlen(text), &t), 0, "\"%s\" refused", text);
  return t;
}

Test(dtype, long_digit_runs_do_not_wrap) {
  static const char* bad[] = {"int99999999999999999999999", "int8x99999999999999999999"};
  for (int i = 0; i < 2; ++i) {
    DLDataType t;
    cr_expect_eq(tffi_dtype_parse(bad[i], strlen(bad[i]), &t), -1, "\"%s\" accepted", bad[i]);
    drop_raised();
  }
}

/* Upstream reads a bare "xvscale" as one lane; a count past 32768 has no
 * int16 encoding. */
Test(dtype, scalable_count_bounds) {
  DLDataType t = parse_ok("int8xvscale");
  cr_expect_eq(t.lanes, 1);
  cr_expect_eq(tffi_dtype_parse("int8xvscalex32769", 17, &t), -1);
  drop_raised();
}

/* Upstream skips one "_" after the float4 name, lanes or not. */
Test(dtype, float4_underscore_then_lanes_or_nothing) {
  DLDataType t = parse_ok("float4_e2m1fn_");
  cr_expect_eq(t.lanes, 1);
  cr_expect_eq(tffi_dtype_parse("float4_e2m1fn_y", 15, &t), -1);
  drop_raised();
  t = parse_ok("f4_e2m1fn_x8");
  cr_expect_eq(t.lanes, 8);
}

Test(dtype, longest_text_fits) {
  char buf[TFFI_DTYPE_TEXT_MAX];
  DLDataType t = {kDLFloat8_e4m3b11fnuz, 8, (uint16_t)-32768};
  int n = tffi_dtype_format(t, buf);
  cr_assert_gt(n, 0);
  cr_expect_str_eq(buf, "float8_e4m3b11fnuzxvscalex32768");
  t = (DLDataType){kDLUInt, 255, 32767};
  n = tffi_dtype_format(t, buf);
  cr_expect_str_eq(buf, "uint255x32767");
}

Test(dtype, every_parse_formats_back) {
  static const char* names[] = {"int8",   "uint16x4",        "bfloat16",      "bool",
                                "boolx2", "float8_e5m2fnuz", "float6_e2m3fn", "float64xvscalex2"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    char buf[TFFI_DTYPE_TEXT_MAX];
    DLDataType t = parse_ok(names[i]);
    cr_assert_geq(tffi_dtype_format(t, buf), 0);
    cr_expect_str_eq(buf, names[i]);
  }
}
