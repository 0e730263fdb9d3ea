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

#include "elf_facts.h"
#include "finding.h"
#include "manifest.h"
#include "probe.h"
#include "release_run.h"
#include "report.h"
#include "report_releases.h"
#include "text.h"
#include "version_needs.h"

#define CERT_MAX_RUNTIMES 64
#define CERT_MAX_FUNCTIONS 4096

typedef struct {
  const char* lib;      /* as typed */
  const char* manifest; /* as typed, or NULL */
  const char* runtime;  /* reference, upstream, a path, or NULL for both */
  const char* json;
  const char* junit;
  const char* html;
  const char* replay;
  const char* releases; /* --releases: "all" or versions, or NULL */
  const char* manylinux; /* --manylinux: the policy hosts are promised, or NULL */
  int jobs;
  double timeout_s;
  int quiet;
} CertArgs;

typedef struct {
  char label[PATH_MAX];
  char path[PATH_MAX];
} CertRuntime;

static void cert_usage(FILE* out) {
  fputs("usage: certify LIB.so [--manifest FILE] [--runtime reference|upstream|PATH]\n"
        "               [--releases all|X,Y,...] [--manylinux POLICY] [--json FILE] [--junit FILE]\n"
        "               [--html FILE] [--jobs N] [--timeout S] [--replay LINE] [--quiet]\n"
        "exit status (bits): 1 certify could not finish, 2 usage error,\n"
        "                    4 a MUST failure, 8 a NONSTRICT finding,\n"
        "                    16 nothing could be called; 0 certified\n",
        out);
}

#define CERT_RUNTIME_WORDS "reference, upstream, or the path of a libtvm_ffi.so"

/* What certify itself calls in every runtime it probes under. */
static int cert_check_runtime_file(const char* which, const char* path, char* err, size_t errlen) {
  static const char* const kNeeded[] = {"TVMFFIErrorMoveFromRaised", "TVMFFIObjectDecRef", NULL};
  CertElf elf;
  char why[512];
  if (cert_elf_read(path, &elf, why, sizeof why) != 0) {
    snprintf(err, errlen, "runtime %.256s is not a TVM-FFI runtime: %.512s (--runtime takes %s)", which, why,
             CERT_RUNTIME_WORDS);
    return -1;
  }
  int rc = 0;
  for (const char* const* n = kNeeded; *n != NULL && rc == 0; ++n) {
    if (cert_elf_find(&elf, *n, 0) != NULL) continue;
    snprintf(err, errlen, "runtime %.256s is not a TVM-FFI runtime: %.1024s does not export %s (--runtime takes %s)",
             which, path, *n, CERT_RUNTIME_WORDS);
    rc = -1;
  }
  cert_elf_free(&elf);
  return rc;
}

/* `bazel run` starts tools in their runfiles tree: paths on the command line
 * mean the directory the user ran bazel from. */
static const char* cert_user_path(const char* path, char* buf, size_t cap) {
  const char* wd = getenv("BUILD_WORKING_DIRECTORY");
  if (path == NULL || path[0] == '/' || wd == NULL || wd[0] == '\0') return path;
  int n = snprintf(buf, cap, "%s/%s", wd, path);
  return n > 0 && (size_t)n < cap ? buf : path;
}

static int cert_is_dir(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The runfiles tree: $RUNFILES_DIR, $TEST_SRCDIR, or <binary>.runfiles. */
static int cert_runfiles_dir(const char* argv0, char* buf, size_t cap) {
  const char* env[] = {getenv("RUNFILES_DIR"), getenv("TEST_SRCDIR")};
  for (size_t k = 0; k < 2; ++k) {
    if (env[k] && cert_is_dir(env[k]) && snprintf(buf, cap, "%s", env[k]) < (int)cap) return 0;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  const char* bases[] = {NULL, argv0};
  if (n > 0) {
    exe[n] = '\0';
    bases[0] = exe;
  }
  for (size_t k = 0; k < 2; ++k) {
    if (bases[k] == NULL) continue;
    int w = snprintf(buf, cap, "%s.runfiles", bases[k]);
    if (w > 0 && (size_t)w < cap && cert_is_dir(buf)) return 0;
  }
  return -1;
}

/* "reference" and "upstream" name the runtimes certify ships with (its data
 * deps); anything else is a path to a libtvm_ffi.so. */
static int cert_find_runtime(const char* argv0, const char* which, CertRuntime* rt, char* err,
                             size_t errlen) {
  char want[PATH_MAX];
  char cwd_buf[PATH_MAX];
  const char* rel = NULL;
  if (strcmp(which, "reference") == 0) rel = "tvm_ffi_conformance/reference/libtvm_ffi.so";
  if (strcmp(which, "upstream") == 0) rel = "tvm_ffi_upstream/lib/libtvm_ffi.so";
  if (rel != NULL) {
    char dir[PATH_MAX];
    if (cert_runfiles_dir(argv0, dir, sizeof dir) != 0) {
      snprintf(err, errlen, "cannot find the %s runtime: no runfiles tree next to %s "
               "(run it with `bazel run //tools:certify` or pass --runtime PATH)", which, argv0);
      return -1;
    }
    int n = snprintf(want, sizeof want, "%s/%s", dir, rel);
    if (n < 0 || (size_t)n >= sizeof want) {
      snprintf(err, errlen, "cannot find the %s runtime: runfiles path too long", which);
      return -1;
    }
  } else if (cert_is_release_version(which) && access(which, F_OK) != 0) {
    /* A release by its version (a replay line of a --releases run). */
    if (cert_release_cached(which, want, sizeof want) != 0) {
      snprintf(err, errlen, "runtime %.64s: that release is not in the release cache (run certify --releases %.64s "
               "once to fetch it)", which, which);
      return -1;
    }
  } else {
    snprintf(want, sizeof want, "%s", cert_user_path(which, cwd_buf, sizeof cwd_buf));
  }
  if (realpath(want, rt->path) == NULL) {
    snprintf(err, errlen, "runtime %.256s: %.1024s: %s (--runtime takes %s)", which, want, strerror(errno),
             CERT_RUNTIME_WORDS);
    return -1;
  }
  snprintf(rt->label, sizeof rt->label, "%s", rel || cert_is_release_version(which) ? which : rt->path);
  return cert_check_runtime_file(which, rt->path, err, errlen);
}

/* The CUDA toolkit's driver stubs, as the @cuda repository put them in
 * the runfiles; NULL where the toolkit has none. */
static const char* cert_driver_stubs(const char* argv0, char* buf, size_t cap) {
  char dir[PATH_MAX], stub[PATH_MAX + 32];
  if (cert_runfiles_dir(argv0, dir, sizeof dir) != 0) return NULL;
  snprintf(stub, sizeof stub, "%s/cuda/stubs/libcuda.so", dir);
  if (access(stub, R_OK) != 0) return NULL;
  snprintf(buf, cap, "%.*s/cuda/stubs", (int)(cap > 12 ? cap - 12 : 0), dir);
  return buf;
}

/* A report file that cannot be written is found before the run, not after. */
static int cert_check_report_paths(const CertArgs* a, char* err, size_t errlen) {
  const char* paths[] = {a->json, a->junit, a->html};
  const char* what[] = {"JSON", "JUnit", "HTML"};
  for (size_t k = 0; k < 3; ++k) {
    if (paths[k] == NULL) continue;
    char buf[PATH_MAX], dir[PATH_MAX];
    const char* path = cert_user_path(paths[k], buf, sizeof buf);
    struct stat st;
    int exists = stat(path, &st) == 0;
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    const char* why = NULL;
    if (exists && S_ISDIR(st.st_mode)) why = "is a directory";
    else if (exists && access(path, W_OK) != 0) why = strerror(errno);
    else if (!exists && access(dir, W_OK | X_OK) != 0) why = strerror(errno);
    if (why == NULL) continue;
    snprintf(err, errlen, "cannot write the %s report %.2048s: %s", what[k], path, why);
    return -1;
  }
  return 0;
}

static int cert_parse_args(int argc, char** argv, CertArgs* a, char* err, size_t errlen) {
  static const struct option opts[] = {
      {"manifest", required_argument, 0, 'm'}, {"runtime", required_argument, 0, 'r'},
      {"json", required_argument, 0, 'J'},     {"junit", required_argument, 0, 'U'},
      {"html", required_argument, 0, 'H'},     {"jobs", required_argument, 0, 'j'},
      {"timeout", required_argument, 0, 't'},  {"replay", required_argument, 0, 'R'},
      {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
      {"releases", required_argument, 0, 'L'}, {"manylinux", required_argument, 0, 'Y'},
      {0, 0, 0, 0}};
  memset(a, 0, sizeof *a);
  opterr = 0;
  int c;
  char* end;
  while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
    switch (c) {
      case 'm': a->manifest = optarg; break;
      case 'r': a->runtime = optarg; break;
      case 'J': a->json = optarg; break;
      case 'U': a->junit = optarg; break;
      case 'H': a->html = optarg; break;
      case 'R': a->replay = optarg; break;
      case 'L': a->releases = optarg; break;
      case 'Y': a->manylinux = optarg; break;
      case 'q': a->quiet = 1; break;
      case 'h': return 1;
      case 'j':
        a->jobs = (int)strtol(optarg, &end, 10);
        if (*end || a->jobs < 1 || a->jobs > 256) {
          snprintf(err, errlen, "--jobs wants a number from 1 to 256, not '%s'", optarg);
          return -1;
        }
        break;
      case 't':
        a->timeout_s = strtod(optarg, &end);
        if (*end || !(a->timeout_s > 0 && a->timeout_s <= 3600)) {
          snprintf(err, errlen, "--timeout wants seconds in (0, 3600], not '%s'", optarg);
          return -1;
        }
        break;
      default:
        snprintf(err, errlen, "unknown or incomplete option '%s'", argv[optind - 1]);
        return -1;
    }
  }
  if (optind != argc - 1) {
    snprintf(err, errlen, optind == argc ? "no library given" : "more than one library given");
    return -1;
  }
  a->lib = argv[optind];
  if (a->releases && (a->runtime || a->replay)) {
    snprintf(err, errlen, "--releases chooses the runtimes itself: it takes no --runtime or --replay");
    return -1;
  }
  return a->releases ? cert_release_spec_check(a->releases, err, errlen) : 0;
}

/* A regular file we can open: anything else is a one-line tool error. */
static int cert_check_input(const char* path, char* err, size_t errlen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    return -1;
  }
  if (access(path, R_OK) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* libelf opens a file whose header promises tables past its end (a
 * truncated download or copy) and then shows it as empty; certify says what
 * it is instead of certifying an empty library. Returns 0 when the ELF
 * header's tables lie inside the file (or it is no ELF at all: the reader
 * says so), else -1 with the reason. */
static int cert_check_truncated(const char* path, const char* shown, char* err, size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int rc = 0;
  elf_version(EV_CURRENT);
  Elf* elf = fstat(fd, &st) == 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
  GElf_Ehdr eh;
  if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) != NULL) {
    unsigned long long size = (unsigned long long)st.st_size;
    unsigned long long sh_end = eh.e_shoff + (unsigned long long)eh.e_shnum * eh.e_shentsize;
    unsigned long long ph_end = eh.e_phoff + (unsigned long long)eh.e_phnum * eh.e_phentsize;
    unsigned long long end = sh_end > ph_end ? sh_end : ph_end;
    if (end > size) {
      snprintf(err, errlen, "%s: truncated ELF file: its header tables end at byte %llu, the file has %llu",
               shown, end, size);
      rc = -1;
    } else if (eh.e_type != ET_DYN) {
      snprintf(err, errlen, "%s: not a shared library (ELF type %u)", shown, (unsigned)eh.e_type);
      rc = -1;
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return rc;
}

static double cert_now(void) {
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

static void cert_progress(void* ctx, size_t done, size_t total, const char* what) {
  CertProgress* p = ctx;
  char* clean = cert_text_clean(what); /* a function name: the library chose it */
  int n = fprintf(stderr, "\rcertify: [%s] %zu/%zu %s, at %.60s", p->runtime, done, total, p->unit,
                  clean ? clean : "");
  free(clean);
  if (n < p->width) fprintf(stderr, "%*s", p->width - n, "");
  p->width = n;
  fflush(stderr);
}

static void cert_progress_end(CertProgress* p) {
  if (p->width > 0) fprintf(stderr, "\r%*s\r", p->width, "");
  p->width = 0;
}

/* Two findings that say the same thing (the runtime aside). */
static int cert_same_static(const CertFinding* a, const CertFinding* b) {
  return a->verdict == b->verdict && strcmp(a->function, b->function) == 0 &&
         strcmp(a->check, b->check) == 0 && strcmp(a->clause, b->clause) == 0 &&
         strcmp(a->reason, b->reason) == 0 && strcmp(a->evidence, b->evidence) == 0;
}

static int cert_copy_finding(CertFindings* out, const CertFinding* x, const char* runtime) {
  return cert_findings_add(out, x->function, x->check, x->clause, runtime, x->verdict, x->evidence,
                           x->replay, "%s", x->reason);
}

/* The static checks depend on the runtime only where an import is or is
 * not defined by it: findings every runtime agrees on are kept once (no
 * runtime), the others are labelled with certify's name for their runtime. */
static int cert_static_stage(const CertElf* elf, const CertRuntime* rts, size_t n_rts,
                             const CertLoadEnv* env, CertFindings* out) {
  CertFindings per[CERT_MAX_RUNTIMES];
  memset(per, 0, sizeof per);
  int rc = 0;
  for (size_t r = 0; r < n_rts && rc == 0; ++r) rc = cert_static_checks_in(elf, rts[r].path, env, &per[r]);
  for (size_t r = 0; r < n_rts && rc == 0; ++r) {
    for (size_t i = 0; i < per[r].n && rc == 0; ++i) {
      const CertFinding* x = &per[r].items[i];
      int everywhere = 1, seen_before = 0;
      for (size_t s = 0; s < n_rts; ++s) {
        int found = 0;
        for (size_t j = 0; j < per[s].n && !found; ++j) found = cert_same_static(x, &per[s].items[j]);
        everywhere &= found;
        if (s < r) seen_before |= found;
      }
      if (everywhere && seen_before) continue;
      rc = cert_copy_finding(out, x, everywhere ? "" : rts[r].label);
    }
  }
  for (size_t r = 0; r < n_rts; ++r) cert_findings_free(&per[r]);
  return rc;
}

static int cert_dynamic_stage(const CertElf* elf, const CertArgs* a, const CertManifest* manifest,
                              const CertRuntime* rts, size_t n_rts, const CertLoadEnv* env,
                              CertFindings* out) {
  int show = !a->quiet && isatty(STDERR_FILENO);
  for (size_t r = 0; r < n_rts; ++r) {
    CertProgress progress = {rts[r].label, "functions", 0};
    CertProbeOptions opt = {elf->path, rts[r].path, rts[r].label, manifest, a->jobs, a->timeout_s,
                            0, env->driver_stubs, show ? cert_progress : NULL, &progress};
    int rc = a->replay ? cert_probe_replay(a->replay, &opt, out) : cert_probe_library(elf, &opt, out);
    cert_progress_end(&progress);
    if (rc != 0) return -1;
  }
  return 0;
}

/* The symbol-version floor against auditwheel's policy data, which
 * certify finds in its runfiles (or $CERTIFY_MANYLINUX_POLICY names). */
static int cert_manylinux_stage(const char* argv0, const CertArgs* a, const CertElf* elf, CertFindings* out) {
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
static int cert_release_runtimes(const char* argv0, const CertArgs* a, CertReleaseSet* set, CertRuntime* rts,
                                 size_t* n_rts, char* err, size_t errlen) {
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
 * as cert_dynamic_stage loads them (the same driver stubs). */
static int cert_release_probes(const CertElf* elf, const CertArgs* a, const CertManifest* manifest,
                               const CertRuntime* rts, size_t n_rts, const CertLoadEnv* env,
                               CertFindings* out, char* why, size_t whylen) {
  CertRuntimeRef refs[CERT_MAX_RUNTIMES];
  for (size_t r = 0; r < n_rts; ++r) refs[r] = (CertRuntimeRef){rts[r].label, rts[r].path};
  int show = !a->quiet && isatty(STDERR_FILENO);
  CertProgress progress = {"releases", "runtimes", 0};
  CertProbeOptions opt = {elf->path, NULL, NULL, manifest, 1, a->timeout_s, 0, env->driver_stubs, NULL, NULL};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = a->jobs > 0 ? a->jobs : (cpus > 0 ? (int)cpus : 1);
  int rc = cert_probe_runtimes(elf, &opt, refs, n_rts, jobs, show ? cert_progress : NULL, &progress, out, why,
                               whylen);
  cert_progress_end(&progress);
  return rc;
}

/* The rows of the answer: the releases in order, then the reference. */
static int cert_release_answer_of(const CertReleaseSet* set, const CertFindings* f, CertReleaseAnswer* out) {
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

static void cert_write_reports(const CertArgs* a, const CertRunInfo* run, const CertFindings* f,
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
static int cert_run(const char* argv0, const CertArgs* a) {
  double start = cert_now();
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
    failed = cert_release_runtimes(argv0, a, &releases, rts, &n_rts, err, sizeof err) != 0;
    for (size_t r = 0; r < n_rts; ++r) labels[r] = rts[r].label;
  }
  for (size_t r = 0; r < n_wanted && !failed; ++r) {
    failed = cert_find_runtime(argv0, only ? only : wanted[r], &rts[r], err, sizeof err);
    labels[r] = rts[r].label;
    n_rts += !failed;
  }
  if (!failed && a->manifest) {
    char buf[PATH_MAX];
    failed = cert_manifest_load(cert_user_path(a->manifest, buf, sizeof buf), &manifest_store,
                                err, sizeof err) != 0;
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
      (cert_static_stage(&elf, rts, n_rts, &env, &findings) != 0 ||
       cert_manylinux_stage(argv0, a, &elf, &findings) != 0)) {
    snprintf(err, sizeof err, "the static checks could not finish (out of memory)");
    failed = 1;
  }
  char why[1024] = "";
  if (!failed && (a->releases ? cert_release_probes(&elf, a, manifest, rts, n_rts, &env, &findings, why, sizeof why)
                              : cert_dynamic_stage(&elf, a, manifest, rts, n_rts, &env, &findings)) != 0) {
    snprintf(err, sizeof err, "%s%.2048s%s", a->replay ? "cannot replay: " : "the probes could not finish: ",
             a->releases ? why : cert_probe_error(), "");
    failed = 1;
  }
  CertRunInfo run = {a->lib, labels, n_rts, cert_now() - start, n_functions,
                     failed ? err : NULL, NULL, NULL};
  char prefix[PATH_MAX + 16];
  snprintf(prefix, sizeof prefix, "certify %s", a->lib);
  run.replay_prefix = prefix;
  if (a->releases && !failed) {
    if (cert_release_answer_of(&releases, &findings, &answer) != 0) {
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
  cert_write_reports(a, &run, &findings, &status);
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
  return cert_run(argv[0], &args);
}
