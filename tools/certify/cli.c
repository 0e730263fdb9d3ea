/* certify's command line: the options, the runtimes it names (found in
 * the binary's runfiles, as `bazel run` lays them out, or given as paths),
 * and the checks made before any work starts (the library is an ELF file,
 * the report files can be written). */
#include "cli.h"

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
#include <unistd.h>

#include "elf_facts.h"
#include "lib_search.h"
#include "release_run.h"

void cert_usage(FILE* out) {
  fputs(
      "usage: certify LIB.so [--manifest FILE] [--runtime reference|upstream|PATH]\n"
      "               [--releases all|X,Y,...] [--manylinux POLICY] [--json FILE] [--junit FILE]\n"
      "               [--html FILE] [--jobs N] [--timeout S] [--replay LINE] [--quiet]\n"
      "exit status (bits): 1 certify could not finish, 2 usage error,\n"
      "                    4 a MUST failure, 8 a NONSTRICT finding,\n"
      "                    16 nothing could be called; 0 certified\n",
      out);
}

#define CERT_RUNTIME_WORDS "reference, upstream, or the path of a libtvm_ffi.so"

/* What certify itself calls in every runtime it probes under. */
static int check_runtime_file(const char* which, const char* path, char* err, size_t errlen) {
  static const char* const kNeeded[] = {"TVMFFIErrorMoveFromRaised", "TVMFFIObjectDecRef", NULL};
  CertElf elf;
  char why[512];
  if (cert_elf_read(path, &elf, why, sizeof why) != 0) {
    snprintf(err, errlen, "runtime %.256s is not a TVM-FFI runtime: %.512s (--runtime takes %s)",
             which, why, CERT_RUNTIME_WORDS);
    return -1;
  }
  int rc = 0;
  for (const char* const* n = kNeeded; *n != NULL && rc == 0; ++n) {
    if (cert_elf_find(&elf, *n, 0) != NULL) continue;
    snprintf(
        err, errlen,
        "runtime %.256s is not a TVM-FFI runtime: %.1024s does not export %s (--runtime takes %s)",
        which, path, *n, CERT_RUNTIME_WORDS);
    rc = -1;
  }
  cert_elf_free(&elf);
  return rc;
}

/* `bazel run` starts tools in their runfiles tree: paths on the command line
 * mean the directory the user ran bazel from. */
const char* cert_user_path(const char* path, char* buf, size_t cap) {
  const char* wd = getenv("BUILD_WORKING_DIRECTORY");
  if (path == NULL || path[0] == '/' || wd == NULL || wd[0] == '\0') return path;
  int n = snprintf(buf, cap, "%s/%s", wd, path);
  return n > 0 && (size_t)n < cap ? buf : path;
}

static int is_dir(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The runfiles tree: $RUNFILES_DIR, $TEST_SRCDIR, or <binary>.runfiles. */
int cert_runfiles_dir(const char* argv0, char* buf, size_t cap) {
  const char* env[] = {getenv("RUNFILES_DIR"), getenv("TEST_SRCDIR")};
  for (size_t k = 0; k < 2; ++k) {
    if (env[k] && is_dir(env[k]) && snprintf(buf, cap, "%s", env[k]) < (int)cap) return 0;
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
    if (w > 0 && (size_t)w < cap && is_dir(buf)) return 0;
  }
  return -1;
}

/* "reference" and "upstream" name the runtimes certify ships with (its data
 * deps); anything else is a path to a libtvm_ffi.so. */
int cert_find_runtime(const char* argv0, const char* which, CertRuntime* rt, char* err,
                      size_t errlen) {
  char want[PATH_MAX];
  char cwd_buf[PATH_MAX];
  const char* rel = NULL;
  if (strcmp(which, "reference") == 0) rel = "tvm_ffi_conformance/reference/libtvm_ffi.so";
  if (strcmp(which, "upstream") == 0) rel = "tvm_ffi_upstream/lib/libtvm_ffi.so";
  if (rel != NULL) {
    char dir[PATH_MAX];
    if (cert_runfiles_dir(argv0, dir, sizeof dir) != 0) {
      snprintf(err, errlen,
               "cannot find the %s runtime: no runfiles tree next to %s "
               "(run it with `bazel run //tools:certify` or pass --runtime PATH)",
               which, argv0);
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
      snprintf(
          err, errlen,
          "runtime %.64s: that release is not in the release cache (run certify --releases %.64s "
          "once to fetch it)",
          which, which);
      return -1;
    }
  } else {
    snprintf(want, sizeof want, "%s", cert_user_path(which, cwd_buf, sizeof cwd_buf));
  }
  if (realpath(want, rt->path) == NULL) {
    snprintf(err, errlen, "runtime %.256s: %.1024s: %s (--runtime takes %s)", which, want,
             strerror(errno), CERT_RUNTIME_WORDS);
    return -1;
  }
  snprintf(rt->label, sizeof rt->label, "%s",
           rel || cert_is_release_version(which) ? which : rt->path);
  return check_runtime_file(which, rt->path, err, errlen);
}

/* The CUDA toolkit's driver stubs, as the @cuda repository put them in
 * the runfiles; NULL where the toolkit has none. */
const char* cert_driver_stubs(const char* argv0, char* buf, size_t cap) {
  char dir[PATH_MAX], stub[PATH_MAX + 32];
  if (cert_runfiles_dir(argv0, dir, sizeof dir) != 0) return NULL;
  snprintf(stub, sizeof stub, "%s/cuda/stubs/libcuda.so", dir);
  if (access(stub, R_OK) != 0) return NULL;
  snprintf(buf, cap, "%.*s/cuda/stubs", (int)(cap > 12 ? cap - 12 : 0), dir);
  return buf;
}

/* A report file that cannot be written is found before the run, not after. */
int cert_check_report_paths(const CertArgs* a, char* err, size_t errlen) {
  const char* paths[] = {a->json, a->junit, a->html};
  const char* what[] = {"JSON", "JUnit", "HTML"};
  for (size_t k = 0; k < 3; ++k) {
    if (paths[k] == NULL) continue;
    char buf[PATH_MAX], dir[PATH_MAX];
    const char* path = cert_user_path(paths[k], buf, sizeof buf);
    struct stat st;
    int exists = stat(path, &st) == 0;
    cert_dirname(path, dir, sizeof dir);
    const char* why = NULL;
    if (exists && S_ISDIR(st.st_mode))
      why = "is a directory";
    else if (exists && access(path, W_OK) != 0)
      why = strerror(errno);
    else if (!exists && access(dir, W_OK | X_OK) != 0)
      why = strerror(errno);
    if (why == NULL) continue;
    snprintf(err, errlen, "cannot write the %s report %.2048s: %s", what[k], path, why);
    return -1;
  }
  return 0;
}

int cert_parse_args(int argc, char** argv, CertArgs* a, char* err, size_t errlen) {
  static const struct option opts[] = {{"manifest", required_argument, 0, 'm'},
                                       {"runtime", required_argument, 0, 'r'},
                                       {"json", required_argument, 0, 'J'},
                                       {"junit", required_argument, 0, 'U'},
                                       {"html", required_argument, 0, 'H'},
                                       {"jobs", required_argument, 0, 'j'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"replay", required_argument, 0, 'R'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"help", no_argument, 0, 'h'},
                                       {"releases", required_argument, 0, 'L'},
                                       {"manylinux", required_argument, 0, 'Y'},
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
    snprintf(err, errlen,
             "--releases chooses the runtimes itself: it takes no --runtime or --replay");
    return -1;
  }
  return a->releases ? cert_release_spec_check(a->releases, err, errlen) : 0;
}

/* A regular file we can open: anything else is a one-line tool error. */
int cert_check_input(const char* path, char* err, size_t errlen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: %s", path,
             S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
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
int cert_check_truncated(const char* path, const char* shown, char* err, size_t errlen) {
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
      snprintf(err, errlen,
               "%s: truncated ELF file: its header tables end at byte %llu, the file has %llu",
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
