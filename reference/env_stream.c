/*
 * Per-thread streams: TVMFFIEnvSetStream / TVMFFIEnvGetStream.
 *
 * Kernels read their stream on every call, so the read is one thread-local
 * load plus an index: each thread owns a table, reached through a single
 * pointer in static TLS (initial-exec, so no __tls_get_addr call even though
 * this is a dlopen'ed library; 8 bytes fit the surplus glibc keeps for that).
 * The table is allocated on a thread's first SetStream, so threads that never
 * set a stream cost nothing. Pairs outside the fast table (still within the
 * accepted range) go to a small list that grows with the number of pairs
 * set, never with the size of an id.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include <tvm/ffi/extra/c_env_api.h>

#include "tffi_error.h"
#include "mem.h"
#include "vec.h"

/* Accepted range: generous for any real system, small enough that a
 * hostile id is refused instead of sizing anything. */
#define TFFI_STREAM_MAX_TYPE 1024
#define TFFI_STREAM_MAX_ID 65536

/* The bounds as text, so that a refusal's message quotes them. */
#define TFFI_STREAM_TEXT_(x) #x
#define TFFI_STREAM_TEXT(x) TFFI_STREAM_TEXT_(x)

/* The fast table: device types up to 31 (DLPack defines up to 18) and up
 * to 16 devices of each. */
#define TFFI_STREAM_FAST_TYPES 32
#define TFFI_STREAM_FAST_IDS 16

typedef struct {
  int32_t device_type;
  int32_t device_id;
  TVMFFIStreamHandle stream;
} TffiStreamEntry;

typedef struct {
  TVMFFIStreamHandle fast[TFFI_STREAM_FAST_TYPES][TFFI_STREAM_FAST_IDS];
  struct {
    TffiStreamEntry* items; /* pairs outside the fast table, unordered */
    size_t n, cap;
  } more;
} TffiStreams;

static _Thread_local TffiStreams* tffi_streams __attribute__((tls_model("initial-exec")));

/* A thread's table is released when the thread exits. */
/* PTHREAD_KEYS_MAX is no key: should the key never be made, a use fails
 * instead of touching key 0, which is someone else's. */
static pthread_key_t tffi_streams_key = PTHREAD_KEYS_MAX;
static pthread_once_t tffi_streams_once = PTHREAD_ONCE_INIT;
static int tffi_streams_key_error; /* pthread_key_create's result */

static void tffi_streams_release(void* table) {
  TffiStreams* s = table;
  tffi_free(s->more.items);
  tffi_free(s);
}

static void tffi_streams_key_init(void) {
  tffi_streams_key_error = pthread_key_create(&tffi_streams_key, tffi_streams_release);
}

static TffiStreams* tffi_streams_get_or_create(void) {
  if (tffi_streams != NULL) return tffi_streams;
  /* Without a key of its own the table could not be released at thread
   * exit, and any other key would be someone else's data. */
  pthread_once(&tffi_streams_once, tffi_streams_key_init);
  if (tffi_streams_key_error != 0) {
    tffi_raise(TFFI_RUNTIME_ERROR, "TVMFFIEnvSetStream: no thread-specific key left for streams");
    return NULL;
  }
  TffiStreams* s = tffi_calloc(1, sizeof *s);
  if (s == NULL) {
    tffi_raise(TFFI_MEMORY_ERROR,
               "TVMFFIEnvSetStream: out of memory for the thread's stream table");
    return NULL;
  }
  /* Fails only for memory: past the first 32 keys, the thread library
   * allocates a thread's slots on the first value it stores. */
  if (pthread_setspecific(tffi_streams_key, s) != 0) {
    tffi_free(s);
    tffi_raise(TFFI_MEMORY_ERROR,
               "TVMFFIEnvSetStream: out of memory registering the thread's stream table");
    return NULL;
  }
  tffi_streams = s;
  return s;
}

static TVMFFIStreamHandle tffi_stream_lookup_slow(const TffiStreams* s, int32_t type, int32_t id) {
  /* By index: an empty list's items is NULL, and NULL + 0 is undefined. */
  for (size_t i = 0; i < s->more.n; ++i) {
    const TffiStreamEntry* e = &s->more.items[i];
    if (e->device_type == type && e->device_id == id) return e->stream;
  }
  return NULL;
}

TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id) {
  const TffiStreams* s = tffi_streams;
  if (s == NULL) return NULL;
  if ((uint32_t)device_type < TFFI_STREAM_FAST_TYPES &&
      (uint32_t)device_id < TFFI_STREAM_FAST_IDS) {
    return s->fast[device_type][device_id];
  }
  return tffi_stream_lookup_slow(s, device_type, device_id);
}

/* Removes entry i (order does not matter). The list keeps its capacity
 * until the thread exits: a kernel that sets and clears its stream on
 * every launch must not allocate on every launch. */
static void tffi_stream_remove(TffiStreams* s, size_t i) {
  s->more.items[i] = s->more.items[--s->more.n];
}

static int tffi_stream_append(TffiStreams* s, int32_t type, int32_t id, TVMFFIStreamHandle stream) {
  if (TFFI_VEC_PUSH(&s->more, ((TffiStreamEntry){type, id, stream})) != 0)
    return tffi_raise(TFFI_MEMORY_ERROR, "TVMFFIEnvSetStream: out of memory for a stream entry");
  return 0;
}

static int tffi_stream_set_slow(TffiStreams* s, int32_t type, int32_t id, TVMFFIStreamHandle stream,
                                TVMFFIStreamHandle* old) {
  for (size_t i = 0; i < s->more.n; ++i) {
    TffiStreamEntry* e = &s->more.items[i];
    if (e->device_type != type || e->device_id != id) continue;
    *old = e->stream;
    if (stream == NULL)
      tffi_stream_remove(s, i);
    else
      e->stream = stream;
    return 0;
  }
  *old = NULL;
  return stream == NULL ? 0 : tffi_stream_append(s, type, id, stream);
}

int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                       TVMFFIStreamHandle* opt_out_original_stream) {
  /* clang-format off */
  if (device_type < 0 || device_type >= TFFI_STREAM_MAX_TYPE) {
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIEnvSetStream: device_type %d is outside [0, "
                      TFFI_STREAM_TEXT(TFFI_STREAM_MAX_TYPE) ")", device_type);
  }
  if (device_id < 0 || device_id >= TFFI_STREAM_MAX_ID) {
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIEnvSetStream: device_id %d is outside [0, "
                      TFFI_STREAM_TEXT(TFFI_STREAM_MAX_ID) ")", device_id);
  }
  /* clang-format on */
  TffiStreams* s = tffi_streams_get_or_create();
  if (s == NULL) return -1;
  TVMFFIStreamHandle old;
  if (device_type < TFFI_STREAM_FAST_TYPES && device_id < TFFI_STREAM_FAST_IDS) {
    old = s->fast[device_type][device_id];
    s->fast[device_type][device_id] = stream;
  } else if (tffi_stream_set_slow(s, device_type, device_id, stream, &old) != 0) {
    return -1;
  }
  if (opt_out_original_stream != NULL) *opt_out_original_stream = old;
  return 0;
}
