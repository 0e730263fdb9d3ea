/* Clauses of spec/errors.md on what a thread's raised slot leaves behind
 * when the thread exits. */
#include <pthread.h>
#include <stdint.h>

#include "alloc_fail.h"
#include "core_support.h"

/* A thread that raises an error from C strings, then either moves it out
 * and releases it or leaves it in its slot, and exits. */
static void* raise_then_exit(void* arg) {
  int leave_it = *(int*)arg;
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err); /* the slot exists in both runs */
  conf_api.TVMFFIErrorSetRaisedFromCStr("RuntimeError", "raised on a thread that exits");
  if (!leave_it) {
    conf_api.TVMFFIErrorMoveFromRaised(&err);
    if (err) conf_api.TVMFFIObjectDecRef(err);
  }
  return NULL;
}

static long left_by_thread(int leave_it) {
  pthread_t t;
  conf_alloc_count_start();
  if (pthread_create(&t, NULL, raise_then_exit, &leave_it) != 0) {
    conf_alloc_count_stop();
    cr_assert_fail("pthread_create failed");
  }
  pthread_join(t, NULL);
  return conf_alloc_count_stop();
}

/* ERR-056: an error raised from C strings and never moved out is freed when
 * its thread exits: such a thread leaves no more live allocations behind
 * than one that moved its error out and released it. */
TEST(err_slot, ERR_056_unretrieved_cstr_error_freed_at_exit) {
  (void)API(TVMFFIErrorSetRaisedFromCStr), (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  left_by_thread(1); /* warm: whatever a first thread sets up once */
  long base = left_by_thread(0);
  long left = left_by_thread(1);
  cr_assert_eq(left, base,
               "a thread that left its error raised left %ld live allocations behind, one that "
               "released it %ld",
               left, base);
}

/* The extra context of the error left in the exiting thread's slot: a
 * function whose deleter raises `again` on that thread. */
static TVMFFIObjectHandle again;
static int context_deleted;

static void raise_again_delete(void* self) {
  (void)self;
  context_deleted++;
  conf_api.TVMFFIErrorSetRaised(again);
}

static int no_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  return 0;
}

static void* leave_error_and_exit(void* arg) {
  TVMFFIObjectHandle err = arg;
  conf_api.TVMFFIErrorSetRaised(err);
  conf_api.TVMFFIObjectDecRef(err); /* the slot holds the only reference */
  return NULL;
}

static TVMFFIObjectHandle make_error(const char* kind, const char* msg, TVMFFIObjectHandle extra) {
  TVMFFIByteArray k = {kind, strlen(kind)}, m = {msg, strlen(msg)}, b = {"", 0};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, NULL, extra, &err), 0);
  cr_assert_not_null(err);
  return err;
}

/* ERR-057: when releasing the error left in an exiting thread's slot runs a
 * deleter that raises another error on that thread, that error is released
 * too: its holder's reference is the only one left. */
TEST(err_slot, ERR_057_error_raised_during_exit_released) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(&context_deleted, no_call, raise_again_delete, &fn), 0);
  again = make_error("KeyError", "raised by a deleter at thread exit", NULL);
  TVMFFIObjectHandle first = make_error("ValueError", "left in the slot", fn);
  API(TVMFFIObjectDecRef)(fn); /* the error holds the function */
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, leave_error_and_exit, first), 0);
  pthread_join(t, NULL);
  cr_assert_eq(context_deleted, 1, "the error's extra context was deleted %d times, expected 1",
               context_deleted);
  cr_assert_eq(core_strong(again), 1,
               "the error raised at thread exit has %u strong references, expected 1 "
               "(the slot's released)",
               core_strong(again));
  API(TVMFFIObjectDecRef)(again);
}

/* A thread that asks for backtraces, a short one then one with long names
 * (or for none), and exits. */
static void* backtrace_then_exit(void* arg) {
  static char name[2001];
  for (int i = 0; i < 2000; ++i) name[i] = (char)('a' + i % 26);
  int longer = *(int*)arg;
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  if (longer) {
    conf_api.TVMFFIBacktrace("short.c", 1, "f", 0);
    conf_api.TVMFFIBacktrace(name, 2, name, 0);
  }
  return NULL;
}

static long left_by_backtrace_thread(int longer) {
  pthread_t t;
  conf_alloc_count_start();
  if (pthread_create(&t, NULL, backtrace_then_exit, &longer) != 0) {
    conf_alloc_count_stop();
    cr_assert_fail("pthread_create failed");
  }
  pthread_join(t, NULL);
  return conf_alloc_count_stop();
}

/* ERR-065: what TVMFFIBacktrace keeps for a thread is released when the
 * thread exits: a thread that asked for backtraces (one with 2000-byte
 * names) leaves no more live allocations behind than one that asked for
 * none. */
TEST(err_slot, ERR_065_backtrace_text_freed_at_exit) {
  (void)API(TVMFFIBacktrace), (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  left_by_backtrace_thread(1); /* warm: whatever a first thread sets up once */
  long base = left_by_backtrace_thread(0);
  long left = left_by_backtrace_thread(1);
  cr_assert_eq(left, base,
               "a thread that asked for backtraces left %ld live allocations behind, one that "
               "asked for none %ld",
               left, base);
}

/* The deleter of ERR-071: asks for a backtrace with long names while its
 * thread exits, and keeps whether the frame came back whole. */
static char exit_name[1501];
static int exit_frame_whole = -1;

static void backtrace_at_exit_delete(void* self) {
  (void)self;
  const TVMFFIByteArray* bt = conf_api.TVMFFIBacktrace(exit_name, 5, "at_exit", 0);
  exit_frame_whole = bt != NULL && bt->data != NULL &&
                     memmem(bt->data, bt->size, exit_name, sizeof exit_name - 1) != NULL;
}

static void* backtrace_then_leave_error(void* arg) {
  conf_api.TVMFFIBacktrace(exit_name, 4, "before_exit", 0);
  return leave_error_and_exit(arg);
}

/* ERR-071: TVMFFIBacktrace works while its thread exits, after the thread
 * used it before: a deleter run by the release of the error left in the
 * exiting thread's slot gets its frame whole, and the thread leaves no more
 * live allocations behind than one that did the same without it. */
TEST(err_slot, ERR_071_backtrace_during_thread_exit) {
  for (int i = 0; i < 1500; ++i) exit_name[i] = (char)('a' + i % 26);
  /* This process's first backtrace and first raise, in that order. */
  API(TVMFFIBacktrace)("first.c", 1, "f", 0);
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "first");
  API(TVMFFIObjectDecRef)(core_take_raised());
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(&exit_frame_whole, no_call, backtrace_at_exit_delete, &fn),
               0);
  TVMFFIObjectHandle first = make_error("ValueError", "left in the slot", fn);
  API(TVMFFIObjectDecRef)(fn);
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, backtrace_then_leave_error, first), 0);
  pthread_join(t, NULL);
  cr_assert_eq(exit_frame_whole, 1, "the backtrace asked for during thread exit: %s",
               exit_frame_whole < 0 ? "the deleter never ran" : "the frame was not whole");
}

/* ERR-075: each MemoryError moved out after a raise that ran out of memory
 * is a reference the mover owns: two held at once are two objects, or one
 * whose strong count rose by one when the second was moved out and is back
 * where it was once the second is released. */
TEST(err_slot, ERR_075_memory_errors_held_at_once_are_counted) {
  (void)API(TVMFFIErrorSetRaisedFromCStr), (void)API(TVMFFIErrorMoveFromRaised);
  (void)API(TVMFFIObjectDecRef);
  conf_alloc_require();
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  TVMFFIObjectHandle held[2] = {NULL, NULL};
  uint32_t strong[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    conf_alloc_fail_from(0);
    conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", "no memory left to make this error");
    conf_alloc_off();
    conf_api.TVMFFIErrorMoveFromRaised(&held[i]);
    if (held[i]) strong[i] = core_strong(held[i]);
  }
  cr_assert(held[0] && held[1], "nothing raised while memory ran out");
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(held[0]);
  int memory_error = cell->kind.size == 11 && memcmp(cell->kind.data, "MemoryError", 11) == 0;
  uint32_t after_release = 0;
  if (held[0] == held[1]) {
    conf_api.TVMFFIObjectDecRef(held[1]);
    after_release = core_strong(held[0]);
  } else {
    conf_api.TVMFFIObjectDecRef(held[1]);
  }
  conf_api.TVMFFIObjectDecRef(held[0]);
  if (held[0] != held[1]) return; /* two objects, each its own reference */
  cr_assert(memory_error, "one object moved out twice is not a MemoryError");
  cr_assert_eq(strong[1], strong[0] + 1,
               "the MemoryError held twice has strong count %u, %u with one reference held",
               strong[1], strong[0]);
  cr_assert_eq(after_release, strong[0],
               "releasing the second reference left strong count %u, expected %u", after_release,
               strong[0]);
}

/* ERR-076: a MemoryError moved out after a raise that ran out of memory
 * holds the one weak reference all strong references share, as any object
 * the API returns does (OBJ-003), and at least the mover's strong one. */
TEST(err_slot, ERR_076_memory_error_reference_counts) {
  (void)API(TVMFFIErrorSetRaisedFromCStr), (void)API(TVMFFIErrorMoveFromRaised);
  (void)API(TVMFFIObjectDecRef);
  conf_alloc_require();
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  for (int round = 0; round < 3; ++round) {
    TVMFFIObjectHandle err = NULL;
    conf_alloc_fail_from(0);
    conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", "no memory left to make this error");
    conf_alloc_off();
    conf_api.TVMFFIErrorMoveFromRaised(&err);
    cr_assert_not_null(err, "round %d: nothing raised while memory ran out", round);
    uint32_t weak = core_weak(err), strong = core_strong(err);
    conf_api.TVMFFIObjectDecRef(err);
    cr_assert_eq(weak, 1, "round %d: weak count %u, expected 1", round, weak);
    cr_assert_geq(strong, 1, "round %d: strong count %u", round, strong);
  }
}

/* ERR-078: the backtrace of a MemoryError raised because memory ran out
 * holds no NUL byte within its size and is followed by one (ERR-070). */
TEST(err_slot, ERR_078_memory_error_backtrace_is_text) {
  (void)API(TVMFFIErrorSetRaisedFromCStr), (void)API(TVMFFIErrorMoveFromRaised);
  (void)API(TVMFFIObjectDecRef);
  conf_alloc_require();
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  TVMFFIObjectHandle err = NULL;
  conf_alloc_fail_from(0);
  conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", "no memory left to make this error");
  conf_alloc_off();
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err, "nothing raised while memory ran out");
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  int memory_error = cell->kind.size == 11 && memcmp(cell->kind.data, "MemoryError", 11) == 0;
  TVMFFIByteArray bt = cell->backtrace;
  int nul_inside = bt.data != NULL && memchr(bt.data, 0, bt.size) != NULL;
  int nul_after = bt.data != NULL && bt.data[bt.size] == '\0';
  conf_api.TVMFFIObjectDecRef(err);
  if (!memory_error) cr_skip_test("the asked-for error was made with every allocation failing");
  cr_assert_not_null(bt.data, "the MemoryError's backtrace data is NULL");
  cr_assert(!nul_inside, "the MemoryError's backtrace (%zu bytes) holds a NUL byte", bt.size);
  cr_assert(nul_after, "the MemoryError's backtrace is not followed by a NUL byte");
}
