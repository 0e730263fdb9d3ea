/*
 * abi_bench: operations of the C ABI (bench_ops.c), for two runtimes side by
 * side. A benchmark, not a test. Three modes:
 *
 *   abi_bench --lib PATH --mods A,B,C --op OP --iters N
 *       loads one runtime and runs OP N times, nothing else: the driver
 *       (abi_bench.py) runs this under callgrind for N and 2N and divides
 *       the difference by N, so loading and setup cancel out; under massif
 *       with N = 0 and N = 1 for the peak heap of one operation.
 *   abi_bench --wall --lib NAME=PATH [--lib NAME=PATH ...] --mods A,B,C
 *             [--ms T] [--batches K]
 *       loads every runtime in the same process (RTLD_LOCAL keeps their
 *       symbols apart) and prints one JSON line: per runtime and op, the
 *       median, min and max ns per operation over K (default 11) timed
 *       batches of about T ms (default 50).
 *   abi_bench --check --lib NAME=PATH [...] --mods A,B,C
 *       runs every op 3 times per runtime; exit 1 if any op fails.
 *
 * A,B,C are the bench libraries whose library_bin has 1, 100 and 10000
 * entries.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_ops.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Median, min and max of `batches` batches, each about `ms` milliseconds.
 * Returns -1 when the op fails. */
static int time_op(BenchRuntime* rt, const BenchOp* op, double ms, int batches, double out[3]) {
  long n = 1;
  for (;;) { /* grow the batch until it takes a tenth of the target */
    double t0 = now_ns();
    if (op->run(rt, n) != 0) return -1;
    double dt = now_ns() - t0;
    if (dt > ms * 1e5 || n > (1L << 34)) {
      n = (long)((double)n * (ms * 1e6) / (dt > 1 ? dt : 1));
      if (n < 1) n = 1;
      break;
    }
    n *= 4;
  }
  double per[64];
  if (batches > 64) batches = 64;
  for (int b = 0; b < batches; ++b) {
    double t0 = now_ns();
    if (op->run(rt, n) != 0) return -1;
    per[b] = (now_ns() - t0) / (double)n;
  }
  qsort(per, (size_t)batches, sizeof per[0], cmp_double);
  out[0] = per[batches / 2];
  out[1] = per[0];
  out[2] = per[batches - 1];
  return 0;
}

/* Loads each NAME=PATH in turn into rts. */
static int load_all(int nlibs, char** specs, const char* const mods[3], BenchRuntime* rts) {
  for (int i = 0; i < nlibs; ++i) {
    char* eq = strchr(specs[i], '=');
    if (eq == NULL) {
      fprintf(stderr, "abi_bench: --lib takes NAME=PATH here\n");
      return -1;
    }
    *eq = '\0';
    if (bench_load(&rts[i], specs[i], eq + 1, mods) != 0) return -1;
  }
  return 0;
}

static int wall_mode(int nlibs, BenchRuntime* rts, double ms, int batches) {
  printf("{");
  for (int i = 0; i < nlibs; ++i) {
    printf("%s\"%s\": {", i ? ", " : "", rts[i].name);
    for (int k = 0; k < bench_num_ops; ++k) {
      double t[3];
      printf("%s\"%s\": ", k ? ", " : "", bench_ops[k].name);
      if (time_op(&rts[i], &bench_ops[k], ms, batches, t) != 0)
        printf("null");
      else
        printf("{\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}", t[0], t[1], t[2]);
      fflush(stdout);
    }
    printf("}");
  }
  printf("}\n");
  return 0;
}

static int check_mode(int nlibs, BenchRuntime* rts) {
  int failed = 0;
  for (int i = 0; i < nlibs; ++i) {
    for (int k = 0; k < bench_num_ops; ++k) {
      int ok = bench_ops[k].run(&rts[i], 3) == 0;
      printf("%-10s %-14s %s\n", rts[i].name, bench_ops[k].name, ok ? "ok" : "FAILED");
      failed += !ok;
    }
  }
  printf("abi_bench --check: %d of %d operations failed\n", failed, nlibs * bench_num_ops);
  for (int i = 0; i < nlibs; ++i) bench_unload(&rts[i]);
  return failed ? 1 : 0;
}

/* Splits "A,B,C" into three paths. */
static int split_mods(char* spec, const char* mods[3]) {
  char* save = NULL;
  for (int i = 0; i < 3; ++i) {
    mods[i] = strtok_r(i ? NULL : spec, ",", &save);
    if (mods[i] == NULL) return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* opname = NULL;
  const char* mods[3] = {NULL, NULL, NULL};
  long iters = -1;
  int wall = 0, check = 0, batches = 11, nlibs = 0;
  double ms = 50;
  char* libs[8];
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    int more = i + 1 < argc;
    if (strcmp(a, "--wall") == 0)
      wall = 1;
    else if (strcmp(a, "--check") == 0)
      check = 1;
    else if (strcmp(a, "--lib") == 0 && more && nlibs < 8)
      libs[nlibs++] = argv[++i];
    else if (strcmp(a, "--mods") == 0 && more && split_mods(argv[++i], mods) == 0)
      continue;
    else if (strcmp(a, "--op") == 0 && more)
      opname = argv[++i];
    else if (strcmp(a, "--iters") == 0 && more)
      iters = strtol(argv[++i], NULL, 10);
    else if (strcmp(a, "--ms") == 0 && more)
      ms = strtod(argv[++i], NULL);
    else if (strcmp(a, "--batches") == 0 && more)
      batches = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: see the comment at the top of abi_bench.c\n");
      return 2;
    }
  }
  if (mods[0] == NULL || nlibs == 0) {
    fprintf(stderr, "abi_bench: give --lib and --mods A,B,C\n");
    return 2;
  }
  BenchRuntime rts[8];
  if (wall || check) {
    if (load_all(nlibs, libs, mods, rts) != 0) return 1;
    return wall ? wall_mode(nlibs, rts, ms, batches < 1 ? 1 : batches) : check_mode(nlibs, rts);
  }
  const BenchOp* op = opname ? bench_find(opname) : NULL;
  if (nlibs != 1 || op == NULL || iters < 0) {
    fprintf(stderr, "abi_bench: give one --lib, a known --op and --iters\n");
    return 2;
  }
  if (bench_load(&rts[0], "lib", libs[0], mods) != 0) return 1;
  int rc = op->run(&rts[0], iters);
  if (rc != 0) fprintf(stderr, "abi_bench: %s failed in %s\n", op->name, libs[0]);
  bench_unload(&rts[0]);
  return rc != 0 ? 3 : 0;
}
