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

static const TVMFFIErrorCell* cell_of(TVMFFIObjectHandle err) {
  return (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
}

static int bytes_are(TVMFFIByteArray got, const char* want) {
  return got.size == strlen(want) && memcmp(got.data, want, got.size) == 0;
}

/* The raised error after a step: the one asked for, exactly, or a
 * MemoryError. Releases it. */
static void expect_asked_or_memory_error(const char* kind, const char* msg, const ConfAllocWalk* w) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "allocation %ld failed: nothing was raised", w->n);
  cr_assert_eq(TVMFFIObjectGetTypeIndex(err), kTVMFFIError,
               "allocation %ld failed: the raised object has type index %d", w->n,
               TVMFFIObjectGetTypeIndex(err));
  const TVMFFIErrorCell* cell = cell_of(err);
  int asked = bytes_are(cell->kind, kind) && bytes_are(cell->message, msg);
  cr_assert(asked || bytes_are(cell->kind, "MemoryError"),
            "allocation %ld failed: raised kind %.*s (message %.*s), expected %s or MemoryError",
            w->n, (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
            cell->message.data, kind);
  API(TVMFFIObjectDecRef)(err);
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

static TVMFFIObjectHandle make_error(const char* kind, const char* msg) {
  TVMFFIByteArray k = {kind, strlen(kind)}, m = {msg, strlen(msg)}, b = {"", 0};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0);
  cr_assert_not_null(err);
  return err;
}

/* Longer than any small buffer an implementation may format into. */
static const char long_message[] =
    "argument `x` must be positive, and this message goes on for a while so that no fixed "
    "buffer on the stack holds it: the implementation has to allocate for it, and the "
    "allocation is one of those this test fails. 0123456789abcdef0123456789abcdef0123456789"
    "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/* One raise, walked over its allocations, with an earlier error held in the
 * slot: that one must be released whatever the outcome. */
static long walk_raise(int sticky, int parts) {
  const char* pieces[] = {"argument `x` ", NULL, long_message + 13};
  ConfAllocWalk w = conf_alloc_walk(sticky);
  /* One raise before the walk: what fails is the raise's own memory, not
   * the thread's first use of its error slot. */
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  while (conf_alloc_next(&w)) {
    TVMFFIObjectHandle earlier = make_error("IndexError", "earlier");
    API(TVMFFIErrorSetRaised)(earlier);
    conf_alloc_arm(&w);
    if (parts)
      conf_api.TVMFFIErrorSetRaisedFromCStrParts("ValueError", pieces, 3);
    else
      conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", long_message);
    conf_alloc_disarm(&w);
    cr_assert_eq(core_strong(earlier), 1,
                 "allocation %ld failed: the earlier error's strong count is %u, expected 1 "
                 "(the slot's reference released)",
                 w.n, core_strong(earlier));
    expect_asked_or_memory_error("ValueError", long_message, &w);
    API(TVMFFIObjectDecRef)(earlier);
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
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIObjectHandle out = NULL;
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIErrorCreate(&k, &m, &b, &out);
      conf_alloc_disarm(&w);
      cr_assert(rc == 0 || rc == -1, "allocation %ld failed: returned %d", w.n, rc);
      if (rc == 0) {
        cr_assert_not_null(out, "allocation %ld failed: returned 0 without an error", w.n);
        cr_assert(bytes_are(cell_of(out)->kind, "TypeError") &&
                      bytes_are(cell_of(out)->message, long_message) &&
                      bytes_are(cell_of(out)->backtrace, "frame 1\nframe 2\n"),
                  "allocation %ld failed: returned 0 with an incomplete error", w.n);
        API(TVMFFIObjectDecRef)(out);
      }
      core_take_raised(); /* whatever a failure raised */
      TVMFFIObjectHandle again = make_error("TypeError", "again");
      API(TVMFFIObjectDecRef)(again);
    }
    points += w.points;
  }
  conf_alloc_done(points, "TVMFFIErrorCreate");
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
  (void)API(TVMFFIEnvSetStream), (void)API(TVMFFIEnvGetStream), (void)API(TVMFFIErrorMoveFromRaised);
  ConfAllocWalk w = conf_alloc_walk(sticky);
  while (conf_alloc_next(&w)) {
    StreamStep s = {.w = &w, .type = type, .id = id, .before = before};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, stream_step, &s), 0);
    pthread_join(t, NULL);
    const char* where = "TVMFFIEnvSetStream";
    cr_assert(s.others_kept, "%s(%d, %d), allocation %ld failed: another pair changed", where,
              type, id, w.n);
    if (s.rc == 0) {
      cr_assert_null(s.old, "%s(%d, %d) returned 0 but the original stream is %p, expected NULL",
                     where, type, id, s.old);
      cr_assert_eq(s.after, (void*)0xabc0, "%s(%d, %d), allocation %ld failed: returned 0 but "
                   "TVMFFIEnvGetStream gives %p", where, type, id, w.n, s.after);
    } else {
      cr_assert_eq(s.rc, -1, "%s(%d, %d), allocation %ld failed: returned %d", where, type, id,
                   w.n, s.rc);
      cr_assert_str_eq(s.kind, "MemoryError", "%s(%d, %d), allocation %ld failed: returned -1 "
                       "with kind '%s' raised", where, type, id, w.n, s.kind);
      cr_assert_null(s.after, "%s(%d, %d) failed but the pair now holds %p", where, type, id,
                     s.after);
      cr_assert(!need_name || s.names_call, "%s(%d, %d), allocation %ld failed: the MemoryError's "
                "message does not name %s", where, type, id, w.n, where);
    }
    cr_assert(s.again_rc == 0 && s.again_after == (void*)0xdef0,
              "%s(%d, %d) right after a failed allocation: returned %d, stream %p", where, type,
              id, s.again_rc, s.again_after);
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
