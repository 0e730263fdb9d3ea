/* The probe engine: every way a kernel can go wrong becomes the right
 * verdict, and none of them takes certify down (the test process is the
 * parent: if it survives to the assertions, the parent survived). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/certify/manifest.h"
#include "tools/certify/probe.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static char g_lib[PATH_MAX], g_ref[PATH_MAX], g_up[PATH_MAX];

static void paths(void) {
  cr_assert_not_null(realpath("tools/certify/libcert_victims.so", g_lib));
  cr_assert_not_null(realpath("reference/libtvm_ffi.so", g_ref));
  cr_assert_not_null(realpath("../tvm_ffi_upstream/lib/libtvm_ffi.so", g_up));
}

static CertProbeOptions options(const char* runtime, const char* label) {
  CertProbeOptions o;
  memset(&o, 0, sizeof o);
  o.lib_path = g_lib;
  o.runtime_path = runtime;
  o.runtime_label = label;
  o.jobs = 2;
  o.timeout_s = 2;
  o.memory_limit = (size_t)256 << 20;
  return o;
}

/* The one finding a replay produced. */
static const CertFinding* replay(const char* line, CertProbeOptions* o, CertFindings* f) {
  cr_assert_eq(cert_probe_replay(line, o, f), 0, "replay of %s", line);
  cr_assert_eq(f->n, 1, "one finding for %s, got %zu", line, f->n);
  return &f->items[0];
}

static void expect_finding_within(const char* line, double timeout_s, const char* check, CertVerdict v,
                                  const char* clause, const char* reason_part) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  o.timeout_s = timeout_s;
  CertFindings f = {0};
  const CertFinding* x = replay(line, &o, &f);
  cr_expect_str_eq(x->check, check, "%s", line);
  cr_expect_eq(x->verdict, v, "%s: verdict %s (%s)", line, cert_verdict_name(x->verdict), x->reason);
  cr_expect_str_eq(x->clause, clause, "%s", line);
  cr_expect_not_null(strstr(x->reason, reason_part), "%s: reason '%s' lacks '%s'", line, x->reason,
                     reason_part);
  cr_expect_str_eq(x->runtime, "reference");
  size_t call_len = (size_t)(strchr(line, ')') - line) + 1;
  cr_expect_eq(strncmp(x->replay, line, call_len), 0, "the replay '%s' is the call '%s'", x->replay, line);
  cert_findings_free(&f);
}

static void expect_finding(const char* line, const char* check, CertVerdict v, const char* clause,
                           const char* reason_part) {
  expect_finding_within(line, 2, check, v, clause, reason_part);
}

Test(probe, CDY_002_a_crash_is_a_fail) {
  expect_finding("segv(none)", "replay", CERT_FAIL, "CDY-002", "signal 11");
}

Test(probe, CDY_002_an_abort_is_a_fail) {
  expect_finding("aborts(int:1)", "replay", CERT_FAIL, "CDY-002", "aborted instead of raising");
}

Test(probe, CDY_002_exit_is_a_fail) {
  expect_finding("exits()", "replay", CERT_FAIL, "CDY-002", "exit(3)");
}

Test(probe, CDY_002_a_hang_is_a_fail, .timeout = 60) {
  expect_finding("hangs(float:1)", "replay", CERT_FAIL, "CDY-002", "time limit (2 s)");
}

Test(probe, CDY_002_a_memory_bomb_is_a_fail, .timeout = 120) {
  if (SANITIZED) cr_skip_test("sanitizers reserve terabytes of address space: no memory cap under them");
  expect_finding_within("bomb()", 30, "replay", CERT_FAIL, "CDY-002", "Exhausted the memory cap (256 MiB)");
}

Test(probe, CDY_003_a_read_past_num_args_is_caught) {
  expect_finding("reads_past(int:1, int:2)", "probe.args-bounds", CERT_FAIL, "CDY-003",
                 "args[2] and beyond");
  expect_finding("reads_past()", "probe.args-bounds", CERT_FAIL, "CDY-003", "num_args was 0");
}

Test(probe, CDY_008_minus_one_needs_a_raised_error) {
  expect_finding("no_raise(none)", "probe.error-hygiene", CERT_FAIL, "CDY-008", "no error raised");
}

Test(probe, CDY_009_zero_leaves_nothing_raised) {
  expect_finding("twice(none)", "probe.error-hygiene", CERT_FAIL, "CDY-009", "left an error raised");
}

Test(probe, CDY_002_a_good_call_passes_under_both_runtimes) {
  paths();
  const char* rts[2] = {g_ref, g_up};
  for (int k = 0; k < 2; ++k) {
    CertProbeOptions o = options(rts[k], k ? "upstream" : "reference");
    CertFindings f = {0};
    const CertFinding* x =
        replay("good(dl:float32[4]{offset=8}@cpu:0, tensor:float16[2x2]@cpu:0, str:a_heap_string, "
               "bytes:b, object:function, object:error, dl:null, ptr:guard) threads=2",
               &o, &f);
    cr_expect_eq(x->verdict, CERT_PASS, "%s: %s %s", o.runtime_label, x->reason, x->evidence);
    cert_findings_free(&f);
  }
}

Test(probe, CDY_001_a_library_that_does_not_load_is_a_finding) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  o.lib_path = "/nonexistent/libmissing.so";
  CertFindings f = {0};
  const char* names[] = {"scale"};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, &o, &f), 0);
  cr_assert_eq(f.n, 1);
  cr_expect_str_eq(f.items[0].check, "probe.load");
  cr_expect_eq(f.items[0].verdict, CERT_FAIL);
  cr_expect_not_null(strstr(f.items[0].evidence, "libmissing.so"), "%s", f.items[0].evidence);
  cert_findings_free(&f);
}

/* A function that crashes on every call next to one that never does: the
 * crashes are the crashing function's alone (calls that shared a child
 * with a crash are judged again on their own). */
Test(probe, CDY_002_crashes_are_attributed_to_their_function, .timeout = 120) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  CertFindings f = {0};
  const char* names[] = {"good", "aborts"};
  cr_assert_eq(cert_probe_functions(names, 2, NULL, 0, &o, &f), 0);
  int good = 0, aborts_failed = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    fprintf(stderr, "%s %s %s: %s\n", x->function, x->check, cert_verdict_name(x->verdict), x->reason);
    if (strcmp(x->function, "good") == 0) {
      good++;
      cr_expect_eq(x->verdict, CERT_PASS, "good: %s: %s", x->check, x->reason);
    } else {
      cr_expect_str_eq(x->function, "aborts");
      aborts_failed += x->verdict == CERT_FAIL;
    }
  }
  cr_expect_eq(good, 6, "every probe check reported for good");
  cr_expect_geq(aborts_failed, 4, "aborts fails every check it was probed by");
  cert_findings_free(&f);
}

/* Probes every check on `name` (with an optional manifest) and expects
 * exactly one check not to pass, with the given verdict and clause. */
static void expect_only(const char* name, const char* manifest_json, const char* check, CertVerdict v,
                        const char* clause) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  CertManifest m = {0};
  char err[256];
  if (manifest_json) {
    cr_assert_eq(cert_manifest_parse(manifest_json, strlen(manifest_json), &m, err, sizeof err), 0, "%s", err);
    o.manifest = &m;
  }
  CertFindings f = {0};
  const char* names[] = {name};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, &o, &f), 0);
  int seen = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    if (strcmp(x->check, check) == 0) {
      seen = 1;
      cr_expect_eq(x->verdict, v, "%s %s: %s (%s)", name, check, cert_verdict_name(x->verdict), x->reason);
      cr_expect_str_eq(x->clause, clause);
    } else {
      cr_expect(x->verdict == CERT_PASS || x->verdict == CERT_SKIP, "%s: unexpected %s %s: %s", name,
                cert_verdict_name(x->verdict), x->check, x->reason);
    }
  }
  cr_expect(seen, "%s: no %s finding", name, check);
  cert_findings_free(&f);
  cert_manifest_free(&m);
}

Test(probe, CDY_006_legacy_null_strides_crash_is_nonstrict, .timeout = 120) {
  expect_only("strides_deref", NULL, "probe.legacy-forms", CERT_NONSTRICT, "CDY-006");
}

Test(probe, CDY_007_null_data_crash_is_a_warning, .timeout = 120) {
  expect_only("null_data_deref", NULL, "probe.invalid-tensors", CERT_WARN, "CDY-007");
}

Test(probe, CDY_010_a_view_in_the_result_slot_is_a_fail) {
  expect_finding("bad_result()", "probe.result", CERT_FAIL, "CDY-010", "not a valid owned value");
}

Test(probe, CDY_012_threads_that_disagree_are_a_fail) {
  expect_finding("racy(none) threads=2", "probe.threads", CERT_FAIL, "CDY-012", "different outcomes");
}

Test(probe, CDY_013_metadata_and_doc_functions_are_decoded) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  CertFindings f = {0};
  const char* meta[] = {"__tvm_ffi__metadata_good", "__tvm_ffi__doc_good", "__tvm_ffi__metadata_notjson"};
  cr_assert_eq(cert_probe_functions(NULL, 0, meta, 3, &o, &f), 0);
  cr_assert_eq(f.n, 2);
  cr_expect_str_eq(f.items[0].function, "good");
  cr_expect_eq(f.items[0].verdict, CERT_PASS, "%s", f.items[0].reason);
  cr_expect_not_null(strstr(f.items[0].evidence, "type_schema"), "%s", f.items[0].evidence);
  cr_expect_str_eq(f.items[1].function, "notjson");
  cr_expect_eq(f.items[1].verdict, CERT_WARN, "%s", f.items[1].reason);
  cr_expect_str_eq(f.items[1].clause, "CDY-013");
  cr_expect_str_eq(f.items[1].evidence, "not json");
  cert_findings_free(&f);
}

static const char kPlusOne[] =
    "{\"functions\": {\"scale_plus_one\": {\"dtypes\": [\"float32\"], \"args\": ["
    "{\"name\": \"output\", \"kind\": \"tensor\", \"shape\": [\"n\"]},"
    "{\"name\": \"input\", \"kind\": \"tensor\", \"shape\": [\"n\"]},"
    "{\"name\": \"factor\", \"kind\": \"float\"}],"
    "\"returns\": \"none\", \"reference\": \"output = input * factor\","
    "\"errors\": {\"arity\": \"TypeError\", \"type\": \"TypeError\", \"dtype\": \"ValueError\","
    "\"device\": \"ValueError\", \"shape\": \"ValueError\", \"layout\": \"ValueError\", \"null_data\": \"ValueError\"},"
    "\"errors_name_argument\": true}}}";

Test(probe, CDY_021_results_that_differ_from_the_reference_are_a_fail, .timeout = 120) {
  expect_only("scale_plus_one", kPlusOne, "manifest.results", CERT_FAIL, "CDY-021");
}

Test(probe, CDY_020_a_refused_valid_call_is_a_fail, .timeout = 120) {
  expect_only("refuses",
              "{\"functions\": {\"refuses\": {\"dtypes\": [\"float64\"], \"args\": ["
              "{\"name\": \"x\", \"kind\": \"tensor\", \"shape\": [\"n\", 2]}, {\"name\": \"k\", \"kind\": \"int\"}]}}}",
              "manifest.valid-calls", CERT_FAIL, "CDY-020");
}
