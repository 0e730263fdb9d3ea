/* Unit tests of the stream table beyond what the ABI tests reach: the
 * overflow list (pairs outside the fast table) growing and shrinking. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <tvm/ffi/extra/c_env_api.h>

#define S(n) ((TVMFFIStreamHandle)(uintptr_t)(n))

Test(env_stream, overflow_list_grows_and_empties) {
  /* 200 pairs outside the fast table force several reallocations. */
  for (int i = 0; i < 200; ++i) {
    cr_assert_eq(TVMFFIEnvSetStream(2, 100 + i, S(16 * (i + 1)), NULL), 0);
  }
  for (int i = 0; i < 200; ++i) cr_expect_eq(TVMFFIEnvGetStream(2, 100 + i), S(16 * (i + 1)));
  /* Replace one, then clear all in an order that moves entries around. */
  TVMFFIStreamHandle old = NULL;
  cr_assert_eq(TVMFFIEnvSetStream(2, 150, S(8), &old), 0);
  cr_expect_eq(old, S(16 * 51));
  for (int i = 0; i < 200; i += 2) cr_assert_eq(TVMFFIEnvSetStream(2, 100 + i, NULL, NULL), 0);
  for (int i = 1; i < 200; i += 2) {
    cr_expect_eq(TVMFFIEnvGetStream(2, 100 + i), i == 50 ? S(8) : S(16 * (i + 1)));
  }
  for (int i = 1; i < 200; i += 2) cr_assert_eq(TVMFFIEnvSetStream(2, 100 + i, NULL, NULL), 0);
  for (int i = 0; i < 200; ++i) cr_expect_null(TVMFFIEnvGetStream(2, 100 + i));
  /* Clearing a pair that was never set is a no-op that reports NULL. */
  old = S(1);
  cr_assert_eq(TVMFFIEnvSetStream(7, 4000, NULL, &old), 0);
  cr_expect_null(old);
}

Test(env_stream, range_bounds) {
  cr_expect_eq(TVMFFIEnvSetStream(1023, 65535, S(16), NULL), 0);
  cr_expect_eq(TVMFFIEnvSetStream(1023, 65535, NULL, NULL), 0);
  cr_expect_eq(TVMFFIEnvSetStream(1024, 0, S(16), NULL), -1);
  cr_expect_eq(TVMFFIEnvSetStream(0, 65536, S(16), NULL), -1);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  TVMFFIObjectDecRef(err);
}
