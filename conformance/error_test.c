/* Clauses of spec/errors.md: raising, retrieving and creating errors. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fail.h"
#include "core_support.h"

/* ---- helpers ---------------------------------------------------------- */

/* Asserts that the bytes are exactly `want` (length and content). */
static void expect_bytes(TVMFFIByteArray got, const char* want, size_t want_size,
                         const char* what) {
  cr_assert_eq(got.size, want_size, "%s: size %zu, expected %zu", what, got.size, want_size);
  if (want_size) {
    cr_assert_not_null(got.data, "%s: data is NULL", what);
    cr_assert_eq(memcmp(got.data, want, want_size), 0, "%s: bytes differ: got '%.*s', want '%s'",
                 what, (int)got.size, got.data, want);
  }
}

static void expect_str(TVMFFIByteArray got, const char* want, const char* what) {
  expect_bytes(got, want, strlen(want), what);
}

static TVMFFIObjectHandle make_error(const char* kind, const char* msg, const char* bt) {
  TVMFFIByteArray k = {kind, strlen(kind)}, m = {msg, strlen(msg)}, b = {bt, strlen(bt)};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0, "TVMFFIErrorCreate failed");
  cr_assert_not_null(err);
  return err;
}

/* A function object whose deleter counts: a probe for "was this released". */
static int deleted_count;
static void count_delete(void* self) {
  (void)self;
  __atomic_fetch_add(&deleted_count, 1, __ATOMIC_RELAXED);
}
static int noop_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  return 0;
}
static TVMFFIObjectHandle make_probe(void) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(&deleted_count, noop_call, count_delete, &fn), 0);
  return fn;
}

/* ---- raising and retrieving --------------------------------------------- */

/* ERR-001: TVMFFIErrorSetRaisedFromCStr then TVMFFIErrorMoveFromRaised gives
 * an Error object whose kind and message are exactly the given strings. */
TEST(err, ERR_001_cstr_roundtrip) {
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "argument `x` must be positive");
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "nothing was raised");
  cr_assert_eq(TVMFFIObjectGetTypeIndex(err), kTVMFFIError, "type index %d, expected %d",
               TVMFFIObjectGetTypeIndex(err), kTVMFFIError);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  expect_str(cell->kind, "ValueError", "kind");
  expect_str(cell->message, "argument `x` must be positive", "message");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-002: TVMFFIErrorMoveFromRaised empties the thread's slot: a second
 * move gives NULL. */
TEST(err, ERR_002_move_clears_slot) {
  API(TVMFFIErrorSetRaisedFromCStr)("RuntimeError", "once");
  TVMFFIObjectHandle first = core_take_raised();
  cr_assert_not_null(first);
  cr_assert_null(core_take_raised(), "second move returned an error");
  API(TVMFFIObjectDecRef)(first);
}

/* ERR-003: with nothing raised on the thread, TVMFFIErrorMoveFromRaised
 * writes NULL. */
TEST(err, ERR_003_nothing_raised_gives_null) { cr_assert_null(core_take_raised()); }

/* ERR-004: raising again replaces the held error with the later one and
 * releases the slot's reference to the earlier. */
TEST(err, ERR_004_later_raise_wins_and_releases_earlier) {
  TVMFFIObjectHandle first = make_error("TypeError", "first", "");
  TVMFFIObjectHandle second = make_error("KeyError", "second", "");
  API(TVMFFIErrorSetRaised)(first);
  cr_assert_eq(core_strong(first), 2);
  API(TVMFFIErrorSetRaised)(second);
  cr_assert_eq(core_strong(first), 1, "earlier error still held: count %u", core_strong(first));
  TVMFFIObjectHandle got = core_take_raised();
  cr_assert_eq(got, second, "the later error did not win");
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(first);
  API(TVMFFIObjectDecRef)(second);
}

/* ERR-004 also holds for errors raised from C strings: the earlier one is
 * destroyed (checked by ASan/valgrind) and only the later is seen. */
TEST(err, ERR_004_later_cstr_raise_wins) {
  API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "first");
  API(TVMFFIErrorSetRaisedFromCStr)("IndexError", "second");
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  expect_str(TVMFFIErrorGetCellPtr(err)->kind, "IndexError", "kind");
  expect_str(TVMFFIErrorGetCellPtr(err)->message, "second", "message");
  API(TVMFFIObjectDecRef)(err);
  cr_assert_null(core_take_raised());
}

typedef struct {
  TVMFFIObjectHandle seen_before; /* what the thread's slot held on entry */
  TVMFFIObjectHandle raised;      /* what the thread itself raised */
} SlotProbe;

static void* other_thread(void* arg) {
  SlotProbe* probe = arg;
  conf_api.TVMFFIErrorMoveFromRaised(&probe->seen_before);
  conf_api.TVMFFIErrorSetRaisedFromCStr("KeyError", "from the other thread");
  conf_api.TVMFFIErrorMoveFromRaised(&probe->raised);
  return NULL;
}

/* ERR-005: the raised slot is per thread: an error raised on one thread is
 * not seen by another, and the other's raising leaves it in place. */
TEST(err, ERR_005_slot_is_per_thread) {
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "main thread");
  SlotProbe probe = {(TVMFFIObjectHandle)(uintptr_t)0x1, NULL};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, other_thread, &probe), 0);
  pthread_join(t, NULL);
  cr_assert_null(probe.seen_before, "other thread saw the main thread's error");
  cr_assert_not_null(probe.raised);
  expect_str(TVMFFIErrorGetCellPtr(probe.raised)->kind, "KeyError", "other kind");
  API(TVMFFIObjectDecRef)(probe.raised);
  TVMFFIObjectHandle mine = core_take_raised();
  cr_assert_not_null(mine, "main thread's error vanished");
  expect_str(TVMFFIErrorGetCellPtr(mine)->message, "main thread", "message");
  API(TVMFFIObjectDecRef)(mine);
}

/* ERR-006: TVMFFIErrorSetRaised takes a reference of its own (the caller
 * keeps theirs) and MoveFromRaised hands that reference to the mover. */
TEST(err, ERR_006_set_raised_adds_a_reference) {
  TVMFFIObjectHandle err = make_error("RuntimeError", "shared", "");
  cr_assert_eq(core_strong(err), 1);
  API(TVMFFIErrorSetRaised)(err);
  cr_assert_eq(core_strong(err), 2, "count after SetRaised %u, expected 2", core_strong(err));
  TVMFFIObjectHandle got = core_take_raised();
  cr_assert_eq(got, err, "moved a different object");
  cr_assert_eq(core_strong(err), 2, "the move changed the count");
  API(TVMFFIObjectDecRef)(got);
  cr_assert_eq(core_strong(err), 1);
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-007: an error raised from C strings and moved out has exactly one
 * strong reference, owned by the mover. */
TEST(err, ERR_007_moved_error_has_one_reference) {
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "x");
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  cr_assert_eq(core_strong(err), 1, "strong count %u", core_strong(err));
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-008: kind and message bytes of an error are followed by a NUL byte,
 * so C callers may print them with %s. */
TEST(err, ERR_008_kind_and_message_nul_terminated) {
  conf_alloc_scribble(1); /* fresh memory is garbage, not zeros */
  API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "argument `y` has the wrong type");
  TVMFFIObjectHandle err = core_take_raised();
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.data[cell->kind.size], '\0');
  cr_assert_eq(cell->message.data[cell->message.size], '\0');
  cr_assert_str_eq(cell->message.data, "argument `y` has the wrong type");
  API(TVMFFIObjectDecRef)(err);
  const char* parts[] = {"argument ", "`z`"};
  API(TVMFFIErrorSetRaisedFromCStrParts)("IndexError", parts, 2);
  err = core_take_raised();
  cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->kind.data, "IndexError");
  cr_assert_str_eq(cell->message.data, "argument `z`");
  API(TVMFFIObjectDecRef)(err);
  err = make_error("KeyError", "key `k`", "");
  cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->kind.data, "KeyError");
  cr_assert_str_eq(cell->message.data, "key `k`");
  API(TVMFFIObjectDecRef)(err);
  conf_alloc_scribble(0);
}

static TVMFFIObjectHandle left_behind;
static void* raise_and_exit(void* arg) {
  (void)arg;
  conf_api.TVMFFIErrorSetRaised(left_behind);
  return NULL;
}

/* ERR-009: an error still raised when its thread exits is released. */
TEST(err, ERR_009_unretrieved_error_released_at_thread_exit) {
  left_behind = make_error("RuntimeError", "nobody retrieves me", "");
  (void)API(TVMFFIErrorSetRaised);
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, raise_and_exit, NULL), 0);
  pthread_join(t, NULL);
  cr_assert_eq(core_strong(left_behind), 1, "thread exit left %u references",
               core_strong(left_behind));
  API(TVMFFIObjectDecRef)(left_behind);
}

/* ERR-010: a raised error's cell is well formed: backtrace bytes readable
 * (data not NULL), update_backtrace set, no cause chain or extra context. */
TEST(err, ERR_010_raised_cell_well_formed) {
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, NULL);
  API(TVMFFIErrorSetRaisedFromCStr)("IndexError", "index 9 out of range");
  TVMFFIObjectHandle err = core_take_raised();
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_not_null(cell->backtrace.data);
  if (cell->backtrace.size)
    (void)*(volatile const char*)&cell->backtrace.data[cell->backtrace.size - 1];
  cr_assert_not_null(cell->update_backtrace);
  cr_assert_null(cell->cause_chain);
  cr_assert_null(cell->extra_context);
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-015: TVMFFIErrorSetRaised(NULL) releases the held error and leaves
 * the slot empty. */
TEST(err, ERR_015_set_raised_null_clears) {
  TVMFFIObjectHandle err = make_error("ValueError", "to be cleared", "");
  API(TVMFFIErrorSetRaised)(err);
  cr_assert_eq(core_strong(err), 2);
  API(TVMFFIErrorSetRaised)(NULL);
  cr_assert_eq(core_strong(err), 1, "the cleared error is still held");
  cr_assert_null(core_take_raised());
  API(TVMFFIObjectDecRef)(err);
}

/* ---- message parts -------------------------------------------------------- */

/* ERR-011: TVMFFIErrorSetRaisedFromCStrParts raises the parts concatenated
 * in order. */
TEST(err, ERR_011_parts_concatenate) {
  const char* parts[] = {"argument ", "`n`", " must be ", "< 8"};
  API(TVMFFIErrorSetRaisedFromCStrParts)("ValueError", parts, 4);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  expect_str(TVMFFIErrorGetCellPtr(err)->kind, "ValueError", "kind");
  expect_str(TVMFFIErrorGetCellPtr(err)->message, "argument `n` must be < 8", "message");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-011: only the first n parts are read: an entry after them is not
 * part of the message. */
TEST(err, ERR_011_only_n_parts_read) {
  const char* parts[] = {"first", " second", " not a part"};
  for (int32_t n = 0; n <= 2; ++n) {
    API(TVMFFIErrorSetRaisedFromCStrParts)("ValueError", parts, n);
    TVMFFIObjectHandle err = core_take_raised();
    cr_assert_not_null(err);
    expect_str(TVMFFIErrorGetCellPtr(err)->message,
               n == 0   ? ""
               : n == 1 ? "first"
                        : "first second",
               "message");
    API(TVMFFIObjectDecRef)(err);
  }
}

/* ERR-012: NULL parts are skipped. */
TEST(err, ERR_012_null_parts_skipped) {
  const char* parts[] = {NULL, "a", NULL, NULL, "bc", NULL};
  API(TVMFFIErrorSetRaisedFromCStrParts)("TypeError", parts, 6);
  TVMFFIObjectHandle err = core_take_raised();
  expect_str(TVMFFIErrorGetCellPtr(err)->message, "abc", "message");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-013: zero parts raise an error of the given kind with an empty
 * message. */
TEST(err, ERR_013_zero_parts_empty_message) {
  API(TVMFFIErrorSetRaisedFromCStrParts)("RuntimeError", NULL, 0);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  expect_str(TVMFFIErrorGetCellPtr(err)->kind, "RuntimeError", "kind");
  expect_bytes(TVMFFIErrorGetCellPtr(err)->message, "", 0, "message");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-014: many parts and long messages are kept whole (no truncation). */
TEST(err, ERR_014_long_messages_whole) {
  enum { N = 200 };
  static char chunk[N][64];
  const char* parts[N];
  char* want = malloc(N * 63 + 1);
  size_t at = 0;
  for (int i = 0; i < N; ++i) {
    memset(chunk[i], 'a' + i % 26, 63);
    chunk[i][63] = '\0';
    parts[i] = chunk[i];
    memcpy(want + at, chunk[i], 63);
    at += 63;
  }
  want[at] = '\0';
  API(TVMFFIErrorSetRaisedFromCStrParts)("ValueError", parts, N);
  TVMFFIObjectHandle err = core_take_raised();
  expect_bytes(TVMFFIErrorGetCellPtr(err)->message, want, at, "message");
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", want);
  TVMFFIObjectHandle err2 = core_take_raised();
  expect_bytes(TVMFFIErrorGetCellPtr(err2)->message, want, at, "cstr message");
  free(want);
  API(TVMFFIObjectDecRef)(err);
  API(TVMFFIObjectDecRef)(err2);
}

/* ---- creating errors ------------------------------------------------------ */

/* ERR-020: TVMFFIErrorCreate returns 0 and a new Error object, with one
 * strong reference, holding exactly the kind, message and backtrace. */
TEST(err, ERR_020_create_holds_fields) {
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, NULL);
  TVMFFIObjectHandle err = make_error("KeyError", "key 'w' not found", "  File \"m.c\", line 3\n");
  cr_assert_eq(TVMFFIObjectGetTypeIndex(err), kTVMFFIError);
  cr_assert_eq(core_strong(err), 1);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  expect_str(cell->kind, "KeyError", "kind");
  expect_str(cell->message, "key 'w' not found", "message");
  expect_str(cell->backtrace, "  File \"m.c\", line 3\n", "backtrace");
  cr_assert_null(cell->cause_chain);
  cr_assert_null(cell->extra_context);
  cr_assert_null(core_take_raised(), "creating an error raised something");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-021: TVMFFIErrorCreate copies its inputs: the caller may overwrite
 * and free its buffers as soon as it returns. */
TEST(err, ERR_021_create_copies_inputs) {
  char* kind = strdup("ValueError");
  char* msg = strdup("bad value");
  char* bt = strdup("frame 0\n");
  TVMFFIByteArray k = {kind, strlen(kind)}, m = {msg, strlen(msg)}, b = {bt, strlen(bt)};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0);
  memset(kind, 'X', strlen(kind));
  memset(msg, 'X', strlen(msg));
  memset(bt, 'X', strlen(bt));
  free(kind), free(msg), free(bt);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  expect_str(cell->kind, "ValueError", "kind");
  expect_str(cell->message, "bad value", "message");
  expect_str(cell->backtrace, "frame 0\n", "backtrace");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-022: kind, message and backtrace are byte strings: embedded NUL bytes
 * and the given sizes are kept exactly. */
TEST(err, ERR_022_create_keeps_embedded_nul) {
  static const char msg[] = "a\0b\0c";
  static const char bt[] = "\0bt";
  TVMFFIByteArray k = {"TypeError", 9}, m = {msg, 5}, b = {bt, 3};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0);
  expect_bytes(TVMFFIErrorGetCellPtr(err)->message, msg, 5, "message");
  expect_bytes(TVMFFIErrorGetCellPtr(err)->backtrace, bt, 3, "backtrace");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-023: update_backtrace with kTVMFFIBacktraceUpdateModeReplace makes the
 * backtrace exactly the given bytes. */
TEST(err, ERR_023_update_backtrace_replace) {
  TVMFFIObjectHandle err = make_error("RuntimeError", "m", "old frames\n");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  TVMFFIByteArray fresh = {"new\n", 4};
  cell->update_backtrace(err, &fresh, kTVMFFIBacktraceUpdateModeReplace);
  expect_str(cell->backtrace, "new\n", "backtrace");
  TVMFFIByteArray none = {"", 0};
  cell->update_backtrace(err, &none, kTVMFFIBacktraceUpdateModeReplace);
  expect_bytes(cell->backtrace, "", 0, "emptied backtrace");
  expect_str(cell->message, "m", "message untouched");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-024: update_backtrace with kTVMFFIBacktraceUpdateModeAppend puts the
 * given bytes after the existing backtrace. */
TEST(err, ERR_024_update_backtrace_append) {
  TVMFFIObjectHandle err = make_error("RuntimeError", "m", "inner\n");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  TVMFFIByteArray outer = {"outer\n", 6};
  cell->update_backtrace(err, &outer, kTVMFFIBacktraceUpdateModeAppend);
  expect_str(cell->backtrace, "inner\nouter\n", "backtrace");
  cell->update_backtrace(err, &outer, kTVMFFIBacktraceUpdateModeAppend);
  expect_str(cell->backtrace, "inner\nouter\nouter\n", "backtrace twice");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-025: update_backtrace copies the bytes it is given. */
TEST(err, ERR_025_update_backtrace_copies) {
  TVMFFIObjectHandle err = make_error("RuntimeError", "m", "");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  char* text = strdup("temporary frame\n");
  TVMFFIByteArray bytes = {text, strlen(text)};
  cell->update_backtrace(err, &bytes, kTVMFFIBacktraceUpdateModeAppend);
  memset(text, 'X', strlen(text));
  free(text);
  expect_str(cell->backtrace, "temporary frame\n", "backtrace");
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-026: TVMFFIErrorCreateWithCauseAndExtraContext stores the cause in
 * cause_chain with a reference of the error's own, released with the
 * error; the caller keeps its reference. */
TEST(err, ERR_026_cause_chain_owned) {
  TVMFFIObjectHandle cause = make_error("IndexError", "inner", "");
  TVMFFIByteArray k = {"RuntimeError", 12}, m = {"outer", 5}, b = {"", 0};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, cause, NULL, &err), 0);
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, "cause_chain extra_context");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->cause_chain, cause);
  cr_assert_null(cell->extra_context);
  cr_assert_eq(core_strong(cause), 2, "cause count %u", core_strong(cause));
  expect_str(cell->message, "outer", "message");
  API(TVMFFIObjectDecRef)(err);
  cr_assert_eq(core_strong(cause), 1, "releasing the error left cause at %u", core_strong(cause));
  API(TVMFFIObjectDecRef)(cause);
}

/* ERR-027: extra_context may be any object; the error holds its own
 * reference and releases it with the error. */
TEST(err, ERR_027_extra_context_owned) {
  deleted_count = 0;
  TVMFFIObjectHandle ctx = make_probe();
  TVMFFIByteArray k = {"ValueError", 10}, m = {"with context", 12}, b = {"", 0};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, NULL, ctx, &err), 0);
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, "cause_chain extra_context");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->extra_context, ctx);
  cr_assert_null(cell->cause_chain);
  cr_assert_eq(core_strong(ctx), 2);
  API(TVMFFIObjectDecRef)(ctx);
  cr_assert_eq(deleted_count, 0, "context released while the error holds it");
  API(TVMFFIObjectDecRef)(err);
  cr_assert_eq(deleted_count, 1, "context not released with the error");
}

/* ERR-028: releasing the head of a cause chain releases the whole chain,
 * including the extra context of a deeper error. */
TEST(err, ERR_028_chain_released_in_full) {
  deleted_count = 0;
  TVMFFIObjectHandle ctx = make_probe();
  TVMFFIByteArray k = {"RuntimeError", 12}, m = {"level", 5}, b = {"", 0};
  TVMFFIObjectHandle deep = NULL, mid = NULL, top = NULL;
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, NULL, ctx, &deep), 0);
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, "cause_chain");
  API(TVMFFIObjectDecRef)(ctx);
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, deep, NULL, &mid), 0);
  API(TVMFFIObjectDecRef)(deep);
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, mid, NULL, &top), 0);
  API(TVMFFIObjectDecRef)(mid);
  cr_assert_eq(TVMFFIErrorGetCellPtr(TVMFFIErrorGetCellPtr(top)->cause_chain)->cause_chain, deep);
  cr_assert_eq(deleted_count, 0);
  API(TVMFFIObjectDecRef)(top);
  cr_assert_eq(deleted_count, 1, "the chain was not released in full");
}

/* ERR-029: a raised error created with a cause comes back from the slot
 * with the cause intact. */
TEST(err, ERR_029_raised_error_keeps_cause) {
  TVMFFIObjectHandle cause = make_error("KeyError", "k", "");
  TVMFFIByteArray k = {"RuntimeError", 12}, m = {"wrapped", 7}, b = {"", 0};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, cause, NULL, &err), 0);
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, "cause_chain");
  API(TVMFFIObjectDecRef)(cause);
  API(TVMFFIErrorSetRaised)(err);
  API(TVMFFIObjectDecRef)(err);
  TVMFFIObjectHandle got = core_take_raised();
  cr_assert_eq(got, err);
  TVMFFIObjectHandle c = TVMFFIErrorGetCellPtr(got)->cause_chain;
  cr_assert_eq(c, cause);
  expect_str(TVMFFIErrorGetCellPtr(c)->kind, "KeyError", "cause kind");
  API(TVMFFIObjectDecRef)(got);
}

/* ---- TVMFFIBacktrace ------------------------------------------------------ */

static int contains(TVMFFIByteArray hay, const char* needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= hay.size; ++i)
    if (memcmp(hay.data + i, needle, n) == 0) return 1;
  return 0;
}

/* ERR-030: TVMFFIBacktrace returns a non-NULL byte array whose data is not
 * NULL and whose size bytes are readable, with or without a named frame. */
TEST(err, ERR_030_backtrace_well_formed) {
  const TVMFFIByteArray* bt = API(TVMFFIBacktrace)(NULL, 0, NULL, 0);
  cr_assert_not_null(bt);
  cr_assert_not_null(bt->data);
  cr_assert_lt(bt->size, (size_t)1 << 24, "implausible size %zu", bt->size);
  volatile char sink = 0;
  for (size_t i = 0; i < bt->size; ++i) sink ^= bt->data[i];
  bt = API(TVMFFIBacktrace)("kernel.c", 17, "scale", 1);
  cr_assert_not_null(bt);
  cr_assert_not_null(bt->data);
  (void)sink;
}

/* ERR-031: TVMFFIBacktrace given a file, line and function reports that
 * frame as the Python-style line `File "<file>", line <n>, in <func>`. */
TEST(err, ERR_031_backtrace_names_the_frame) {
  const TVMFFIByteArray* bt = API(TVMFFIBacktrace)("kernel.c", 4217, "scale_kernel", 0);
  cr_assert(contains(*bt, "File \"kernel.c\", line 4217, in scale_kernel"), "got '%.*s'",
            (int)bt->size, bt->data);
}

/* ERR-064: ERR-031 holds for names of any length: a file name and a
 * function name of 3000 bytes each appear whole in the frame's line. */
TEST(err, ERR_064_backtrace_long_names_whole) {
  static char file[3001], func[3001], line[6100];
  for (int i = 0; i < 3000; ++i) {
    file[i] = (char)('a' + i % 26);
    func[i] = (char)('A' + i % 26);
  }
  memcpy(file + 2990, ".c", 3);
  snprintf(line, sizeof line, "File \"%s\", line 31337, in %s", file, func);
  const TVMFFIByteArray* bt = API(TVMFFIBacktrace)(file, 31337, func, 0);
  cr_assert(contains(*bt, line), "the frame's line is not whole (%zu bytes of text)", bt->size);
}

typedef struct {
  const char* file;
  int ok;
  pthread_barrier_t* barrier;
} BtProbe;

static void* backtrace_thread(void* arg) {
  BtProbe* p = arg;
  const TVMFFIByteArray* bt = conf_api.TVMFFIBacktrace(p->file, 1, "f", 0);
  pthread_barrier_wait(p->barrier); /* both threads have called */
  pthread_barrier_wait(p->barrier);
  p->ok = contains(*bt, p->file);
  return NULL;
}

/* ERR-032: the array TVMFFIBacktrace returns belongs to the calling thread:
 * another thread's call does not change it. */
TEST(err, ERR_032_backtrace_per_thread) {
  (void)API(TVMFFIBacktrace);
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  BtProbe a = {"first_thread.c", 0, &barrier}, b = {"second_thread.c", 0, &barrier};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, backtrace_thread, &a);
  pthread_create(&tb, NULL, backtrace_thread, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&barrier);
  cr_assert(a.ok && b.ok, "a thread saw the other's backtrace (a=%d b=%d)", a.ok, b.ok);
}
