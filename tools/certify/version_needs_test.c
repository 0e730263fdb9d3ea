/* The symbol-version floor: .gnu.version_r read exactly, and the oldest
 * manylinux policy met, judged with auditwheel's pinned policy data, on our
 * kernels, a library that needs a newer glibc, and upstream's own
 * libtvm_ffi_testing.so. */
#include "tools/certify/version_needs.h"

#include <criterion/criterion.h>
#include <string.h>

#include "cert_test_util.h"

#define POLICY "../auditwheel/wheel/auditwheel/policy/manylinux-policy.json"

static const char* policy(void) {
  cert_require_wheel("../auditwheel/status.txt", "auditwheel");
  return cert_runfile(POLICY);
}

/* The one static.manylinux finding for `lib` with `claimed`. */
static CertFinding judge(const char* lib, const char* claimed, CertFindings* f) {
  const char* path = policy();
  CertElf elf;
  cert_read_ok(lib, &elf);
  cr_assert_eq(cert_check_manylinux(&elf, path, NULL, claimed, f), 0);
  cert_elf_free(&elf);
  cr_assert_eq(f->n, 1);
  cr_expect_str_eq(f->items[0].check, "static.manylinux");
  return f->items[0];
}

#define EXPECT_HAS(text, part) \
  cr_expect(strstr((text), (part)) != NULL, "'%s' lacks '%s'", (text), (part))

Test(version_needs, CST_030_the_needs_are_read_from_version_r) {
  CertElf elf;
  cert_read_ok("tools/certify/testdata/libcst_new_glibc.so", &elf);
  CertVersionNeeds needs;
  cr_assert_eq(cert_version_needs(&elf, &needs), 0);
  int close_range_need = 0;
  for (size_t k = 0; k < needs.n; ++k) {
    cr_expect_str_eq(needs.items[k].file, "libc.so.6", "%s", needs.items[k].name);
    close_range_need |= strcmp(needs.items[k].name, "GLIBC_2.34") == 0;
  }
  cr_expect(close_range_need, "close_range needs GLIBC_2.34");
  cert_version_needs_free(&needs);
  cert_elf_free(&elf);
}

/* Judges `lib` against `claimed` and checks the verdict and a piece of
 * the reason and of the evidence. */
static void expect_judged(const char* lib, const char* claimed, CertVerdict v,
                          const char* reason_part, const char* evidence_part) {
  CertFindings f = {0};
  CertFinding x = judge(lib, claimed, &f);
  cr_expect_eq(x.verdict, v, "%s: %s", lib, x.reason);
  cr_expect_str_eq(x.clause, "CST-030");
  EXPECT_HAS(x.reason, reason_part);
  EXPECT_HAS(x.evidence, evidence_part);
  cert_findings_free(&f);
}

Test(version_needs, CST_030_a_newer_glibc_than_the_policy_is_a_warning_naming_it) {
  expect_judged(
      "tools/certify/testdata/libcst_new_glibc.so", NULL, CERT_WARN,
      "Needs GLIBC_2.34, beyond manylinux_2_28: it does not load on the older systems that policy "
      "promises (and that run apache-tvm-ffi's own wheels); the oldest policy its symbol versions "
      "meet is manylinux_2_34.",
      "GLIBC_2.34 (libc.so.6)");
}

Test(version_needs, CST_030_a_claimed_policy_that_covers_it_passes) {
  expect_judged("tools/certify/testdata/libcst_new_glibc.so", "manylinux_2_34", CERT_PASS,
                "meet manylinux_2_34 at the oldest, within manylinux_2_34", "GLIBC_2.34");
}

Test(version_needs, CST_030_our_c_kernel_meets_the_oldest_policies) {
  expect_judged("kernels/libscale_cpu.so", "manylinux2014", CERT_PASS, "within manylinux2014",
                "GLIBC_2.2.5");
}

Test(version_needs, CST_030_upstreams_testing_library_meets_manylinux_2_24) {
  expect_judged(CERT_TESTING_SO, NULL, CERT_PASS,
                "Its symbol versions meet manylinux_2_24 at the oldest, within manylinux_2_28 "
                "(symbol versions "
                "only).",
                "GLIBCXX_3.4.21 (libstdc++.so.6)");
}

Test(version_needs, CST_030_without_policy_data_it_is_a_skip_with_the_reason) {
  CertElf elf;
  cert_read_ok("kernels/libscale_cpu.so", &elf);
  CertFindings f = {0};
  cr_assert_eq(cert_check_manylinux(&elf, NULL, "unavailable: no network", NULL, &f), 0);
  cr_assert_eq(f.n, 1);
  cr_expect_eq(f.items[0].verdict, CERT_SKIP);
  EXPECT_HAS(f.items[0].reason, "unavailable: no network");
  cert_findings_free(&f);
  cr_assert_eq(cert_check_manylinux(&elf, cert_runfile("kernels/scale_cpu.manifest.json"), NULL,
                                    "manylinux_2_28", &f),
               0);
  cr_expect_eq(f.items[0].verdict, CERT_SKIP);
  EXPECT_HAS(f.items[0].reason, "does not read as auditwheel's policy list");
  cert_findings_free(&f);
  cert_elf_free(&elf);
}
