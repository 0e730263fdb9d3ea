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

/* A thread that asks for a backtrace with long names (or a short one) and
 * exits. */
static void* backtrace_then_exit(void* arg) {
  static char name[2001];
  for (int i = 0; i < 2000; ++i) name[i] = (char)('a' + i % 26);
  int longer = *(int*)arg;
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  conf_api.TVMFFIBacktrace("short.c", 1, "f", 0);
  if (longer) conf_api.TVMFFIBacktrace(name, 2, name, 0);
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
 * thread exits: a thread that asked for a backtrace with 2000-byte names
 * leaves no more live allocations behind than one that asked for a short
 * one. */
TEST(err_slot, ERR_065_backtrace_text_freed_at_exit) {
  (void)API(TVMFFIBacktrace), (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  left_by_backtrace_thread(1); /* warm: whatever a first thread sets up once */
  long base = left_by_backtrace_thread(0);
  long left = left_by_backtrace_thread(1);
  cr_assert_eq(left, base,
               "a thread that asked for a long backtrace left %ld live allocations behind, "
               "one with a short one %ld",
               left, base);
}
