/*
 * Fuzz harness: the per-thread stream table, TVMFFIEnvSetStream and
 * TVMFFIEnvGetStream, on any device type and id.
 *
 * The input is a list of operations (set, clear, get, with or without the
 * out parameter) on (device_type, device_id) pairs drawn from small ranges,
 * negative values, powers of two up to 2^30, the int32 extremes and raw
 * words; optionally the whole list runs on a thread of its own, which then
 * exits with its pairs still set.
 *
 * A model of the table is kept beside it (ENV-048: a map per thread):
 *   - a set that returns 0 writes the stream the pair held before to its
 *     out parameter and raises nothing; a refusal returns -1 with a raised
 *     error of a documented kind and changes nothing;
 *   - a get returns what the last accepted set stored (NULL if none);
 *   - at the end every pair set is cleared again, so inputs do not pile
 *     up state (and a thread that exits releases its table, ENV-049, which
 *     LeakSanitizer checks).
 * Memory is the campaign's bound (-malloc_limit_mb, -rss_limit_mb): a
 * runtime that sizes its table from an id fails here.
 *
 * FUZZ_AVOID (a campaign's choice, never the replay's) skips the pairs of
 * crash classes a library is known to have, so a campaign finds the next:
 * ENV-009 a negative type, ENV-010 a negative id, ENV-011 an id of 65536 or
 * more, ENV-012 a type of 1024 or more.
 */
#include "fuzz/impl_api.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"

#define MAX_OPS 24

static const char* const kSetKinds[] = {"ValueError", "MemoryError", "RuntimeError", NULL};

typedef struct {
  int32_t type, id;
  TVMFFIStreamHandle stream; /* NULL: cleared (or never set) */
} Pair;

typedef struct {
  Pair pairs[MAX_OPS];
  int n;
} Model;

static Pair* model_find(Model* m, int32_t type, int32_t id) {
  for (int k = 0; k < m->n; ++k) {
    if (m->pairs[k].type == type && m->pairs[k].id == id) return &m->pairs[k];
  }
  return NULL;
}

static int32_t read_value(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  switch (how % 8) {
    case 0:
    case 1:
    case 2: return how % 17;                     /* small: 0..16 */
    case 3: return -(int32_t)(how % 5) - 1;      /* -1..-5 */
    case 4: return (int32_t)1 << (8 + how % 23); /* 2^8 .. 2^30 */
    case 5: return how & 1 ? INT32_MAX : INT32_MIN;
    case 6: return 1000 + how % 80; /* around 1024 */
    default: return (int32_t)fuzz_u32(r);
  }
}

/* A stream handle the table only stores, never follows. */
static TVMFFIStreamHandle stream_of(uint8_t tag) {
  return (TVMFFIStreamHandle)(uintptr_t)(0x1000 + tag);
}

static int avoided(int32_t type, int32_t id) {
  const char* list = getenv("FUZZ_AVOID");
  return list != NULL &&
         ((strstr(list, "ENV-009") && type < 0) || (strstr(list, "ENV-010") && id < 0) ||
          (strstr(list, "ENV-011") && id >= 65536) || (strstr(list, "ENV-012") && type >= 1024));
}

static void do_set(Model* m, int32_t type, int32_t id, TVMFFIStreamHandle stream, int want_old) {
  Pair* p = model_find(m, type, id);
  TVMFFIStreamHandle before = p ? p->stream : NULL;
  TVMFFIStreamHandle old = stream_of(0xee);
  int rc = TVMFFIEnvSetStream(type, id, stream, want_old ? &old : NULL);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "TVMFFIEnvSetStream(%d, %d) returned %d", type, id, rc);
    fuzz_expect_raised("TVMFFIEnvSetStream", kSetKinds);
    FUZZ_CLAUSE("ENV-048", TVMFFIEnvGetStream(type, id) == before,
                "a refused TVMFFIEnvSetStream(%d, %d) changed the pair", type, id);
    return;
  }
  fuzz_expect_nothing_raised("TVMFFIEnvSetStream");
  if (want_old) {
    FUZZ_CLAUSE("ENV-048", old == before,
                "TVMFFIEnvSetStream(%d, %d) gave %p as the old stream, "
                "not %p",
                type, id, old, before);
  }
  if (p == NULL && m->n < MAX_OPS) {
    p = &m->pairs[m->n++];
    p->type = type;
    p->id = id;
  }
  if (p != NULL) p->stream = stream;
}

static void do_get(Model* m, int32_t type, int32_t id) {
  Pair* p = model_find(m, type, id);
  TVMFFIStreamHandle want = p ? p->stream : NULL;
  TVMFFIStreamHandle got = TVMFFIEnvGetStream(type, id);
  FUZZ_CLAUSE("ENV-048", got == want, "TVMFFIEnvGetStream(%d, %d) gave %p, the last set was %p",
              type, id, got, want);
}

typedef struct {
  const uint8_t* data;
  size_t size;
  int keep_set; /* a thread that exits with its pairs set */
} Run;

static void run_ops(const Run* run) {
  FuzzReader r = fuzz_reader(run->data, run->size);
  Model m;
  memset(&m, 0, sizeof m);
  for (int op = 0; op < MAX_OPS && fuzz_left(&r) > 0; ++op) {
    uint8_t what = fuzz_u8(&r);
    int32_t type, id;
    /* Often the pair of an earlier operation, so that sets are replaced,
     * cleared and read back. */
    if ((what & 0x80) && m.n > 0) {
      Pair* p = &m.pairs[fuzz_u8(&r) % m.n];
      type = p->type;
      id = p->id;
    } else {
      type = read_value(&r);
      id = read_value(&r);
    }
    if (avoided(type, id)) continue;
    switch (what % 4) {
      case 0: do_set(&m, type, id, stream_of(fuzz_u8(&r)), 1); break;
      case 1: do_set(&m, type, id, stream_of(fuzz_u8(&r)), 0); break;
      case 2: do_set(&m, type, id, NULL, what & 0x40); break;
      default: do_get(&m, type, id); break;
    }
  }
  for (int k = 0; k < m.n; ++k) do_get(&m, m.pairs[k].type, m.pairs[k].id);
  if (run->keep_set) return;
  for (int k = 0; k < m.n; ++k) {
    if (m.pairs[k].stream != NULL) do_set(&m, m.pairs[k].type, m.pairs[k].id, NULL, 1);
  }
}

static void* run_thread(void* arg) {
  run_ops(arg);
  return NULL;
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  static const char* const needed[] = {"TVMFFIEnvSetStream", "TVMFFIEnvGetStream",
                                       "TVMFFIErrorMoveFromRaised", "TVMFFIObjectDecRef", NULL};
  fuzz_impl_init("stream", needed);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  /* First byte: with both high bits set the operations run on a thread of
   * their own, which with bit 0 set exits leaving its pairs set. */
  Run run = {data + 1, size - 1, 0};
  if ((data[0] & 0xc0) == 0xc0) {
    run.keep_set = data[0] & 1;
    pthread_t t;
    FUZZ_CHECK(pthread_create(&t, NULL, run_thread, &run) == 0, "pthread_create");
    pthread_join(t, NULL);
  } else {
    run_ops(&run);
  }
  return 0;
}
