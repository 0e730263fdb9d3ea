/* Clauses of spec/version.md: the version query. */
#include <dlfcn.h>
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

/* When each C API function appeared, by the 0.1.x patch that releases
 * report (the table of spec/version.md): every release reporting
 * `required` or later exports it; none reporting less than `first` does. */
typedef struct {
  const char* name;
  unsigned first;
  unsigned required;
} ApiSince;

static const ApiSince api_since[] = {
    {"TVMFFIGetVersion", 0, 0},
    {"TVMFFIObjectIncRef", 0, 0},
    {"TVMFFIObjectDecRef", 0, 0},
    {"TVMFFIFunctionCall", 0, 0},
    {"TVMFFIFunctionCreate", 0, 0},
    {"TVMFFIFunctionGetGlobal", 0, 0},
    {"TVMFFIFunctionSetGlobal", 0, 0},
    {"TVMFFIErrorMoveFromRaised", 0, 0},
    {"TVMFFIErrorSetRaised", 0, 0},
    {"TVMFFIErrorCreate", 0, 0},
    {"TVMFFITensorFromDLPackVersioned", 0, 0},
    {"TVMFFITensorToDLPackVersioned", 0, 0},
    {"TVMFFIDataTypeFromString", 0, 0},
    {"TVMFFITypeKeyToIndex", 0, 0},
    {"TVMFFIGetTypeInfo", 0, 0},
    {"TVMFFIEnvSetStream", 0, 0},
    {"TVMFFIEnvModLookupFromImports", 0, 0},
    {"TVMFFIHandleInitOnce", 5, 5},
    {"TVMFFIHandleDeinitOnce", 5, 5},
    {"TVMFFITensorCreateUnsafeView", 6, 6},
    {"TVMFFIErrorCreateWithCauseAndExtraContext", 8, 8},
    {"TVMFFIGetCustomAllocator", 14, 14},
    {"TVMFFISetCustomAllocator", 14, 14},
    /* Two 0.1.14 builds exist, one with and one without these. */
    {"TVMFFIBigIntFromByteArray", 14, 15},
    {"TVMFFIBigIntGetContentByteArray", 14, 15},
};

/* VER-002: the reported release is consistent with the functions the
 * library exports: nothing that release must have is missing, nothing it
 * cannot have yet is there. */
TEST(version, VER_002_version_matches_exports) {
  TVMFFIVersion v = {99, 99, 99};
  API(TVMFFIGetVersion)(&v);
  if (v.major != 0 || v.minor != 1)
    cr_skip_test("the table of first appearances covers 0.1.x; %s reports %u.%u.%u",
                 conf_impl_path(), v.major, v.minor, v.patch);
  for (size_t i = 0; i < sizeof api_since / sizeof api_since[0]; ++i) {
    const ApiSince* a = &api_since[i];
    int exported = dlsym(conf_impl_handle(), a->name) != NULL;
    cr_expect(exported || v.patch < a->required,
              "reports 0.1.%u: expected %s (in every release reporting 0.1.%u or later), got "
              "no such symbol",
              v.patch, a->name, a->required);
    cr_expect(!exported || v.patch >= a->first,
              "reports 0.1.%u: expected a release of 0.1.%u or later (it exports %s, which "
              "first appeared then), got 0.1.%u",
              v.patch, a->first, a->name, v.patch);
  }
}

/* VER-003: a NULL out_version is ignored. */
TEST(version, VER_003_null_out_ignored) {
  HOSTILE_INPUT("upstream writes through the NULL pointer");
  API(TVMFFIGetVersion)(NULL);
  TVMFFIVersion v = {7, 7, 7};
  API(TVMFFIGetVersion)(&v);
  cr_expect_eq(v.minor, 1, "the call after a NULL one failed");
}
