/* The replay grammar: lines round-trip, and bad lines are refused with a
 * reason, never crash. */
#include <criterion/criterion.h>
#include <string.h>

#include "tools/certify/probe_call.h"

static void roundtrip(const char* line) {
  CertCall c;
  char err[256] = "";
  cr_assert_eq(cert_call_parse(line, &c, err, sizeof err), 0, "%s: %s", line, err);
  char out[1024];
  cert_call_format(&c, out, sizeof out);
  cr_assert_str_eq(out, line);
}

Test(probe_call, CDY_002_replay_lines_round_trip) {
  roundtrip("scale(dl:float32[4]@cpu:0, dl:float32[4]@cpu:0, float:2.5) runtime=reference");
  roundtrip("f() runtime=upstream threads=2");
  roundtrip(
      "f(none, bool:true, int:-3, str:abc, rawstr:x, bytes:heap_bytes_value, dtype:bfloat16, "
      "device:cuda:1, ptr:guard, object:function, object:error, dl:null)");
  roundtrip(
      "f(tensor:float16[2x3]{strides=3x1;offset=16}@cpu:0, dl:int8[]@cpu:0, "
      "dl:float32[0]{data=null}@type99:2, dl:float32[8]{strides=null}@cuda:0) "
      "expect=ValueError:output check=reference returns=none");
}

/* What DSL kernels take: tuples (ffi.Array), shapes, raw data pointers,
 * aligned data, and the probe a line belongs to. */
Test(probe_call, CDY_020_dsl_arguments_round_trip) {
  roundtrip(
      "scale_tuple(dl:float32[16]{align=16}@cpu:0, array:[float:2.5, int:3, "
      "tensor:float32[4]@cpu:0], "
      "shape:[4x8], ptr:float32[16]@cpu:0, ptr:null) runtime=reference probe=valid-calls");
  roundtrip("f(array:[]) probe=legacy-forms");
  roundtrip("f(dl:float32[8]{strides=null}@cuda:0) probe=errors.divisibility");
  CertCall c;
  char err[256];
  cr_assert_eq(
      cert_call_parse("f(int:1, array:[float:0.5, int:7], array:[none])", &c, err, sizeof err), 0,
      "%s", err);
  cr_assert_eq(c.nitems, 3);
  cr_assert_eq(c.args[1].kind, CERT_ARG_ARRAY);
  cr_assert_eq(c.args[1].i, 0);
  cr_assert_eq(c.args[1].ndim, 2);
  cr_assert_eq(c.items[1].i, 7);
  cr_assert_eq(c.args[2].i, 2);
  cr_assert_eq(c.args[2].ndim, 1);
}

Test(probe_call, CDY_002_parsed_fields) {
  CertCall c;
  char err[256];
  cr_assert_eq(cert_call_parse("scale(dl:float64[2x5]{strides=10x2;offset=8}@cpu:0, float:0.5)", &c,
                               err, sizeof err),
               0, "%s", err);
  cr_assert_str_eq(c.function, "scale");
  cr_assert_eq(c.nargs, 2);
  cr_assert_eq(c.args[0].kind, CERT_ARG_DLTENSOR);
  cr_assert_eq(c.args[0].dtype.code, kDLFloat);
  cr_assert_eq(c.args[0].dtype.bits, 64);
  cr_assert_eq(c.args[0].ndim, 2);
  cr_assert_eq(c.args[0].shape[1], 5);
  cr_assert_eq(c.args[0].strides_mode, CERT_STRIDES_EXPLICIT);
  cr_assert_eq(c.args[0].strides[0], 10);
  cr_assert_eq(c.args[0].byte_offset, 8);
  cr_assert_eq(c.args[1].kind, CERT_ARG_FLOAT);
  cr_assert_float_eq(c.args[1].f, 0.5, 0);
  cr_assert_eq(c.threads, 1);
}

Test(probe_call, CDY_002_bad_lines_are_refused) {
  static const char* const bad[] = {
      "",
      "scale",
      "scale(",
      "scale(int:)",
      "scale(float:x)",
      "scale(dl:float32[4]@moon:0)",
      "scale(dl:float99999[4]@cpu:0)",
      "scale(dl:float32[1x2x3x4x5]@cpu:0)",
      "scale(dl:float32[99999999]@cpu:0)",
      "scale(dl:float32[4]{strides=1x1}@cpu:0)",
      "scale(dl:float32[4]{strides=-1}@cpu:0)",
      "scale() threads=3",
      "scale() bogus=1",
      "scale(str:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa)",
      "scale(none none)",
      "f(array:[array:[int:1]])",
      "f(array:[int:1)",
      "f(shape:[2x])",
      "f(dl:float32[4]{align=3}@cpu:0)",
      "f(array:[int:1, int:2, int:3, int:4, int:5, int:6, int:7, int:8, int:9])",
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    CertCall c;
    char err[256] = "";
    cr_expect_eq(cert_call_parse(bad[k], &c, err, sizeof err), -1, "accepted: %s", bad[k]);
    cr_expect_neq(err[0], '\0', "no reason for: %s", bad[k]);
  }
}
