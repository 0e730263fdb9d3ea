/* Helpers shared by the core-value, error and function conformance tests
 * (any, object, string, dtype, type, container, error, function, registry,
 * init-once): reading raised errors, reference counts and string values
 * through the ABI only. */
#ifndef CONFORMANCE_CORE_SUPPORT_H_
#define CONFORMANCE_CORE_SUPPORT_H_

#include <stdint.h>
#include <string.h>

#include "impl.h"

/* Moves the raised error out and checks its kind (exactly) and that its
 * message contains `part`. Fails the test when nothing was raised. */
static inline void core_expect_raised(const char* kind, const char* part) {
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err, "expected a raised %s, but no error was raised", kind);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  int kind_ok = cell->kind.size == strlen(kind) && memcmp(cell->kind.data, kind, cell->kind.size) == 0;
  int has_part = part == NULL || (cell->message.size >= strlen(part) &&
                                  memmem(cell->message.data, cell->message.size, part,
                                         strlen(part)) != NULL);
  cr_expect(kind_ok, "error kind: expected %s, got %.*s (message: %.*s)", kind,
            (int)cell->kind.size, cell->kind.data, (int)cell->message.size, cell->message.data);
  cr_expect(has_part, "error message lacks \"%s\": %.*s", part ? part : "",
            (int)cell->message.size, cell->message.data);
  API(TVMFFIObjectDecRef)(err);
}

/* Moves the raised error out and returns it (the caller owns it), or NULL
 * when none was raised. The out-parameter starts as a non-NULL sentinel, so
 * an implementation that leaves it untouched is caught by the caller's
 * check, not hidden by a NULL that happened to be there. */
static inline TVMFFIObjectHandle core_take_raised(void) {
  TVMFFIObjectHandle err = (TVMFFIObjectHandle)(uintptr_t)0x1;
  API(TVMFFIErrorMoveFromRaised)(&err);
  return err;
}

/* Checks that some error was raised whose message contains `part`, whatever
 * its kind; returns nothing. For MUST clauses that fix the message but not
 * the kind. */
static inline void core_expect_raised_any_kind(const char* part) {
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err, "expected a raised error, but none was raised");
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  cr_expect(memmem(cell->message.data, cell->message.size, part, strlen(part)) != NULL,
            "error message lacks \"%s\": %.*s", part, (int)cell->message.size,
            cell->message.data);
  API(TVMFFIObjectDecRef)(err);
}

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

/* Argument views (borrowed, nothing to release) of an int, a C string and
 * an object; the object's kind is read from its header. */
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

static inline uint32_t core_strong(const void* obj) {
  return (uint32_t)(__atomic_load_n(&((const TVMFFIObject*)obj)->combined_ref_count,
                                    __ATOMIC_ACQUIRE) &
                    0xffffffffu);
}

static inline uint32_t core_weak(const void* obj) {
  return (uint32_t)(__atomic_load_n(&((const TVMFFIObject*)obj)->combined_ref_count,
                                    __ATOMIC_ACQUIRE) >>
                    32);
}

#endif
