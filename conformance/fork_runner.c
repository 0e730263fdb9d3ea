/*
 * Each test in a child forked from the runner, instead of Criterion's fresh
 * worker process: linked in only under --define=criterion_workers=fork,
 * which the valgrind config sets.
 *
 * Why: Criterion starts every test in a worker that executes the binary
 * again. Under valgrind every exec starts the instrumentation over, about a
 * second of CPU before the first line of the test, and the suite has about
 * a thousand tests. A forked child keeps valgrind's state, so valgrind
 * starts once per binary. The test bodies, Criterion's assertion macros and
 * the JUnit writer (main.c) are the ones every other build uses; only the
 * worker model differs. A child begins in the state the runner has after
 * the constructors (the library under test loaded) and Criterion's set-up,
 * which is where a fresh worker begins its test too.
 *
 * The functions below that carry libcriterion's names replace its worker
 * side in this binary (an executable's definitions come first in symbol
 * lookup): a child reports its failed assertions, skip or death over a pipe
 * the runner reads after the child ends.
 */
#define _GNU_SOURCE /* vasprintf */
#include <criterion/abort.h>
#include <criterion/event.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "criterion_run.h"

/* ---- the child's side: what the assertion macros call ---- */

/* A record on the pipe: kind, line, then file and message, each with its
 * terminating NUL. */
enum { REC_ASSERT = 'A', REC_SKIP = 'S', REC_DIED = 'D', REC_END = 'E' };

static int report_fd = -1;
static struct criterion_test* current_test;
static struct criterion_suite* current_suite;
static jmp_buf abort_test;

static void write_all(const void* p, size_t n) {
  const char* s = p;
  while (n > 0) {
    ssize_t w = write(report_fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(120); /* the runner is gone: nothing to report to */
    s += w;
    n -= (size_t)w;
  }
}

static void send_record(char kind, unsigned line, const char* file, const char* message) {
  uint32_t head[2] = {(uint32_t)kind, line};
  write_all(head, sizeof head);
  write_all(file ? file : "", strlen(file ? file : "") + 1);
  write_all(message ? message : "", strlen(message ? message : "") + 1);
}

static char* format_message(const char* format, va_list ap) {
  char* text = NULL;
  if (format == NULL || *format == '\0' || vasprintf(&text, format, ap) < 0) return NULL;
  return text;
}

static void run_fixture(void (*fixture)(void)) {
  if (fixture) fixture();
}

void criterion_internal_test_setup(void) {
  if (current_suite->data) run_fixture(current_suite->data->init);
  run_fixture(current_test->data->init);
}

void criterion_internal_test_main(void (*fn)(void)) {
  if (setjmp(abort_test) == 0) fn();
}

void criterion_internal_test_teardown(void) {
  run_fixture(current_test->data->fini);
  if (current_suite->data) run_fixture(current_suite->data->fini);
}

void criterion_send_assert(struct criterion_assert_stats* stats) {
  if (!stats->passed) send_record(REC_ASSERT, stats->line, stats->file, stats->message);
}

void cri_asserts_passed_incr(void) {}

void criterion_continue_test(void) {}

void criterion_abort_test(void) { longjmp(abort_test, 1); }

void criterion_skip_test(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  char* message = format_message(format, ap);
  va_end(ap);
  send_record(REC_SKIP, 0, "", message);
  free(message);
  exit(0);
}

void criterion_test_die(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  char* message = format_message(format, ap);
  va_end(ap);
  send_record(REC_DIED, current_test->data->line_, current_test->data->file_, message);
  free(message);
  exit(1);
}

void cr_log(enum criterion_severity severity, const char* format, ...) {
  static const char* const tag[] = {"[----] ", "[WARN] ", "[ERR ] "};
  va_list ap;
  va_start(ap, format);
  fputs(tag[severity >= CR_LOG_ERROR ? 2 : severity >= CR_LOG_WARNING ? 1 : 0], stderr);
  vfprintf(stderr, format, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static double test_timeout(const struct criterion_test* test) {
  return test->data->timeout > 0 ? test->data->timeout : criterion_options.timeout;
}

static _Noreturn void run_child(struct criterion_test* test, struct criterion_suite* suite,
                                int fd) {
  /* criterion_initialize() turned valgrind's error reports off for the
   * runner; its workers turn them back on, and so does this child. */
  VALGRIND_ENABLE_ERROR_REPORTING;
  report_fd = fd;
  current_test = test;
  current_suite = suite;
  double timeout = test_timeout(test);
  if (timeout > 0) alarm((unsigned)ceil(timeout));
  if (setjmp(abort_test) == 0) test->test(); /* an assert failing in a fixture lands here */
  send_record(REC_END, 0, "", "");
  exit(0);
}

/* ---- the runner's side ---- */

/* The runner is a test tool: out of memory, it stops with a failure
 * rather than leave tests unreported. */
static void* must_calloc(size_t size) {
  void* p = calloc(1, size);
  if (p == NULL) {
    fputs("[ERR ] fork_runner: out of memory\n", stderr);
    exit(2);
  }
  return p;
}

struct buffer {
  char* data;
  size_t size, cap;
};

/* Everything the child wrote, until it closes the pipe (or dies). */
static int read_all(int fd, struct buffer* b) {
  for (;;) {
    if (b->cap - b->size < 4096) {
      size_t cap = b->cap ? b->cap * 2 : 8192;
      char* grown = realloc(b->data, cap);
      if (grown == NULL) return -1;
      b->data = grown;
      b->cap = cap;
    }
    ssize_t n = read(fd, b->data + b->size, b->cap - b->size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    b->size += (size_t)n;
  }
}

static void add_failure(struct criterion_test_stats* st, unsigned line, const char* file,
                        const char* message) {
  struct criterion_assert_stats* a = must_calloc(sizeof *a);
  a->passed = false;
  a->line = line;
  a->file = strdup(file);
  a->message = strdup(message);
  a->next = st->asserts; /* newest first, as Criterion keeps them */
  st->asserts = a;
  st->failed_asserts++;
}

/* Reads the records; returns whether the child reached the end of its test.
 * A record cut short (the child died while writing it) is dropped. */
static int read_records(const struct buffer* b, struct criterion_test_stats* st) {
  int ended = 0;
  size_t at = 0;
  while (b->size - at >= 2 * sizeof(uint32_t)) {
    uint32_t head[2];
    memcpy(head, b->data + at, sizeof head);
    const char* file = b->data + at + sizeof head;
    const char* end = b->data + b->size;
    const char* file_end = memchr(file, '\0', (size_t)(end - file));
    if (file_end == NULL) break;
    const char* message = file_end + 1;
    const char* message_end = message < end ? memchr(message, '\0', (size_t)(end - message)) : NULL;
    if (message_end == NULL) break;
    at = (size_t)(message_end + 1 - b->data);
    if (head[0] == REC_ASSERT || head[0] == REC_DIED) {
      add_failure(st, head[1], file, message);
    } else if (head[0] == REC_SKIP) {
      st->test_status = CR_STATUS_SKIPPED;
      free((void*)st->message);
      st->message = strdup(message);
    } else if (head[0] == REC_END) {
      ended = 1;
    }
  }
  return ended;
}

static double seconds_since(const struct timespec* start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The child's end, recorded as Criterion records it (the signal and exit
 * status as they were; main.c's writer weighs them against what the test
 * declares); SIGALRM from the child's own timer is a timeout. */
static void judge_exit(int status, int ended, struct criterion_test_stats* st) {
  const struct criterion_test_extra_data* data = st->test->data;
  if (WIFSIGNALED(status)) {
    st->signal = WTERMSIG(status);
    if (st->signal == data->signal) return;
    if (st->signal == SIGALRM && test_timeout(st->test) > 0)
      st->timed_out = true;
    else
      st->crashed = true;
    return;
  }
  if (data->signal != 0)
    add_failure(st, data->line_, data->file_, "the test was expected to raise a signal");
  st->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (st->exit_code == 0 && !ended && st->test_status != CR_STATUS_SKIPPED)
    add_failure(st, data->line_, data->file_, "the test process exited before its test ended");
}

static void run_test(struct criterion_test* test, struct criterion_suite* suite,
                     struct criterion_test_stats* st) {
  st->test = test;
  st->test_status = CR_STATUS_PASSED;
  int fds[2];
  if (pipe(fds) != 0) {
    add_failure(st, 0, "fork_runner", "pipe() failed");
    return;
  }
  fflush(NULL); /* nothing buffered in the runner is written twice */
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  pid_t runner = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    /* A runner killed from outside (a timeout in tools/mutants) takes its
     * test with it, as Criterion's workers go with theirs: a mutant's
     * endless loop must not outlive the run. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != runner) _exit(121);
    close(fds[0]);
    run_child(test, suite, fds[1]);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    add_failure(st, 0, "fork_runner", "fork() failed");
    return;
  }
  struct buffer b = {0};
  int read_rc = read_all(fds[0], &b);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  st->elapsed_time = (float)seconds_since(&start);
  if (read_rc != 0) add_failure(st, 0, "fork_runner", "reading the test's report failed");
  int ended = read_records(&b, st);
  free(b.data);
  judge_exit(status, ended, st);
  if (st->failed_asserts > 0 || st->crashed || st->timed_out ||
      st->exit_code != test->data->exit_code)
    st->test_status = CR_STATUS_FAILED;
}

static int selected(const struct criterion_test* test) {
  const char* pattern = criterion_options.pattern;
  if (pattern == NULL || *pattern == '\0') return 1;
  char name[512];
  snprintf(name, sizeof name, "%s/%s", test->category, test->name);
  return fnmatch(pattern, name, 0) == 0;
}

static void count(struct criterion_suite_stats* ss, const struct criterion_test_stats* st) {
  ss->nb_tests++;
  if (st->test_status == CR_STATUS_SKIPPED)
    ss->tests_skipped++;
  else if (st->crashed || st->timed_out)
    ss->tests_crashed++;
  else if (st->test_status == CR_STATUS_FAILED)
    ss->tests_failed++;
  else
    ss->tests_passed++;
}

/* Criterion's own console lines, which people and tools/mutants read. */
static void print_asserts(const struct criterion_assert_stats* a) {
  if (a == NULL) return;
  print_asserts(a->next); /* kept newest first: print oldest first */
  fprintf(stderr, "[----] %s:%u: Assertion Failed\n[----]   \n[----]   %s\n[----]   \n", a->file,
          a->line, a->message);
}

static void print_verdict(const struct criterion_test_stats* st) {
  const char* suite = st->test->category;
  const char* name = st->test->name;
  if (st->test_status == CR_STATUS_SKIPPED) {
    fprintf(stderr, "[SKIP] %s::%s: %s\n", suite, name, st->message ? st->message : "");
    return;
  }
  print_asserts(st->asserts);
  if (st->timed_out)
    fprintf(stderr, "[FAIL] %s::%s: Timed out. (%.2fs)\n", suite, name, st->elapsed_time);
  else if (st->crashed)
    fprintf(stderr, "[FAIL] %s::%s: CRASH! (signal %d)\n", suite, name, st->signal);
  else
    fprintf(stderr, "[%s] %s::%s: (%.2fs)\n", st->test_status == CR_STATUS_FAILED ? "FAIL" : "PASS",
            suite, name, st->elapsed_time);
}

static int stop_now; /* --fail-fast and a test failed */

static struct criterion_suite_stats* run_suite(struct criterion_suite_set* set) {
  struct criterion_suite_stats* ss = must_calloc(sizeof *ss);
  ss->suite = &set->suite;
  struct criterion_test_stats** tail = &ss->tests;
  struct criterion_test* test;
  /* FOREACH_SET is three nested loops: a break there only moves on to the
   * next element, so stopping is a flag tested at the top. */
  FOREACH_SET(test, set->tests) {
    if (stop_now) break;
    struct criterion_test_stats* st = must_calloc(sizeof *st);
    st->test = test;
    if (test->data->disabled || !selected(test)) {
      st->test_status = CR_STATUS_SKIPPED;
      st->message = strdup(test->data->disabled ? "The test was disabled" : "not selected");
    } else {
      run_test(test, &set->suite, st);
    }
    print_verdict(st);
    count(ss, st);
    *tail = st;
    tail = &st->next;
    if (st->test_status == CR_STATUS_FAILED && criterion_options.fail_fast) stop_now = 1;
  }
  return ss;
}

static void free_stats(struct criterion_global_stats* g) {
  while (g->suites) {
    struct criterion_suite_stats* ss = g->suites;
    g->suites = ss->next;
    while (ss->tests) {
      struct criterion_test_stats* st = ss->tests;
      ss->tests = st->next;
      while (st->asserts) {
        struct criterion_assert_stats* a = st->asserts;
        st->asserts = a->next;
        free((void*)a->file);
        free((void*)a->message);
        free(a);
      }
      free((void*)st->message);
      free(st);
    }
    free(ss);
  }
}

int conf_run_in_forks(struct criterion_test_set* tests, const char* xml) {
  struct criterion_global_stats g = {0};
  struct criterion_suite_stats** tail = &g.suites;
  struct criterion_suite_set* set;
  FOREACH_SET(set, tests->suites) {
    if (stop_now) break;
    struct criterion_suite_stats* ss = run_suite(set);
    g.nb_suites++;
    g.nb_tests += ss->nb_tests;
    g.tests_skipped += ss->tests_skipped;
    g.tests_failed += ss->tests_failed;
    g.tests_crashed += ss->tests_crashed;
    g.tests_passed += ss->tests_passed;
    *tail = ss;
    tail = &ss->next;
  }
  fprintf(stderr,
          "[====] Synthesis (forked workers): Tested: %zu | Passing: %zu | Failing: %zu | "
          "Crashing: %zu | Skipped: %zu\n",
          g.nb_tests - g.tests_skipped, g.tests_passed, g.tests_failed, g.tests_crashed,
          g.tests_skipped);
  if (getenv("CONFORMANCE_JSON"))
    fputs("[WARN] CONFORMANCE_JSON: no JSON report in the forked-worker build\n", stderr);
  int ok = g.tests_failed == 0 && g.tests_crashed == 0;
  if (xml && *xml) {
    FILE* f = fopen(xml, "w");
    if (f == NULL) {
      fprintf(stderr, "[ERR ] cannot write %s\n", xml);
      ok = 0;
    } else {
      conf_write_junit(f, &g);
      if (fclose(f) != 0) ok = 0;
    }
  }
  free_stats(&g);
  return ok;
}
