/* Clauses of spec/functions.md: function objects and the calling convention. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core_support.h"

static TVMFFIAny none(void) {
  TVMFFIAny v;
  memset(&v, 0, sizeof v);
  v.type_index = kTVMFFINone;
  return v;
}

static TVMFFIAny int_value(int64_t x) {
  TVMFFIAny v = none();
  v.type_index = kTVMFFIInt;
  v.v_int64 = x;
  return v;
}

/* What a recording callback saw on its last call. */
typedef struct {
  int calls;
  void* handle;
  const TVMFFIAny* args;
  int32_t num_args;
  TVMFFIAny args_copy[4];
  TVMFFIAny* result;
  TVMFFIAny result_on_entry;
  int deletes;
  void* deleted_self;
} Record;

static int record_call(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* rv) {
  Record* r = handle;
  r->calls++;
  r->handle = handle;
  r->args = args;
  r->num_args = num_args;
  for (int32_t i = 0; i < num_args && i < 4; ++i) r->args_copy[i] = args[i];
  r->result = rv;
  r->result_on_entry = *rv;
  *rv = int_value(4242);
  return 0;
}

static void record_delete(void* self) {
  Record* r = self;
  r->deletes++;
  r->deleted_self = self;
}

static TVMFFIObjectHandle make_fn(void* self, TVMFFISafeCallType call, void (*del)(void*)) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(self, call, del, &fn), 0, "TVMFFIFunctionCreate failed");
  cr_assert_not_null(fn);
  return fn;
}

/* FN-001: TVMFFIFunctionCreate returns 0 and a Function object (type index
 * kTVMFFIFunction) with one strong reference. */
TEST(fn, FN_001_create_gives_function_object) {
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, record_delete);
  cr_assert_eq(TVMFFIObjectGetTypeIndex(fn), kTVMFFIFunction, "type index %d",
               TVMFFIObjectGetTypeIndex(fn));
  cr_assert_eq(core_strong(fn), 1);
  cr_assert_not_null(TVMFFIFunctionGetCellPtr(fn)->safe_call);
  cr_assert_eq(r.calls, 0, "creating called the callback");
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-002: a function created with a self pointer passes exactly that
 * pointer to its callback as the handle. */
TEST(fn, FN_002_callback_receives_self) {
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_eq(r.calls, 1);
  cr_assert_eq(r.handle, &r, "callback got handle %p, expected self %p", r.handle, (void*)&r);
  API(TVMFFIObjectDecRef)(fn);
}

static void* null_self_seen;
static int null_self_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n, (void)rv;
  null_self_seen = handle;
  return 0;
}

/* FN-003: a function created with both self and deleter NULL passes the
 * function object itself as the callback's handle. */
TEST(fn, FN_003_null_self_receives_function_object) {
  TVMFFIObjectHandle fn = make_fn(NULL, null_self_call, NULL);
  TVMFFIAny rv = none();
  null_self_seen = (void*)(uintptr_t)0x1;
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_eq(null_self_seen, fn, "handle %p, expected the function %p", null_self_seen, fn);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-004: the callback receives the caller's argument array itself (same
 * address, same count), every value bit for bit. */
TEST(fn, FN_004_arguments_passed_as_given) {
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, NULL);
  TVMFFIAny args[3] = {int_value(-7), none(), none()};
  args[1].type_index = kTVMFFIFloat;
  args[1].v_float64 = 2.5;
  args[2].type_index = kTVMFFIOpaquePtr;
  args[2].v_ptr = &r;
  TVMFFIAny saved[3];
  memcpy(saved, args, sizeof args);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 3, &rv), 0);
  cr_assert_eq(r.args, args, "callback got a different argument array");
  cr_assert_eq(r.num_args, 3);
  cr_assert_eq(memcmp(r.args_copy, saved, sizeof saved), 0, "argument bytes differ");
  cr_assert_eq(memcmp(args, saved, sizeof saved), 0, "the call changed the arguments");
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-005: the callback writes its result into the caller's slot (same
 * address), which holds the None the caller put there on entry. */
TEST(fn, FN_005_result_slot_is_callers) {
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_eq(r.result, &rv);
  cr_assert_eq(r.result_on_entry.type_index, kTVMFFINone);
  cr_assert_eq(rv.type_index, kTVMFFIInt);
  cr_assert_eq(rv.v_int64, 4242);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-006: arguments are borrowed: the reference counts of object arguments
 * are the same after the call as before. */
TEST(fn, FN_006_argument_counts_unchanged) {
  Record r = {0}, other = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, NULL);
  TVMFFIObjectHandle arg = make_fn(&other, record_call, NULL);
  TVMFFIAny args[1] = {none()};
  args[0].type_index = kTVMFFIFunction;
  args[0].v_obj = arg;
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 1, &rv), 0);
  cr_assert_eq(core_strong(arg), 1, "argument count %u after the call", core_strong(arg));
  cr_assert_eq(core_strong(fn), 1, "function count %u after the call", core_strong(fn));
  API(TVMFFIObjectDecRef)(arg);
  API(TVMFFIObjectDecRef)(fn);
}

static int return_self_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n;
  TVMFFIObjectHandle obj = *(TVMFFIObjectHandle*)handle;
  conf_api.TVMFFIObjectIncRef(obj); /* the result owns a reference */
  rv->type_index = TVMFFIObjectGetTypeIndex(obj);
  rv->zero_padding = 0;
  rv->v_obj = obj;
  return 0;
}

/* FN-007: an object result is owned by the caller: it carries one new
 * reference, which the caller releases. */
TEST(fn, FN_007_result_owned_by_caller) {
  Record other = {0};
  TVMFFIObjectHandle payload = make_fn(&other, record_call, record_delete);
  TVMFFIObjectHandle fn = make_fn(&payload, return_self_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_eq(rv.type_index, kTVMFFIFunction);
  cr_assert_eq(rv.v_obj, payload);
  cr_assert_eq(core_strong(payload), 2);
  API(TVMFFIObjectDecRef)(rv.v_obj);
  API(TVMFFIObjectDecRef)(payload);
  cr_assert_eq(other.deletes, 1);
  API(TVMFFIObjectDecRef)(fn);
}

static int raise_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)handle, (void)args, (void)n, (void)rv;
  conf_api.TVMFFIErrorSetRaisedFromCStr("ValueError", "argument `x` out of range");
  return -1;
}

/* FN-008: TVMFFIFunctionCall returns the callback's return code unchanged:
 * 0 on success, -1 with the callback's error left raised. */
TEST(fn, FN_008_return_code_passed_through) {
  TVMFFIObjectHandle fn = make_fn(NULL, raise_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 10);
  cr_assert_eq(memcmp(cell->kind.data, "ValueError", 10), 0);
  cr_assert_eq(rv.type_index, kTVMFFINone, "failed call wrote a result");
  API(TVMFFIObjectDecRef)(err);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-009: the deleter runs exactly once, with self, when the last strong
 * reference goes, and not before. */
TEST(fn, FN_009_deleter_once_at_last_release) {
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, record_delete);
  API(TVMFFIObjectIncRef)(fn);
  API(TVMFFIObjectIncRef)(fn);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(fn);
  cr_assert_eq(r.deletes, 0, "deleter ran while references remained");
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  API(TVMFFIObjectDecRef)(fn);
  cr_assert_eq(r.deletes, 1, "deleter ran %d times", r.deletes);
  cr_assert_eq(r.deleted_self, &r);
}

/* Three levels: outer calls middle through TVMFFIFunctionCall, middle calls
 * inner, inner raises. Each level passes failure straight up. */
static int inner_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)handle, (void)args, (void)n, (void)rv;
  conf_api.TVMFFIErrorSetRaisedFromCStr("IndexError", "index 12 out of range for `axis`");
  return -1;
}
static int forward_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n;
  TVMFFIObjectHandle next = *(TVMFFIObjectHandle*)handle;
  return conf_api.TVMFFIFunctionCall(next, NULL, 0, rv);
}

/* FN-010: an error raised three calls deep comes out of the outermost
 * TVMFFIFunctionCall as -1 with the same error object, kind and message. */
TEST(fn, FN_010_error_three_calls_deep) {
  TVMFFIObjectHandle inner = make_fn(NULL, inner_call, NULL);
  TVMFFIObjectHandle middle = make_fn(&inner, forward_call, NULL);
  TVMFFIObjectHandle outer = make_fn(&middle, forward_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(outer, NULL, 0, &rv), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "no error came out");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 10);
  cr_assert_eq(memcmp(cell->kind.data, "IndexError", 10), 0);
  const char* want = "index 12 out of range for `axis`";
  cr_assert_eq(cell->message.size, strlen(want));
  cr_assert_eq(memcmp(cell->message.data, want, strlen(want)), 0);
  cr_assert_null(core_take_raised());
  API(TVMFFIObjectDecRef)(err);
  API(TVMFFIObjectDecRef)(outer);
  API(TVMFFIObjectDecRef)(middle);
  API(TVMFFIObjectDecRef)(inner);
}

static int fail_silently(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)handle, (void)args, (void)n, (void)rv;
  return -1;
}

/* FN-011: when a callback returns -1 without raising, TVMFFIFunctionCall
 * returns -1 and the thread's slot stays empty: no error is made up, and a
 * caller must treat a NULL from TVMFFIErrorMoveFromRaised after -1 as a
 * failure without details. */
TEST(fn, FN_011_silent_failure_raises_nothing) {
  TVMFFIObjectHandle fn = make_fn(NULL, fail_silently, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), -1);
  cr_assert_null(core_take_raised(), "an error was made up");
  cr_assert_eq(rv.type_index, kTVMFFINone);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-012: a call with no arguments may pass a NULL argument array; the
 * callback sees num_args 0. */
TEST(fn, FN_012_zero_arguments) {
  Record r = {0};
  r.num_args = -1;
  TVMFFIObjectHandle fn = make_fn(&r, record_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_eq(r.num_args, 0);
  cr_assert_null(r.args);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-013: calling through the cell (safe_call with the function object as
 * handle) is the same as calling through TVMFFIFunctionCall. */
TEST(fn, FN_013_cell_call_equivalent) {
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, NULL);
  TVMFFIAny rv = none();
  TVMFFIAny args[1] = {int_value(5)};
  cr_assert_eq(TVMFFIFunctionGetCellPtr(fn)->safe_call(fn, args, 1, &rv), 0);
  cr_assert_eq(r.calls, 1);
  cr_assert_eq(r.handle, &r);
  cr_assert_eq(r.args_copy[0].v_int64, 5);
  cr_assert_eq(rv.v_int64, 4242);
  API(TVMFFIObjectDecRef)(fn);
}

typedef struct {
  TVMFFIObjectHandle fn;
  int failures;
} CallerArg;

static int count_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)n;
  __atomic_fetch_add((int*)handle, 1, __ATOMIC_RELAXED);
  *rv = args[0];
  return 0;
}

static void* call_many(void* arg) {
  CallerArg* c = arg;
  for (int i = 0; i < 10000; ++i) {
    TVMFFIAny a[1] = {int_value(i)}, rv = none();
    if (conf_api.TVMFFIFunctionCall(c->fn, a, 1, &rv) != 0 || rv.v_int64 != i) c->failures++;
  }
  return NULL;
}

/* FN-014: one function object may be called from several threads at once. */
TEST(fn, FN_014_concurrent_calls) {
  int calls = 0;
  TVMFFIObjectHandle fn = make_fn(&calls, count_call, NULL);
  (void)API(TVMFFIFunctionCall);
  pthread_t t[8];
  CallerArg c[8];
  for (int i = 0; i < 8; ++i) {
    c[i] = (CallerArg){fn, 0};
    pthread_create(&t[i], NULL, call_many, &c[i]);
  }
  for (int i = 0; i < 8; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < 8; ++i) cr_assert_eq(c[i].failures, 0, "thread %d saw failures", i);
  cr_assert_eq(calls, 80000);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-015: TVMFFIFunctionCreate with a NULL safe_call returns -1 with a
 * ValueError naming safe_call, and makes no object. */
TEST(fn, FN_015_create_rejects_null_callback) {
  TVMFFIObjectHandle fn = (TVMFFIObjectHandle)(uintptr_t)0x1;
  int rc = API(TVMFFIFunctionCreate)(NULL, NULL, NULL, &fn);
  TVMFFIObjectHandle err = core_take_raised();
  if (rc == 0 && fn != NULL && fn != (TVMFFIObjectHandle)(uintptr_t)0x1)
    API(TVMFFIObjectDecRef)(fn);
  cr_assert_eq(rc, -1, "accepted a NULL safe_call (rc %d)", rc);
  cr_expect_null(fn, "out is %p after the refusal, not NULL", fn);
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 10);
  cr_assert_eq(memcmp(cell->kind.data, "ValueError", 10), 0);
  cr_assert_not_null(strstr(cell->message.data, "safe_call"), "message: %s", cell->message.data);
  API(TVMFFIObjectDecRef)(err);
}

static int null_deletes;
static void* null_deleted_with = (void*)(uintptr_t)0x1;
static void null_delete(void* self) {
  null_deletes++;
  null_deleted_with = self;
}

/* FN-016: a function created with a NULL self but a deleter passes NULL as
 * the callback's handle, and its deleter receives NULL once. */
TEST(fn, FN_016_null_self_with_deleter) {
  TVMFFIObjectHandle fn = make_fn(NULL, null_self_call, null_delete);
  TVMFFIAny rv = none();
  null_self_seen = (void*)(uintptr_t)0x1;
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_null(null_self_seen, "handle %p, expected NULL", null_self_seen);
  API(TVMFFIObjectDecRef)(fn);
  cr_assert_eq(null_deletes, 1);
  cr_assert_null(null_deleted_with);
}

/* FN-048: with a weak reference outstanding, the last strong release runs
 * the callback's deleter once; the last weak release frees the storage
 * and does not run the deleter again. */
TEST(fn, FN_048_deleter_once_with_weak_reference) {
  const char* why = "";
  int counting = core_count_try_begin(&why);
  if (!counting) cr_log_info("storage not counted: %s", why);
  Record r = {0};
  TVMFFIObjectHandle fn = make_fn(&r, record_call, record_delete);
  core_weak_acquire(fn);
  API(TVMFFIObjectDecRef)(fn);
  int deletes_at_strong = r.deletes;
  long live_at_strong = core_count_live();
  core_weak_release(fn);
  if (counting) {
    core_count_end("a function released with a weak reference outstanding");
    cr_expect_eq(live_at_strong, 1, "storage held while the weak reference remained: %ld",
                 live_at_strong);
  }
  cr_expect_eq(deletes_at_strong, 1, "deleter calls at the last strong release: %d",
               deletes_at_strong);
  cr_expect_eq(r.deletes, 1, "deleter calls after the last weak release: %d", r.deletes);
  cr_expect_eq(r.deleted_self, &r);
}

/* FN-049: a function object and what it was made with are given back once
 * its last reference goes: nothing allocated by TVMFFIFunctionCreate, or
 * by calling it, outlives it. */
TEST(fn, FN_049_function_storage_freed) {
  core_count_begin();
  Record r = {0};
  TVMFFIObjectHandle with_self = make_fn(&r, record_call, record_delete);
  TVMFFIObjectHandle bare = make_fn(NULL, null_self_call, NULL);
  TVMFFIAny rv = none();
  cr_assert_eq(API(TVMFFIFunctionCall)(with_self, NULL, 0, &rv), 0);
  cr_assert_eq(API(TVMFFIFunctionCall)(bare, NULL, 0, &rv), 0);
  cr_expect_geq(core_count_live(), 2, "two function objects: %ld live", core_count_live());
  API(TVMFFIObjectDecRef)(with_self);
  API(TVMFFIObjectDecRef)(bare);
  core_count_end("two functions created, called and released");
}

/* FN-056: TVMFFIFunctionCreate with a NULL out, and
 * TVMFFIFunctionSetGlobalFromMethodInfo with a NULL method_info, return -1
 * with a ValueError naming the argument; the deleter is not called. */
TEST(fn, FN_056_null_out_refused) {
  HOSTILE_INPUT("TVMFFIFunctionCreate writes through a NULL out");
  Record r = {0};
  cr_expect_eq(API(TVMFFIFunctionCreate)(&r, record_call, record_delete, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  cr_expect_eq(r.deletes, 0, "the deleter ran for a refused creation");
  cr_expect_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(NULL, 0), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"method_info"});
}
