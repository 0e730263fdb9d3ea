/*
 * Threading test of errors, functions, the registry and init-once, meant for
 * TSan (--config=tsan): raised slots used on many threads (and left full at
 * thread exit), one function called from all threads, the registry written
 * and read at once, and eight threads racing on TVMFFIHandleInitOnce.
 * Criterion's process arena does not start under TSan, so this test has its
 * own main and reports by exit status.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "registry.h"
#include "threads_test_support.h"

#define ROUNDS 500

static int calls;
static int count_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)n;
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  *rv = args[0];
  return 0;
}

static int raise_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  TVMFFIErrorSetRaisedFromCStr("IndexError", "deep");
  return -1;
}

static TVMFFIObject* shared_fn;
static TVMFFIObject* failing_fn;
static TVMFFIObject* shared_error;
static pthread_barrier_t start;

static void* init_value;
static int init_runs;
static int the_resource;
static int slow_init(void** out) {
  __atomic_fetch_add(&init_runs, 1, __ATOMIC_RELAXED);
  the_resource = 99;
  *out = &the_resource;
  return 0;
}

static void* worker(void* arg) {
  long t = (long)(intptr_t)arg;
  char name[64];
  pthread_barrier_wait(&start);
  void* h = NULL;
  if (TVMFFIHandleInitOnce(&init_value, slow_init) != 0) fail("init once", t, 0);
  h = __atomic_load_n(&init_value, __ATOMIC_ACQUIRE);
  if (h != &the_resource || the_resource != 99) fail("init once value", t, 0);
  for (long r = 0; r < ROUNDS; ++r) {
    TVMFFIAny arg0 = {.type_index = kTVMFFIInt, .v_int64 = r}, rv = {0};
    if (TVMFFIFunctionCall(shared_fn, &arg0, 1, &rv) != 0 || rv.v_int64 != r) fail("call", t, r);
    if (TVMFFIFunctionCall(failing_fn, NULL, 0, &rv) != -1) fail("failing call", t, r);
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err == NULL || TVMFFIErrorGetCellPtr(err)->kind.size != 10) fail("raised", t, r);
    if (err) TVMFFIObjectDecRef(err);
    TVMFFIErrorSetRaised(shared_error); /* left for the next round to replace */
    int len = snprintf(name, sizeof name, "threads.%ld.%ld", t, r);
    if (tffi_global_set(name, (size_t)len, shared_fn, 0) != 0) fail("set", t, r);
    len = snprintf(name, sizeof name, "threads.%ld.%ld", (t + 1) % THREADS, r);
    TVMFFIObject* got = NULL;
    if (tffi_global_get(name, (size_t)len, &got) != 0) fail("get", t, r);
    if (got != NULL && got != shared_fn) fail("get value", t, r);
    if (got) tffi_decref(got);
    if (tffi_global_set("threads.shared", 14, shared_fn, 1) != 0) fail("override", t, r);
    const TVMFFIByteArray* bt = TVMFFIBacktrace("threads.c", (int)t, "worker", 0);
    if (bt->size == 0 || memchr(bt->data, '0' + (int)t, bt->size) == NULL) fail("backtrace", t, r);
  }
  /* Exit with shared_error still raised: the thread-exit release runs. */
  return NULL;
}

int main(void) {
  shared_fn = tffi_function_new(NULL, count_call, NULL);
  failing_fn = tffi_function_new(NULL, raise_call, NULL);
  TVMFFIByteArray kind = {"RuntimeError", 12};
  shared_error = tffi_error_new(&kind, &kind, NULL, NULL, NULL);
  pthread_barrier_init(&start, NULL, THREADS);
  run_threads(worker);
  pthread_barrier_destroy(&start);
  if (init_runs != 1) fail("init ran more than once", -1, init_runs);
  if (calls != THREADS * ROUNDS) fail("call count", -1, calls);
  if (tffi_strong_count(shared_error) != 1) fail("error kept after thread exit", -1, 0);
  for (long t = 0; t < THREADS; ++t) {
    for (long r = 0; r < ROUNDS; ++r) {
      char name[64];
      int len = snprintf(name, sizeof name, "threads.%ld.%ld", t, r);
      TVMFFIObject* got = NULL;
      if (tffi_global_get(name, (size_t)len, &got) != 0 || got != shared_fn) fail("lost", t, r);
      if (got) tffi_decref(got);
    }
  }
  /* 1 own + one per registered name + the shared name. */
  if (tffi_strong_count(shared_fn) != 1u + THREADS * ROUNDS + 1u) fail("fn count", -1, 0);
  tffi_decref(shared_error);
  tffi_decref(failing_fn);
  tffi_decref(shared_fn); /* the registry keeps it alive */
  return threads_exit_status("errors, calls, registry, init once");
}
