/* The probe engine: every way a kernel can go wrong becomes the right
 * verdict, and none of them takes certify down (the test process is the
 * parent: if it survives to the assertions, the parent survived). */
#include <criterion/criterion.h>
#include <dirent.h>
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

static void expect_finding_within(const char* line, double timeout_s, const char* check,
                                  CertVerdict v, const char* clause, const char* reason_part) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  o.timeout_s = timeout_s;
  CertFindings f = {0};
  const CertFinding* x = replay(line, &o, &f);
  cr_expect_str_eq(x->check, check, "%s", line);
  cr_expect_eq(x->verdict, v, "%s: verdict %s (%s)", line, cert_verdict_name(x->verdict),
               x->reason);
  cr_expect_str_eq(x->clause, clause, "%s", line);
  cr_expect_not_null(strstr(x->reason, reason_part), "%s: reason '%s' lacks '%s'", line, x->reason,
                     reason_part);
  cr_expect_str_eq(x->runtime, "reference");
  size_t call_len = (size_t)(strchr(line, ')') - line) + 1;
  cr_expect_eq(strncmp(x->replay, line, call_len), 0, "the replay '%s' is the call '%s'", x->replay,
               line);
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
  if (SANITIZED)
    cr_skip_test("sanitizers reserve terabytes of address space: no memory cap under them");
  expect_finding_within("bomb()", 30, "replay", CERT_FAIL, "CDY-002",
                        "Exhausted the memory cap (256 MiB)");
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
  expect_finding("twice(none)", "probe.error-hygiene", CERT_FAIL, "CDY-009",
                 "left an error raised");
}

Test(probe, CDY_002_a_good_call_passes_under_both_runtimes) {
  paths();
  const char* rts[2] = {g_ref, g_up};
  for (int k = 0; k < 2; ++k) {
    CertProbeOptions o = options(rts[k], k ? "upstream" : "reference");
    CertFindings f = {0};
    const CertFinding* x = replay(
        "good(dl:float32[4]{offset=8}@cpu:0, tensor:float16[2x2]@cpu:0, str:a_heap_string, "
        "bytes:b, object:function, object:error, dl:null, ptr:guard) threads=2",
        &o, &f);
    cr_expect_eq(x->verdict, CERT_PASS, "%s: %s %s", o.runtime_label, x->reason, x->evidence);
    cert_findings_free(&f);
  }
}

/* Probes one victim the way certify does (both phases, every check). */
static void probe_victim(const char* name, const CertProbeOptions* o, CertFindings* f) {
  const char* names[] = {name};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, o, f), 0, "probing %s", name);
}

/* The finding of `function` for `check`, or NULL. */
static const CertFinding* find(const CertFindings* f, const char* function, const char* check) {
  for (size_t k = 0; k < f->n; ++k) {
    if (strcmp(f->items[k].function, function) == 0 && strcmp(f->items[k].check, check) == 0)
      return &f->items[k];
  }
  return NULL;
}

Test(probe, CDY_001_a_library_that_does_not_load_is_a_finding) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  o.lib_path = "/nonexistent/libmissing.so";
  CertFindings f = {0};
  const char* names[] = {"scale"};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, &o, &f), 0);
  cr_assert_eq(f.n, 2);
  const CertFinding* load = find(&f, "", "probe.load");
  cr_assert_not_null(load);
  cr_expect_eq(load->verdict, CERT_FAIL);
  cr_expect_not_null(strstr(load->evidence, "libmissing.so"), "%s", load->evidence);
  const CertFinding* nothing = find(&f, "", "probe.valid-call");
  cr_assert_not_null(nothing);
  cr_expect_eq(nothing->verdict, CERT_SKIP);
  cr_expect_not_null(strstr(nothing->reason, "Nothing could be called: the library did not load"),
                     "%s", nothing->reason);
  cert_findings_free(&f);
}

/* A runtime that is not one is certify's problem, not the library's. */
Test(probe, CDY_001_a_runtime_that_does_not_load_is_a_tool_error) {
  paths();
  CertProbeOptions o = options("/etc/passwd", "bogus");
  CertFindings f = {0};
  const char* names[] = {"good"};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, &o, &f), -1);
  cr_expect_eq(f.n, 0, "no finding blames the library");
  cr_expect_not_null(strstr(cert_probe_error(), "the runtime did not load: /etc/passwd"), "%s",
                     cert_probe_error());
  cert_findings_free(&f);
}

/* The library loads as hosts load it (lazily: it calls a function nothing
 * defines), and says what loading registered. */
Test(probe, CDY_001_loads_lazily_as_hosts_do) {
  paths();
  CertProbeOptions o = options(g_up, "upstream");
  CertFindings f = {0};
  probe_victim("good", &o, &f);
  const CertFinding* load = find(&f, "", "probe.load");
  cr_assert_not_null(load);
  cr_expect_eq(load->verdict, CERT_PASS, "%s %s", load->reason, load->evidence);
  cr_expect_not_null(strstr(load->reason, "RTLD_LAZY | RTLD_LOCAL"), "%s", load->reason);
  cr_expect_not_null(strstr(load->reason, "registered 0 global functions and 0 types"), "%s",
                     load->reason);
  cr_expect_null(find(&f, "", "probe.valid-call"), "good was reached");
  cert_findings_free(&f);
}

/* A call that reaches a function nothing defines: the loader ends the
 * process ("symbol lookup error"); the finding names the symbol. */
Test(probe, CDY_001_an_unresolved_symbol_at_a_call_is_named) {
  expect_finding("calls_missing()", "replay", CERT_FAIL, "CDY-001", "cert_defined_nowhere");
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
  int good = 0, aborts_failed = 0, aborts_skipped = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    fprintf(stderr, "%s %s %s: %s\n", x->function, x->check, cert_verdict_name(x->verdict),
            x->reason);
    if (x->function[0] == '\0') {
      cr_expect_str_eq(x->check, "probe.load");
    } else if (strcmp(x->function, "good") == 0) {
      good++;
      cr_expect_eq(x->verdict, CERT_PASS, "good: %s: %s", x->check, x->reason);
    } else {
      cr_expect_str_eq(x->function, "aborts");
      aborts_failed += x->verdict == CERT_FAIL;
      /* It dies whatever it is given: the variations' deaths are not
       * findings of their own (no NONSTRICT for legacy forms, say). */
      if (x->verdict == CERT_SKIP) {
        aborts_skipped++;
        cr_expect_not_null(strstr(x->reason, "dies on its base call too"), "%s", x->reason);
      }
      cr_expect(x->verdict != CERT_NONSTRICT && x->verdict != CERT_WARN, "aborts: %s %s", x->check,
                x->reason);
    }
  }
  cr_expect_eq(good, 6, "every probe check reported for good");
  cr_expect_eq(aborts_failed, 1, "aborts fails where it dies: its base call (probe.arity)");
  cr_expect_eq(find(&f, "aborts", "probe.arity")->verdict, CERT_FAIL);
  cr_expect_geq(aborts_skipped, 4, "its other checks are not judged on its deaths");
  cert_findings_free(&f);
}

/* Probes every check on `name` (with an optional manifest) and expects
 * exactly one check not to pass, with the given verdict and clause. */
static void expect_only(const char* name, const char* manifest_json, const char* check,
                        CertVerdict v, const char* clause) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  CertManifest m = {0};
  char err[256];
  if (manifest_json) {
    cr_assert_eq(cert_manifest_parse(manifest_json, strlen(manifest_json), &m, err, sizeof err), 0,
                 "%s", err);
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
      cr_expect_eq(x->verdict, v, "%s %s: %s (%s)", name, check, cert_verdict_name(x->verdict),
                   x->reason);
      cr_expect_str_eq(x->clause, clause);
    } else {
      cr_expect(x->verdict == CERT_PASS || x->verdict == CERT_SKIP, "%s: unexpected %s %s: %s",
                name, cert_verdict_name(x->verdict), x->check, x->reason);
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
  expect_finding("racy(none) threads=2", "probe.threads", CERT_FAIL, "CDY-012",
                 "different outcomes");
}

Test(probe, CDY_013_metadata_and_doc_functions_are_decoded) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  CertFindings f = {0};
  const char* meta[] = {"__tvm_ffi__metadata_good", "__tvm_ffi__doc_good",
                        "__tvm_ffi__metadata_notjson"};
  cr_assert_eq(cert_probe_functions(NULL, 0, meta, 3, &o, &f), 0);
  cr_assert_eq(f.n, 3);
  cr_expect_str_eq(f.items[0].check, "probe.load");
  cr_expect_str_eq(f.items[1].function, "good");
  cr_expect_eq(f.items[1].verdict, CERT_PASS, "%s", f.items[1].reason);
  cr_expect_not_null(strstr(f.items[1].evidence, "type_schema"), "%s", f.items[1].evidence);
  cr_expect_str_eq(f.items[2].function, "notjson");
  cr_expect_eq(f.items[2].verdict, CERT_WARN, "%s", f.items[2].reason);
  cr_expect_str_eq(f.items[2].clause, "CDY-013");
  cr_expect_str_eq(f.items[2].evidence, "not json");
  cert_findings_free(&f);
}

static const char kPlusOne[] =
    "{\"functions\": {\"scale_plus_one\": {\"dtypes\": [\"float32\"], \"args\": ["
    "{\"name\": \"output\", \"kind\": \"tensor\", \"shape\": [\"n\"]},"
    "{\"name\": \"input\", \"kind\": \"tensor\", \"shape\": [\"n\"]},"
    "{\"name\": \"factor\", \"kind\": \"float\"}],"
    "\"returns\": \"none\", \"reference\": \"output = input * factor\","
    "\"errors\": {\"arity\": \"TypeError\", \"type\": \"TypeError\", \"dtype\": \"ValueError\","
    "\"device\": \"ValueError\", \"shape\": \"ValueError\", \"layout\": \"ValueError\", "
    "\"null_data\": \"ValueError\"},"
    "\"errors_name_argument\": true}}}";

Test(probe, CDY_021_results_that_differ_from_the_reference_are_a_fail, .timeout = 120) {
  expect_only("scale_plus_one", kPlusOne, "manifest.results", CERT_FAIL, "CDY-021");
}

Test(probe, CDY_020_a_refused_valid_call_is_a_fail, .timeout = 120) {
  expect_only("refuses",
              "{\"functions\": {\"refuses\": {\"dtypes\": [\"float64\"], \"args\": ["
              "{\"name\": \"x\", \"kind\": \"tensor\", \"shape\": [\"n\", 2]}, {\"name\": \"k\", "
              "\"kind\": \"int\"}]}}}",
              "manifest.valid-calls", CERT_FAIL, "CDY-020");
}

/* ---- hangs, memory, processes and descriptors ---------------------------- */

/* A function that never returns costs one time limit per runtime, not one
 * per probe: its other calls are not run. */
Test(probe, CDY_002_a_hung_function_is_judged_once, .timeout = 120) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  o.timeout_s = 1;
  CertFindings f = {0};
  probe_victim("hangs", &o, &f);
  int fails = 0, not_run = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    if (strcmp(x->function, "hangs") != 0) continue;
    if (x->verdict == CERT_FAIL) {
      fails++;
      cr_expect_not_null(strstr(x->reason, "did not return within the time limit (1 s)."), "%s",
                         x->reason);
      cr_expect_null(strstr(x->reason, "such calls"), "one call hung, not several: %s", x->reason);
    } else {
      cr_expect_eq(x->verdict, CERT_SKIP, "%s: %s", x->check, x->reason);
      not_run += strstr(x->reason, "hung or exhausted the memory cap on another call") != NULL;
    }
  }
  cr_expect_eq(fails, 1, "one finding for the hang");
  cr_expect_geq(not_run, 1, "the other probes say why they did not run");
  cert_findings_free(&f);
}

/* A memory bomb fills the cap once, not once per probe. */
Test(probe, CDY_002_a_memory_bomb_is_judged_once, .timeout = 120) {
  if (SANITIZED)
    cr_skip_test("sanitizers reserve terabytes of address space: no memory cap under them");
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  o.timeout_s = 30;
  CertFindings f = {0};
  probe_victim("bomb", &o, &f);
  int fails = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    if (strcmp(x->function, "bomb") != 0 || x->verdict != CERT_FAIL) continue;
    fails++;
    cr_expect_not_null(strstr(x->reason, "Exhausted the memory cap (256 MiB)"), "%s", x->reason);
    cr_expect_null(strstr(x->reason, "such calls"), "one call filled the cap: %s", x->reason);
  }
  cr_expect_eq(fails, 1, "one finding for the bomb");
  cert_findings_free(&f);
}

/* An allocation that fails cleanly under the cap is a PASS, every time:
 * the cap is reached long before the time limit. */
Test(probe, CDY_002_an_allocation_that_fails_cleanly_passes_every_time, .timeout = 120) {
  for (int run = 0; run < 3; ++run) {
    expect_finding_within("grows(int:1)", 30, "replay", CERT_PASS, "", "returned cleanly");
  }
}

/* Whether a process named `name` exists on the machine. */
static int process_named(const char* name) {
  DIR* d = opendir("/proc");
  cr_assert_not_null(d);
  int found = 0;
  struct dirent* e;
  while (!found && (e = readdir(d)) != NULL) {
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%.255s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
    found = strcmp(comm, name) == 0;
  }
  closedir(d);
  return found;
}

static void expect_no_strays(const char* line, const char* name) {
  expect_finding(line, "probe.processes", CERT_NONSTRICT, "CDY-014", "after it returned");
  cr_expect(!process_named(name), "a '%s' process outlived the probe", name);
}

Test(probe, CDY_014_a_child_left_running_is_found_and_ended, .timeout = 60) {
  expect_no_strays("forks()", "cert-stray");
}

/* setsid() leaves the probe's process group: the subreaper still finds it. */
Test(probe, CDY_014_a_daemon_that_left_the_process_group_is_found_and_ended, .timeout = 60) {
  expect_no_strays("daemonizes()", "cert-daemon");
}

/* Closing certify's pipe is not an exit(0): it is what it would do to a host. */
Test(probe, CDY_015_a_call_that_closes_descriptors_is_named_for_it) {
  expect_finding("closes_fds()", "probe.descriptors", CERT_FAIL, "CDY-015",
                 "file descriptors it did not open");
}

/* A NULL DLTensor* is no more valid than NULL data: upstream never makes
 * one, so dereferencing it is CDY-007's warning, not a MUST failure. */
Test(probe, CDY_007_a_null_dltensor_crash_is_a_warning, .timeout = 120) {
  expect_only("dl_deref", NULL, "probe.invalid-tensors", CERT_WARN, "CDY-007");
}

/* The replay line of a finding is judged as the run judged it. */
Test(probe, CDY_006_a_replay_gives_the_verdict_of_the_run, .timeout = 120) {
  paths();
  CertProbeOptions o = options(g_ref, "reference");
  CertFindings f = {0};
  probe_victim("strides_deref", &o, &f);
  const CertFinding* legacy = find(&f, "strides_deref", "probe.legacy-forms");
  cr_assert_not_null(legacy);
  cr_assert_eq(legacy->verdict, CERT_NONSTRICT);
  cr_expect_not_null(strstr(legacy->replay, " probe=legacy-forms"), "%s", legacy->replay);
  CertFindings again = {0};
  const CertFinding* x = replay(legacy->replay, &o, &again);
  cr_expect_eq(x->verdict, CERT_NONSTRICT, "%s", x->reason);
  cr_expect_str_eq(x->clause, "CDY-006");
  cr_expect_str_eq(x->check, "probe.legacy-forms");
  cert_findings_free(&again);
  cert_findings_free(&f);
}
