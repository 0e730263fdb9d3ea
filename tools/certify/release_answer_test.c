/* The per-release rows and the one-line answer, from made-up findings:
 * ranges of consecutive releases with one cause, the reference joining the
 * group it agrees with, byte-identical libraries standing for each other,
 * and releases that could not be had. */
#include "tools/certify/release_answer.h"
#include "tools/certify/checks.h"

#include <criterion/criterion.h>
#include <string.h>

static void fail(CertFindings* f, const char* runtime, const char* check, const char* reason) {
  cr_assert_eq(
      cert_findings_add(f, "scale", check, "CDY-040", runtime, CERT_FAIL, "", "", "%s", reason), 0);
}

static void pass(CertFindings* f, const char* runtime) {
  cr_assert_eq(cert_findings_add(f, "scale", "probe.arity", "", runtime, CERT_PASS, "", "", "fine"),
               0);
}

Test(release_answer, ranges_and_the_reference_join_the_group_they_agree_with) {
  CertFindings f = {0};
  const char* cause =
      "Error cells made by the library are 56 bytes; this runtime reads 72: old. More.";
  pass(&f, "0.1.6");
  pass(&f, "0.1.7");
  fail(&f, "0.1.8.post0", "probe.error-readback", cause);
  fail(&f, "0.1.9", "probe.error-readback", cause);
  fail(&f, "reference", "probe.error-readback", cause);
  /* A static finding every runtime shares counts for each, after its own. */
  cr_assert_eq(cert_findings_add(&f, "", "static.exports", "", "", CERT_WARN, "", "", "w"), 0);
  CertReleaseInput in[] = {{"0.1.6", -1, NULL},       {"0.1.7", -1, NULL},
                           {"0.1.8.post0", -1, NULL}, {"0.1.8.post1", 2, NULL},
                           {"0.1.9", -1, NULL},       {"0.1.99", -1, "not in the cache"},
                           {"reference", -1, NULL}};
  CertReleaseAnswer a;
  cr_assert_eq(cert_release_answer(in, 7, &f, &a), 0);
  cr_expect_str_eq(a.answer,
                   "runs on: 0.1.6, 0.1.7; fails on: 0.1.8.post0, 0.1.8.post1, 0.1.9, reference "
                   "(error cells made "
                   "by the library are 56 bytes; these runtimes read 72: old); not run: 0.1.99 "
                   "(not in the cache)");
  cr_expect_eq(a.n_run, 5);
  cr_expect_eq(a.rows[1].status, CERT_REL_RUNS);
  cr_expect_eq(a.rows[1].worst, CERT_WARN);
  cr_expect_eq(a.rows[3].status, CERT_REL_FAILS);
  cr_expect_str_eq(a.rows[3].same_as, "0.1.8.post0");
  cr_expect_str_eq(a.rows[3].check, "probe.error-readback");
  cr_expect_str_eq(a.rows[3].clause, "CDY-040");
  cr_expect_eq(a.rows[5].status, CERT_REL_SKIPPED);
  cert_release_answer_free(&a);
  cert_findings_free(&f);
}

Test(release_answer, different_causes_are_separate_groups_and_a_lone_reference_stands_apart) {
  CertFindings f = {0};
  fail(&f, "0.1.0", "probe.arity",
       "The call ended the process with exit(255). (2 of 26 such calls)");
  fail(&f, "0.1.1", "probe.arity",
       "The call ended the process with exit(255). (3 of 26 such calls)");
  pass(&f, "0.1.2");
  fail(&f, "0.1.8.post0", "probe.error-readback", "Old cell.");
  fail(&f, "reference", "probe.heap-bounds", "Read 8 bytes past a block.");
  CertReleaseInput in[] = {{"0.1.0", -1, NULL},
                           {"0.1.1", -1, NULL},
                           {"0.1.2", -1, NULL},
                           {"0.1.8.post0", -1, NULL},
                           {"reference", -1, NULL}};
  CertReleaseAnswer a;
  cr_assert_eq(cert_release_answer(in, 5, &f, &a), 0);
  /* How many calls died differs between releases; the cause does not. */
  cr_expect_str_eq(
      a.answer,
      "runs on: 0.1.2; fails on: 0.1.0, 0.1.1 (the call ended the process with exit(255)); "
      "0.1.8.post0 (old cell); reference (read 8 bytes past a block)");
  cert_release_answer_free(&a);
  cert_findings_free(&f);
}

/* A range names only releases that ran: a gap in the chosen releases
 * splits it. */
Test(release_answer, no_range_spans_a_release_that_did_not_run) {
  CertFindings f = {0};
  CertReleaseInput in[] = {{"0.1.0", -1, NULL},    {"0.1.4", -1, NULL}, {"0.1.5", -1, NULL},
                           {"0.1.6", -1, NULL},    {"0.1.9", -1, NULL}, {"0.1.10", -1, NULL},
                           {"reference", -1, NULL}};
  for (size_t k = 0; k < 7; ++k) pass(&f, in[k].label);
  CertReleaseAnswer a;
  cr_assert_eq(cert_release_answer(in, 7, &f, &a), 0);
  cr_expect_str_eq(a.answer, "runs on: 0.1.0, 0.1.4 - 0.1.6, 0.1.9, 0.1.10, reference");
  cert_release_answer_free(&a);
  cert_findings_free(&f);
}

Test(release_answer, everything_runs) {
  CertFindings f = {0};
  pass(&f, "0.1.0");
  pass(&f, "0.1.1");
  pass(&f, "0.1.2");
  pass(&f, "reference");
  CertReleaseInput in[] = {
      {"0.1.0", -1, NULL}, {"0.1.1", -1, NULL}, {"0.1.2", -1, NULL}, {"reference", -1, NULL}};
  CertReleaseAnswer a;
  cr_assert_eq(cert_release_answer(in, 4, &f, &a), 0);
  cr_expect_str_eq(a.answer, "runs on: 0.1.0 - 0.1.2, reference");
  cr_expect_str_eq(cert_release_status_name(a.rows[0].status), "runs");
  cert_release_answer_free(&a);
  cert_findings_free(&f);
}

/* A release where no call reached the library proved nothing: it is
 * untested, never "runs"; a FAIL there still makes it fail. */
Test(release_answer, nothing_called_is_untested_not_runs) {
  CertFindings f = {0};
  const char* why =
      "Nothing could be called: no call got past the argument checks of its 1 function; give a "
      "manifest (--manifest) that describes valid calls.";
  pass(&f, "0.1.6");
  pass(&f, "0.1.7");
  cr_assert_eq(cert_findings_add(&f, "", CERT_CHECK_NOTHING_CALLED, "", "0.1.7", CERT_SKIP, "", "",
                                 "%s", why),
               0);
  pass(&f, "0.1.8.post0");
  fail(&f, "0.1.8.post0", "probe.error-readback", "Old cell.");
  cr_assert_eq(cert_findings_add(&f, "", CERT_CHECK_NOTHING_CALLED, "", "0.1.8.post0", CERT_SKIP,
                                 "", "", "%s", why),
               0);
  cr_assert_eq(cert_findings_add(&f, "", CERT_CHECK_NOTHING_CALLED, "", "reference", CERT_SKIP, "",
                                 "", "%s", why),
               0);
  CertReleaseInput in[] = {{"0.1.6", -1, NULL},
                           {"0.1.7", -1, NULL},
                           {"0.1.8.post0", -1, NULL},
                           {"0.1.8.post1", 2, NULL},
                           {"reference", -1, NULL}};
  CertReleaseAnswer a;
  cr_assert_eq(cert_release_answer(in, 5, &f, &a), 0);
  cr_expect_str_eq(
      a.answer,
      "runs on: 0.1.6; fails on: 0.1.8.post0, 0.1.8.post1 (old cell); untested on: 0.1.7, "
      "reference (nothing could be called: no call got past the argument checks of its 1 "
      "function; give a manifest (--manifest) that describes valid calls)");
  cr_expect_eq(a.rows[1].status, CERT_REL_UNTESTED);
  cr_expect_str_eq(a.rows[1].check, CERT_CHECK_NOTHING_CALLED);
  cr_expect_str_eq(cert_release_status_name(a.rows[1].status), "untested");
  cr_expect_eq(a.rows[2].status, CERT_REL_FAILS);
  cr_expect_eq(a.rows[3].status, CERT_REL_FAILS);
  cr_expect_eq(a.rows[4].status, CERT_REL_UNTESTED);
  cert_release_answer_free(&a);
  cert_findings_free(&f);
}
