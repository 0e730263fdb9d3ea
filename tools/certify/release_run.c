#include "release_run.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reference/vec.h"
#include "release_table.h"

/* ---- the cache ---------------------------------------------------------- */

static int cache_dir(char* buf, size_t size) {
  const char* explicit = getenv("TVMFFI_CONFORMANCE_CACHE");
  if (explicit && explicit[0]) return snprintf(buf, size, "%s", explicit) < (int)size ? 0 : -1;
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0]) return snprintf(buf, size, "%s/tvm-ffi-conformance", xdg) < (int)size ? 0 : -1;
  const char* home = getenv("HOME");
  if (home == NULL || home[0] == '\0') return -1;
  return snprintf(buf, size, "%s/.cache/tvm-ffi-conformance", home) < (int)size ? 0 : -1;
}

int cert_release_cached(const char* version, char* buf, size_t size) {
  char dir[PATH_MAX];
  if (cache_dir(dir, sizeof dir) != 0) return -1;
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "%s/releases/%s/tvm_ffi/lib/libtvm_ffi.so", dir, version);
  return size >= PATH_MAX && realpath(want, buf) != NULL ? 0 : -1;
}

int cert_is_release_version(const char* s) {
  /* digits '.' digits '.' digits, then optionally ".post" digits */
  int parts = 0;
  const char* p = s;
  while (parts < 3) {
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) ++p;
    ++parts;
    if (parts < 3 && *p++ != '.') return 0;
  }
  if (strncmp(p, ".post", 5) == 0) {
    p += 5;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) ++p;
  }
  return *p == '\0' && p - s < 32;
}

/* ---- choosing ------------------------------------------------------------ */

static long rank(const char* v) {
  unsigned a = 0, b = 0, c = 0, post = 0;
  int n = sscanf(v, "%u.%u.%u.post%u", &a, &b, &c, &post);
  /* 0.1.8 < 0.1.8.post0 < 0.1.8.post1 */
  return ((long)a << 36) | ((long)b << 24) | ((long)c << 12) | (n == 4 ? (long)post + 1 : 0);
}

static int by_rank(const void* x, const void* y) {
  long a = rank(((const CertRelease*)x)->version), b = rank(((const CertRelease*)y)->version);
  return (a > b) - (a < b);
}

static int add_version(CertReleaseSet* set, const char* v, size_t len) {
  char word[32];
  snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), v);
  for (size_t k = 0; k < set->n; ++k) {
    if (strcmp(set->items[k].version, word) == 0) return 0;
  }
  if (TFFI_VEC_RESERVE(set, set->n + 1) != 0) return -1;
  CertRelease* r = &set->items[set->n++];
  memset(r, 0, sizeof *r);
  snprintf(r->version, sizeof r->version, "%s", word);
  r->same_as = -1;
  return 0;
}

/* Calls `each` on every word of a comma-separated spec; stops at -1. */
static int each_word(const char* spec, int (*each)(void* ctx, const char* word, size_t len),
                     void* ctx) {
  for (const char* p = spec; *p;) {
    size_t len = strcspn(p, ",");
    if (len > 0 && each(ctx, p, len) != 0) return -1;
    p += len + (p[len] == ',');
  }
  return 0;
}

typedef struct {
  char* err;
  size_t errlen;
  int words;
} SpecCheck;

static int check_word(void* ctx, const char* word, size_t len) {
  SpecCheck* c = ctx;
  char w[33];
  snprintf(w, sizeof w, "%.*s", (int)(len < 32 ? len : 32), word);
  c->words++;
  if (len < 32 && cert_is_release_version(w)) return 0;
  snprintf(c->err, c->errlen,
           "--releases wants 'all' or versions like 0.1.4,0.1.8.post0, not '%s%s'", w,
           len < 32 ? "" : "...");
  return -1;
}

int cert_release_spec_check(const char* spec, char* err, size_t errlen) {
  if (strcmp(spec, "all") == 0) return 0;
  SpecCheck c = {err, errlen, 0};
  if (each_word(spec, check_word, &c) != 0) return -1;
  if (c.words > 0) return 0;
  snprintf(err, errlen, "--releases wants 'all' or versions like 0.1.4,0.1.8.post0");
  return -1;
}

static int add_word(void* set, const char* word, size_t len) { return add_version(set, word, len); }

static int choose(const char* spec, CertReleaseSet* set, char* err, size_t errlen) {
  if (cert_release_spec_check(spec, err, errlen) != 0) return -1;
  int rc = 0;
  if (strcmp(spec, "all") == 0) {
    for (size_t k = 0; k < cert_release_count() && rc == 0; ++k) {
      rc = add_version(set, cert_release_name(k), strlen(cert_release_name(k)));
    }
  } else {
    rc = each_word(spec, add_word, set);
  }
  if (rc != 0) snprintf(err, errlen, "out of memory");
  return rc;
}

/* ---- fetching ------------------------------------------------------------ */

/* Runs `python script fetch V...` for the releases without a path and
 * reads its VERSION<tab>FOLDER|error lines. */
static void fetch_missing(CertReleaseSet* set, const CertFetch* fetch) {
  size_t missing = 0;
  for (size_t k = 0; k < set->n; ++k) missing += set->items[k].path[0] == '\0';
  if (missing == 0) return;
  const char* why = NULL;
  if (getenv("TVMFFI_CONFORMANCE_OFFLINE") && getenv("TVMFFI_CONFORMANCE_OFFLINE")[0]) {
    why = "offline (TVMFFI_CONFORMANCE_OFFLINE is set)";
  } else if (fetch == NULL || fetch->python == NULL || fetch->python[0] == '\0' ||
             fetch->script == NULL || access(fetch->python, X_OK) != 0 ||
             access(fetch->script, R_OK) != 0) {
    why =
        "no fetcher: certify runs tools/releases/releases.py with the project's Python (set "
        "CERTIFY_PYTHON to a python3 with pip)";
  }
  char** argv = why ? NULL : calloc(missing + 4, sizeof *argv);
  int pipe_fd[2] = {-1, -1};
  pid_t pid = -1;
  if (argv && pipe(pipe_fd) == 0) {
    size_t a = 0;
    argv[a++] = (char*)fetch->python;
    argv[a++] = (char*)fetch->script;
    argv[a++] = "fetch";
    for (size_t k = 0; k < set->n; ++k) {
      if (set->items[k].path[0] == '\0') argv[a++] = set->items[k].version;
    }
    if (!fetch->quiet)
      fprintf(stderr, "certify: fetching %zu release%s into the release cache\n", missing,
              missing == 1 ? "" : "s");
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
      dup2(pipe_fd[1], STDOUT_FILENO);
      int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, STDERR_FILENO);
      close(pipe_fd[0]);
      close(pipe_fd[1]);
      execv(fetch->python, argv);
      _exit(127);
    }
    close(pipe_fd[1]);
  }
  if (pid > 0) {
    FILE* in = fdopen(pipe_fd[0], "r");
    char line[1024];
    while (in && fgets(line, sizeof line, in)) {
      line[strcspn(line, "\n")] = '\0';
      char* tab = strchr(line, '\t');
      if (tab == NULL) continue;
      *tab = '\0';
      for (size_t k = 0; k < set->n; ++k) {
        CertRelease* r = &set->items[k];
        if (strcmp(r->version, line) != 0 || r->path[0]) continue;
        if (strncmp(tab + 1, "error: ", 7) == 0) {
          snprintf(r->skip, sizeof r->skip, "could not be fetched: %.360s", tab + 8);
        } else if (cert_release_cached(r->version, r->path, sizeof r->path) != 0) {
          r->path[0] = '\0';
          snprintf(r->skip, sizeof r->skip, "fetched, but %s holds no lib/libtvm_ffi.so", tab + 1);
        }
      }
    }
    if (in) fclose(in);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
  } else if (pipe_fd[0] >= 0) {
    close(pipe_fd[0]);
    close(pipe_fd[1]);
    why = why ? why : "could not start the fetcher";
  }
  free(argv);
  for (size_t k = 0; k < set->n; ++k) {
    CertRelease* r = &set->items[k];
    if (r->path[0] == '\0' && r->skip[0] == '\0') {
      snprintf(r->skip, sizeof r->skip, "not in the release cache, and %s",
               why ? why : "the fetcher said nothing");
    }
  }
}

/* ---- byte-identical libraries -------------------------------------------- */

static unsigned char* slurp(const char* path, size_t* size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > (1 << 30)) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  unsigned char* buf = malloc((size_t)st.st_size);
  size_t got = 0;
  while (buf && got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (buf == NULL || got != (size_t)st.st_size) {
    free(buf);
    return NULL;
  }
  *size = got;
  return buf;
}

static void mark_identical(CertReleaseSet* set) {
  unsigned char** data = calloc(set->n ? set->n : 1, sizeof *data);
  size_t* sizes = calloc(set->n ? set->n : 1, sizeof *sizes);
  for (size_t k = 0; data && sizes && k < set->n; ++k) {
    CertRelease* r = &set->items[k];
    if (r->path[0] == '\0' || (data[k] = slurp(r->path, &sizes[k])) == NULL) continue;
    for (size_t j = 0; j < k; ++j) {
      if (data[j] && set->items[j].same_as < 0 && sizes[j] == sizes[k] &&
          memcmp(data[j], data[k], sizes[k]) == 0) {
        r->same_as = (int)j;
        break;
      }
    }
  }
  for (size_t k = 0; data && k < set->n; ++k) free(data[k]);
  free(data);
  free(sizes);
}

int cert_releases_resolve(const char* spec, const CertFetch* fetch, CertReleaseSet* out, char* err,
                          size_t errlen) {
  memset(out, 0, sizeof *out);
  if (choose(spec, out, err, errlen) != 0) {
    cert_releases_free(out);
    return -1;
  }
  qsort(out->items, out->n, sizeof out->items[0], by_rank);
  for (size_t k = 0; k < out->n; ++k) {
    CertRelease* r = &out->items[k];
    if (cert_release_cached(r->version, r->path, sizeof r->path) != 0) r->path[0] = '\0';
  }
  fetch_missing(out, fetch);
  mark_identical(out);
  return 0;
}

void cert_releases_free(CertReleaseSet* set) {
  free(set->items);
  memset(set, 0, sizeof *set);
}

/* ---- running under many runtimes ------------------------------------------- */

/* Findings cross from a runtime's process to certify as records of a
 * verdict and seven length-prefixed strings, then 'E'; a run that could
 * not finish sends 'X' and why instead. */
static void put_string(FILE* f, const char* s) {
  size_t n = strlen(s);
  fprintf(f, "%zu:", n);
  fwrite(s, 1, n, f);
}

static void put_findings(FILE* f, const CertFindings* fs) {
  for (size_t k = 0; k < fs->n; ++k) {
    const CertFinding* x = &fs->items[k];
    fprintf(f, "F%d:", (int)x->verdict);
    const char* parts[] = {x->function, x->check,    x->clause, x->runtime,
                           x->reason,   x->evidence, x->replay};
    for (size_t p = 0; p < 7; ++p) put_string(f, parts[p]);
  }
  fputs("E", f);
}

static char* get_string(FILE* f) {
  size_t n = 0;
  if (fscanf(f, "%zu:", &n) != 1 || n > ((size_t)1 << 26)) return NULL;
  char* s = malloc(n + 1);
  if (s && fread(s, 1, n, f) != n) {
    free(s);
    return NULL;
  }
  if (s) s[n] = '\0';
  return s;
}

/* Reads what put_findings wrote; 0, or -1 when it is cut short (the
 * process died before finishing), memory ran out or the run could not
 * finish (why: its reason, when it sent one). */
static int get_findings(FILE* f, CertFindings* out, char* why, size_t whylen) {
  int c;
  while ((c = fgetc(f)) == 'F') {
    int verdict = 0;
    if (fscanf(f, "%d:", &verdict) != 1 || verdict < CERT_PASS || verdict > CERT_FAIL) return -1;
    char* s[7] = {0};
    int ok = 1;
    for (size_t p = 0; p < 7 && ok; ++p) ok = (s[p] = get_string(f)) != NULL;
    if (ok)
      ok = cert_findings_add(out, s[0], s[1], s[2], s[3], (CertVerdict)verdict, s[5], s[6], "%s",
                             s[4]) == 0;
    for (size_t p = 0; p < 7; ++p) free(s[p]);
    if (!ok) return -1;
  }
  if (c == 'X') {
    char* reason = get_string(f);
    if (reason) snprintf(why, whylen, "%s", reason);
    free(reason);
  }
  return c == 'E' ? 0 : -1;
}

typedef struct {
  pid_t pid;
  FILE* out;
  size_t runtime;
} Child;

static int start_child(const CertElf* elf, const CertProbeOptions* base, const CertRuntimeRef* rt,
                       Child* c) {
  c->out = tmpfile();
  if (c->out == NULL) return -1;
  fflush(NULL);
  c->pid = fork();
  if (c->pid < 0) {
    fclose(c->out);
    return -1;
  }
  if (c->pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* certify gone: so is this run */
    CertProbeOptions opt = *base;
    opt.runtime_path = rt->path;
    opt.runtime_label = rt->label;
    opt.jobs = 1;
    opt.progress = NULL;
    CertFindings f = {0};
    int rc = cert_probe_library(elf, &opt, &f);
    if (rc == 0) {
      put_findings(c->out, &f);
    } else {
      fputc('X', c->out);
      put_string(c->out, cert_probe_error());
    }
    fflush(c->out);
    _exit(rc == 0 ? 0 : 3);
  }
  return 0;
}

int cert_probe_runtimes(const CertElf* elf, const CertProbeOptions* base, const CertRuntimeRef* rts,
                        size_t n, int jobs,
                        void (*progress)(void* ctx, size_t done, size_t total, const char* what),
                        void* progress_ctx, CertFindings* out, char* err, size_t errlen) {
  snprintf(err, errlen, "the probes could not finish");
  if (jobs < 1) jobs = 1;
  CertFindings* per = calloc(n ? n : 1, sizeof *per);
  Child* live = calloc((size_t)jobs, sizeof *live);
  int rc = per && live ? 0 : -1;
  size_t next = 0, done = 0;
  int running = 0;
  while (rc == 0 && done < n) {
    while (running < jobs && next < n) {
      Child* slot = NULL;
      for (int k = 0; k < jobs && slot == NULL; ++k) slot = live[k].pid == 0 ? &live[k] : NULL;
      slot->runtime = next;
      if (start_child(elf, base, &rts[next], slot) != 0) {
        rc = -1;
        break;
      }
      ++next, ++running;
    }
    int status = 0;
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR) continue;
      rc = -1;
      break;
    }
    for (int k = 0; k < jobs; ++k) {
      Child* c = &live[k];
      if (c->pid != pid) continue;
      rewind(c->out);
      char why[1024] = "";
      if (get_findings(c->out, &per[c->runtime], why, sizeof why) != 0 || !WIFEXITED(status) ||
          WEXITSTATUS(status) != 0) {
        if (why[0] == '\0') {
          snprintf(why, sizeof why, "its process ended with %s %d",
                   WIFSIGNALED(status) ? "signal" : "status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
        if (rc == 0) snprintf(err, errlen, "under %s: %s", rts[c->runtime].label, why);
        rc = -1;
      }
      fclose(c->out);
      c->pid = 0;
      --running, ++done;
      if (progress) progress(progress_ctx, done, n, rts[c->runtime].label);
    }
  }
  for (int k = 0; live && k < jobs; ++k) {
    if (live[k].pid > 0) {
      kill(live[k].pid, SIGKILL);
      waitpid(live[k].pid, NULL, 0);
      fclose(live[k].out);
    }
  }
  for (size_t r = 0; per && r < n; ++r) {
    for (size_t k = 0; rc == 0 && k < per[r].n; ++k) {
      const CertFinding* x = &per[r].items[k];
      rc = cert_findings_add(out, x->function, x->check, x->clause, x->runtime, x->verdict,
                             x->evidence, x->replay, "%s", x->reason);
    }
    cert_findings_free(&per[r]);
  }
  free(per);
  free(live);
  return rc;
}
