/*
 * Shared pieces of the fuzz harnesses: a cursor that turns the fuzzer's
 * bytes into structured choices, and the checks every harness makes on the
 * runtime's answers.
 *
 * A harness reports a broken invariant with FUZZ_CHECK, which prints what
 * was expected and aborts: libFuzzer (and the replay tests) count an abort
 * as a crash and keep the input, exactly like a sanitizer report.
 */
#ifndef FUZZ_COMMON_H_
#define FUZZ_COMMON_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* libFuzzer's entry points: every harness defines the first, those with
 * set-up to do the second. */
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv);

#define FUZZ_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/*
 * FUZZ_CLAUSE(id, cond, ...): a check of what spec clause `id` promises,
 * beyond the oracles every implementation is held to (no crash, no hang,
 * bounded memory, documented error kinds, balanced reference counts,
 * deleters run once), which use FUZZ_CHECK. The failure names the clause,
 * so a finding maps to its entry in spec/deviations.md.
 *
 * FUZZ_TOLERATE=ID,ID,... (or "all") lets a campaign against a library
 * with recorded deviations go on past them: a tolerated clause is reported
 * once on stderr and the input goes on. An error kind outside the
 * documented ones is tolerated as `kind=<Kind>` (kind=InternalError).
 * spec/deviations.md says what to tolerate for each release, on its
 * "Fuzz tolerates:" line (fuzz/replay_test.py reads it).
 */
static inline int fuzz_tolerated(const char* clause) {
  const char* list = getenv("FUZZ_TOLERATE");
  if (list == NULL) return 0;
  if (strcmp(list, "all") == 0) return 1;
  size_t n = strlen(clause);
  for (const char* p = strstr(list, clause); p != NULL; p = strstr(p + 1, clause)) {
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  }
  return 0;
}

#define FUZZ_CLAUSE(clause, cond, ...)                                                       \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      if (fuzz_tolerated(clause)) {                                                          \
        static int reported_;                                                                \
        if (!reported_++) fprintf(stderr, "fuzz: %s broken (tolerated)\n", clause);          \
      } else {                                                                               \
        fprintf(stderr, "%s:%d: %s: check failed: %s: ", __FILE__, __LINE__, clause, #cond); \
        fprintf(stderr, __VA_ARGS__);                                                        \
        fputc('\n', stderr);                                                                 \
        abort();                                                                             \
      }                                                                                      \
    }                                                                                        \
  } while (0)

/* Reads structured values off the input. Past the end every read gives
 * zero bytes, so a short input is still a complete (if dull) test case. */
typedef struct {
  const uint8_t* data;
  size_t size;
  size_t pos;
} FuzzReader;

static inline FuzzReader fuzz_reader(const uint8_t* data, size_t size) {
  FuzzReader r = {data, size, 0};
  return r;
}

static inline size_t fuzz_left(const FuzzReader* r) { return r->size - r->pos; }

static inline uint8_t fuzz_u8(FuzzReader* r) { return r->pos < r->size ? r->data[r->pos++] : 0; }

static inline uint64_t fuzz_uint(FuzzReader* r, int nbytes) {
  uint64_t v = 0;
  for (int i = 0; i < nbytes; ++i) v |= (uint64_t)fuzz_u8(r) << (8 * i);
  return v;
}

static inline uint16_t fuzz_u16(FuzzReader* r) { return (uint16_t)fuzz_uint(r, 2); }
static inline uint32_t fuzz_u32(FuzzReader* r) { return (uint32_t)fuzz_uint(r, 4); }
static inline uint64_t fuzz_u64(FuzzReader* r) { return fuzz_uint(r, 8); }

/* Up to `max` bytes of the input, as a span into it (no copy). */
static inline const uint8_t* fuzz_bytes(FuzzReader* r, size_t max, size_t* got) {
  size_t n = fuzz_left(r) < max ? fuzz_left(r) : max;
  const uint8_t* p = r->data + r->pos;
  r->pos += n;
  *got = n;
  return p;
}

/*
 * Takes the error the runtime raised and checks it: there must be one (a
 * -1 without a raised error is a contract violation), its kind must be one
 * of the NULL-terminated `kinds`, and its message must be non-empty.
 * Releases the error.
 */
static inline void fuzz_expect_raised(const char* where, const char* const* kinds) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  FUZZ_CHECK(err != NULL, "%s returned -1 without raising an error", where);
  FUZZ_CHECK(TVMFFIObjectGetTypeIndex(err) == kTVMFFIError, "%s raised a non-Error object", where);
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  int known = 0;
  for (const char* const* k = kinds; *k != NULL; ++k) {
    if (cell->kind.size == strlen(*k) && memcmp(cell->kind.data, *k, cell->kind.size) == 0)
      known = 1;
  }
  char tolerated[80];
  snprintf(tolerated, sizeof tolerated, "kind=%.*s",
           (int)(cell->kind.size < 60 ? cell->kind.size : 60), cell->kind.data);
  FUZZ_CLAUSE(tolerated, known, "%s raised an error of unexpected kind '%.*s': %.*s", where,
              (int)cell->kind.size, cell->kind.data, (int)cell->message.size, cell->message.data);
  FUZZ_CHECK(cell->message.size > 0, "%s raised %.*s with an empty message", where,
             (int)cell->kind.size, cell->kind.data);
  TVMFFIObjectDecRef(err);
}

/* After a call that returned 0, nothing may be left raised. */
static inline void fuzz_expect_nothing_raised(const char* where) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) {
    const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    FUZZ_CHECK(0, "%s succeeded but left %.*s raised: %.*s", where, (int)cell->kind.size,
               cell->kind.data, (int)cell->message.size, cell->message.data);
  }
}

/* Releases an owned value (the reference of an object). */
static inline void fuzz_release(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj != NULL) TVMFFIObjectDecRef(v->v_obj);
  memset(v, 0, sizeof(*v));
}

/* The text of a string or bytes value of any of the four kinds; NULL when
 * `v` holds something else. */
static inline const char* fuzz_str_of(const TVMFFIAny* v, size_t* size) {
  switch (v->type_index) {
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes: *size = v->small_str_len; return v->v_bytes;
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      const TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(v->v_obj);
      *size = b->size;
      return b->data;
    }
    default: return NULL;
  }
}

#endif
