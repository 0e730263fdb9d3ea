/*
 * certify: the compatibility verdict for a TVM-FFI kernel library.
 *
 *   certify LIB.so [--manifest FILE] [--runtime reference|upstream|PATH]
 *           [--releases all|X,Y,...] [--manylinux POLICY] [--json FILE]
 *           [--junit FILE] [--html FILE] [--jobs N] [--timeout S]
 *           [--replay LINE] [--quiet]
 *
 * Stages: the ELF facts (elf_facts.h), the static checks, the dynamic
 * probes under each runtime (probe.h), then the reports (report.h). Without
 * --runtime the probes run under both the reference and the pinned upstream
 * runtime, found in the binary's runfiles; with --releases under each
 * chosen upstream release (release_run.h) and the reference, and the
 * report ends with which releases it runs on. Exit status: report.h's bits.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "elf_facts.h"
#include "finding.h"
#include "manifest.h"
#include "probe.h"
#include "release_run.h"
#include "report.h"
#include "report_releases.h"
#include "text.h"
#include "version_needs.h"

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Progress on stderr, one rewritten line; only for a person at a terminal. */
typedef struct {
  const char* runtime;
  const char* unit; /* what done/total count: "functions", "runtimes" */
  int width;
} CertProgress;

static void show_progress(void* ctx, size_t done, size_t total, const char* what) {
  CertProgress* p = ctx;
  char* clean = cert_text_clean(what); /* a function name: the library chose it */
  int n = fprintf(stderr, "\rcertify: [%s] %zu/%zu %s, at %.60s", p->runtime, done, total, p->unit,
                  clean ? clean : "");
  free(clean);
  if (n < p->width) fprintf(stderr, "%*s", p->width - n, "");
  p->width = n;
  fflush(stderr);
}

static void progress_end(CertProgress* p) {
  if (p->width > 0) fprintf(stderr, "\r%*s\r", p->width, "");
  p->width = 0;
}

/* Two findings that say the same thing (the runtime aside). */
static int same_static(const CertFinding* a, const CertFinding* b) {
  return a->verdict == b->verdict && strcmp(a->function, b->function) == 0 &&
         strcmp(a->check, b->check) == 0 && strcmp(a->clause, b->clause) == 0 &&
         strcmp(a->reason, b->reason) == 0 && strcmp(a->evidence, b->evidence) == 0;
}

static int copy_finding(CertFindings* out, const CertFinding* x, const char* runtime) {
  return cert_findings_add(out, x->function, x->check, x->clause, runtime, x->verdict, x->evidence,
                           x->replay, "%s", x->reason);
}

/* The static checks depend on the runtime only where an import is or is
 * not defined by it: findings every runtime agrees on are kept once (no
 * runtime), the others are labelled with certify's name for their runtime. */
static int static_stage(const CertElf* elf, const CertRuntime* rts, size_t n_rts,
                        const CertLoadEnv* env, CertFindings* out) {
  CertFindings per[CERT_MAX_RUNTIMES];
  memset(per, 0, sizeof per);
  int rc = 0;
  for (size_t r = 0; r < n_rts && rc == 0; ++r)
    rc = cert_static_checks_in(elf, rts[r].path, env, &per[r]);
  for (size_t r = 0; r < n_rts && rc == 0; ++r) {
    for (size_t i = 0; i < per[r].n && rc == 0; ++i) {
      const CertFinding* x = &per[r].items[i];
      int everywhere = 1, seen_before = 0;
      for (size_t s = 0; s < n_rts; ++s) {
        int found = 0;
        for (size_t j = 0; j < per[s].n && !found; ++j) found = same_static(x, &per[s].items[j]);
        everywhere &= found;
        if (s < r) seen_before |= found;
      }
      if (everywhere && seen_before) continue;
      rc = copy_finding(out, x, everywhere ? "" : rts[r].label);
    }
  }
  for (size_t r = 0; r < n_rts; ++r) cert_findings_free(&per[r]);
  return rc;
}

static int dynamic_stage(const CertElf* elf, const CertArgs* a, const CertManifest* manifest,
                         const CertRuntime* rts, size_t n_rts, const CertLoadEnv* env,
                         CertFindings* out) {
  int show = !a->quiet && isatty(STDERR_FILENO);
  for (size_t r = 0; r < n_rts; ++r) {
    CertProgress progress = {rts[r].label, "functions", 0};
    CertProbeOptions opt = {elf->path, rts[r].path,       rts[r].label,
                            manifest,  a->jobs,           a->timeout_s,
                            0,         env->driver_stubs, show ? show_progress : NULL,
                            &progress};
    int rc =
        a->replay ? cert_probe_replay(a->replay, &opt, out) : cert_probe_library(elf, &opt, out);
    progress_end(&progress);
    if (rc != 0) return -1;
  }
  return 0;
}

/* The symbol-version floor against auditwheel's policy data, which
 * certify finds in its runfiles (or $CERTIFY_MANYLINUX_POLICY names). */
static int manylinux_stage(const char* argv0, const CertArgs* a, const CertElf* elf,
                           CertFindings* out) {
  char dir[PATH_MAX], path[PATH_MAX + 96], status[PATH_MAX + 64], why[300] = "";
  const char* policy = getenv("CERTIFY_MANYLINUX_POLICY");
  if ((policy == NULL || policy[0] == '\0') && cert_runfiles_dir(argv0, dir, sizeof dir) == 0) {
    snprintf(path, sizeof path, "%s/auditwheel/wheel/auditwheel/policy/manylinux-policy.json", dir);
    snprintf(status, sizeof status, "%s/auditwheel/status.txt", dir);
    FILE* f = fopen(status, "r");
    if (f && fgets(why, sizeof why, f)) why[strcspn(why, "\n")] = '\0';
    if (f) fclose(f);
    policy = access(path, R_OK) == 0 ? path : NULL;
  }
  return cert_check_manylinux(elf, policy, why[0] ? why : NULL, a->manylinux, out);
}

/* --releases: the reference, then every chosen release that could be had
 * and whose library no earlier one shares, as runtimes. */
static int release_runtimes(const char* argv0, const CertArgs* a, CertReleaseSet* set,
                            CertRuntime* rts, size_t* n_rts, char* err, size_t errlen) {
  if (cert_find_runtime(argv0, "reference", &rts[0], err, errlen) != 0) return -1;
  *n_rts = 1;
  char dir[PATH_MAX], script[PATH_MAX + 64] = "";
  if (cert_runfiles_dir(argv0, dir, sizeof dir) == 0) {
    snprintf(script, sizeof script, "%s/tvm_ffi_conformance/tools/releases/releases.py", dir);
  }
  const char* python = getenv("CERTIFY_PYTHON");
#ifdef CERT_PYTHON
  if (python == NULL || python[0] == '\0') python = CERT_PYTHON;
#endif
  CertFetch fetch = {python, script[0] ? script : NULL, a->quiet || !isatty(STDERR_FILENO)};
  if (cert_releases_resolve(a->releases, &fetch, set, err, errlen) != 0) return -1;
  for (size_t k = 0; k < set->n; ++k) {
    const CertRelease* r = &set->items[k];
    if (r->path[0] == '\0' || r->same_as >= 0) continue;
    if (*n_rts == CERT_MAX_RUNTIMES) {
      snprintf(err, errlen, "--releases: more than %d distinct runtimes", CERT_MAX_RUNTIMES - 1);
      return -1;
    }
    snprintf(rts[*n_rts].label, sizeof rts[*n_rts].label, "%s", r->version);
    snprintf(rts[*n_rts].path, sizeof rts[*n_rts].path, "%s", r->path);
    ++*n_rts;
  }
  return 0;
}

/* --releases: the probes under every runtime, several at a time, loaded
 * as dynamic_stage loads them (the same driver stubs). */
static int release_probes(const CertElf* elf, const CertArgs* a, const CertManifest* manifest,
                          const CertRuntime* rts, size_t n_rts, const CertLoadEnv* env,
                          CertFindings* out, char* why, size_t whylen) {
  CertRuntimeRef refs[CERT_MAX_RUNTIMES];
  for (size_t r = 0; r < n_rts; ++r) refs[r] = (CertRuntimeRef){rts[r].label, rts[r].path};
  int show = !a->quiet && isatty(STDERR_FILENO);
  CertProgress progress = {"releases", "runtimes", 0};
  CertProbeOptions opt = {elf->path,         NULL, NULL, manifest, 1, a->timeout_s, 0,
                          env->driver_stubs, NULL, NULL};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = a->jobs > 0 ? a->jobs : (cpus > 0 ? (int)cpus : 1);
  int rc = cert_probe_runtimes(elf, &opt, refs, n_rts, jobs, show ? show_progress : NULL, &progress,
                               out, why, whylen);
  progress_end(&progress);
  return rc;
}

/* The rows of the answer: the releases in order, then the reference. */
static int release_answer_of(const CertReleaseSet* set, const CertFindings* f,
                             CertReleaseAnswer* out) {
  CertReleaseInput* in = calloc(set->n + 1, sizeof *in);
  if (in == NULL) return -1;
  for (size_t k = 0; k < set->n; ++k) {
    const CertRelease* r = &set->items[k];
    in[k] = (CertReleaseInput){r->version, r->same_as, r->path[0] ? NULL : r->skip};
  }
  in[set->n] = (CertReleaseInput){"reference", -1, NULL};
  int rc = cert_release_answer(in, set->n + 1, f, out);
  free(in);
  return rc;
}

static void write_reports(const CertArgs* a, const CertRunInfo* run, const CertFindings* f,
                          int* status) {
  struct {
    const char* path;
    int (*write)(const char*, const CertRunInfo*, const CertFindings*);
    const char* what;
  } outs[] = {{a->json, cert_report_json, "JSON"},
              {a->junit, cert_report_junit, "JUnit"},
              {a->html, cert_report_html, "HTML"}};
  for (size_t k = 0; k < sizeof outs / sizeof outs[0]; ++k) {
    if (outs[k].path == NULL) continue;
    char buf[PATH_MAX];
    const char* path = cert_user_path(outs[k].path, buf, sizeof buf);
    if (outs[k].write(path, run, f) != 0) {
      fprintf(stderr, "certify: cannot write the %s report %s: %s\n", outs[k].what, path,
              strerror(errno));
      *status |= CERT_EXIT_TOOL_ERROR;
    }
  }
}

/* Everything after the command line: returns the exit status. */
static int run_certify(const char* argv0, const CertArgs* a) {
  double start = seconds_now();
  char err[PATH_MAX + 256] = "";
  char lib_buf[PATH_MAX], lib_abs[PATH_MAX];
  const char* lib = cert_user_path(a->lib, lib_buf, sizeof lib_buf);
  CertRuntime rts[CERT_MAX_RUNTIMES];
  size_t n_rts = 0;
  const char* labels[CERT_MAX_RUNTIMES];
  CertFindings findings = {0};
  CertElf elf;
  int have_elf = 0;
  CertManifest manifest_store;
  CertManifest* manifest = NULL;
  size_t n_functions = 0;
  int failed = cert_check_input(lib, err, sizeof err) != 0;
  if (!failed && realpath(lib, lib_abs) == NULL) {
    snprintf(err, sizeof err, "%s: %s", lib, strerror(errno));
    failed = 1;
  }
  /* A replay line names the runtime it failed under; --runtime overrides. */
  char replay_rt[PATH_MAX];
  const char* only = a->runtime;
  if (only == NULL && a->replay &&
      cert_probe_replay_runtime(a->replay, replay_rt, sizeof replay_rt) == 0) {
    only = replay_rt;
  }
  if (!failed) failed = cert_check_report_paths(a, err, sizeof err) != 0;
  const char* wanted[] = {"reference", "upstream"};
  size_t n_wanted = a->releases ? 0 : only ? 1 : 2;
  CertReleaseSet releases = {0};
  CertReleaseAnswer answer = {0};
  if (a->releases && !failed) {
    failed = release_runtimes(argv0, a, &releases, rts, &n_rts, err, sizeof err) != 0;
    for (size_t r = 0; r < n_rts; ++r) labels[r] = rts[r].label;
  }
  for (size_t r = 0; r < n_wanted && !failed; ++r) {
    failed = cert_find_runtime(argv0, only ? only : wanted[r], &rts[r], err, sizeof err);
    labels[r] = rts[r].label;
    n_rts += !failed;
  }
  if (!failed && a->manifest) {
    char buf[PATH_MAX];
    failed = cert_manifest_load(cert_user_path(a->manifest, buf, sizeof buf), &manifest_store, err,
                                sizeof err) != 0;
    if (!failed) manifest = &manifest_store;
  }
  if (!failed) failed = cert_check_truncated(lib_abs, lib, err, sizeof err) != 0;
  if (!failed) {
    char why[512] = "";
    failed = cert_elf_read(lib_abs, &elf, why, sizeof why) != 0;
    if (failed) snprintf(err, sizeof err, "%s: %s", lib, why);
    have_elf = !failed;
  }
  if (have_elf) {
    const char** names = malloc(CERT_MAX_FUNCTIONS * sizeof *names);
    n_functions = names ? cert_elf_callable(&elf, names, CERT_MAX_FUNCTIONS) : 0;
    free(names);
  }
  char stubs_buf[PATH_MAX];
  CertLoadEnv env = {getenv("LD_PRELOAD"), cert_driver_stubs(argv0, stubs_buf, sizeof stubs_buf)};
  if (!failed && !a->replay &&
      (static_stage(&elf, rts, n_rts, &env, &findings) != 0 ||
       manylinux_stage(argv0, a, &elf, &findings) != 0)) {
    snprintf(err, sizeof err, "the static checks could not finish (out of memory)");
    failed = 1;
  }
  char why[1024] = "";
  if (!failed &&
      (a->releases ? release_probes(&elf, a, manifest, rts, n_rts, &env, &findings, why, sizeof why)
                   : dynamic_stage(&elf, a, manifest, rts, n_rts, &env, &findings)) != 0) {
    snprintf(err, sizeof err, "%s%.2048s%s",
             a->replay ? "cannot replay: " : "the probes could not finish: ",
             a->releases ? why : cert_probe_error(), "");
    failed = 1;
  }
  CertRunInfo run = {a->lib, labels, n_rts, seconds_now() - start, n_functions, failed ? err : NULL,
                     NULL,   NULL};
  char prefix[PATH_MAX + 16];
  snprintf(prefix, sizeof prefix, "certify %s", a->lib);
  run.replay_prefix = prefix;
  if (a->releases && !failed) {
    if (release_answer_of(&releases, &findings, &answer) != 0) {
      snprintf(err, sizeof err, "out of memory writing the answer");
      failed = 1;
      run.error = err;
    } else {
      run.releases = &answer;
    }
  }
  if (failed) fprintf(stderr, "certify: %s\n", err);
  if (findings.n > 0) cert_report_table(stdout, &run, &findings);
  int status = cert_exit_status(&findings, failed);
  write_reports(a, &run, &findings, &status);
  if (!failed || findings.n > 0) cert_report_verdict(stdout, &run, &findings);
  if (run.releases) cert_report_releases_answer(stdout, run.releases);
  fflush(stdout);
  cert_release_answer_free(&answer);
  cert_releases_free(&releases);
  if (have_elf) cert_elf_free(&elf);
  if (manifest) cert_manifest_free(manifest);
  cert_findings_free(&findings);
  return status;
}

int main(int argc, char** argv) {
  CertArgs args;
  char err[512];
  int parsed = cert_parse_args(argc, argv, &args, err, sizeof err);
  if (parsed > 0) {
    cert_usage(stdout);
    return 0;
  }
  if (parsed < 0) {
    fprintf(stderr, "certify: %s\n", err);
    cert_usage(stderr);
    return CERT_EXIT_USAGE;
  }
  return run_certify(argv[0], &args);
}
