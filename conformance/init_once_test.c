/* Clauses of spec/functions.md: one-time initialisation of a handle. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core_support.h"

static int init_calls;
static int the_resource;

static int init_ok(void** result) {
  __atomic_fetch_add(&init_calls, 1, __ATOMIC_RELAXED);
  *result = &the_resource;
  return 0;
}

/* FN-040: TVMFFIHandleInitOnce on a NULL handle calls init_func once,
 * stores the handle it produced and returns 0. */
TEST(init_once, FN_040_runs_init_and_stores) {
  void* handle = NULL;
  init_calls = 0;
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0);
  cr_assert_eq(init_calls, 1);
  cr_assert_eq(handle, &the_resource);
}

/* FN-041: on a handle already set, TVMFFIHandleInitOnce returns 0 without
 * calling init_func and leaves the handle alone. */
TEST(init_once, FN_041_set_handle_left_alone) {
  int other = 0;
  void* handle = &other;
  init_calls = 0;
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0);
  cr_assert_eq(init_calls, 0, "init ran on a set handle");
  cr_assert_eq(handle, &other);
  handle = NULL;
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0);
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0);
  cr_assert_eq(init_calls, 1);
}

enum { RACERS = 8 };
static void* shared_handle;
static pthread_barrier_t race_start;

static int slow_init(void** result) {
  __atomic_fetch_add(&init_calls, 1, __ATOMIC_RELAXED);
  /* Widen the window in which the others arrive. */
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  the_resource = 1234; /* published by the handle store */
  *result = &the_resource;
  return 0;
}

typedef struct {
  int rc;
  void* seen;
  int value;
} RaceResult;

static void* racer(void* arg) {
  RaceResult* r = arg;
  pthread_barrier_wait(&race_start);
  r->rc = conf_api.TVMFFIHandleInitOnce(&shared_handle, slow_init);
  r->seen = __atomic_load_n(&shared_handle, __ATOMIC_ACQUIRE);
  r->value = r->seen ? *(int*)r->seen : -1;
  return NULL;
}

/* FN-042: when 8 threads race on one handle, init_func runs exactly once
 * and every thread returns 0 and sees the same fully made handle. */
TEST(init_once, FN_042_eight_racing_threads) {
  (void)API(TVMFFIHandleInitOnce);
  init_calls = 0;
  shared_handle = NULL;
  the_resource = 0;
  pthread_barrier_init(&race_start, NULL, RACERS);
  pthread_t t[RACERS];
  RaceResult r[RACERS];
  memset(r, 0, sizeof r);
  for (int i = 0; i < RACERS; ++i) pthread_create(&t[i], NULL, racer, &r[i]);
  for (int i = 0; i < RACERS; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&race_start);
  cr_assert_eq(init_calls, 1, "init ran %d times", init_calls);
  for (int i = 0; i < RACERS; ++i) {
    cr_assert_eq(r[i].rc, 0, "thread %d got %d", i, r[i].rc);
    cr_assert_eq(r[i].seen, &the_resource, "thread %d saw %p", i, r[i].seen);
    cr_assert_eq(r[i].value, 1234, "thread %d saw an unfinished resource", i);
  }
}

static int init_fails(void** result) {
  (void)result;
  __atomic_fetch_add(&init_calls, 1, __ATOMIC_RELAXED);
  conf_api.TVMFFIErrorSetRaisedFromCStr("RuntimeError", "device `cuda:3` is not available");
  return -1;
}

/* FN-043: when init_func fails with an error raised, TVMFFIHandleInitOnce
 * returns its code with that error still raised, leaves the handle NULL,
 * and a later call runs init_func again. */
TEST(init_once, FN_043_init_error_propagates) {
  void* handle = NULL;
  init_calls = 0;
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_fails), -1);
  cr_assert_null(handle);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "the init error was lost");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 12);
  cr_assert_eq(memcmp(cell->kind.data, "RuntimeError", 12), 0);
  const char* want = "device `cuda:3` is not available";
  cr_assert_eq(cell->message.size, strlen(want));
  cr_assert_eq(memcmp(cell->message.data, want, strlen(want)), 0);
  API(TVMFFIObjectDecRef)(err);
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0, "failure was remembered");
  cr_assert_eq(handle, &the_resource);
  cr_assert_eq(init_calls, 2);
}

static int init_leaves_null(void** result) {
  (void)result;
  return 0;
}

/* FN-044: when init_func returns 0 but produces NULL, TVMFFIHandleInitOnce
 * returns -1 with a RuntimeError raised and the handle stays NULL. */
TEST(init_once, FN_044_null_result_is_an_error) {
  void* handle = NULL;
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_leaves_null), -1);
  cr_assert_null(handle);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 12);
  cr_assert_eq(memcmp(cell->kind.data, "RuntimeError", 12), 0);
  cr_assert_not_null(strstr(cell->message.data, "init_func"), "message: %s", cell->message.data);
  API(TVMFFIObjectDecRef)(err);
}

static int deinit_calls;
static void* deinit_seen;
static int deinit_ok(void* handle) {
  deinit_calls++;
  deinit_seen = handle;
  return 0;
}

/* FN-045: TVMFFIHandleDeinitOnce calls deinit_func once with the handle,
 * sets the handle to NULL and returns 0; on a NULL handle it calls nothing
 * and returns 0. */
TEST(init_once, FN_045_deinit_once) {
  void* handle = &the_resource;
  deinit_calls = 0;
  cr_assert_eq(API(TVMFFIHandleDeinitOnce)(&handle, deinit_ok), 0);
  cr_assert_eq(deinit_calls, 1);
  cr_assert_eq(deinit_seen, &the_resource);
  cr_assert_null(handle);
  cr_assert_eq(API(TVMFFIHandleDeinitOnce)(&handle, deinit_ok), 0);
  cr_assert_eq(deinit_calls, 1, "deinit ran on a NULL handle");
}

static int deinit_fails(void* handle) {
  (void)handle;
  conf_api.TVMFFIErrorSetRaisedFromCStr("RuntimeError", "could not release `stream`");
  return -1;
}

/* FN-046: TVMFFIHandleDeinitOnce returns deinit_func's code with its error
 * raised; the handle is NULL afterwards either way. */
TEST(init_once, FN_046_deinit_error_propagates) {
  void* handle = &the_resource;
  cr_assert_eq(API(TVMFFIHandleDeinitOnce)(&handle, deinit_fails), -1);
  cr_assert_null(handle);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  cr_assert_not_null(strstr(TVMFFIErrorGetCellPtr(err)->message.data, "`stream`"));
  API(TVMFFIObjectDecRef)(err);
}

/* FN-047: after TVMFFIHandleDeinitOnce, TVMFFIHandleInitOnce initialises
 * the handle anew. */
TEST(init_once, FN_047_init_after_deinit) {
  void* handle = NULL;
  init_calls = 0;
  deinit_calls = 0;
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0);
  cr_assert_eq(API(TVMFFIHandleDeinitOnce)(&handle, deinit_ok), 0);
  cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_ok), 0);
  cr_assert_eq(init_calls, 2);
  cr_assert_eq(deinit_calls, 1);
  cr_assert_eq(handle, &the_resource);
}

static int init_code = -2;
static int init_writes = 1;

static int init_fails_with_code(void** result) {
  __atomic_fetch_add(&init_calls, 1, __ATOMIC_RELAXED);
  if (init_writes) *result = &the_resource; /* written, but the call failed */
  conf_api.TVMFFIErrorSetRaisedFromCStr("RuntimeError", "interrupted");
  return init_code;
}

/* FN-080: init_func's nonzero code (negative or positive) comes back
 * unchanged, and a result it wrote before failing is not stored. */
TEST(init_once, FN_080_init_code_returned_result_dropped) {
  const int codes[3] = {-2, 1, 1};
  for (int i = 0; i < 3; ++i) {
    void* handle = NULL;
    init_calls = 0;
    init_code = codes[i];
    init_writes = i < 2;
    cr_assert_eq(API(TVMFFIHandleInitOnce)(&handle, init_fails_with_code), codes[i],
                 "init_func's code %d was not returned", codes[i]);
    cr_expect_null(handle, "the result of init_func failing with %d was stored", codes[i]);
    cr_expect_eq(init_calls, 1);
    TVMFFIObjectHandle err = core_take_raised();
    cr_expect_not_null(err);
    if (err) {
      TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
      cr_expect(cell->message.size == 11 && memcmp(cell->message.data, "interrupted", 11) == 0,
                "init_func's error was replaced: %.*s", (int)cell->message.size,
                cell->message.data);
      API(TVMFFIObjectDecRef)(err);
    }
  }
}

static void expect_value_error_naming(const char* api, const char* arg) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "no error raised");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_expect(cell->kind.size == 10 && memcmp(cell->kind.data, "ValueError", 10) == 0, "kind: %.*s",
            (int)cell->kind.size, cell->kind.data);
  const char* parts[2] = {api, arg};
  for (int i = 0; i < 2; ++i)
    cr_expect(memmem(cell->message.data, cell->message.size, parts[i], strlen(parts[i])) != NULL,
              "message lacks %s: %.*s", parts[i], (int)cell->message.size, cell->message.data);
  API(TVMFFIObjectDecRef)(err);
}

/* FN-081: NULL arguments are refused with ValueError naming them, and the
 * handle is left as it was; a NULL init_func on a handle already set is
 * never called. */
TEST(init_once, FN_081_null_arguments) {
  HOSTILE_INPUT("upstream dereferences the arguments unchecked");
  int other = 0;
  void* handle = &other;
  cr_expect_eq(API(TVMFFIHandleInitOnce)(&handle, NULL), 0, "a set handle needs no init_func");
  cr_expect_eq(handle, &other);
  cr_expect_eq(API(TVMFFIHandleInitOnce)(NULL, init_ok), -1);
  expect_value_error_naming("TVMFFIHandleInitOnce", "handle_addr");
  handle = NULL;
  cr_expect_eq(API(TVMFFIHandleInitOnce)(&handle, NULL), -1);
  expect_value_error_naming("TVMFFIHandleInitOnce", "init_func");
  cr_expect_null(handle);
  cr_expect_eq(API(TVMFFIHandleDeinitOnce)(NULL, deinit_ok), -1);
  expect_value_error_naming("TVMFFIHandleDeinitOnce", "handle_addr");
  handle = &other;
  cr_expect_eq(API(TVMFFIHandleDeinitOnce)(&handle, NULL), -1);
  expect_value_error_naming("TVMFFIHandleDeinitOnce", "deinit_func");
  cr_expect_eq(handle, &other, "a refused deinit cleared the handle");
}

static void* deinit_racer(void* arg) {
  (void)arg;
  pthread_barrier_wait(&race_start);
  conf_api.TVMFFIHandleDeinitOnce(&shared_handle, deinit_ok);
  return NULL;
}

/* FN-082: when 8 threads call TVMFFIHandleDeinitOnce on one handle at
 * once, deinit_func runs exactly once. */
TEST(init_once, FN_082_eight_racing_deinits) {
  (void)API(TVMFFIHandleDeinitOnce);
  int rounds = core_stress_rounds(20);
  for (int round = 0; round < rounds; ++round) {
    shared_handle = &the_resource;
    deinit_calls = 0;
    pthread_barrier_init(&race_start, NULL, RACERS);
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; ++i) pthread_create(&t[i], NULL, deinit_racer, NULL);
    for (int i = 0; i < RACERS; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&race_start);
    cr_assert_eq(deinit_calls, 1, "round %d: deinit ran %d times", round, deinit_calls);
    cr_assert_null(shared_handle);
  }
}
