/*
 * abi_bench: the three hot paths of the C ABI, for two runtimes side by side.
 *
 * A benchmark, not a test. Paths measured:
 *   call        TVMFFIFunctionCall of a 0-argument function made by
 *               TVMFFIFunctionCreate with a self pointer (callback: return 0)
 *   call_direct the same with self and deleter NULL (callback in the cell)
 *   stream      TVMFFIEnvGetStream(kDLCUDA, 0), with a stream set for that device
 *   raise       TVMFFIErrorSetRaisedFromCStr + TVMFFIErrorMoveFromRaised +
 *               TVMFFIObjectDecRef of the moved error
 *
 * Two modes:
 *   abi_bench --lib PATH --op OP --iters N
 *       loads one runtime and runs OP N times, nothing else: the driver
 *       (abi_bench.py) runs this under callgrind for N and 2N and divides
 *       the difference by N, so loading and setup cancel out.
 *   abi_bench --wall --lib NAME=PATH [--lib NAME=PATH ...] [--ms T]
 *       loads every runtime in the same process (RTLD_LOCAL, so their
 *       symbols stay apart) and prints one JSON line of ns per operation,
 *       best of 7 timed batches of about T ms (default 100) per path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

typedef struct {
  const char* name;
  __typeof__(&TVMFFIFunctionCreate) create;
  __typeof__(&TVMFFIFunctionCall) call;
  __typeof__(&TVMFFIEnvGetStream) get_stream;
  __typeof__(&TVMFFIEnvSetStream) set_stream;
  __typeof__(&TVMFFIErrorSetRaisedFromCStr) raise;
  __typeof__(&TVMFFIErrorMoveFromRaised) move;
  __typeof__(&TVMFFIObjectDecRef) decref;
  TVMFFIObjectHandle fn;        /* with self: goes through the wrapper */
  TVMFFIObjectHandle fn_direct; /* self and deleter NULL */
} Runtime;

static int nothing(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  return 0;
}

static int load(Runtime* rt, const char* name, const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "abi_bench: cannot load %s: %s\n", path, dlerror());
    return -1;
  }
  memset(rt, 0, sizeof *rt);
  rt->name = name;
  *(void**)&rt->create = dlsym(h, "TVMFFIFunctionCreate");
  *(void**)&rt->call = dlsym(h, "TVMFFIFunctionCall");
  *(void**)&rt->get_stream = dlsym(h, "TVMFFIEnvGetStream");
  *(void**)&rt->set_stream = dlsym(h, "TVMFFIEnvSetStream");
  *(void**)&rt->raise = dlsym(h, "TVMFFIErrorSetRaisedFromCStr");
  *(void**)&rt->move = dlsym(h, "TVMFFIErrorMoveFromRaised");
  *(void**)&rt->decref = dlsym(h, "TVMFFIObjectDecRef");
  if (!rt->create || !rt->call || !rt->raise || !rt->move || !rt->decref) {
    fprintf(stderr, "abi_bench: %s lacks a function or error symbol\n", path);
    return -1;
  }
  static int self_marker;
  if (rt->create(&self_marker, nothing, NULL, &rt->fn) != 0 ||
      rt->create(NULL, nothing, NULL, &rt->fn_direct) != 0) {
    fprintf(stderr, "abi_bench: TVMFFIFunctionCreate failed in %s\n", path);
    return -1;
  }
  return 0;
}

/* Each path in its own never-inlined loop, so that the instructions per
 * iteration are the call itself plus the same few loop instructions for
 * every runtime. */
__attribute__((noinline)) static void run_call(Runtime* rt, long n, TVMFFIObjectHandle fn) {
  TVMFFIAny rv;
  for (long i = 0; i < n; ++i) {
    rv.type_index = kTVMFFINone;
    rt->call(fn, NULL, 0, &rv);
  }
  __asm__ volatile("" : : "r"(&rv) : "memory");
}

__attribute__((noinline)) static void run_stream(Runtime* rt, long n) {
  for (long i = 0; i < n; ++i) {
    void* s = rt->get_stream(kDLCUDA, 0);
    __asm__ volatile("" : : "r"(s));
  }
}

__attribute__((noinline)) static void run_raise(Runtime* rt, long n) {
  for (long i = 0; i < n; ++i) {
    TVMFFIObjectHandle err = NULL;
    rt->raise("RuntimeError", "benchmark error");
    rt->move(&err);
    rt->decref(err);
  }
}

static const char* const OPS[] = {"call", "call_direct", "stream", "raise"};
enum { NOPS = 4 };

/* Returns 0, or -1 when the runtime lacks what the path needs. */
static int run(Runtime* rt, const char* op, long n) {
  if (strcmp(op, "call") == 0) {
    run_call(rt, n, rt->fn);
  } else if (strcmp(op, "call_direct") == 0) {
    run_call(rt, n, rt->fn_direct);
  } else if (strcmp(op, "stream") == 0) {
    /* Measured with a stream set, as a kernel sees it when a host is driving. */
    static int stream_marker;
    if (rt->get_stream == NULL || rt->set_stream == NULL) return -1;
    if (rt->set_stream(kDLCUDA, 0, &stream_marker, NULL) != 0) return -1;
    run_stream(rt, n);
  } else if (strcmp(op, "raise") == 0) {
    run_raise(rt, n);
  } else {
    return -1;
  }
  return 0;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best of 7 batches, each sized to take about `ms` milliseconds. */
static double ns_per_op(Runtime* rt, const char* op, double ms) {
  long n = 1000;
  for (;;) { /* grow the batch until it takes a tenth of the target */
    double t0 = now_ns();
    if (run(rt, op, n) != 0) return -1;
    double dt = now_ns() - t0;
    if (dt > ms * 1e5 || n > (1L << 34)) {
      n = (long)((double)n * (ms * 1e6) / (dt > 1 ? dt : 1));
      if (n < 1) n = 1;
      break;
    }
    n *= 4;
  }
  double best = 1e300;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = now_ns();
    run(rt, op, n);
    double per = (now_ns() - t0) / (double)n;
    if (per < best) best = per;
  }
  return best;
}

static int wall_mode(int nlibs, char** specs, double ms) {
  printf("{");
  for (int i = 0; i < nlibs; ++i) {
    char* eq = strchr(specs[i], '=');
    if (eq == NULL) {
      fprintf(stderr, "abi_bench: --lib takes NAME=PATH in --wall mode\n");
      return 2;
    }
    *eq = '\0';
    Runtime rt;
    if (load(&rt, specs[i], eq + 1) != 0) return 1;
    printf("%s\"%s\": {", i ? ", " : "", rt.name);
    for (int k = 0; k < NOPS; ++k) {
      double ns = ns_per_op(&rt, OPS[k], ms);
      if (ns < 0)
        printf("%s\"%s\": null", k ? ", " : "", OPS[k]);
      else
        printf("%s\"%s\": %.3f", k ? ", " : "", OPS[k], ns);
    }
    printf("}");
  }
  printf("}\n");
  return 0;
}

int main(int argc, char** argv) {
  const char* op = NULL;
  long iters = 0;
  int wall = 0;
  double ms = 100;
  char* libs[8];
  int nlibs = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--wall") == 0) {
      wall = 1;
    } else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc && nlibs < 8) {
      libs[nlibs++] = argv[++i];
    } else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc) {
      op = argv[++i];
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = strtol(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) {
      ms = strtod(argv[++i], NULL);
    } else {
      fprintf(stderr,
              "usage: abi_bench --lib PATH --op call|call_direct|stream|raise --iters N\n"
              "       abi_bench --wall --lib NAME=PATH [--lib NAME=PATH ...] [--ms T]\n");
      return 2;
    }
  }
  if (wall) return wall_mode(nlibs, libs, ms);
  if (nlibs != 1 || op == NULL || iters < 0) {
    fprintf(stderr, "abi_bench: give one --lib, an --op and --iters\n");
    return 2;
  }
  Runtime rt;
  if (load(&rt, "lib", libs[0]) != 0) return 1;
  if (run(&rt, op, iters) != 0) {
    fprintf(stderr, "abi_bench: %s not available in %s\n", op, libs[0]);
    return 3;
  }
  return 0;
}
