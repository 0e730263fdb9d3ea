/* Helpers shared by the core-value, error and function conformance tests
 * (any, object, string, dtype, type, container, error, function, registry,
 * init-once): reading raised errors, reference counts and string values
 * through the ABI only. */
#ifndef CONFORMANCE_CORE_SUPPORT_H_
#define CONFORMANCE_CORE_SUPPORT_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* Moves the raised error out and returns it (the caller owns it), or NULL
 * when none was raised. The out-parameter starts as a non-NULL sentinel, so
 * an implementation that leaves it untouched is caught by the caller's
 * check, not hidden by a NULL that happened to be there. */
static inline TVMFFIObjectHandle core_take_raised(void) {
  TVMFFIObjectHandle err = (TVMFFIObjectHandle)(uintptr_t)0x1;
  API(TVMFFIErrorMoveFromRaised)(&err);
  return err;
}

/* The error cell behind an error object (the layout the library under test
 * was built with is checked by layout_guard.h where it matters). */
static inline const TVMFFIErrorCell* conf_error_cell(TVMFFIObjectHandle err) {
  return (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
}

/* Where `name` occurs in [at, end) as a whole identifier (not the head of a
 * longer one: TVMFFITensorFromDLPack is not in TVMFFITensorFromDLPackVersioned),
 * or NULL. */
static inline const char* conf_find_name(const char* at, const char* end, const char* name) {
  size_t n = strlen(name);
  while ((at = memmem(at, (size_t)(end - at), name, n)) != NULL) {
    char next = at + n < end ? at[n] : ' ';
    int ident = next == '_' || (next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') ||
                (next >= '0' && next <= '9');
    if (!ident) return at;
    at += n;
  }
  return NULL;
}

/* A raised error as a test expects it: `kind` exactly (NULL: any kind); in
 * the message, in this order, `api` as a whole name, then `arg`, then each
 * of `says` (a NULL field or entry is not checked). A refusal at the ABI
 * boundary says which function, which argument, and what is wrong, in that
 * order. */
typedef struct {
  const char* kind;
  const char* api;
  const char* arg;
  const char* says[3];
} ConfRaised;

/* Takes the raised error, checks it against `want` and releases it; fails
 * the test when nothing was raised. Use as
 * EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFIFoo", .arg = "x", .says = {"NULL"}). */
static inline void conf_expect_raised(ConfRaised want) {
  const char* what = want.api ? want.api : want.kind ? want.kind : "an error";
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1,
            "%s: nothing raised (%s expected)", what, want.kind ? want.kind : "an error");
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  const char* msg = cell->message.data;
  const char* end = msg + cell->message.size;
  int size = (int)cell->message.size;
  cr_expect(want.kind == NULL || (cell->kind.size == strlen(want.kind) &&
                                  memcmp(cell->kind.data, want.kind, cell->kind.size) == 0),
            "%s: raised %.*s, expected %s (message: %.*s)", what, (int)cell->kind.size,
            cell->kind.data, want.kind ? want.kind : "", size, msg);
  const char* at = msg;
  if (want.api) {
    const char* found = conf_find_name(msg, end, want.api);
    cr_expect(found != NULL, "%s: the message does not name the function: %.*s", what, size, msg);
    if (found) at = found + strlen(want.api);
  }
  if (want.arg) {
    const char* found = memmem(at, (size_t)(end - at), want.arg, strlen(want.arg));
    cr_expect(found != NULL, "%s: the message does not name `%s`%s: %.*s", what, want.arg,
              want.api ? " after the function" : "", size, msg);
    if (found) at = found + strlen(want.arg);
  }
  for (int i = 0; i < 3; ++i) {
    const char* part = want.says[i];
    if (part == NULL) continue;
    cr_expect(memmem(at, (size_t)(end - at), part, strlen(part)) != NULL,
              "%s: the message does not say \"%s\"%s%s: %.*s", what, part,
              want.arg ? " after " : "", want.arg ? want.arg : "", size, msg);
  }
  API(TVMFFIObjectDecRef)(err);
}

#define EXPECT_RAISED(...) conf_expect_raised((ConfRaised){__VA_ARGS__})

/* A raised error as text, for the checks EXPECT_RAISED cannot say (one of
 * two kinds, a word in any case, how often a name occurs, nothing raised
 * after a 0): kind "" when nothing was raised. Takes the error out of the
 * slot, so the next check starts from an empty one. */
typedef struct {
  char kind[64];
  char message[2048];
} ConfError;

static inline ConfError conf_take_error(void) {
  ConfError out;
  memset(&out, 0, sizeof out); /* whole: tests copy it through pipes */
  TVMFFIObjectHandle err = core_take_raised();
  if (err == (TVMFFIObjectHandle)(uintptr_t)0x1) {
    snprintf(out.kind, sizeof out.kind, "(out left unwritten)");
    return out;
  }
  if (err == NULL) return out;
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  snprintf(out.kind, sizeof out.kind, "%.*s", (int)cell->kind.size, cell->kind.data);
  snprintf(out.message, sizeof out.message, "%.*s", (int)cell->message.size, cell->message.data);
  API(TVMFFIObjectDecRef)(err);
  return out;
}

/* A call that must succeed: any other return fails the test with `call`
 * and the error it raised. */
static inline void conf_expect_ok(int rc, const char* call) {
  if (rc == 0) return;
  ConfError e = conf_take_error();
  cr_assert_fail("%s returned %d: %s: %s", call, rc, e.kind[0] ? e.kind : "nothing raised",
                 e.message);
}

#define EXPECT_OK(call) conf_expect_ok((call), #call)

/* The bytes of a string or bytes value of any of the four kinds. */
static inline TVMFFIByteArray core_str_bytes(const TVMFFIAny* value) {
  TVMFFIByteArray out = {NULL, 0};
  if (value->type_index == kTVMFFISmallStr || value->type_index == kTVMFFISmallBytes) {
    out.data = value->v_bytes;
    out.size = value->small_str_len;
  } else if (value->type_index == kTVMFFIStr || value->type_index == kTVMFFIBytes) {
    memcpy(&out, (const char*)value->v_obj + sizeof(TVMFFIObject), sizeof out);
  }
  return out;
}

/* Releases an owned value (the reference of an object). */
static inline void core_release(TVMFFIAny* value) {
  if (value->type_index >= kTVMFFIStaticObjectBegin && value->v_obj != NULL)
    API(TVMFFIObjectDecRef)(value->v_obj);
  memset(value, 0, sizeof *value);
}

/* Argument views (borrowed, nothing to release) of None, a bool, an int, a
 * float, a C string and an object; the object's kind is read from its
 * header. The suite's one set of value makers. */
static inline TVMFFIAny core_none(void) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  return a;
}

static inline TVMFFIAny core_bool(int b) {
  TVMFFIAny a = core_none();
  a.type_index = kTVMFFIBool;
  a.v_int64 = b != 0;
  return a;
}

static inline TVMFFIAny core_float(double d) {
  TVMFFIAny a = core_none();
  a.type_index = kTVMFFIFloat;
  a.v_float64 = d;
  return a;
}

static inline TVMFFIAny core_int(int64_t v) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

static inline TVMFFIAny core_c_str(const char* s) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

static inline TVMFFIAny core_obj(void* obj) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = ((TVMFFIObject*)obj)->type_index;
  a.v_obj = obj;
  return a;
}

/* The global function `name` (a new reference). One that is not registered
 * fails the test, or with `skip_missing` skips it, saying which
 * implementation lacks it. */
static inline TVMFFIObjectHandle core_global(const char* name, int skip_missing) {
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&n, &fn), 0, "looking up %s failed", name);
  if (fn == NULL && skip_missing)
    criterion_skip_test("%s does not register the global function %s", conf_impl_path(), name);
  cr_assert_not_null(fn, "%s registers no global function %s", conf_impl_path(), name);
  return fn;
}

/* The type index registered under `key`; fails the test when none is. */
static inline int32_t core_type_index(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = -1;
  cr_assert_eq(API(TVMFFITypeKeyToIndex)(&k, &index), 0, "%s registers no type `%s`",
               conf_impl_path(), key);
  return index;
}

/* The field `name` of a type's record, or NULL when it has none. */
static inline const TVMFFIFieldInfo* core_field_of(const TVMFFITypeInfo* info, const char* name) {
  for (int32_t i = 0; i < info->num_fields; ++i)
    if (info->fields[i].name.size == strlen(name) &&
        memcmp(info->fields[i].name.data, name, info->fields[i].name.size) == 0)
      return &info->fields[i];
  return NULL;
}

static inline uint32_t core_strong(const void* obj) {
  return (
      uint32_t)(__atomic_load_n(&((const TVMFFIObject*)obj)->combined_ref_count, __ATOMIC_ACQUIRE) &
                0xffffffffu);
}

static inline uint32_t core_weak(const void* obj) {
  return (uint32_t)(__atomic_load_n(&((const TVMFFIObject*)obj)->combined_ref_count,
                                    __ATOMIC_ACQUIRE) >>
                    32);
}

/* Takes a weak reference the way a weak handle does: the high 32 bits of
 * the count. */
static inline void core_weak_acquire(void* obj) {
  __atomic_fetch_add(&((TVMFFIObject*)obj)->combined_ref_count, (uint64_t)1 << 32,
                     __ATOMIC_RELAXED);
}

/* Drops a weak reference the way a weak handle does: whoever takes the
 * weak count to zero calls the object's deleter with the weak flag. */
static inline void core_weak_release(void* obj) {
  TVMFFIObject* header = obj;
  if (__atomic_fetch_sub(&header->combined_ref_count, (uint64_t)1 << 32, __ATOMIC_ACQ_REL) ==
      (uint64_t)1 << 32)
    header->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
}

/* A counting allocator for leak checks through the ABI: while installed
 * with TVMFFISetCustomAllocator, every object the implementation makes is
 * counted when allocated and when its storage goes back, so a test can
 * demand that nothing it made outlives it. Implementations without the
 * custom allocator API SKIP such tests, saying so. */
typedef struct {
  long allocs;
  long frees;
  long overruns;
} CoreAllocCount;

static CoreAllocCount core_alloc_count;

/* Each block: the body's size, then the TVMFFIObjectAllocHeader, then the
 * body (16 bytes in, keeping malloc's 16-byte alignment), then a guard of
 * known bytes: storage written past the size the implementation asked for
 * changes the guard, and the count of overruns shows it when the block
 * comes back. */
#define CORE_COUNT_OFFSET 16
#define CORE_COUNT_GUARD 16
#define CORE_COUNT_GUARD_BYTE 0xA5

static void core_count_delete_space(void* body) {
  char* block = (char*)body - CORE_COUNT_OFFSET;
  size_t size;
  memcpy(&size, block, sizeof size);
  const unsigned char* guard = (const unsigned char*)body + size;
  for (size_t i = 0; i < CORE_COUNT_GUARD; ++i) {
    if (guard[i] != CORE_COUNT_GUARD_BYTE) {
      __atomic_fetch_add(&core_alloc_count.overruns, 1, __ATOMIC_RELAXED);
      break;
    }
  }
  __atomic_fetch_add(&core_alloc_count.frees, 1, __ATOMIC_RELAXED);
  free(block);
}

static void* core_count_allocate(size_t size, size_t alignment, int32_t type_index, void* context) {
  (void)type_index;
  (void)context;
  if (alignment > CORE_COUNT_OFFSET || size > ((size_t)1 << 40)) return NULL;
  char* block = malloc(CORE_COUNT_OFFSET + size + CORE_COUNT_GUARD);
  if (block == NULL) return NULL;
  memcpy(block, &size, sizeof size);
  char* body = block + CORE_COUNT_OFFSET;
  ((TVMFFIObjectAllocHeader*)body)[-1].delete_space = core_count_delete_space;
  /* Storage comes uninitialised, as from any allocator: garbage, so a
   * field the implementation forgets to set cannot pass for zero. */
  memset(body, 0xCD, size);
  memset(body + size, CORE_COUNT_GUARD_BYTE, CORE_COUNT_GUARD);
  __atomic_fetch_add(&core_alloc_count.allocs, 1, __ATOMIC_RELAXED);
  return body;
}

static TVMFFICustomAllocator core_counting_allocator = {core_count_allocate, NULL};

/* Installs the counting allocator with both counts at zero and returns 1;
 * returns 0, with the built-in allocator back, where the implementation
 * lacks the custom allocator API or does not make its objects through it
 * (a heap string made as a probe never reaches allocate), *why saying which. */
static inline int core_count_try_begin(const char** why) {
  if (!conf_api_present.TVMFFISetCustomAllocator || !conf_api_present.TVMFFIGetCustomAllocator) {
    *why = "the implementation lacks TVMFFISetCustomAllocator";
    return 0;
  }
  if (conf_api.TVMFFISetCustomAllocator(&core_counting_allocator) != 0) {
    *why = "TVMFFISetCustomAllocator refused the counting allocator";
    return 0;
  }
  __atomic_store_n(&core_alloc_count.allocs, 0, __ATOMIC_RELAXED);
  TVMFFIByteArray probe_in = {"a probe string of 32 bytes, heap", 32};
  TVMFFIAny probe;
  memset(&probe, 0, sizeof probe);
  if (conf_api.TVMFFIStringFromByteArray(&probe_in, &probe) == 0 &&
      probe.type_index >= kTVMFFIStaticObjectBegin)
    conf_api.TVMFFIObjectDecRef(probe.v_obj);
  if (__atomic_load_n(&core_alloc_count.allocs, __ATOMIC_RELAXED) == 0) {
    conf_api.TVMFFISetCustomAllocator(NULL);
    *why =
        "objects are not made through the registered custom allocator (OBJ-022), so they "
        "cannot be counted";
    return 0;
  }
  __atomic_store_n(&core_alloc_count.allocs, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&core_alloc_count.frees, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&core_alloc_count.overruns, 0, __ATOMIC_RELAXED);
  return 1;
}

/* core_count_try_begin, or SKIP the test saying why counting is impossible. */
static inline void core_count_begin(void) {
  const char* why = "";
  if (!core_count_try_begin(&why)) criterion_skip_test("leak check impossible: %s", why);
}

/* Objects allocated since core_count_begin whose storage is still held. */
static inline long core_count_live(void) {
  return __atomic_load_n(&core_alloc_count.allocs, __ATOMIC_RELAXED) -
         __atomic_load_n(&core_alloc_count.frees, __ATOMIC_RELAXED);
}

/* Puts the built-in allocator back and demands that every object made
 * while counting was given back, none written past the size it was
 * allocated with; `what` names the operations for the failure message. */
static inline void core_count_end(const char* what) {
  conf_api.TVMFFISetCustomAllocator(NULL);
  long allocs = __atomic_load_n(&core_alloc_count.allocs, __ATOMIC_RELAXED);
  long overruns = __atomic_load_n(&core_alloc_count.overruns, __ATOMIC_RELAXED);
  cr_expect_eq(core_count_live(), 0, "%s: %ld of %ld objects never freed", what, core_count_live(),
               allocs);
  cr_expect_eq(overruns, 0, "%s: %ld objects written past the size they were allocated with", what,
               overruns);
}

/* How many rounds a stress loop runs: `rounds`, divided by the positive
 * integer in CONFORMANCE_STRESS_DIVISOR when that is set, and never fewer
 * than one. `--config=valgrind` sets it (.bazelrc): valgrind runs one thread
 * at a time, so repeating a race there only costs time, while one round
 * still takes every code path the leak and memory checks look at. The full
 * count runs in every other configuration. */
static inline int core_stress_rounds(int rounds) {
  const char* v = getenv("CONFORMANCE_STRESS_DIVISOR");
  char* end = NULL;
  long d = v != NULL ? strtol(v, &end, 10) : 1;
  if (v == NULL || end == v || *end != '\0' || d < 1) d = 1;
  return rounds / d > 0 ? (int)(rounds / d) : 1;
}

#endif
