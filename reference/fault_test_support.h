/*
 * SQLite-style fault injection for the runtime's unit tests: run an
 * operation with its 1st, 2nd, ... allocation failing (once, or from there
 * on), until a run sees no failure. Each failed run must end in the
 * documented outcome (-1 with a MemoryError raised, or full success where
 * the operation may absorb the failure), and the operation must work again
 * right after. Leaks are the sanitizers' and valgrind's to find.
 */
#ifndef TFFI_FAULT_TEST_SUPPORT_H_
#define TFFI_FAULT_TEST_SUPPORT_H_

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "mem.h"
#include "object.h"

/* A function for operations to register, look up and call: answers 77. */
static inline int fault_answer(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 77;
  return 0;
}

/* Calls fn with no arguments: -1 if the call failed, else checks the 77. */
static inline int fault_call_answer(TVMFFIObject* fn) {
  TVMFFIAny out = {0};
  if (TVMFFIFunctionCall(fn, NULL, 0, &out) != 0) return -1;
  cr_assert_eq(out.type_index, kTVMFFIInt);
  cr_assert_eq(out.v_int64, 77);
  return 0;
}

/* An operation under test: 0 on success (having checked its result and
 * released what it made), -1 with an error raised. */
typedef int (*FaultOp)(void* ctx);

/* Upper bound on allocations in one operation: a loop that never ends is a
 * test failure, not a hang. */
#define FAULT_MAX_STEPS 10000

/* Kind of the raised error, moved out and released ("" if none). */
static inline const char* fault_take_kind(char* buf, size_t cap) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  buf[0] = '\0';
  if (err == NULL) return buf;
  snprintf(buf, cap, "%s", TVMFFIErrorGetCellPtr(err)->kind.data);
  tffi_decref(err);
  return buf;
}

/* Runs `op` with allocation n failing (and, when sticky, every later one)
 * for n = 1, 2, ... Returns the number of failure points it walked. */
static inline long fault_walk(const char* name, FaultOp op, void* ctx, int sticky) {
  char kind[64];
  for (long n = 1; n <= FAULT_MAX_STEPS; ++n) {
    tffi_mem_fail_at(n, sticky);
    int rc = op(ctx);
    long failed = tffi_mem_fail_off();
    fault_take_kind(kind, sizeof kind);
    if (failed == 0) {
      cr_assert_eq(rc, 0, "%s: failed with no allocation failing (%s)", name, kind);
      return n - 1;
    }
    if (rc == 0) {
      cr_assert_str_eq(kind, "", "%s: succeeded at failure %ld but left %s raised", name, n, kind);
    } else {
      cr_assert_eq(rc, -1, "%s: returned %d at failure %ld", name, rc, n);
      cr_assert_str_eq(kind, "MemoryError", "%s: allocation %ld%s failed, raised '%s'", name, n,
                       sticky ? " and later" : "", kind);
    }
    cr_assert_eq(op(ctx), 0, "%s: does not work after allocation %ld failed", name, n);
    fault_take_kind(kind, sizeof kind);
  }
  cr_assert_fail("%s: more than %d allocations", name, FAULT_MAX_STEPS);
  return -1;
}

/* Both walks; prints the count and the failed call sites (offsets from
 * tffi_malloc_armed, stable across runs, for addr2line). */
static inline long fault_walk_both(const char* name, FaultOp op, void* ctx) {
  if (op(ctx) != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    cr_assert_fail("%s: does not work before any failure: %s", name,
                   err ? TVMFFIErrorGetCellPtr(err)->message.data : "(nothing raised)");
  }
  long once = fault_walk(name, op, ctx, 0);
  long sticky = fault_walk(name, op, ctx, 1);
  cr_assert_gt(once, 0, "%s: allocates nothing, so nothing was tested", name);
  fprintf(stderr, "fault: %-28s %3ld allocation points (%ld sticky); %zu sites failed so far\n",
          name, once, sticky, tffi_mem_failed_sites());
  for (size_t i = 0; tffi_mem_failed_site(i) != NULL; ++i)
    fprintf(stderr, "fault-site: +0x%tx\n",
            (char*)tffi_mem_failed_site(i) - (char*)(void*)tffi_malloc_armed);
  return once;
}

#endif
