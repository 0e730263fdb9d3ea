/* Clauses of spec/env.md: streams, the tensor allocator, signal checks and
 * host C API registration. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "core_support.h"
#include "tensor_support.h"

#define S(n) ((TVMFFIStreamHandle)(uintptr_t)(n))

/* Runs fn(arg) in a new thread and waits for it. */
static void in_thread(void* (*fn)(void*), void* arg) {
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, fn, arg), 0);
  cr_assert_eq(pthread_join(th, NULL), 0);
}

/* ---- streams ---- */

/* ENV-001: a pair never set reads NULL. */
TEST(env, ENV_001_unset_stream_is_null) {
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, 0));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCPU, 0));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLROCM, 3));
}

/* ENV-002: a stream set reads back in the same thread. */
TEST(env, ENV_002_set_then_get) {
  TVMFFIStreamHandle old = S(1);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 1, S(0xabc0), &old), 0);
  cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 1), S(0xabc0));
  cr_expect_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 1, NULL, NULL), 0);
}

/* ENV-003: the out parameter receives the previous stream. */
TEST(env, ENV_003_returns_previous_stream) {
  TVMFFIStreamHandle old = S(1);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, S(0x100), &old), 0);
  cr_expect_null(old, "first previous stream should be NULL, got %p", old);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, S(0x200), &old), 0);
  cr_expect_eq(old, S(0x100));
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, NULL, &old), 0);
  cr_expect_eq(old, S(0x200));
}

/* ENV-004: a NULL out parameter is accepted. */
TEST(env, ENV_004_null_out_parameter) {
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 2, S(0x300), NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 2), S(0x300));
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 2, NULL, NULL), 0);
}

/* ENV-005: the table is keyed by (device type, device id). */
TEST(env, ENV_005_keyed_by_type_and_id) {
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 1, S(0x10), NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLROCM, 1, S(0x20), NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 40, S(0x30), NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 1), S(0x10));
  cr_expect_eq(API(TVMFFIEnvGetStream)(kDLROCM, 1), S(0x20));
  cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 40), S(0x30));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, 0));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, 2));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLROCM, 0));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDAHost, 1));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, 39));
  API(TVMFFIEnvSetStream)(kDLCUDA, 1, NULL, NULL);
  API(TVMFFIEnvSetStream)(kDLROCM, 1, NULL, NULL);
  API(TVMFFIEnvSetStream)(kDLCUDA, 40, NULL, NULL);
}

typedef struct {
  int32_t id;
  TVMFFIStreamHandle seen_before, seen_after, mine;
} StreamThread;

static void* stream_thread(void* arg) {
  StreamThread* st = arg;
  st->seen_before = API(TVMFFIEnvGetStream)(kDLCUDA, st->id);
  API(TVMFFIEnvSetStream)(kDLCUDA, st->id, st->mine, NULL);
  st->seen_after = API(TVMFFIEnvGetStream)(kDLCUDA, st->id);
  API(TVMFFIEnvSetStream)(kDLCUDA, st->id, NULL, NULL);
  return NULL;
}

/* ENV-006: streams are per thread (fast-table ids and large ids alike). */
TEST(env, ENV_006_per_thread) {
  int32_t ids[2] = {0, 5000};
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, ids[k], S(0xaa0), NULL), 0);
    StreamThread st = {.id = ids[k], .mine = S(0xbb0)};
    in_thread(stream_thread, &st);
    cr_expect_null(st.seen_before, "id %d: another thread's stream was visible", ids[k]);
    cr_expect_eq(st.seen_after, S(0xbb0));
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, ids[k]), S(0xaa0),
                 "id %d: another thread's set changed this thread's stream", ids[k]);
    API(TVMFFIEnvSetStream)(kDLCUDA, ids[k], NULL, NULL);
  }
  /* Many threads at once, each with its own streams. */
  enum { N = 8 };
  pthread_t th[N];
  StreamThread st[N];
  for (int i = 0; i < N; ++i) {
    st[i] = (StreamThread){.id = i % 2 ? 3 : 1000 + i, .mine = S(0x1000 + 16 * i)};
    cr_assert_eq(pthread_create(&th[i], NULL, stream_thread, &st[i]), 0);
  }
  for (int i = 0; i < N; ++i) {
    pthread_join(th[i], NULL);
    cr_expect_null(st[i].seen_before);
    cr_expect_eq(st[i].seen_after, S(0x1000 + 16 * i));
  }
}

/* ENV-007: setting NULL clears the pair. */
TEST(env, ENV_007_null_clears) {
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, S(0x40), NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, NULL, NULL), 0);
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, 0));
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 300, S(0x50), NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 300, NULL, NULL), 0);
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, 300));
}

/* ENV-008: every type in [0, 1024) and id in [0, 65536) works. */
TEST(env, ENV_008_accepted_range) {
  static const int32_t types[] = {0, 1, 2, 18, 31, 32, 100, 1023};
  static const int32_t ids[] = {0, 1, 15, 16, 255, 4096, 65535};
  uintptr_t n = 1;
  for (size_t i = 0; i < sizeof types / sizeof *types; ++i) {
    for (size_t j = 0; j < sizeof ids / sizeof *ids; ++j, ++n) {
      cr_assert_eq(API(TVMFFIEnvSetStream)(types[i], ids[j], S(n * 16), NULL), 0,
                   "(%d, %d) refused", types[i], ids[j]);
    }
  }
  n = 1;
  for (size_t i = 0; i < sizeof types / sizeof *types; ++i) {
    for (size_t j = 0; j < sizeof ids / sizeof *ids; ++j, ++n) {
      cr_expect_eq(API(TVMFFIEnvGetStream)(types[i], ids[j]), S(n * 16), "(%d, %d)", types[i],
                   ids[j]);
      API(TVMFFIEnvSetStream)(types[i], ids[j], NULL, NULL);
    }
  }
}

/* A refused SetStream: -1, ValueError naming `part`, nothing changed. */
static void expect_set_refused(int32_t type, int32_t id, const char* part) {
  TVMFFIStreamHandle old = S(0x5);
  cr_expect_eq(API(TVMFFIEnvSetStream)(type, id, S(0x60), &old), -1, "(%d, %d) accepted", type, id);
  EXPECT_RAISED(.kind = "ValueError", .says = {part});
  cr_expect_null(API(TVMFFIEnvGetStream)(type, id));
}

/* ENV-009: a negative device type is refused. */
TEST(env, ENV_009_negative_type_refused) {
  HOSTILE_INPUT(
      "upstream 0.1.16 indexes its table with the negative type (segfault); "
      "see spec/deviations.md ENV-009");
  expect_set_refused(-1, 0, "device_type");
  expect_set_refused(INT32_MIN, 0, "device_type");
}

/* ENV-010: a negative device id is refused. */
TEST(env, ENV_010_negative_id_refused) {
  HOSTILE_INPUT(
      "upstream 0.1.16 indexes its table with the negative id (segfault); "
      "see spec/deviations.md ENV-010");
  expect_set_refused(kDLCUDA, -1, "device_id");
}

static long max_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* ENV-011: device id 2^28 is refused without a proportional allocation. */
TEST(env, ENV_011_huge_id_refused) {
  HOSTILE_INPUT(
      "upstream 0.1.16 grows its table to the id (2 GiB for 2^28); "
      "see spec/deviations.md ENV-011");
  long before = max_rss_kib();
  expect_set_refused(kDLCUDA, 1 << 28, "device_id");
  expect_set_refused(kDLCUDA, INT32_MAX, "device_id");
  cr_expect_lt(max_rss_kib() - before, 16 * 1024, "peak memory grew by %ld KiB",
               max_rss_kib() - before);
}

/* ENV-012: device type 2^28 is refused without a proportional allocation. */
TEST(env, ENV_012_huge_type_refused) {
  HOSTILE_INPUT(
      "upstream 0.1.16 grows its table to the type (6 GiB for 2^28); "
      "see spec/deviations.md ENV-012");
  long before = max_rss_kib();
  expect_set_refused(1 << 28, 0, "device_type");
  cr_expect_lt(max_rss_kib() - before, 16 * 1024, "peak memory grew by %ld KiB",
               max_rss_kib() - before);
}

/* ENV-013: reading a hostile pair gives NULL and raises nothing. */
TEST(env, ENV_013_get_hostile_is_null) {
  cr_expect_null(API(TVMFFIEnvGetStream)(-1, 0));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, -1));
  cr_expect_null(API(TVMFFIEnvGetStream)(INT32_MIN, INT32_MIN));
  cr_expect_null(API(TVMFFIEnvGetStream)(1 << 28, 1 << 28));
  cr_expect_null(API(TVMFFIEnvGetStream)(kDLCUDA, INT32_MAX));
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_expect_null(err, "a read raised an error");
  if (err) API(TVMFFIObjectDecRef)(err);
}

/* ENV-090: the first type and id past the accepted range are refused, as
 * the huge ones are: a caller gets the same range from every runtime. */
TEST(env, ENV_090_first_values_past_range_refused) {
  expect_set_refused(1024, 0, "device_type");
  expect_set_refused(1024, 3, "device_type");
  expect_set_refused(2, 65536, "device_id");
  expect_set_refused(100, 65536, "device_id");
  expect_set_refused(1023, 65536, "device_id");
  /* The last accepted values still work beside them. */
  cr_assert_eq(API(TVMFFIEnvSetStream)(1023, 65535, S(0x70), NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetStream)(1023, 65535), S(0x70));
  API(TVMFFIEnvSetStream)(1023, 65535, NULL, NULL);
}

/* A refused SetStream whose ValueError names the call, `part` and the
 * refused value as the caller wrote it in decimal. */
static void expect_refusal_quotes(int32_t type, int32_t id, const char* part, const char* value) {
  cr_expect_eq(API(TVMFFIEnvSetStream)(type, id, S(0x60), NULL), -1, "(%d, %d) accepted", type, id);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1,
            "(%d, %d) refused without an error raised", type, id);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  const char* want[] = {"TVMFFIEnvSetStream", part, value};
  for (int i = 0; i < 3; ++i) {
    cr_expect(memmem(cell->message.data, cell->message.size, want[i], strlen(want[i])) != NULL,
              "(%d, %d): the message does not contain \"%s\": %.*s", type, id, want[i],
              (int)cell->message.size, cell->message.data);
  }
  API(TVMFFIObjectDecRef)(err);
}

/* ENV-091: the ValueError of a refused device type or id names
 * TVMFFIEnvSetStream, the argument and the refused value. */
TEST(env, ENV_091_refusal_quotes_value) {
  HOSTILE_INPUT(
      "upstream 0.1.16 indexes its table with a negative type or id (segfault); "
      "see spec/deviations.md ENV-009");
  expect_refusal_quotes(-7, 0, "device_type", "-7");
  expect_refusal_quotes(1 << 28, 5, "device_type", "268435456");
  expect_refusal_quotes(1024, 0, "device_type", "1024");
  expect_refusal_quotes(2, -9, "device_id", "-9");
  expect_refusal_quotes(2, 70001, "device_id", "70001");
  expect_refusal_quotes(31, INT32_MAX, "device_id", "2147483647");
}

/* ---- tensor allocation ---- */

static int alloc_a_calls, alloc_b_calls;
static DLTensor* alloc_seen;
static Producer alloc_made;

/* Makes a managed tensor over producer_buffer with the prototype's
 * metadata and NULL strides. */
static int alloc_a(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                   void (*set_error)(void*, const char*, const char*)) {
  (void)ctx;
  (void)set_error;
  alloc_a_calls++;
  alloc_seen = proto;
  producer_init(&alloc_made);
  for (int i = 0; i < proto->ndim && i < 8; ++i) alloc_made.shape[i] = proto->shape[i];
  alloc_made.v.dl_tensor.ndim = proto->ndim;
  alloc_made.v.dl_tensor.dtype = proto->dtype;
  alloc_made.v.dl_tensor.device = proto->device;
  *out = &alloc_made.v;
  return 0;
}

static int alloc_b(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                   void (*set_error)(void*, const char*, const char*)) {
  alloc_b_calls++;
  return alloc_a(proto, out, ctx, set_error);
}

static int alloc_fails(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                       void (*set_error)(void*, const char*, const char*)) {
  (void)proto;
  (void)out;
  alloc_a_calls++;
  set_error(ctx, "MemoryError", "pool exhausted: 4096 bytes wanted");
  return -1;
}

static int alloc_null(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                      void (*set_error)(void*, const char*, const char*)) {
  (void)proto;
  (void)ctx;
  (void)set_error;
  alloc_a_calls++;
  *out = NULL;
  return 0;
}

static void* get_allocator_thread(void* arg) {
  *(DLPackManagedTensorAllocator*)arg = API(TVMFFIEnvGetDLPackManagedTensorAllocator)();
  return NULL;
}

/* ENV-020: no allocator until one is set. */
TEST(env, ENV_020_no_allocator_initially) {
  cr_expect_null(API(TVMFFIEnvGetDLPackManagedTensorAllocator)());
}

/* ENV-021: a thread-local allocator is the thread's own. */
TEST(env, ENV_021_thread_local_allocator) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 0, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetDLPackManagedTensorAllocator)(), alloc_a);
  DLPackManagedTensorAllocator other = alloc_b;
  in_thread(get_allocator_thread, &other);
  cr_expect_null(other, "another thread saw this thread's allocator");
}

/* ENV-022: a global allocator reaches threads without their own. */
TEST(env, ENV_022_global_allocator) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 1, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetDLPackManagedTensorAllocator)(), alloc_a);
  DLPackManagedTensorAllocator other = NULL;
  in_thread(get_allocator_thread, &other);
  cr_expect_eq(other, alloc_a, "global allocator not seen by another thread");
}

typedef struct {
  DLPackManagedTensorAllocator orig, after_restore;
} RestoreThread;

static void* restore_thread(void* arg) {
  RestoreThread* rt = arg;
  rt->orig = alloc_b;
  API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_b, 0, &rt->orig);
  API(TVMFFIEnvSetDLPackManagedTensorAllocator)(rt->orig, 0, NULL);
  rt->after_restore = API(TVMFFIEnvGetDLPackManagedTensorAllocator)();
  return NULL;
}

/* ENV-023: the original handed back is the thread's own allocator. */
TEST(env, ENV_023_original_is_thread_own) {
  DLPackManagedTensorAllocator orig = alloc_b;
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 1, &orig), 0);
  cr_expect_null(orig, "first original should be NULL");
  RestoreThread rt = {0};
  in_thread(restore_thread, &rt);
  cr_expect_null(rt.orig, "a thread without its own allocator got %p as original", (void*)rt.orig);
  cr_expect_eq(rt.after_restore, alloc_a, "restoring did not bring back the global allocator");
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_b, 0, &orig), 0);
  cr_expect_eq(orig, alloc_a);
}

/* ENV-024: the thread's allocator wins over the global one. */
TEST(env, ENV_024_local_over_global) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 1, NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_b, 0, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetDLPackManagedTensorAllocator)(), alloc_b);
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(NULL, 0, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetDLPackManagedTensorAllocator)(), alloc_a);
}

/* ENV-025: a NULL out parameter is accepted. */
TEST(env, ENV_025_null_out_parameter) {
  cr_expect_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_b, 0, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvGetDLPackManagedTensorAllocator)(), alloc_b);
}

static DLTensor proto_2x3(int64_t* shape) {
  shape[0] = 2;
  shape[1] = 3;
  return (DLTensor){.data = NULL,
                    .device = {kDLCPU, 0},
                    .ndim = 2,
                    .dtype = {kDLFloat, 32, 1},
                    .shape = shape,
                    .strides = NULL,
                    .byte_offset = 0};
}

/* ENV-026: allocation without an allocator is a RuntimeError. */
TEST(env, ENV_026_alloc_without_allocator) {
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"allocator"});
}

/* ENV-027: the allocated tensor matches the prototype. */
TEST(env, ENV_027_alloc_matches_prototype) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 0, NULL), 0);
  int64_t shape[3] = {4, 5, 6};
  DLTensor proto = {.device = {kDLCUDA, 1}, .ndim = 3, .dtype = {kDLBfloat, 16, 1}, .shape = shape};
  TVMFFIObjectHandle out = NULL;
  cr_assert_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), 0);
  cr_expect_eq(alloc_a_calls, 1);
  cr_expect_eq(alloc_seen->ndim, 3);
  cr_expect_eq(alloc_seen->shape[2], 6);
  DLTensor* dl = tensor_dl(out);
  cr_expect_eq(((TVMFFIObject*)out)->type_index, kTVMFFITensor);
  cr_expect_eq(dl->data, (void*)producer_buffer);
  cr_expect_eq(dl->device.device_type, kDLCUDA);
  cr_expect_eq(dl->device.device_id, 1);
  cr_expect_eq(dl->dtype.code, kDLBfloat);
  cr_expect_eq(dl->dtype.bits, 16);
  cr_expect_eq(dl->ndim, 3);
  for (int i = 0; i < 3; ++i) cr_expect_eq(dl->shape[i], shape[i]);
  cr_assert_not_null(dl->strides);
  cr_expect_eq(dl->strides[0], 30);
  cr_expect_eq(dl->strides[1], 6);
  cr_expect_eq(dl->strides[2], 1);
  API(TVMFFIObjectDecRef)(out);
}

/* ENV-028: the allocated tensor runs the managed deleter once. */
TEST(env, ENV_028_alloc_deleter_once) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_assert_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), 0);
  API(TVMFFIObjectIncRef)(out);
  API(TVMFFIObjectDecRef)(out);
  cr_expect_eq(alloc_made.deleted, 0);
  API(TVMFFIObjectDecRef)(out);
  cr_expect_eq(alloc_made.deleted, 1, "managed deleter ran %d times", alloc_made.deleted);
}

/* ENV-029: an allocator's reported error reaches the caller. */
TEST(env, ENV_029_allocator_error_propagates) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_fails, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  cr_expect_eq(alloc_a_calls, 1);
  EXPECT_RAISED(.kind = "MemoryError", .says = {"pool exhausted: 4096 bytes wanted"});
}

/* ENV-030: an allocator that produces nothing gives RuntimeError. */
TEST(env, ENV_030_allocator_returns_null) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_null, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
}

/* ENV-031: a hostile prototype never reaches the allocator. */
TEST(env, ENV_031_hostile_prototype_refused) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_null, 0, NULL), 0);
  int64_t shape[2] = {2, -3};
  DLTensor proto = proto_2x3(shape);
  shape[1] = -3;
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"prototype"});
  proto.shape = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"prototype"});
  proto.shape = shape;
  proto.ndim = 1000;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"prototype"});
  cr_expect_eq(alloc_a_calls, 0, "the allocator saw a hostile prototype");
}

/* ---- signals and host C API ---- */

static char host_log[16];
static int host_log_n;
static void* host_released;
static int host_check_result;

static int host_check(void) {
  host_log[host_log_n++] = 'C';
  if (host_check_result != 0) {
    API(TVMFFIErrorSetRaisedFromCStr)("KeyboardInterrupt", "interrupted by signal 2");
  }
  return host_check_result;
}
static void* host_ensure(void) {
  host_log[host_log_n++] = 'E';
  return (void*)(uintptr_t)0x6170;
}
static void host_release(void* state) {
  host_log[host_log_n++] = 'R';
  host_released = state;
}

static void register_host(void) {
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyGILState_Ensure", (void*)host_ensure), 0);
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyGILState_Release", (void*)host_release), 0);
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_CheckSignals", (void*)host_check), 0);
}

/* ENV-040: with nothing registered the check passes. */
TEST(env, ENV_040_check_signals_default) { cr_expect_eq(API(TVMFFIEnvCheckSignals)(), 0); }

/* ENV-041: the three host names are accepted. */
TEST(env, ENV_041_register_known_names) {
  register_host();
  cr_expect_eq(host_log_n, 0, "registering called a host function");
}

/* ENV-042: any other name is a ValueError naming it. */
TEST(env, ENV_042_register_unknown_name) {
  cr_expect_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_NoSuchThing", (void*)host_check), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"PyErr_NoSuchThing"});
}

/* ENV-043: the check runs inside Ensure/Release and passes when 0. */
TEST(env, ENV_043_check_signals_calls_host) {
  register_host();
  cr_expect_eq(API(TVMFFIEnvCheckSignals)(), 0);
  host_log[host_log_n] = '\0';
  cr_expect_str_eq(host_log, "ECR", "host calls in order: %s", host_log);
  cr_expect_eq(host_released, (void*)(uintptr_t)0x6170, "Release got another state");
}

/* ENV-044: a failing check makes CheckSignals fail with its error. */
TEST(env, ENV_044_check_signals_failure) {
  register_host();
  host_check_result = -1;
  cr_expect_neq(API(TVMFFIEnvCheckSignals)(), 0);
  host_log[host_log_n] = '\0';
  cr_expect_str_eq(host_log, "ECR");
  EXPECT_RAISED(.kind = "KeyboardInterrupt", .says = {"interrupted by signal 2"});
}

/* ENV-045: a NULL name is a ValueError naming `name`. */
TEST(env, ENV_045_register_null_name) {
  HOSTILE_INPUT(
      "upstream 0.1.16 builds a string from the NULL name (segfault); "
      "see spec/deviations.md ENV-045");
  cr_expect_eq(API(TVMFFIEnvRegisterCAPI)(NULL, (void*)host_check), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
}

/* ---- the tensor allocator: failures and refusals ---- */

static int alloc_silent_failure(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                                void (*set_error)(void*, const char*, const char*)) {
  (void)proto, (void)out, (void)ctx, (void)set_error;
  alloc_a_calls++;
  return -1;
}

/* ENV-080: an allocator that fails without reporting still leaves an error
 * for the caller. */
TEST(env, ENV_080_silent_allocator_failure_raises) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_silent_failure, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  cr_expect_eq(alloc_a_calls, 1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"allocator"});
}

/* ENV-081: a NULL out is refused before the allocator runs. */
TEST(env, ENV_081_null_out_refused) {
  HOSTILE_INPUT("upstream writes the tensor through the NULL out");
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_a, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  cr_expect_eq(alloc_a_calls, 0, "the allocator ran for a call that cannot return its tensor");
}

static int alloc_null_kind(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                           void (*set_error)(void*, const char*, const char*)) {
  (void)proto, (void)out;
  alloc_a_calls++;
  set_error(ctx, NULL, alloc_a_calls == 1 ? "no kind given" : NULL);
  return -1;
}

/* ENV-082: SetError with a NULL kind raises RuntimeError, and with a NULL
 * message an empty message. */
TEST(env, ENV_082_set_error_null_parts) {
  HOSTILE_INPUT("upstream passes the NULL kind on unchecked");
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_null_kind, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"no kind given"});
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  cr_expect_eq(cell->message.size, 0);
  API(TVMFFIObjectDecRef)(err);
}

static int alloc_major_2(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                         void (*set_error)(void*, const char*, const char*)) {
  int rc = alloc_a(proto, out, ctx, set_error);
  alloc_made.v.version.major = 2;
  return rc;
}

/* ENV-083: a managed tensor from the allocator that the runtime refuses
 * (a DLPack major version it does not read, TEN-013) fails the call with
 * ValueError, and is released: its deleter runs once. */
TEST(env, ENV_083_refused_allocation_released) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_major_2, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1, "a major version 2 tensor was taken");
  EXPECT_RAISED(.kind = "ValueError");
  cr_expect_eq(alloc_made.deleted, 1, "the refused tensor's deleter ran %d times",
               alloc_made.deleted);
}

/* ENV-096: the refusals of TVMFFIEnvTensorAlloc and TVMFFIEnvRegisterCAPI
 * name the function, then the argument (or the allocator at fault), then
 * the value or what is wrong. */
TEST(env, ENV_096_refusal_names_function_argument_value) {
  HOSTILE_INPUT("upstream writes through a NULL out and reads a NULL name");
  const char* alloc_api = "TVMFFIEnvTensorAlloc";
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .api = alloc_api, .arg = "allocator");
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_silent_failure, 0, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .api = alloc_api, .arg = "allocator");
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_null, 0, NULL), 0);
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, &out), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .api = alloc_api, .arg = "allocator");
  cr_expect_eq(API(TVMFFIEnvTensorAlloc)(&proto, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = alloc_api, .arg = "out", .says = {"NULL"});
  cr_expect_eq(API(TVMFFIEnvRegisterCAPI)(NULL, (void*)host_check), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvRegisterCAPI", .arg = "name",
                .says = {"NULL"});
  cr_expect_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_NoSuchThing", (void*)host_check), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvRegisterCAPI", .arg = "name",
                .says = {"PyErr_NoSuchThing"});
}

/* As alloc_a, but rows padded to 4 elements: strides {4, 1}, so the
 * managed tensor is not contiguous. */
static int alloc_padded(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                        void (*set_error)(void*, const char*, const char*)) {
  int rc = alloc_a(proto, out, ctx, set_error);
  alloc_made.strides[0] = 4;
  alloc_made.strides[1] = 1;
  alloc_made.v.dl_tensor.strides = alloc_made.strides;
  return rc;
}

/* ENV-097: the allocator's managed tensor is taken as it is: one with
 * padded rows (strides {4, 1} for shape {2, 3}) is not refused for want
 * of contiguity; the Tensor keeps those strides and its data. */
TEST(env, ENV_097_allocator_strides_kept) {
  cr_assert_eq(API(TVMFFIEnvSetDLPackManagedTensorAllocator)(alloc_padded, 0, NULL), 0);
  int64_t shape[2];
  DLTensor proto = proto_2x3(shape);
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFIEnvTensorAlloc)(&proto, &out);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_eq(rc, 0, "a padded allocation was refused (rc %d, %s)", rc,
               err ? TVMFFIErrorGetCellPtr(err)->message.data : "nothing raised");
  cr_assert_null(err, "0 but an error was raised");
  DLTensor* dl = tensor_dl(out);
  cr_expect_eq(dl->data, (void*)producer_buffer);
  cr_expect_eq(dl->ndim, 2);
  cr_assert_not_null(dl->strides);
  cr_expect_eq(dl->strides[0], 4, "strides[0] is %lld", (long long)dl->strides[0]);
  cr_expect_eq(dl->strides[1], 1, "strides[1] is %lld", (long long)dl->strides[1]);
  cr_expect_eq(alloc_made.deleted, 0);
  API(TVMFFIObjectDecRef)(out);
  cr_expect_eq(alloc_made.deleted, 1, "managed deleter ran %d times", alloc_made.deleted);
}
