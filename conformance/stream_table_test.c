/* Clauses of spec/env.md on the stream table as a whole: long sequences of
 * sets, replacements and clears, and what a thread leaves behind. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "alloc_fail.h"
#include "core_support.h"

#define S(n) ((TVMFFIStreamHandle)(uintptr_t)(n))

/* Pairs in every region an implementation may keep apart: small types and
 * ids, ids past 16, types past 31, the last accepted type and id. */
static const int32_t pair_type[] = {2, 2, 2, 2, 2, 2, 2, 2, 4, 4, 100, 100, 100, 1023, 31, 32};
static const int32_t pair_id[] = {0, 1, 15, 16, 17, 40, 41, 65535, 0, 300, 0, 3, 7, 65535, 15, 0};
enum { NPAIRS = sizeof pair_type / sizeof pair_type[0] };

/* A small deterministic generator: the same sequence on every run. */
static uint32_t next_random(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

typedef struct {
  uint32_t seed;
  int steps;
  char failure[256]; /* "" when the model and the implementation agreed */
} TableRun;

static void disagree(TableRun* run, int step, int k, const char* what, void* got, void* want) {
  if (run->failure[0]) return;
  snprintf(run->failure, sizeof run->failure, "step %d, pair (%d, %d): %s is %p, expected %p", step,
           pair_type[k], pair_id[k], what, got, want);
}

/* Sets, replaces and clears random pairs, comparing every original stream
 * returned and, every few steps, every pair read back, against a model. */
static void* table_run(void* arg) {
  TableRun* run = arg;
  TVMFFIStreamHandle model[NPAIRS] = {0};
  uint32_t state = run->seed;
  for (int step = 0; step < run->steps && !run->failure[0]; ++step) {
    int k = (int)(next_random(&state) % NPAIRS);
    uint32_t pick = next_random(&state) % 10;
    TVMFFIStreamHandle value = pick < 3 ? NULL : S(0x10 * (step + 1));
    TVMFFIStreamHandle old = S(0x1);
    int rc = conf_api.TVMFFIEnvSetStream(pair_type[k], pair_id[k], value, &old);
    if (rc != 0) disagree(run, step, k, "the return code", (void*)(intptr_t)rc, NULL);
    if (old != model[k]) disagree(run, step, k, "the original stream", old, model[k]);
    model[k] = value;
    if (step % 7 == 0 || step + 1 == run->steps) {
      for (int j = 0; j < NPAIRS; ++j) {
        TVMFFIStreamHandle got = conf_api.TVMFFIEnvGetStream(pair_type[j], pair_id[j]);
        if (got != model[j]) disagree(run, step, j, "the stream read back", got, model[j]);
      }
    }
  }
  for (int j = 0; j < NPAIRS; ++j)
    conf_api.TVMFFIEnvSetStream(pair_type[j], pair_id[j], NULL, NULL);
  return NULL;
}

/* ENV-048: sets, replacements and clears in any order over pairs of every
 * region: each set returns the stream the pair held, and each pair reads
 * back the last stream set for it, on the main thread and on others. */
TEST(env_table, ENV_048_random_sequence_matches_model) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream);
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    TableRun run = {.seed = seed, .steps = 600};
    table_run(&run);
    cr_assert_str_empty(run.failure, "main thread, seed %u: %s", seed, run.failure);
  }
  TableRun runs[3] = {
      {.seed = 11, .steps = 600}, {.seed = 12, .steps = 600}, {.seed = 13, .steps = 600}};
  pthread_t th[3];
  for (int i = 0; i < 3; ++i) cr_assert_eq(pthread_create(&th[i], NULL, table_run, &runs[i]), 0);
  for (int i = 0; i < 3; ++i) {
    pthread_join(th[i], NULL);
    cr_assert_str_empty(runs[i].failure, "thread %d: %s", i, runs[i].failure);
  }
}

/* A thread that reads its streams, then sets `count` pairs (each a stream,
 * none cleared) and exits. */
typedef struct {
  int count;
} SetAndExit;

static void* set_and_exit(void* arg) {
  SetAndExit* job = arg;
  conf_api.TVMFFIEnvGetStream(2, 0);
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  for (int i = 0; i < job->count; ++i) {
    conf_api.TVMFFIEnvSetStream(2, i, S(0x100 + 16 * i), NULL);
    conf_api.TVMFFIEnvSetStream(100 + i % 7, 1000 + i, S(0x100 + 16 * i), NULL);
  }
  return NULL;
}

/* Live allocations a thread running `job` leaves behind once joined. */
static long left_by_thread(SetAndExit* job) {
  pthread_t t;
  conf_alloc_count_start();
  if (pthread_create(&t, NULL, set_and_exit, job) != 0) {
    conf_alloc_count_stop();
    cr_assert_fail("pthread_create failed");
  }
  pthread_join(t, NULL);
  return conf_alloc_count_stop();
}

/* ENV-049: a thread's streams are released when it exits: a thread that
 * set 80 pairs leaves no more live allocations behind than one that set
 * none. */
TEST(env_table, ENV_049_thread_exit_releases_streams) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream),
      (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  SetAndExit none = {0}, many = {40};
  left_by_thread(&many); /* warm: whatever a first thread sets up once */
  long base = left_by_thread(&none);
  long left = left_by_thread(&many);
  cr_assert_eq(left, base,
               "a thread that set 80 streams left %ld live allocations behind, one that set "
               "none %ld",
               left, base);
}

/* ENV-051: setting and clearing streams over and over holds memory bounded
 * by the pairs set at once: 10000 more set-and-clear cycles over 8 pairs
 * outside the small ranges leave less than 4 KiB more allocated than the
 * first 100 cycles did. */
TEST(env_table, ENV_051_set_clear_cycles_bounded) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream);
  conf_alloc_require();
  for (int round = 0; round < 2; ++round) {
    int cycles = round == 0 ? 100 : 10000;
    if (round == 1) conf_alloc_count_start();
    for (int c = 0; c < cycles; ++c) {
      for (int32_t i = 0; i < 8; ++i)
        conf_api.TVMFFIEnvSetStream(100, 1000 + i, S(0x40 + 16 * c), NULL);
      for (int32_t i = 0; i < 8; ++i)
        conf_api.TVMFFIEnvSetStream(100, 1000 + (i * 3) % 8, NULL, NULL);
    }
  }
  conf_alloc_count_stop();
  long grown = conf_alloc_live_bytes();
  for (int32_t i = 0; i < 8; ++i)
    cr_assert_null(API(TVMFFIEnvGetStream)(100, 1000 + i), "pair (100, %d) not cleared", 1000 + i);
  cr_assert_lt(grown, 4096, "10000 set-and-clear cycles left %ld more bytes allocated", grown);
}

/* ENV-093: memory held for streams follows the pairs set at once, not the
 * pairs ever set: 10000 distinct pairs outside the small ranges, each set
 * and cleared before the next, then 10000 others cleared without having
 * been set, leave less than 4 KiB more allocated. */
TEST(env_table, ENV_093_distinct_pairs_cleared_release_memory) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream);
  conf_alloc_require();
  /* Warm: whatever the first pairs of a thread set up once. */
  conf_api.TVMFFIEnvSetStream(100, 999, S(0x10), NULL);
  conf_api.TVMFFIEnvSetStream(100, 999, NULL, NULL);
  conf_alloc_count_start();
  for (int32_t i = 0; i < 10000; ++i) {
    int32_t type = 32 + i % 900, id = 16 + i / 900;
    conf_api.TVMFFIEnvSetStream(type, id, S(0x40 + 16 * i), NULL);
    conf_api.TVMFFIEnvSetStream(type, id, NULL, NULL);
  }
  /* Clearing a pair that holds no stream holds nothing either. */
  for (int32_t i = 0; i < 10000; ++i)
    conf_api.TVMFFIEnvSetStream(32 + i % 900, 100 + i / 900, NULL, NULL);
  conf_alloc_count_stop();
  long grown = conf_alloc_live_bytes();
  for (int32_t i = 0; i < 10000; i += 997) {
    int32_t type = 32 + i % 900, id = 16 + i / 900;
    cr_assert_null(API(TVMFFIEnvGetStream)(type, id), "pair (%d, %d) not cleared", type, id);
  }
  cr_assert_lt(grown, 4096,
               "10000 distinct pairs set and cleared, and 10000 cleared unset, left "
               "%ld more bytes allocated",
               grown);
}

/* A thread that owns every thread-specific key the process has left,
 * with a value of its own under each, then sets a stream. */
typedef struct {
  pthread_key_t* keys;
  int nkeys;
  int set; /* 0: only read the streams */
  int rc;
  TVMFFIStreamHandle after;
  char kind[64];
  int names_call; /* the error's message contains "TVMFFIEnvSetStream" */
  int keys_kept;  /* every key still holds this thread's value */
} NoKeysLeft;

static void* set_with_no_keys_left(void* arg) {
  NoKeysLeft* job = arg;
  for (int i = 0; i < job->nkeys; ++i) pthread_setspecific(job->keys[i], S(0x9000 + 16 * i));
  job->rc = job->set ? conf_api.TVMFFIEnvSetStream(2, 0, S(0xab0), NULL) : 0;
  job->after = conf_api.TVMFFIEnvGetStream(2, 0);
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  job->kind[0] = '\0';
  if (err) {
    const TVMFFIByteArray* k = &(conf_error_cell(err))->kind;
    snprintf(job->kind, sizeof job->kind, "%.*s", (int)k->size, k->data);
    const TVMFFIByteArray* m = &(conf_error_cell(err))->message;
    job->names_call = memmem(m->data, m->size, "TVMFFIEnvSetStream", 18) != NULL;
    conf_api.TVMFFIObjectDecRef(err);
  }
  job->keys_kept = 1;
  for (int i = 0; i < job->nkeys; ++i)
    if (pthread_getspecific(job->keys[i]) != S(0x9000 + 16 * i)) job->keys_kept = 0;
  return NULL;
}

/* ENV-094: in a process that has used up its thread-specific keys, the
 * first TVMFFIEnvSetStream of a thread returns 0 with the stream stored
 * and nothing raised, or -1 with a RuntimeError (no allocation failed)
 * naming the call and the pair unset; it
 * changes no value another library keeps under its own keys, and the
 * thread leaves no more live allocations behind at exit than a thread
 * that only read its streams. */
TEST(env_table, ENV_094_no_thread_keys_left) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream),
      (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  static pthread_key_t keys[PTHREAD_KEYS_MAX];
  NoKeysLeft job = {.keys = keys};
  /* Take every key left (before any stream was set in this process), then
   * measure what a thread that only reads its streams leaves behind (the
   * second such thread: the first sets up what the process keeps). */
  while (job.nkeys < PTHREAD_KEYS_MAX && pthread_key_create(&keys[job.nkeys], NULL) == 0)
    ++job.nkeys;
  pthread_t t;
  for (int round = 0; round < 2; ++round) {
    conf_alloc_count_start();
    cr_assert_eq(pthread_create(&t, NULL, set_with_no_keys_left, &job), 0);
    pthread_join(t, NULL);
  }
  long base = conf_alloc_count_stop();
  cr_assert(job.keys_kept && job.kind[0] == '\0',
            "reading streams raised '%s' or changed a "
            "value kept under another key",
            job.kind);
  job.set = 1;
  conf_alloc_count_start();
  cr_assert_eq(pthread_create(&t, NULL, set_with_no_keys_left, &job), 0);
  pthread_join(t, NULL);
  long left = conf_alloc_count_stop();
  for (int i = 0; i < job.nkeys; ++i) pthread_key_delete(keys[i]);
  cr_assert(job.keys_kept, "TVMFFIEnvSetStream changed a value kept under another key");
  if (job.rc == 0) {
    cr_assert(job.after == S(0xab0) && job.kind[0] == '\0',
              "returned 0 with stream %p and '%s' raised", job.after, job.kind);
  } else {
    cr_assert(job.rc == -1 && strcmp(job.kind, "RuntimeError") == 0 && job.names_call &&
                  job.after == NULL,
              "returned %d with '%s' raised (naming TVMFFIEnvSetStream: %d), stream %p", job.rc,
              job.kind, job.names_call, job.after);
  }
  cr_assert_eq(left, base,
               "a thread that set a stream with no key left left %ld live "
               "allocations behind, one that only read its streams %ld",
               left, base);
}

/* Bytes a thread holds for its streams while devices 0 to 7 of device
 * types 0 to 17 (144 pairs) have one each. */
static void* hold_dlpack_streams(void* arg) {
  long* held = arg;
  conf_api.TVMFFIEnvGetStream(2, 0);
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  long before = conf_alloc_live_bytes();
  for (int32_t type = 0; type < 18; ++type)
    for (int32_t id = 0; id < 8; ++id) conf_api.TVMFFIEnvSetStream(type, id, S(0x10 + type), NULL);
  *held = conf_alloc_live_bytes() - before;
  for (int32_t type = 0; type < 18; ++type)
    for (int32_t id = 0; id < 8; ++id) conf_api.TVMFFIEnvSetStream(type, id, NULL, NULL);
  return NULL;
}

/* ENV-095: streams cost a thread little memory: with devices 0 to 7 of
 * every DLPack device type (0 to 17) holding a stream, a thread holds at
 * most 8 KiB more than before it set any. */
TEST(env_table, ENV_095_thread_streams_memory_small) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream),
      (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  long held = -1;
  pthread_t t;
  conf_alloc_count_start();
  if (pthread_create(&t, NULL, hold_dlpack_streams, &held) != 0) {
    conf_alloc_count_stop();
    cr_assert_fail("pthread_create failed");
  }
  pthread_join(t, NULL);
  conf_alloc_count_stop();
  cr_assert_leq(held, 8192, "a thread holding 144 streams holds %ld bytes for them", held);
}
