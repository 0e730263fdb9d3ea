/*
 * Out-of-memory clauses of spec/errors.md and spec/env.md: each call runs
 * with its 1st, 2nd, ... allocation failing (once, or from there on; see
 * alloc_fail.h) and must end in a documented outcome every time, with the
 * runtime working right after.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc_fail.h"
#include "core_support.h"

/* ---- helpers ------------------------------------------------------------ */

static const TVMFFIErrorCell* cell_of(TVMFFIObjectHandle err) { return conf_error_cell(err); }

static int bytes_are(TVMFFIByteArray got, const char* want) {
  return got.size == strlen(want) && memcmp(got.data, want, got.size) == 0;
}

/* Raising and moving out work as with memory to spare. */
static void expect_raising_works(void) {
  API(TVMFFIErrorSetRaisedFromCStr)("KeyError", "after the failure");
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "raising after an allocation failure raised nothing");
  cr_assert(bytes_are(cell_of(err)->kind, "KeyError") &&
                bytes_are(cell_of(err)->message, "after the failure"),
            "raising after an allocation failure: got %.*s: %.*s", (int)cell_of(err)->kind.size,
            cell_of(err)->kind.data, (int)cell_of(err)->message.size, cell_of(err)->message.data);
  API(TVMFFIObjectDecRef)(err);
}

/* Longer than any small buffer an implementation may format into. */
static const char long_message[] =
    "argument `x` must be positive, and this message goes on for a while so that no fixed "
    "buffer on the stack holds it: the implementation has to allocate for it, and the "
    "allocation is one of those this test fails. 0123456789abcdef0123456789abcdef0123456789"
    "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/* What one step of a raise walk saw, asserted after counting stopped. */
typedef struct {
  uint32_t earlier_strong; /* the earlier error's count right after the raise */
  int raised, asked, memory_error;
  char kind[64];
  long leaked; /* live blocks left once everything was released */
} RaiseStep;

static void take_step_error(RaiseStep* r, const char* kind, const char* msg) {
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  r->raised = err != NULL && TVMFFIObjectGetTypeIndex(err) == kTVMFFIError;
  if (!r->raised) return;
  const TVMFFIErrorCell* cell = cell_of(err);
  snprintf(r->kind, sizeof r->kind, "%.*s", (int)cell->kind.size, cell->kind.data);
  r->asked = bytes_are(cell->kind, kind) && bytes_are(cell->message, msg);
  r->memory_error = bytes_are(cell->kind, "MemoryError");
  conf_api.TVMFFIObjectDecRef(err);
}

/* One raise, walked over its allocations, with an earlier error held in the
 * slot: that one must be released whatever the outcome, and nothing the
 * step made may stay allocated. */
static long walk_raise(int sticky, int parts) {
  const char* pieces[] = {"argument `x` ", NULL, long_message + 13};
  TVMFFIByteArray k = {"IndexError", 10}, m = {"earlier", 7}, b = {"", 0};
  ConfAllocWalk w = conf_alloc_walk(sticky);
  /* One raise before the walk: what fails is the raise's own memory, not
   * the thread's first use of its error slot. */
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  while (conf_alloc_next(&w)) {
    RaiseStep r = {0};
    conf_alloc_count_start();
    TVMFFIObjectHandle earlier = NULL;
    conf_api.TVMFFIErrorCreate(&k, &m, &b, &earlier);
    conf_api.TVMFFIErrorSetRaised(earlier);
    conf_alloc_arm(&w);
    if (parts)
      conf_api.TVMFFIErrorSetRaisedFromCStrParts("ValueError", pieces, 3);
    else
      conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", long_message);
    conf_alloc_disarm(&w);
    r.earlier_strong = earlier ? core_strong(earlier) : 0;
    take_step_error(&r, "ValueError", long_message);
    if (earlier) conf_api.TVMFFIObjectDecRef(earlier);
    r.leaked = conf_alloc_count_stop();
    cr_assert_not_null(earlier);
    cr_assert_eq(r.earlier_strong, 1,
                 "allocation %ld failed: the earlier error's strong count is %u, expected 1 "
                 "(the slot's reference released)",
                 w.n, r.earlier_strong);
    cr_assert(r.raised, "allocation %ld failed: no error was raised", w.n);
    cr_assert(r.asked || r.memory_error,
              "allocation %ld failed: raised kind %s, expected ValueError or MemoryError", w.n,
              r.kind);
    cr_assert_eq(r.leaked, 0, "allocation %ld failed: %ld blocks left allocated", w.n, r.leaked);
    expect_raising_works();
  }
  return w.points;
}

/* ---- raising when memory runs out --------------------------------------- */

/* ERR-052: any one failed allocation inside TVMFFIErrorSetRaisedFromCStr
 * leaves the asked-for error or a MemoryError raised, releases the error
 * the slot held, and raising works right after. */
TEST(err_oom, ERR_052_cstr_raise_one_allocation_fails) {
  conf_alloc_done(walk_raise(0, 0), "TVMFFIErrorSetRaisedFromCStr");
}

/* ERR-053: the same with every allocation from the n-th on failing: an
 * error is still raised (a MemoryError when the asked-for one cannot be
 * made). */
TEST(err_oom, ERR_053_cstr_raise_memory_exhausted) {
  conf_alloc_done(walk_raise(1, 0), "TVMFFIErrorSetRaisedFromCStr");
}

/* ERR-054: TVMFFIErrorSetRaisedFromCStrParts, one allocation failing or all
 * from the n-th on: the asked-for error or a MemoryError is raised. */
TEST(err_oom, ERR_054_parts_raise_allocation_fails) {
  (void)API(TVMFFIErrorSetRaisedFromCStrParts);
  long points = walk_raise(0, 1);
  points += walk_raise(1, 1);
  conf_alloc_done(points, "TVMFFIErrorSetRaisedFromCStrParts");
}

/* ERR-055: TVMFFIErrorCreate with an allocation failing returns 0 and the
 * complete error, or -1 and no error object; creating works right after. */
TEST(err_oom, ERR_055_create_allocation_fails) {
  (void)API(TVMFFIErrorCreate);
  TVMFFIByteArray k = {"TypeError", 9}, m = {long_message, sizeof long_message - 1},
                  b = {"frame 1\nframe 2\n", 16};
  long points = 0;
  TVMFFIObjectHandle warm = NULL; /* whatever a first call sets up once */
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &warm), 0);
  API(TVMFFIObjectDecRef)(warm);
  /* Twice over: leaks count on the second pass only, when whatever a
   * first failure sets up once (an unwinder's tables) exists. */
  for (int pass = 0, sticky = 0; pass < 4; ++pass, sticky = pass % 2) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIObjectHandle out = NULL;
      conf_alloc_count_start();
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIErrorCreate(&k, &m, &b, &out);
      conf_alloc_disarm(&w);
      int complete = rc == 0 && out != NULL && bytes_are(cell_of(out)->kind, "TypeError") &&
                     bytes_are(cell_of(out)->message, long_message) &&
                     bytes_are(cell_of(out)->backtrace, "frame 1\nframe 2\n");
      if (rc == 0 && out != NULL) conf_api.TVMFFIObjectDecRef(out);
      TVMFFIObjectHandle raised = NULL;
      conf_api.TVMFFIErrorMoveFromRaised(&raised); /* whatever a failure raised */
      if (raised) conf_api.TVMFFIObjectDecRef(raised);
      long leaked = conf_alloc_count_stop();
      cr_assert(rc == 0 || rc == -1, "allocation %ld failed: returned %d", w.n, rc);
      cr_assert(rc != 0 || complete, "allocation %ld failed: returned 0 with an incomplete error",
                w.n);
      cr_assert(pass < 2 || leaked == 0, "allocation %ld failed: %ld blocks left allocated", w.n,
                leaked);
      TVMFFIObjectHandle again = NULL;
      cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &again), 0, "creating after the failure");
      API(TVMFFIObjectDecRef)(again);
    }
    points += w.points;
  }
  conf_alloc_done(points, "TVMFFIErrorCreate");
}

/* How the MemoryErrors of a sticky raise walk look: each is checked as
 * ERR-010 says for any raised error, and (strict) as ERR-008 says. */
static void walk_memory_errors(int strict) {
  ConfAllocWalk w = conf_alloc_walk(1);
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  long memory_errors = 0;
  while (conf_alloc_next(&w)) {
    conf_alloc_arm(&w);
    conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", long_message);
    conf_alloc_disarm(&w);
    TVMFFIObjectHandle err = core_take_raised();
    cr_assert_not_null(err, "allocation %ld on failed: nothing raised", w.n);
    TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    if (bytes_are(cell->kind, "MemoryError")) {
      memory_errors++;
      cr_assert_gt(cell->message.size, 0, "a MemoryError with an empty message");
      cr_assert_null(memchr(cell->message.data, 0, cell->message.size),
                     "a MemoryError whose message holds a NUL byte");
      cr_assert_not_null(cell->backtrace.data);
      volatile char sink = 0;
      for (size_t i = 0; i < cell->backtrace.size; ++i) sink ^= cell->backtrace.data[i];
      (void)sink;
      cr_assert_null(cell->cause_chain);
      cr_assert_null(cell->extra_context);
      cr_assert_not_null(cell->update_backtrace, "a MemoryError without update_backtrace");
      TVMFFIByteArray more = {"  File \"k.c\", line 1, in f\n", 28};
      cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeAppend);
      cr_assert_not_null(cell->backtrace.data);
      if (strict) {
        cr_assert_eq(cell->kind.data[cell->kind.size], '\0', "kind not followed by NUL");
        cr_assert_eq(cell->message.data[cell->message.size], '\0', "message not followed by NUL");
      }
    }
    API(TVMFFIObjectDecRef)(err);
  }
  if (memory_errors == 0) cr_skip_test("no MemoryError was raised while memory ran out");
}

/* ERR-059: a MemoryError raised because memory ran out is a well-formed
 * error (ERR-010): a non-empty message without NUL bytes, a readable
 * backtrace, update_backtrace set (and callable), no cause or context. */
TEST(err_oom, ERR_059_memory_error_well_formed) { walk_memory_errors(0); }

/* ERR-060: its kind and message are followed by a NUL byte (ERR-008). */
TEST(err_oom, ERR_060_memory_error_nul_terminated) { walk_memory_errors(1); }

/* ERR-061: update_backtrace with one of its allocations failing leaves the
 * backtrace either as it was or exactly as asked, kind and message alone,
 * and nothing allocated once the error is released. */
TEST(err_oom, ERR_061_update_backtrace_allocation_fails) {
  (void)API(TVMFFIErrorCreate), (void)API(TVMFFIObjectDecRef);
  TVMFFIByteArray k = {"TypeError", 9}, m = {"message", 7}, b = {"old\n", 4};
  TVMFFIByteArray add = {long_message, sizeof long_message - 1};
  long points = 0;
  for (int pass = 0; pass < 8; ++pass) { /* leaks count from the second round on */
    int mode = pass / 2 % 2, sticky = pass % 2;
    int32_t update = mode ? kTVMFFIBacktraceUpdateModeAppend : kTVMFFIBacktraceUpdateModeReplace;
    {
      ConfAllocWalk w = conf_alloc_walk(sticky);
      while (conf_alloc_next(&w)) {
        conf_alloc_count_start();
        TVMFFIObjectHandle err = NULL;
        int rc = conf_api.TVMFFIErrorCreate(&k, &m, &b, &err);
        TVMFFIErrorCell* cell = err ? TVMFFIErrorGetCellPtr(err) : NULL;
        if (cell) {
          conf_alloc_arm(&w);
          cell->update_backtrace(err, &add, update);
          conf_alloc_disarm(&w);
        }
        char got[1024];
        snprintf(got, sizeof got, "%.*s", cell ? (int)cell->backtrace.size : 0,
                 cell ? cell->backtrace.data : "");
        int kept =
            cell && bytes_are(cell->kind, "TypeError") && bytes_are(cell->message, "message");
        if (err) conf_api.TVMFFIObjectDecRef(err);
        long leaked = conf_alloc_count_stop();
        cr_assert(rc == 0 && cell, "TVMFFIErrorCreate failed with memory to spare");
        char want[1024];
        snprintf(want, sizeof want, "%s%s", mode ? "old\n" : "", long_message);
        cr_assert(strcmp(got, "old\n") == 0 || strcmp(got, want) == 0,
                  "mode %d, allocation %ld failed: backtrace '%s'", mode, w.n, got);
        cr_assert(w.injected || strcmp(got, want) == 0,
                  "mode %d: backtrace '%s' with memory to spare", mode, got);
        cr_assert(kept, "mode %d, allocation %ld failed: kind or message changed", mode, w.n);
        cr_assert(pass < 4 || leaked == 0, "mode %d, allocation %ld failed: %ld blocks left", mode,
                  w.n, leaked);
      }
      points += w.points;
    }
  }
  conf_alloc_done(points, "update_backtrace");
}

/* ERR-066: TVMFFIBacktrace with one of its allocations failing (or all
 * from the n-th on) still returns a well-formed array (ERR-030), and the
 * named frame's line right after. */
TEST(err_oom, ERR_066_backtrace_allocation_fails) {
  static char name[1501];
  for (int i = 0; i < 1500; ++i) name[i] = (char)('a' + i % 26);
  (void)API(TVMFFIBacktrace);
  conf_api.TVMFFIBacktrace("warm.c", 1, "f", 0);
  long points = 0;
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      conf_alloc_arm(&w);
      const TVMFFIByteArray* bt = conf_api.TVMFFIBacktrace(name, 7, name, 0);
      conf_alloc_disarm(&w);
      cr_assert_not_null(bt, "allocation %ld failed: NULL returned", w.n);
      cr_assert_not_null(bt->data, "allocation %ld failed: NULL data", w.n);
      volatile char sink = 0;
      for (size_t i = 0; i < bt->size; ++i) sink ^= bt->data[i];
      (void)sink;
      bt = conf_api.TVMFFIBacktrace("after.c", 9, "g", 0);
      static const char frame[] = "File \"after.c\", line 9, in g";
      cr_assert(memmem(bt->data, bt->size, frame, sizeof frame - 1) != NULL,
                "allocation %ld failed: the next backtrace is '%.*s'", w.n, (int)bt->size,
                bt->data);
    }
    points += w.points;
  }
  conf_alloc_done(points, "TVMFFIBacktrace");
}

/* ---- streams when memory runs out --------------------------------------- */

/* One step of a stream walk, run on a fresh thread: `before` pairs
 * (type, id + 1 + i) are set first, then (type, id) is set with the step's
 * allocation failing. The main thread checks what the worker saw. */
typedef struct {
  ConfAllocWalk* w;
  int32_t type, id;
  int before;
  int rc;
  void* old;
  void* after;       /* TVMFFIEnvGetStream(type, id) right after */
  int others_kept;   /* the `before` pairs read back unchanged */
  char kind[64];     /* kind of the raised error, "" when none */
  int names_call;    /* its message contains "TVMFFIEnvSetStream" */
  int again_rc;      /* a second SetStream, memory to spare */
  void* again_after; /* and what GetStream reads then */
} StreamStep;

static void* stream_marker(int32_t i) { return (void*)(uintptr_t)(0x1000 + 16 * (uintptr_t)i); }

static void* stream_step(void* arg) {
  StreamStep* s = arg;
  /* The thread reads its stream and its error slot once before the walk,
   * so what fails is the call's own memory, not the thread's setup. */
  conf_api.TVMFFIEnvGetStream(s->type, s->id);
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  for (int i = 0; i < s->before; ++i)
    conf_api.TVMFFIEnvSetStream(s->type, s->id + 1 + i, stream_marker(i), NULL);
  s->old = (void*)0x1;
  conf_alloc_arm(s->w);
  s->rc = conf_api.TVMFFIEnvSetStream(s->type, s->id, (void*)0xabc0, &s->old);
  conf_alloc_disarm(s->w);
  s->after = conf_api.TVMFFIEnvGetStream(s->type, s->id);
  s->others_kept = 1;
  for (int i = 0; i < s->before; ++i)
    if (conf_api.TVMFFIEnvGetStream(s->type, s->id + 1 + i) != stream_marker(i)) s->others_kept = 0;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  s->kind[0] = '\0';
  if (err) {
    const TVMFFIByteArray* k = &cell_of(err)->kind;
    snprintf(s->kind, sizeof s->kind, "%.*s", (int)k->size, k->data);
    const TVMFFIByteArray* m = &cell_of(err)->message;
    s->names_call = memmem(m->data, m->size, "TVMFFIEnvSetStream", 18) != NULL;
    conf_api.TVMFFIObjectDecRef(err);
  }
  s->again_rc = conf_api.TVMFFIEnvSetStream(s->type, s->id, (void*)0xdef0, NULL);
  s->again_after = conf_api.TVMFFIEnvGetStream(s->type, s->id);
  return NULL;
}

/* Walks one SetStream over its allocations; with `need_name`, a MemoryError
 * must also name TVMFFIEnvSetStream (one allocation failing only: with
 * every allocation failing, the error may be a preallocated one). */
static long walk_set_stream(int32_t type, int32_t id, int before, int sticky, int need_name) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream),
      (void)API(TVMFFIErrorMoveFromRaised);
  ConfAllocWalk w = conf_alloc_walk(sticky);
  while (conf_alloc_next(&w)) {
    StreamStep s = {.w = &w, .type = type, .id = id, .before = before};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, stream_step, &s), 0);
    pthread_join(t, NULL);
    const char* where = "TVMFFIEnvSetStream";
    cr_assert(s.others_kept, "%s(%d, %d), allocation %ld failed: another pair changed", where, type,
              id, w.n);
    if (s.rc == 0) {
      cr_assert_null(s.old, "%s(%d, %d) returned 0 but the original stream is %p, expected NULL",
                     where, type, id, s.old);
      cr_assert_eq(s.after, (void*)0xabc0,
                   "%s(%d, %d), allocation %ld failed: returned 0 but "
                   "TVMFFIEnvGetStream gives %p",
                   where, type, id, w.n, s.after);
    } else {
      cr_assert_eq(s.rc, -1, "%s(%d, %d), allocation %ld failed: returned %d", where, type, id, w.n,
                   s.rc);
      cr_assert_str_eq(s.kind, "MemoryError",
                       "%s(%d, %d), allocation %ld failed: returned -1 "
                       "with kind '%s' raised",
                       where, type, id, w.n, s.kind);
      cr_assert_null(s.after, "%s(%d, %d) failed but the pair now holds %p", where, type, id,
                     s.after);
      cr_assert(!need_name || s.names_call,
                "%s(%d, %d), allocation %ld failed: the MemoryError's "
                "message does not name %s",
                where, type, id, w.n, where);
    }
    cr_assert(s.again_rc == 0 && s.again_after == (void*)0xdef0,
              "%s(%d, %d) right after a failed allocation: returned %d, stream %p", where, type, id,
              s.again_rc, s.again_after);
  }
  return w.points;
}

/* ENV-046: the first TVMFFIEnvSetStream of a thread, with one of its
 * allocations failing (or all from the n-th on): 0 with the stream stored,
 * or -1 with MemoryError and the pair still unset; setting works right
 * after. */
TEST(env_oom, ENV_046_first_stream_of_thread_allocation_fails) {
  long points = walk_set_stream(2, 0, 0, 0, 0);
  points += walk_set_stream(2, 0, 0, 1, 0);
  conf_alloc_done(points, "TVMFFIEnvSetStream");
}

/* ENV-047: the same for pairs far from those set so far (device type 100,
 * device id 40), with 0 to 9 other pairs of the same type set before: no
 * other pair changes. */
TEST(env_oom, ENV_047_new_pair_allocation_fails) {
  static const int befores[] = {0, 1, 2, 3, 4, 5, 8, 9};
  long points = 0;
  for (size_t i = 0; i < sizeof befores / sizeof befores[0]; ++i) {
    points += walk_set_stream(100, 3, befores[i], 0, 0);
    points += walk_set_stream(2, 40, befores[i], 0, 0);
    points += walk_set_stream(100, 3, befores[i], 1, 0);
  }
  conf_alloc_done(points, "TVMFFIEnvSetStream");
}

/* ENV-050: the MemoryError of a TVMFFIEnvSetStream whose allocation failed
 * names TVMFFIEnvSetStream. */
TEST(env_oom, ENV_050_memory_error_names_the_call) {
  long points = walk_set_stream(2, 0, 0, 0, 1);
  for (int before = 0; before < 10; ++before) points += walk_set_stream(100, 3, before, 0, 1);
  conf_alloc_done(points, "TVMFFIEnvSetStream");
}

/* Live allocations left behind by a thread that ran one stream step. */
static long stream_step_leaves(StreamStep* s) {
  pthread_t t;
  conf_alloc_count_start();
  if (pthread_create(&t, NULL, stream_step, s) != 0) {
    conf_alloc_count_stop();
    cr_assert_fail("pthread_create failed");
  }
  pthread_join(t, NULL);
  return conf_alloc_count_stop();
}

/* ENV-092: the first TVMFFIEnvSetStream of a thread, with 40 more
 * thread-specific keys in use in the process (so that the thread library
 * allocates when a thread stores its first value under a new key) and one
 * of the call's allocations failing (or all from the n-th on): 0 with the
 * stream stored and nothing raised, or -1 with a MemoryError naming the
 * call and the pair unset; either way the thread, once exited, leaves no
 * more allocations behind than one whose call had memory to spare. */
TEST(env_oom, ENV_092_first_stream_many_keys_allocation_fails) {
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream),
      (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  static pthread_key_t keys[40];
  for (int i = 0; i < 40; ++i) cr_assert_eq(pthread_key_create(&keys[i], NULL), 0);
  ConfAllocWalk spare = {.n = 1L << 30}; /* arms a failure no call reaches */
  StreamStep base_step = {.w = &spare, .type = 2, .id = 0};
  stream_step_leaves(&base_step); /* warm: what a first thread sets up once */
  long base = stream_step_leaves(&base_step);
  cr_assert(base_step.rc == 0 && base_step.after == (void*)0xabc0 && base_step.kind[0] == '\0',
            "TVMFFIEnvSetStream(2, 0) with memory to spare: returned %d, stream %p, raised '%s'",
            base_step.rc, base_step.after, base_step.kind);
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      StreamStep s = {.w = &w, .type = 2, .id = 0};
      long left = stream_step_leaves(&s);
      if (s.rc == 0) {
        cr_assert(s.after == (void*)0xabc0 && s.kind[0] == '\0',
                  "allocation %ld failed (sticky %d): returned 0 with stream %p and '%s' raised",
                  w.n, sticky, s.after, s.kind);
      } else {
        cr_assert(s.rc == -1 && strcmp(s.kind, "MemoryError") == 0 && s.after == NULL,
                  "allocation %ld failed (sticky %d): returned %d with '%s' raised, stream %p", w.n,
                  sticky, s.rc, s.kind, s.after);
        cr_assert(sticky || s.names_call,
                  "allocation %ld failed: the MemoryError does not name "
                  "TVMFFIEnvSetStream",
                  w.n);
      }
      cr_assert(s.again_rc == 0 && s.again_after == (void*)0xdef0,
                "right after allocation %ld failed: returned %d, stream %p", w.n, s.again_rc,
                s.again_after);
      cr_assert_eq(left, base,
                   "allocation %ld failed (sticky %d): the thread left %ld live "
                   "allocations behind, one with memory to spare %ld",
                   w.n, sticky, left, base);
    }
    points += w.points;
  }
  for (int i = 0; i < 40; ++i) pthread_key_delete(keys[i]);
  conf_alloc_done(points, "TVMFFIEnvSetStream");
}
