/* The symbol-version floor: .gnu.version_r read exactly, and the oldest
 * manylinux policy met, judged with auditwheel's pinned policy data, on our
 * kernels, a library that needs a newer glibc, and upstream's own
 * libtvm_ffi_testing.so. */
#include "tools/certify/version_needs.h"

#include <criterion/criterion.h>
#include <string.h>

#include "cert_test_util.h"

#define POLICY "../auditwheel/wheel/auditwheel/policy/manylinux-policy.json"

/* SKIPs unless the auditwheel wheel was fetched. */
static const char* policy(void) {
  char line[512] = "unavailable: status.txt missing";
  FILE* f = fopen(cert_runfile("../auditwheel/status.txt"), "r");
  if (f != NULL) {
    if (fgets(line, sizeof line, f) == NULL) snprintf(line, sizeof line, "unavailable: empty status");
    fclose(f);
  }
  line[strcspn(line, "\n")] = '\0';
  if (strncmp(line, "available", 9) != 0) cr_skip_test("auditwheel wheel %s", line);
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

#define EXPECT_HAS(text, part) cr_expect(strstr((text), (part)) != NULL, "'%s' lacks '%s'", (text), (part))

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

Test(version_needs, CST_030_a_newer_glibc_than_the_policy_is_a_warning_naming_it) {
  CertFindings f = {0};
  CertFinding x = judge("tools/certify/testdata/libcst_new_glibc.so", NULL, &f);
  cr_expect_eq(x.verdict, CERT_WARN);
  cr_expect_str_eq(x.clause, "CST-030");
  EXPECT_HAS(x.reason, "Needs GLIBC_2.34, beyond manylinux_2_28");
  EXPECT_HAS(x.reason, "the oldest policy its symbol versions meet is manylinux_2_34");
  EXPECT_HAS(x.evidence, "GLIBC_2.34 (libc.so.6)");
  cert_findings_free(&f);
}

Test(version_needs, CST_030_a_claimed_policy_that_covers_it_passes) {
  CertFindings f = {0};
  CertFinding x = judge("tools/certify/testdata/libcst_new_glibc.so", "manylinux_2_34", &f);
  cr_expect_eq(x.verdict, CERT_PASS, "%s", x.reason);
  EXPECT_HAS(x.reason, "meet manylinux_2_34 at the oldest, within manylinux_2_34");
  cert_findings_free(&f);
}

Test(version_needs, CST_030_our_c_kernel_meets_the_oldest_policies) {
  CertFindings f = {0};
  CertFinding x = judge("kernels/libscale_cpu.so", "manylinux2014", &f);
  cr_expect_eq(x.verdict, CERT_PASS, "%s", x.reason);
  EXPECT_HAS(x.reason, "within manylinux2014");
  cert_findings_free(&f);
}

Test(version_needs, CST_030_upstreams_testing_library_meets_manylinux_2_24) {
  CertFindings f = {0};
  CertFinding x = judge(CERT_TESTING_SO, NULL, &f);
  cr_expect_eq(x.verdict, CERT_PASS, "%s", x.reason);
  cr_expect_str_eq(x.reason, "Its symbol versions meet manylinux_2_24 at the oldest, within manylinux_2_28 "
                             "(symbol versions only).");
  EXPECT_HAS(x.evidence, "GLIBCXX_3.4.21 (libstdc++.so.6)");
  cert_findings_free(&f);
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
                                    "manylinux_2_28", &f), 0);
  cr_expect_eq(f.items[0].verdict, CERT_SKIP);
  EXPECT_HAS(f.items[0].reason, "does not read as auditwheel's policy list");
  cert_findings_free(&f);
  cert_elf_free(&elf);
}
