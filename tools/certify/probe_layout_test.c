/* Reading back through the runtime's layout, and the strict heap: a
 * library that makes objects with an older, smaller layout than the
 * runtime's release is caught, and the finding names the change of
 * spec/layouts.json that explains it. The victims are
 * testdata/layout_victims.c. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/certify/probe.h"
#include "tools/certify/probe_readback.h"
#include "tools/certify/strict_heap.h"

static char g_lib[PATH_MAX], g_ref[PATH_MAX];

/* The one finding of a replay of `line` under the reference runtime. */
static CertFinding replay(const char* line, CertFindings* f) {
  cr_assert_not_null(realpath("tools/certify/libcert_layout_victims.so", g_lib));
  cr_assert_not_null(realpath("reference/libtvm_ffi.so", g_ref));
  CertProbeOptions o;
  memset(&o, 0, sizeof o);
  o.lib_path = g_lib;
  o.runtime_path = g_ref;
  o.runtime_label = "reference";
  o.jobs = 1;
  o.timeout_s = 5;
  cr_assert_eq(cert_probe_replay(line, &o, f), 0, "replay of %s", line);
  cr_assert_eq(f->n, 1, "one finding for %s, got %zu", line, f->n);
  return f->items[0];
}

#define EXPECT_HAS(text, part) \
  cr_expect(strstr((text), (part)) != NULL, "'%s' lacks '%s'", (text), (part))

/* The replay of `line` is one FAIL of `check` under `clause` whose reason
 * and evidence hold the given pieces ("" for none). */
static void expect_fail(const char* line, const char* check, const char* clause,
                        const char* reason_part, const char* evidence_part) {
  CertFindings f = {0};
  CertFinding x = replay(line, &f);
  cr_expect_str_eq(x.check, check, "%s", line);
  cr_expect_str_eq(x.clause, clause, "%s", line);
  cr_expect_eq(x.verdict, CERT_FAIL, "%s: %s", line, x.reason);
  EXPECT_HAS(x.reason, reason_part);
  EXPECT_HAS(x.evidence, evidence_part);
  cert_findings_free(&f);
}

static void needs_strict_heap(void) {
  if (!cert_strict_heap_available())
    cr_skip_test("no strict heap under a sanitizer: it owns the allocator");
}

Test(probe_layout, CDY_040_an_old_error_cell_with_members_after_it_is_read_as_cause_chain) {
  expect_fail(
      "old_error_with_members()", "probe.error-readback", "CDY-040",
      "Error cells made by the library are 56 bytes; this runtime reads 72: built against headers "
      "older "
      "than 0.1.8.post0, see spec/layouts.md. TVMFFIErrorCell grew from 56 to 72 bytes at "
      "0.1.8.post0 "
      "(cause_chain appended at offset 56), a change labelled breaking for binaries built before "
      "it. "
      "Rebuild the library against apache-tvm-ffi >= 0.1.8.post0",
      "cause_chain at cell offset 56 holds 0x5a5a5a5a5a5a5a5a, which points to no live object");
}

Test(probe_layout, CDY_040_an_old_error_cell_ending_its_block_is_read_past_its_end) {
  needs_strict_heap();
  expect_fail("old_error_exact()", "probe.error-readback", "CDY-040",
              "Error cells made by the library are 56 bytes; this runtime reads 72",
              "cause_chain at cell offset 56 lies past the end of the object; the object lies in a "
              "80-byte heap block");
}

Test(probe_layout, CDY_040_an_error_with_a_real_cause_reads_back_clean) {
  CertFindings f = {0};
  CertFinding x = replay("chained_error()", &f);
  cr_expect_eq(x.verdict, CERT_PASS, "%s: %s %s", x.check, x.reason, x.evidence);
  cert_findings_free(&f);
}

Test(probe_layout, CDY_041_a_returned_str_whose_data_points_nowhere) {
  expect_fail("bad_string()", "probe.returned-objects", "CDY-041",
              "data is not a readable byte array (data 0x40)", "");
}

Test(probe_layout, CDY_042_reading_past_a_heap_block_faults_on_the_strict_heap) {
  needs_strict_heap();
  expect_fail("reads_past_block()", "probe.heap-bounds", "CDY-042",
              "Read 1 byte past the end of a 24-byte heap block", "");
}

Test(probe_layout, CDY_040_each_release_is_read_with_its_own_error_cell) {
  CertHostLayout l;
  cr_assert_eq(cert_host_layout_named("0.1.7", &l), 0);
  cr_expect_eq(l.cell_size, 56);
  cr_expect_eq(l.cause_offset, -1);
  cr_assert_eq(cert_host_layout_named("0.1.8.post0", &l), 0);
  cr_expect_eq(l.cell_size, 72);
  cr_expect_eq(l.cause_offset, 56);
  cr_expect_eq(l.context_offset, 64);
  cr_expect_eq(cert_host_layout_named("0.0.1", &l), -1);
  /* By the version a runtime reports: 0.1.9 is reported by 0.1.8.post0,
   * 0.1.8.post1 and 0.1.9 alike; a version past every release gets the
   * reference's layout; one between releases the nearest older one's. */
  cert_host_layout(&(TVMFFIVersion){0, 1, 9}, &l);
  cr_expect_str_eq(l.release, "0.1.9");
  cert_host_layout(&(TVMFFIVersion){0, 1, 99}, &l);
  cr_expect_str_eq(l.release, "reference");
  cr_expect_eq(l.cell_size, 72);
  cert_host_layout(&(TVMFFIVersion){0, 1, 7}, &l);
  cr_expect_eq(l.cell_size, 56);
  const char* since = NULL;
  int32_t before = 0;
  cert_host_layout(&(TVMFFIVersion){0, 1, 16}, &l);
  cr_assert_eq(cert_layout_introduced(&l, 56, &since, &before), 0);
  cr_expect_str_eq(since, "0.1.8.post0");
  cr_expect_eq(before, 56);
}

Test(probe_layout, CDY_040_safe_reads_refuse_unreadable_memory) {
  char buf[8];
  cr_expect_eq(cert_safe_read(0, buf, 1), -1);
  cr_expect_eq(cert_safe_read(64, buf, 8), -1);
  const char here[] = "readable";
  cr_expect_eq(cert_safe_read((uintptr_t)here, buf, 8), 0);
  cr_expect_eq(memcmp(buf, here, 8), 0);
}
