/*
 * Fuzz harness: raising and retrieving errors.
 *
 * The input is a list of steps, each with kinds, messages and backtraces
 * taken from the input (any bytes; NUL bytes inside the byte-array forms):
 *   - TVMFFIErrorSetRaisedFromCStr, then TVMFFIErrorMoveFromRaised;
 *   - TVMFFIErrorSetRaisedFromCStrParts with 0 to 6 parts (some NULL);
 *   - TVMFFIErrorCreate, optionally update_backtrace (replace or append);
 *   - TVMFFIErrorCreateWithCauseAndExtraContext over an earlier error;
 *   - TVMFFIErrorSetRaised of a made error, or of NULL;
 *   - a second raise over one not yet moved out;
 *   - a raise left in the slot when the input ends (moved out then).
 * Checks: what is moved out is exactly what was raised (kind, message and
 * backtrace bytes, ERR-001, ERR-011 to ERR-013, ERR-020, ERR-022 to
 * ERR-024); the slot empties on a move (ERR-002) and holds the later of two
 * raises (ERR-004); reference counts are exact (ERR-006, ERR-007, ERR-026);
 * nothing leaks (LeakSanitizer: every error made is released).
 */
#include "fuzz/impl_api.h"

#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"

#define MAX_STEPS 12
#define MAX_TEXT 96
#define MAX_PARTS 6

static uint32_t strong_count(TVMFFIObjectHandle obj) {
  return (uint32_t)(__atomic_load_n(&((TVMFFIObject*)obj)->combined_ref_count, __ATOMIC_RELAXED) &
                    0xffffffffu);
}

/* Text from the input: `len` bytes, plus a NUL copy for the C-string forms
 * (cut at the first NUL of the input, as C would read it). */
typedef struct {
  char buf[MAX_TEXT + 1];
  size_t len;
} Text;

static void read_text(FuzzReader* r, Text* t, int c_string) {
  size_t n = 0;
  const uint8_t* p = fuzz_bytes(r, fuzz_u8(r) % (MAX_TEXT + 1), &n);
  memcpy(t->buf, p, n);
  t->buf[n] = '\0';
  t->len = c_string ? strlen(t->buf) : n;
}

static int same_bytes(TVMFFIByteArray a, const char* b, size_t n) {
  return a.size == n && (n == 0 || memcmp(a.data, b, n) == 0);
}

/* Moves the raised error out; checks the slot is empty afterwards. */
static TVMFFIObjectHandle move_raised(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  TVMFFIObjectHandle again = (TVMFFIObjectHandle)1;
  TVMFFIErrorMoveFromRaised(&again);
  FUZZ_CLAUSE("ERR-002", again == NULL, "the slot still held an error after a move");
  if (err != NULL) {
    FUZZ_CHECK(TVMFFIObjectGetTypeIndex(err) == kTVMFFIError, "moved out type index %d",
               TVMFFIObjectGetTypeIndex(err));
  }
  return err;
}

static void check_cell(TVMFFIObjectHandle err, const Text* kind, const char* msg, size_t msg_len,
                       const char* clause) {
  const TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
  FUZZ_CLAUSE(clause, same_bytes(c->kind, kind->buf, kind->len), "kind '%.*s', raised '%s'",
              (int)c->kind.size, c->kind.data, kind->buf);
  FUZZ_CLAUSE(clause, same_bytes(c->message, msg, msg_len), "message of %zu bytes, raised %zu",
              c->message.size, msg_len);
}

static void step_cstr(FuzzReader* r) {
  Text kind, msg;
  read_text(r, &kind, 1);
  read_text(r, &msg, 1);
  TVMFFIErrorSetRaisedFromCStr(kind.buf, msg.buf);
  TVMFFIObjectHandle err = move_raised();
  FUZZ_CLAUSE("ERR-001", err != NULL, "nothing raised by TVMFFIErrorSetRaisedFromCStr");
  if (err == NULL) return;
  check_cell(err, &kind, msg.buf, msg.len, "ERR-001");
  FUZZ_CLAUSE("ERR-007", strong_count(err) == 1, "strong count %u", strong_count(err));
  TVMFFIObjectDecRef(err);
}

static void step_parts(FuzzReader* r) {
  Text kind, parts[MAX_PARTS];
  const char* ptrs[MAX_PARTS];
  char joined[MAX_PARTS * MAX_TEXT + 1];
  size_t joined_len = 0;
  read_text(r, &kind, 1);
  int n = fuzz_u8(r) % (MAX_PARTS + 1);
  uint8_t nulls = fuzz_u8(r);
  for (int k = 0; k < n; ++k) {
    read_text(r, &parts[k], 1);
    ptrs[k] = (nulls >> k) & 1 ? NULL : parts[k].buf; /* ERR-012: NULL parts are skipped */
    if (ptrs[k] == NULL) continue;
    memcpy(joined + joined_len, parts[k].buf, parts[k].len);
    joined_len += parts[k].len;
  }
  TVMFFIErrorSetRaisedFromCStrParts(kind.buf, ptrs, n);
  TVMFFIObjectHandle err = move_raised();
  FUZZ_CLAUSE("ERR-011", err != NULL, "nothing raised by TVMFFIErrorSetRaisedFromCStrParts");
  if (err == NULL) return;
  check_cell(err, &kind, joined, joined_len, "ERR-011");
  TVMFFIObjectDecRef(err);
}

/* A new error from byte arrays; NULL when refused (checked). */
static TVMFFIObjectHandle create(FuzzReader* r, TVMFFIObjectHandle cause) {
  Text kind, msg, bt;
  read_text(r, &kind, 0);
  read_text(r, &msg, 0);
  read_text(r, &bt, 0);
  TVMFFIByteArray k = {kind.buf, kind.len}, m = {msg.buf, msg.len}, b = {bt.buf, bt.len};
  TVMFFIObjectHandle err = NULL;
  uint32_t cause_before = cause ? strong_count(cause) : 0;
  int rc = cause ? TVMFFIErrorCreateWithCauseAndExtraContext(&k, &m, &b, cause, cause, &err)
                 : TVMFFIErrorCreate(&k, &m, &b, &err);
  if (rc != 0) {
    static const char* const kinds[] = {"ValueError", "MemoryError", NULL};
    fuzz_expect_raised("TVMFFIErrorCreate", kinds);
    return NULL;
  }
  fuzz_expect_nothing_raised("TVMFFIErrorCreate");
  FUZZ_CLAUSE("ERR-020", err != NULL && strong_count(err) == 1, "a new error with count %u",
              err ? strong_count(err) : 0);
  const TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
  FUZZ_CLAUSE("ERR-022",
              same_bytes(c->kind, kind.buf, kind.len) && same_bytes(c->message, msg.buf, msg.len) &&
                  same_bytes(c->backtrace, bt.buf, bt.len),
              "the bytes of a created error differ from its inputs");
  if (cause != NULL) {
    FUZZ_CLAUSE("ERR-026", c->cause_chain == cause && strong_count(cause) == cause_before + 2,
                "the cause (also the extra context) went from %u to %u references", cause_before,
                strong_count(cause));
  } else {
    FUZZ_CLAUSE("ERR-020", c->cause_chain == NULL && c->extra_context == NULL,
                "a created error has a cause or context");
  }
  uint8_t update = fuzz_u8(r);
  if (update < 96) {
    Text more;
    read_text(r, &more, 0);
    TVMFFIByteArray add = {more.buf, more.len};
    int32_t mode =
        update & 1 ? kTVMFFIBacktraceUpdateModeAppend : kTVMFFIBacktraceUpdateModeReplace;
    char want[2 * MAX_TEXT];
    size_t want_len = 0;
    if (mode == kTVMFFIBacktraceUpdateModeAppend) {
      memcpy(want, bt.buf, bt.len);
      want_len = bt.len;
    }
    memcpy(want + want_len, more.buf, more.len);
    want_len += more.len;
    c->update_backtrace(err, &add, mode);
    FUZZ_CLAUSE(mode == kTVMFFIBacktraceUpdateModeAppend ? "ERR-024" : "ERR-023",
                same_bytes(TVMFFIErrorGetCellPtr(err)->backtrace, want, want_len),
                "update_backtrace(mode %d) gave %zu bytes, not %zu", (int)mode,
                TVMFFIErrorGetCellPtr(err)->backtrace.size, want_len);
  }
  return err;
}

/* Raises `err` (the caller keeps its reference) and moves it out again. */
static void raise_and_move(TVMFFIObjectHandle err) {
  uint32_t before = strong_count(err);
  TVMFFIErrorSetRaised(err);
  FUZZ_CLAUSE("ERR-006", strong_count(err) == before + 1, "raising took %u to %u references",
              before, strong_count(err));
  TVMFFIObjectHandle out = move_raised();
  FUZZ_CLAUSE("ERR-006", out == err, "moved out %p, raised %p", out, err);
  if (out != NULL) TVMFFIObjectDecRef(out);
  FUZZ_CLAUSE("ERR-006", strong_count(err) == before, "the count did not come back to %u: %u",
              before, strong_count(err));
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  static const char* const needed[] = {"TVMFFIErrorSetRaisedFromCStr",
                                       "TVMFFIErrorSetRaisedFromCStrParts",
                                       "TVMFFIErrorCreate",
                                       "TVMFFIErrorCreateWithCauseAndExtraContext",
                                       "TVMFFIErrorSetRaised",
                                       "TVMFFIErrorMoveFromRaised",
                                       "TVMFFIObjectDecRef",
                                       NULL};
  fuzz_impl_init("error", needed);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzReader r = fuzz_reader(data, size);
  TVMFFIObjectHandle last = NULL; /* an error made here, held for causes */
  for (int step = 0; step < MAX_STEPS && fuzz_left(&r) > 0; ++step) {
    switch (fuzz_u8(&r) % 7) {
      case 0: step_cstr(&r); break;
      case 1: step_parts(&r); break;
      case 2:
      case 3: {
        TVMFFIObjectHandle err = create(&r, fuzz_u8(&r) & 1 ? last : NULL);
        if (err == NULL) break;
        if (last != NULL) TVMFFIObjectDecRef(last);
        last = err;
        break;
      }
      case 4:
        if (last != NULL) raise_and_move(last);
        break;
      case 5: { /* ERR-004: the later of two raises is moved out */
        Text kind, msg;
        read_text(&r, &kind, 1);
        read_text(&r, &msg, 1);
        TVMFFIErrorSetRaisedFromCStr("RuntimeError", "the earlier error");
        TVMFFIErrorSetRaisedFromCStr(kind.buf, msg.buf);
        TVMFFIObjectHandle err = move_raised();
        FUZZ_CLAUSE("ERR-004", err != NULL, "nothing raised after two raises");
        if (err == NULL) break;
        check_cell(err, &kind, msg.buf, msg.len, "ERR-004");
        TVMFFIObjectDecRef(err);
        break;
      }
      default: { /* ERR-015: raising NULL empties the slot */
        TVMFFIErrorSetRaisedFromCStr("ValueError", "to be dropped");
        TVMFFIErrorSetRaised(NULL);
        TVMFFIObjectHandle kept = move_raised();
        FUZZ_CLAUSE("ERR-015", kept == NULL, "TVMFFIErrorSetRaised(NULL) kept an error");
        if (kept != NULL) TVMFFIObjectDecRef(kept);
        break;
      }
    }
  }
  if (last != NULL) TVMFFIObjectDecRef(last);
  return 0;
}
