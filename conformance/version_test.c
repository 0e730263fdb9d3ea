/* Clauses of spec/version.md: the version query. */
#include <string.h>

#include "impl.h"

/* VER-001: TVMFFIGetVersion fills major, minor and patch, and reports the
 * 0.x ABI line this suite describes (major 0, minor 1). */
TEST(version, VER_001_reports_abi_line) {
  TVMFFIVersion v;
  memset(&v, 0xff, sizeof v);
  API(TVMFFIGetVersion)(&v);
  cr_expect_eq(v.major, 0, "major: expected 0, got %u", v.major);
  cr_expect_eq(v.minor, 1, "minor: expected 1, got %u", v.minor);
  cr_expect_lt(v.patch, 1000u, "patch was not written (still %u)", v.patch);
}
