/* Clauses of spec/errors.md on the raised slot around ordinary calls:
 * successes leave it alone, failures leave nothing allocated, and object
 * creation that runs out of memory says so. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc_fail.h"
#include "core_support.h"

static int bytes_are(TVMFFIByteArray got, const char* want) {
  return got.size == strlen(want) && memcmp(got.data, want, got.size) == 0;
}

static const char heap_text[] = "a string long enough to live on the heap, not inline";

static int noop_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  return 0;
}

/* ERR-069: a call that succeeds leaves the thread's raised slot as it was:
 * an error raised before it is the one moved out after it. */
TEST(err_paths, ERR_069_success_leaves_slot_alone) {
  TVMFFIByteArray in = {heap_text, sizeof heap_text - 1};
  for (int call = 0; call < 5; ++call) {
    API(TVMFFIErrorSetRaisedFromCStr)("KeyError", "raised before the call");
    int rc = -1;
    TVMFFIAny s = {0};
    TVMFFIObjectHandle obj = NULL;
    TVMFFIByteArray k = {"ValueError", 10}, m = {"m", 1}, b = {"", 0};
    switch (call) {
      case 0: rc = API(TVMFFIStringFromByteArray)(&in, &s); break;
      case 1: rc = API(TVMFFIObjectCreateOpaque)(NULL, kTVMFFIOpaquePyObject, NULL, &obj); break;
      case 2: rc = API(TVMFFIErrorCreate)(&k, &m, &b, &obj); break;
      case 3: rc = API(TVMFFIFunctionCreate)(NULL, noop_call, NULL, &obj); break;
      case 4: rc = API(TVMFFIEnvSetStream)(100, 3, (void*)0x40, NULL); break;
    }
    cr_assert_eq(rc, 0, "call %d failed", call);
    core_release(&s);
    if (obj) API(TVMFFIObjectDecRef)(obj);
    TVMFFIObjectHandle err = core_take_raised();
    cr_assert_not_null(err, "call %d emptied the raised slot", call);
    TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    cr_assert(
        bytes_are(cell->kind, "KeyError") && bytes_are(cell->message, "raised before the call"),
        "call %d replaced the raised error with %.*s: %.*s", call, (int)cell->kind.size,
        cell->kind.data, (int)cell->message.size, cell->message.data);
    API(TVMFFIObjectDecRef)(err);
  }
}

/* ERR-067: an error the library raises for bad input leaves nothing
 * allocated once it is moved out and released. */
TEST(err_paths, ERR_067_boundary_error_leaves_nothing) {
  (void)API(TVMFFIEnvRegisterCAPI), (void)API(TVMFFIErrorMoveFromRaised);
  conf_alloc_require();
  char name[400];
  for (int i = 0; i < 399; ++i) name[i] = (char)('a' + i % 26);
  name[399] = '\0';
  for (int round = 0; round < 3; ++round) {
    conf_alloc_count_start();
    int rc = conf_api.TVMFFIEnvRegisterCAPI(round == 2 ? name : "PyErr_NoSuchThing", NULL);
    TVMFFIObjectHandle err = NULL;
    conf_api.TVMFFIErrorMoveFromRaised(&err);
    if (err) conf_api.TVMFFIObjectDecRef(err);
    long left = conf_alloc_count_stop();
    cr_assert_eq(rc, -1);
    cr_assert_not_null(err);
    /* The first round may set up what any later raise reuses. */
    cr_assert(round == 0 || left == 0, "round %d: %ld blocks left allocated", round, left);
  }
}

/* ERR-068: when an allocation inside TVMFFIStringFromByteArray (a heap
 * string) or TVMFFIObjectCreateOpaque fails (one, or every one from some
 * point on), the call returns 0 with the object or -1 with a MemoryError
 * raised, and works right after. */
TEST(err_paths, ERR_068_object_creation_allocation_fails) {
  TVMFFIByteArray in = {heap_text, sizeof heap_text - 1};
  (void)API(TVMFFIStringFromByteArray), (void)API(TVMFFIObjectCreateOpaque);
  long points = 0;
  for (int pass = 0; pass < 4; ++pass) {
    int opaque = pass / 2, sticky = pass % 2;
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIAny s = {0};
      TVMFFIObjectHandle obj = NULL;
      conf_alloc_arm(&w);
      int rc = opaque ? conf_api.TVMFFIObjectCreateOpaque(NULL, kTVMFFIOpaquePyObject, NULL, &obj)
                      : conf_api.TVMFFIStringFromByteArray(&in, &s);
      conf_alloc_disarm(&w);
      TVMFFIObjectHandle err = core_take_raised();
      char kind[64] = "";
      if (err) {
        TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
        snprintf(kind, sizeof kind, "%.*s", (int)cell->kind.size, cell->kind.data);
        API(TVMFFIObjectDecRef)(err);
      }
      core_release(&s);
      if (obj) API(TVMFFIObjectDecRef)(obj);
      cr_assert(rc == 0 || rc == -1, "%s, allocation %ld failed: returned %d",
                opaque ? "opaque" : "string", w.n, rc);
      if (rc == -1)
        cr_assert_str_eq(kind, "MemoryError", "%s, allocation %ld failed: -1 with '%s' raised",
                         opaque ? "opaque" : "string", w.n, kind);
      else
        cr_assert_str_empty(kind, "%s, allocation %ld failed: 0 with '%s' raised",
                            opaque ? "opaque" : "string", w.n, kind);
    }
    points += w.points;
  }
  TVMFFIAny s = {0};
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0, "creating a string after the walk");
  core_release(&s);
  conf_alloc_done(points, "TVMFFIStringFromByteArray");
}

/* ERR-070: an error's backtrace bytes are followed by a NUL byte, after
 * TVMFFIErrorCreate and after each update_backtrace (as ERR-008 for kind
 * and message). */
TEST(err_paths, ERR_070_backtrace_nul_terminated) {
  conf_alloc_scribble(1); /* fresh memory is garbage, not zeros */
  TVMFFIByteArray k = {"ValueError", 10}, m = {"m", 1}, b = {"frame 1\n", 8};
  TVMFFIByteArray more = {"frame 2\n", 8};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->backtrace.data, "frame 1\n");
  cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeAppend);
  cr_assert_str_eq(cell->backtrace.data, "frame 1\nframe 2\n");
  cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeReplace);
  cr_assert_str_eq(cell->backtrace.data, "frame 2\n");
  TVMFFIByteArray none = {"", 0};
  cell->update_backtrace(err, &none, kTVMFFIBacktraceUpdateModeReplace);
  cr_assert_str_eq(cell->backtrace.data, "", "replaced by no bytes: not followed by a NUL");
  API(TVMFFIObjectDecRef)(err);
  /* Empty backtraces too: one made empty, and the one of a raised error. */
  err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &none, &err), 0);
  cr_assert_str_eq(TVMFFIErrorGetCellPtr(err)->backtrace.data, "",
                   "an empty backtrace not "
                   "followed by a NUL");
  API(TVMFFIObjectDecRef)(err);
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "raised");
  err = core_take_raised();
  cr_assert_not_null(err);
  cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->backtrace.data[cell->backtrace.size], '\0',
               "the backtrace of a raised error is not followed by a NUL");
  conf_alloc_scribble(0);
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-072: the text TVMFFIBacktrace returns for a named frame has no NUL
 * byte within its size, a NUL right after it, and ends with a newline. */
TEST(err_paths, ERR_072_backtrace_text_is_lines) {
  static char name[2001];
  for (int i = 0; i < 2000; ++i) name[i] = (char)('a' + i % 26);
  const char* files[] = {"short.c", name};
  for (int i = 0; i < 2; ++i) {
    const TVMFFIByteArray* bt = API(TVMFFIBacktrace)(files[i], 12, "f", 0);
    cr_assert_gt(bt->size, 0);
    cr_assert_null(memchr(bt->data, 0, bt->size), "a NUL inside the text");
    cr_assert_eq(bt->data[bt->size], '\0', "no NUL after the text");
    cr_assert_eq(bt->data[bt->size - 1], '\n', "the text does not end with a newline");
  }
}

/* ERR-074: making errors and updating their backtraces writes no byte past
 * the memory allocated for them: with guard bytes after every block malloc
 * hands the test thread, none has changed by the time the block is freed. */
TEST(err_paths, ERR_074_error_writes_stay_in_bounds) {
  (void)API(TVMFFIErrorCreate), (void)API(TVMFFIErrorSetRaisedFromCStr);
  (void)API(TVMFFIErrorSetRaisedFromCStrParts), (void)API(TVMFFIObjectDecRef);
  conf_alloc_require();
  static const char text[] = "0123456789abcdef0123456789abcdef0123456789";
  long before = conf_alloc_overruns(), failed = -1;
  conf_alloc_guard(1);
  for (size_t n = 0; n <= 40 && failed < 0; ++n) {
    TVMFFIByteArray k = {text, n % 12}, m = {text, n}, b = {text, n}, more = {text + 1, n * 7 % 41};
    TVMFFIObjectHandle err = NULL;
    if (conf_api.TVMFFIErrorCreate(&k, &m, &b, &err) != 0) {
      failed = (long)n;
      break;
    }
    TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeAppend);
    cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeReplace);
    cell->update_backtrace(err, &b, kTVMFFIBacktraceUpdateModeAppend);
    conf_api.TVMFFIObjectDecRef(err);
    char msg[41];
    memcpy(msg, text, n);
    msg[n] = '\0';
    const char* parts[] = {msg, NULL, text + 40 - n % 7};
    conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", msg);
    conf_api.TVMFFIErrorSetRaisedFromCStrParts("KeyError", parts, 3);
    conf_api.TVMFFIErrorMoveFromRaised(&err);
    if (err) conf_api.TVMFFIObjectDecRef(err);
  }
  conf_alloc_guard(0);
  cr_assert_eq(failed, -1, "TVMFFIErrorCreate failed with texts of %ld bytes", failed);
  cr_assert_eq(conf_alloc_overruns() - before, 0,
               "%ld blocks were written past the size they were allocated with",
               conf_alloc_overruns() - before);
}

/* Checks a MemoryError raised by a failed call as ERR-059 says; returns 1
 * when err is one. */
static int memory_error_checked(TVMFFIObjectHandle err, const char* call, long n) {
  if (err == NULL) return 0;
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  if (!bytes_are(cell->kind, "MemoryError")) return 0;
  cr_assert_gt(cell->message.size, 0,
               "%s, allocation %ld failed: a MemoryError with an empty "
               "message",
               call, n);
  cr_assert_null(memchr(cell->message.data, 0, cell->message.size),
                 "%s, allocation %ld failed: a MemoryError whose message holds a NUL byte", call,
                 n);
  return 1;
}

/* ERR-059, for the MemoryErrors of calls that run out of memory with an
 * error object still to be had: raising from parts, making a heap string
 * or an opaque object. Each has a non-empty message without NUL bytes. */
TEST(err_paths, ERR_059_memory_error_of_failed_calls_well_formed) {
  (void)API(TVMFFIErrorSetRaisedFromCStrParts), (void)API(TVMFFIStringFromByteArray);
  (void)API(TVMFFIObjectCreateOpaque);
  TVMFFIByteArray in = {heap_text, sizeof heap_text - 1};
  const char* parts[] = {"argument `x` ", NULL, heap_text};
  static const char* const calls[] = {"TVMFFIErrorSetRaisedFromCStrParts",
                                      "TVMFFIStringFromByteArray", "TVMFFIObjectCreateOpaque"};
  long points = 0, memory_errors = 0;
  /* A raise before the walks: what fails is the calls' own memory, not the
   * thread's first use of its error slot. */
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm up");
  API(TVMFFIObjectDecRef)(core_take_raised());
  for (int pass = 0; pass < 6; ++pass) {
    int call = pass / 2;
    ConfAllocWalk w = conf_alloc_walk(pass % 2);
    while (conf_alloc_next(&w)) {
      TVMFFIAny s = {0};
      TVMFFIObjectHandle obj = NULL;
      conf_alloc_arm(&w);
      if (call == 0)
        conf_api.TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 3);
      else if (call == 1)
        conf_api.TVMFFIStringFromByteArray(&in, &s);
      else
        conf_api.TVMFFIObjectCreateOpaque(NULL, kTVMFFIOpaquePyObject, NULL, &obj);
      conf_alloc_disarm(&w);
      core_release(&s);
      if (obj) conf_api.TVMFFIObjectDecRef(obj);
      TVMFFIObjectHandle err = core_take_raised();
      memory_errors += memory_error_checked(err, calls[call], w.n);
      if (err) conf_api.TVMFFIObjectDecRef(err);
    }
    points += w.points;
  }
  conf_alloc_done(points, "TVMFFIStringFromByteArray");
  if (memory_errors == 0) cr_skip_test("no MemoryError was raised while memory ran out");
}
