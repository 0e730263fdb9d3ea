/* Clauses of spec/functions.md: the registry of global functions. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_support.h"

static int deletes;
static void count_delete(void* self) {
  (void)self;
  __atomic_fetch_add(&deletes, 1, __ATOMIC_RELAXED);
}

static int answer_call(void* handle, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n;
  rv->type_index = kTVMFFIInt;
  rv->zero_padding = 0;
  rv->v_int64 = (int64_t)(intptr_t)handle;
  return 0;
}

/* A function whose call returns `tag`, with a counting deleter. */
static TVMFFIObjectHandle make_fn(intptr_t tag) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)((void*)tag, answer_call, count_delete, &fn), 0);
  return fn;
}

static TVMFFIObjectHandle get_global(const char* name, size_t len) {
  TVMFFIByteArray n = {name, len};
  TVMFFIObjectHandle out = (TVMFFIObjectHandle)(uintptr_t)0x1;
  cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&n, &out), 0, "GetGlobal failed");
  return out;
}

static int set_global(const char* name, size_t len, TVMFFIObjectHandle fn, int allow_override) {
  TVMFFIByteArray n = {name, len};
  return API(TVMFFIFunctionSetGlobal)(&n, fn, allow_override);
}

static int64_t call_tag(TVMFFIObjectHandle fn) {
  TVMFFIAny rv = {0};
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, NULL, 0, &rv), 0);
  cr_assert_eq(rv.type_index, kTVMFFIInt);
  return rv.v_int64;
}

#define NAME(s) s, sizeof(s) - 1

/* FN-020: TVMFFIFunctionSetGlobal then TVMFFIFunctionGetGlobal gives the
 * same function object with a new reference owned by the caller. */
TEST(registry, FN_020_set_then_get_same_object) {
  TVMFFIObjectHandle fn = make_fn(7);
  cr_assert_eq(set_global(NAME("conformance.fn020"), fn, 0), 0);
  uint32_t before = core_strong(fn);
  TVMFFIObjectHandle got = get_global(NAME("conformance.fn020"));
  cr_assert_eq(got, fn, "GetGlobal gave %p, expected %p", got, fn);
  cr_assert_eq(core_strong(fn), before + 1, "GetGlobal did not add a reference");
  cr_assert_eq(call_tag(got), 7);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-021: the registry keeps a reference of its own: the function stays
 * alive and callable after the registering caller releases it. */
TEST(registry, FN_021_registry_holds_reference) {
  deletes = 0;
  TVMFFIObjectHandle fn = make_fn(21);
  cr_assert_eq(set_global(NAME("conformance.fn021"), fn, 0), 0);
  cr_assert_eq(core_strong(fn), 2, "count after SetGlobal %u", core_strong(fn));
  API(TVMFFIObjectDecRef)(fn);
  cr_assert_eq(deletes, 0, "function destroyed while registered");
  TVMFFIObjectHandle got = get_global(NAME("conformance.fn021"));
  cr_assert_eq(got, fn);
  cr_assert_eq(call_tag(got), 21);
  API(TVMFFIObjectDecRef)(got);
}

/* FN-022: looking up a name nobody registered returns 0, writes NULL and
 * raises nothing. */
TEST(registry, FN_022_unknown_name_gives_null) {
  cr_assert_null(get_global(NAME("conformance.no.such.function")));
  cr_assert_null(core_take_raised());
}

/* FN-122: an empty name (size 0) is a name like any other, whatever its
 * data pointer: nothing is read, nobody registered it, so the lookup
 * returns 0, writes NULL and raises nothing. */
TEST(registry, FN_122_empty_name_with_null_data_is_unknown) {
  TVMFFIByteArray empty = {NULL, 0};
  TVMFFIObjectHandle out = (TVMFFIObjectHandle)(uintptr_t)0x1;
  cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&empty, &out), 0);
  cr_assert_null(out, "an empty name found a function");
  cr_assert_null(core_take_raised());
}

/* FN-023: registering a taken name without override returns -1 with a
 * RuntimeError whose message names the function, and keeps the first. */
TEST(registry, FN_023_duplicate_without_override_fails) {
  TVMFFIObjectHandle first = make_fn(1), second = make_fn(2);
  cr_assert_eq(set_global(NAME("conformance.fn023"), first, 0), 0);
  cr_assert_eq(set_global(NAME("conformance.fn023"), second, 0), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "nothing raised");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 12);
  cr_assert_eq(memcmp(cell->kind.data, "RuntimeError", 12), 0, "kind %.*s", (int)cell->kind.size,
               cell->kind.data);
  cr_assert_not_null(strstr(cell->message.data, "conformance.fn023"), "message: %s",
                     cell->message.data);
  cr_assert_eq(core_strong(second), 1, "a refused function was kept");
  TVMFFIObjectHandle got = get_global(NAME("conformance.fn023"));
  cr_assert_eq(got, first);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(err);
  API(TVMFFIObjectDecRef)(first);
  API(TVMFFIObjectDecRef)(second);
}

/* FN-024: with override, registering a taken name replaces the function
 * and releases the registry's reference to the old one. */
TEST(registry, FN_024_override_replaces_and_releases) {
  deletes = 0;
  TVMFFIObjectHandle first = make_fn(1), second = make_fn(2);
  cr_assert_eq(set_global(NAME("conformance.fn024"), first, 0), 0);
  API(TVMFFIObjectDecRef)(first);
  cr_assert_eq(set_global(NAME("conformance.fn024"), second, 1), 0);
  cr_assert_eq(deletes, 1, "the replaced function was not released");
  TVMFFIObjectHandle got = get_global(NAME("conformance.fn024"));
  cr_assert_eq(got, second);
  cr_assert_eq(call_tag(got), 2);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(second);
}

/* FN-025: names are byte strings of the given size: a NUL byte inside a
 * name is part of it, so "a\0b" and "a" are different names. */
TEST(registry, FN_025_embedded_nul_is_part_of_name) {
  TVMFFIObjectHandle full = make_fn(3), prefix = make_fn(4);
  cr_assert_eq(set_global(NAME("conformance.fn025\0tail"), full, 0), 0);
  cr_assert_null(get_global(NAME("conformance.fn025")), "prefix before the NUL matched");
  cr_assert_eq(set_global(NAME("conformance.fn025"), prefix, 0), 0, "prefix clashed");
  TVMFFIObjectHandle a = get_global(NAME("conformance.fn025\0tail"));
  TVMFFIObjectHandle b = get_global(NAME("conformance.fn025"));
  cr_assert_eq(a, full);
  cr_assert_eq(b, prefix);
  API(TVMFFIObjectDecRef)(a);
  API(TVMFFIObjectDecRef)(b);
  API(TVMFFIObjectDecRef)(full);
  API(TVMFFIObjectDecRef)(prefix);
}

/* FN-026: the empty name is a valid name: it can be registered and looked
 * up like any other. */
TEST(registry, FN_026_empty_name_is_a_name) {
  TVMFFIObjectHandle fn = make_fn(26);
  cr_assert_eq(set_global("", 0, fn, 0), 0);
  TVMFFIObjectHandle got = get_global("", 0);
  cr_assert_eq(got, fn);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-027: names are compared byte for byte (case matters, no trimming). */
TEST(registry, FN_027_exact_byte_match) {
  TVMFFIObjectHandle fn = make_fn(27);
  cr_assert_eq(set_global(NAME("conformance.Fn027"), fn, 0), 0);
  cr_assert_null(get_global(NAME("conformance.fn027")));
  cr_assert_null(get_global(NAME("conformance.Fn027 ")));
  cr_assert_null(get_global(NAME("conformance.Fn02")));
  TVMFFIObjectHandle got = get_global(NAME("conformance.Fn027"));
  cr_assert_eq(got, fn);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(fn);
}

/* Rounds start together at a barrier, so the threads overlap as much as
 * possible each time: an unsynchronised table breaks within a few rounds. */
enum { THREADS = 8, PER_THREAD = 300, ROUNDS = 10 };
/* The watchdog is generous: under valgrind one run of a correct table takes
 * seconds, and a hang is still told apart from slow progress. */
enum { STRESS_ATTEMPTS = 20, STRESS_WATCHDOG_S = 60 };

typedef struct {
  int id;
  int failures;
  pthread_barrier_t* start;
} Worker;

static void* register_and_lookup(void* arg) {
  Worker* w = arg;
  char name[64];
  for (int round = 0; round < ROUNDS; ++round) {
    pthread_barrier_wait(w->start);
    for (int i = 0; i < PER_THREAD; ++i) {
      TVMFFIObjectHandle fn = NULL;
      /* Tags start at 1: a NULL self with no deleter would get the function
       * object as handle instead (FN-003). */
      if (conf_api.TVMFFIFunctionCreate((void*)(intptr_t)(w->id * 1000 + i + 1), answer_call, NULL,
                                        &fn) != 0) {
        w->failures++;
        continue;
      }
      int len = snprintf(name, sizeof name, "conformance.fn028.%d.%d.%d", round, w->id, i);
      TVMFFIByteArray n = {name, (size_t)len};
      if (conf_api.TVMFFIFunctionSetGlobal(&n, fn, 0) != 0) w->failures++;
      conf_api.TVMFFIObjectDecRef(fn);
      /* Look up a name another thread may be registering right now, and a
       * shared name every thread overrides. */
      len = snprintf(name, sizeof name, "conformance.fn028.%d.%d.%d", round, (w->id + 1) % THREADS,
                     i);
      TVMFFIByteArray other = {name, (size_t)len};
      TVMFFIObjectHandle got = NULL;
      if (conf_api.TVMFFIFunctionGetGlobal(&other, &got) != 0) w->failures++;
      if (got) conf_api.TVMFFIObjectDecRef(got);
      TVMFFIByteArray shared = {"conformance.fn028.shared", 24};
      TVMFFIObjectHandle mine = NULL;
      conf_api.TVMFFIFunctionCreate((void*)(intptr_t)(w->id + 1), answer_call, NULL, &mine);
      if (conf_api.TVMFFIFunctionSetGlobal(&shared, mine, 1) != 0) w->failures++;
      conf_api.TVMFFIObjectDecRef(mine);
    }
  }
  return NULL;
}

/* One stress run in this process: the worker threads, then every name
 * checked. Returns 0, or what went wrong first (a code for stress_child). */
enum { STRESS_OK, STRESS_CALL_FAILED, STRESS_NAME_MISSING, STRESS_WRONG_FUNCTION, STRESS_SHARED };

static int stress_once(void) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, THREADS);
  pthread_t t[THREADS];
  Worker w[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    w[i] = (Worker){i, 0, &start};
    pthread_create(&t[i], NULL, register_and_lookup, &w[i]);
  }
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < THREADS; ++i)
    if (w[i].failures) return STRESS_CALL_FAILED;
  char name[64];
  for (int round = 0; round < ROUNDS; ++round) {
    for (int id = 0; id < THREADS; ++id) {
      for (int i = 0; i < PER_THREAD; ++i) {
        int len = snprintf(name, sizeof name, "conformance.fn028.%d.%d.%d", round, id, i);
        TVMFFIByteArray n = {name, (size_t)len};
        TVMFFIObjectHandle got = NULL;
        if (conf_api.TVMFFIFunctionGetGlobal(&n, &got) != 0 || got == NULL)
          return STRESS_NAME_MISSING;
        TVMFFIAny rv = {0};
        int rc = conf_api.TVMFFIFunctionCall(got, NULL, 0, &rv);
        conf_api.TVMFFIObjectDecRef(got);
        if (rc != 0 || rv.type_index != kTVMFFIInt || rv.v_int64 != id * 1000 + i + 1)
          return STRESS_WRONG_FUNCTION;
      }
    }
  }
  TVMFFIByteArray shared = {"conformance.fn028.shared", 24};
  TVMFFIObjectHandle got = NULL;
  if (conf_api.TVMFFIFunctionGetGlobal(&shared, &got) != 0 || got == NULL) return STRESS_SHARED;
  TVMFFIAny rv = {0};
  int rc = conf_api.TVMFFIFunctionCall(got, NULL, 0, &rv);
  conf_api.TVMFFIObjectDecRef(got);
  return rc == 0 && rv.v_int64 >= 1 && rv.v_int64 <= THREADS ? STRESS_OK : STRESS_SHARED;
}

static const char* const stress_outcome[] = {
    "ok", "a SetGlobal, GetGlobal or FunctionCreate call failed during the run",
    "a registered name was missing afterwards", "a name gave another function afterwards",
    "the shared name lost its function"};

/* Runs stress_once in a fresh child process (a crash or a hang ends the
 * child, not the test) under a watchdog; writes what happened to `why`
 * and returns 1 when the child succeeded. */
static int stress_child(char* why, size_t cap) {
  pid_t pid = fork();
  cr_assert_neq(pid, -1, "fork failed");
  if (pid == 0) {
    alarm(STRESS_WATCHDOG_S); /* a spinning table hangs; SIGALRM ends the child */
    _exit(stress_once());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == STRESS_OK) return 1;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    snprintf(why, cap, "hung (no progress within %d s)", STRESS_WATCHDOG_S);
  else if (WIFSIGNALED(status))
    snprintf(why, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if ((size_t)WEXITSTATUS(status) < sizeof stress_outcome / sizeof stress_outcome[0])
    snprintf(why, cap, "%s", stress_outcome[WEXITSTATUS(status)]);
  else
    snprintf(why, cap, "exited with status %d", WEXITSTATUS(status));
  return 0;
}

/* FN-028: registration, override and lookup from several threads at once
 * are safe: every registered name is found afterwards with its function.
 * A race shows only when the threads really overlap, which a busy machine
 * does not guarantee in any one run; so the stress runs STRESS_ATTEMPTS
 * times, each in its own process, and one bad run fails the test. An
 * unsynchronised table fails every time (a chance pass of all attempts
 * would need every one of them to miss the race), a correct one never.
 * Under valgrind, which serialises the threads, fewer attempts run
 * (core_stress_rounds). */
TEST(registry, FN_028_concurrent_register_and_lookup, .timeout = 300) {
  (void)API(TVMFFIFunctionSetGlobal);
  (void)API(TVMFFIFunctionGetGlobal);
  (void)API(TVMFFIFunctionCreate);
  (void)API(TVMFFIFunctionCall);
  char why[160];
  int attempts = core_stress_rounds(STRESS_ATTEMPTS);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (!stress_child(why, sizeof why))
      cr_assert_fail("expected every concurrent run to succeed, got run %d of %d: %s", attempt,
                     attempts, why);
  }
}

/* FN-029: TVMFFIFunctionSetGlobal with a NULL function returns -1 with a
 * ValueError naming `f`, and registers nothing. */
TEST(registry, FN_029_set_null_function_rejected) {
  int rc = set_global(NAME("conformance.fn029"), NULL, 0);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_eq(rc, -1, "NULL function accepted (rc %d)", rc);
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 10);
  cr_assert_eq(memcmp(cell->kind.data, "ValueError", 10), 0);
  cr_assert_not_null(strstr(cell->message.data, "`f`"), "message: %s", cell->message.data);
  API(TVMFFIObjectDecRef)(err);
  cr_assert_null(get_global(NAME("conformance.fn029")));
}

static TVMFFIObjectHandle lookup_target;
static void* lookup_many(void* arg) {
  int* failures = arg;
  TVMFFIByteArray n = {"conformance.fn030", 17};
  for (int i = 0; i < 20000; ++i) {
    TVMFFIObjectHandle got = NULL;
    if (conf_api.TVMFFIFunctionGetGlobal(&n, &got) != 0 || got != lookup_target) ++*failures;
    if (got) conf_api.TVMFFIObjectDecRef(got);
  }
  return NULL;
}

/* FN-030: lookups of a registered name from several threads at once (no
 * registration running) each get the function with a reference of their
 * own, and leave its count as it was. */
TEST(registry, FN_030_concurrent_lookups) {
  lookup_target = make_fn(30);
  cr_assert_eq(set_global(NAME("conformance.fn030"), lookup_target, 0), 0);
  uint32_t before = core_strong(lookup_target);
  pthread_t t[THREADS];
  int failures[THREADS] = {0};
  for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, lookup_many, &failures[i]);
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; ++i) cr_assert_eq(failures[i], 0, "thread %d failed", i);
  cr_assert_eq(core_strong(lookup_target), before);
  API(TVMFFIObjectDecRef)(lookup_target);
}

static TVMFFIMethodInfo method_info(const char* name, size_t len, TVMFFIObjectHandle fn) {
  TVMFFIMethodInfo info;
  memset(&info, 0, sizeof info);
  info.name = (TVMFFIByteArray){name, len};
  info.doc = (TVMFFIByteArray){"what it does", 12};
  info.method.type_index = kTVMFFIFunction;
  info.method.v_obj = fn;
  return info;
}

/* FN-031: TVMFFIFunctionSetGlobalFromMethodInfo registers the Function in
 * method_info.method under method_info.name, with a reference of the
 * registry's own; TVMFFIFunctionGetGlobal then gives that function. */
TEST(registry, FN_031_register_from_method_info) {
  TVMFFIObjectHandle fn = make_fn(31);
  TVMFFIMethodInfo info = method_info(NAME("conformance.fn031"), fn);
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0), 0);
  cr_assert_eq(core_strong(fn), 2, "count after registration %u", core_strong(fn));
  TVMFFIObjectHandle got = get_global(NAME("conformance.fn031"));
  cr_assert_eq(got, fn);
  cr_assert_eq(call_tag(got), 31);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-032: TVMFFIFunctionSetGlobalFromMethodInfo of a taken name fails with
 * a RuntimeError containing the name unless allow_override is set, in
 * which case it replaces the function. */
TEST(registry, FN_032_method_info_duplicate_and_override) {
  TVMFFIObjectHandle first = make_fn(1), second = make_fn(2);
  TVMFFIMethodInfo a = method_info(NAME("conformance.fn032"), first);
  TVMFFIMethodInfo b = method_info(NAME("conformance.fn032"), second);
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&a, 0), 0);
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&b, 0), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 12);
  cr_assert_eq(memcmp(cell->kind.data, "RuntimeError", 12), 0);
  cr_assert_not_null(strstr(cell->message.data, "conformance.fn032"), "message: %s",
                     cell->message.data);
  API(TVMFFIObjectDecRef)(err);
  TVMFFIObjectHandle got = get_global(NAME("conformance.fn032"));
  cr_assert_eq(got, first, "a refused registration replaced the function");
  API(TVMFFIObjectDecRef)(got);
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&b, 1), 0);
  got = get_global(NAME("conformance.fn032"));
  cr_assert_eq(got, second);
  API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(first);
  API(TVMFFIObjectDecRef)(second);
}

/* FN-033: TVMFFIFunctionSetGlobalFromMethodInfo whose method is not a
 * function (an int) returns -1 with a TypeError and registers nothing. */
TEST(registry, FN_033_method_info_non_function_rejected) {
  TVMFFIMethodInfo info = method_info(NAME("conformance.fn033"), NULL);
  info.method.type_index = kTVMFFIInt;
  info.method.v_int64 = 3;
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 9);
  cr_assert_eq(memcmp(cell->kind.data, "TypeError", 9), 0);
  API(TVMFFIObjectDecRef)(err);
  cr_assert_null(get_global(NAME("conformance.fn033")));
}

/* FN-034: TVMFFIFunctionSetGlobalFromMethodInfo whose method is None
 * returns -1 with a TypeError and registers nothing (a name registered
 * with no function would look up as NULL, like an unknown name). */
TEST(registry, FN_034_method_info_none_rejected) {
  TVMFFIMethodInfo info = method_info(NAME("conformance.fn034"), NULL);
  info.method.type_index = kTVMFFINone;
  int rc = API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_eq(rc, -1, "None accepted as a function (rc %d)", rc);
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->kind.size, 9);
  cr_assert_eq(memcmp(cell->kind.data, "TypeError", 9), 0);
  API(TVMFFIObjectDecRef)(err);
}

/* FN-050: malformed names are refused with exactly -1 and a ValueError
 * naming the name, registering nothing: a NULL name, or one whose data is
 * NULL with a nonzero size; TVMFFIFunctionGetGlobal also refuses a NULL out
 * (ValueError naming out) and writes NULL to out when it refuses the name. */
TEST(registry, FN_050_malformed_names_refused) {
  HOSTILE_INPUT("a NULL name is dereferenced");
  TVMFFIObjectHandle fn = make_fn(50);
  TVMFFIByteArray null_data = {NULL, 4};
  cr_expect_eq(API(TVMFFIFunctionSetGlobal)(NULL, fn, 0), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  cr_expect_eq(API(TVMFFIFunctionSetGlobal)(&null_data, fn, 1), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  TVMFFIObjectHandle out = (TVMFFIObjectHandle)(uintptr_t)0x1;
  cr_expect_eq(API(TVMFFIFunctionGetGlobal)(NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  cr_expect_null(out, "out not cleared for a NULL name");
  out = (TVMFFIObjectHandle)(uintptr_t)0x1;
  cr_expect_eq(API(TVMFFIFunctionGetGlobal)(&null_data, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  cr_expect_null(out, "out not cleared for a name with NULL data");
  TVMFFIByteArray null_one = {NULL, 1}; /* the smallest size that is not empty */
  out = (TVMFFIObjectHandle)(uintptr_t)0x1;
  cr_expect_eq(API(TVMFFIFunctionGetGlobal)(&null_one, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  cr_expect_null(out, "out not cleared for a name {NULL, 1}");
  cr_expect_eq(API(TVMFFIFunctionSetGlobal)(&null_one, fn, 1), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  TVMFFIByteArray n = {NAME("conformance.fn050")};
  cr_expect_eq(API(TVMFFIFunctionGetGlobal)(&n, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  cr_expect_eq(core_strong(fn), 1u, "a refused registration kept a reference");
  API(TVMFFIObjectDecRef)(fn);
  cr_expect_eq(deletes, 1);
}

/* FN-051: TVMFFIFunctionSetGlobal of an object that is not a function (a
 * heap string) returns -1 with a TypeError naming `f`, takes no reference
 * and registers nothing. */
TEST(registry, FN_051_non_function_refused) {
  TVMFFIByteArray text = {"not a function at all", 21};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&text, &s), 0);
  cr_expect_eq(set_global(NAME("conformance.fn051"), s.v_obj, 0), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"`f`"});
  cr_expect_eq(core_strong(s.v_obj), 1u, "the refused object gained a reference");
  cr_expect_null(get_global(NAME("conformance.fn051")));
  core_release(&s);
}

/* FN-052: a registry grown to thousands of names finds each with its own
 * function, before and after every one of them is overridden. */
TEST(registry, FN_052_many_names) {
  enum { kNames = 3000 };
  char name[32];
  for (int i = 0; i < kNames; ++i) {
    int len = snprintf(name, sizeof name, "conformance.fn052.%d", i);
    TVMFFIObjectHandle fn = make_fn(i);
    cr_assert_eq(set_global(name, (size_t)len, fn, 0), 0, "registering `%s`", name);
    API(TVMFFIObjectDecRef)(fn);
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < kNames; ++i) {
      int len = snprintf(name, sizeof name, "conformance.fn052.%d", i);
      TVMFFIObjectHandle got = get_global(name, (size_t)len);
      cr_assert_not_null(got, "`%s` not found (pass %d)", name, pass);
      cr_expect_eq(call_tag(got), pass * kNames + i, "`%s` gives another function", name);
      API(TVMFFIObjectDecRef)(got);
      if (pass == 0) {
        TVMFFIObjectHandle fn = make_fn(kNames + i);
        cr_assert_eq(set_global(name, (size_t)len, fn, 1), 0);
        API(TVMFFIObjectDecRef)(fn);
      }
    }
  }
  cr_expect_eq(deletes, kNames, "functions released by the overrides: %d", deletes);
}

/* FN-057: a name is its size bytes and nothing after them: a name
 * registered from one buffer is found from another holding the same bytes
 * followed by something else. */
TEST(registry, FN_057_bytes_after_the_name_ignored) {
  char reg[] = "conformance.fn057X", look[] = "conformance.fn057Y";
  size_t n = sizeof reg - 2;
  TVMFFIObjectHandle fn = make_fn(57);
  cr_assert_eq(set_global(reg, n, fn, 0), 0);
  TVMFFIObjectHandle got = get_global(look, n);
  cr_expect_eq(got, fn, "found %p, expected %p", got, fn);
  if (got) API(TVMFFIObjectDecRef)(got);
  look[n] = '\0';
  got = get_global(look, n);
  cr_expect_eq(got, fn);
  if (got) API(TVMFFIObjectDecRef)(got);
  API(TVMFFIObjectDecRef)(fn);
}

/* FN-120: a name is read only within its size bytes. Each name sits once at
 * the start of a page with an unreadable page before it, and once at the end
 * with an unreadable page after it (and no NUL): a read outside the name
 * faults. Every size from 1 to 24 covers the partial words of a hash that
 * reads several bytes at a time. */
TEST(registry, FN_120_name_read_within_its_size) {
  long page = sysconf(_SC_PAGESIZE);
  cr_assert_gt(page, 64);
  char* map = mmap(NULL, (size_t)page * 3, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(map, MAP_FAILED);
  char* mid = map + page;
  cr_assert_eq(mprotect(mid, (size_t)page, PROT_READ | PROT_WRITE), 0);
  static const char text[] = "conformance.fn120.abcdef";
  TVMFFIObjectHandle fn = make_fn(120);
  for (size_t len = 1; len < sizeof text; ++len) {
    char* at_start = mid;
    char* at_end = mid + page - (long)len;
    memcpy(at_start, text, len);
    TVMFFIByteArray first = {at_start, len};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&first, fn, 1), 0, "size %zu at a page start", len);
    memset(mid, 0, (size_t)page);
    memcpy(at_end, text, len);
    TVMFFIByteArray last = {at_end, len};
    TVMFFIObjectHandle got = NULL;
    cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&last, &got), 0, "size %zu at a page end", len);
    cr_expect_eq(got, fn, "size %zu: the name registered is not found", len);
    if (got) API(TVMFFIObjectDecRef)(got);
    memset(mid, 0, (size_t)page);
    memcpy(at_start, text, len);
    got = NULL;
    cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&first, &got), 0, "size %zu at a page start", len);
    cr_expect_eq(got, fn, "size %zu: found from the page start", len);
    if (got) API(TVMFFIObjectDecRef)(got);
    memset(mid, 0, (size_t)page);
  }
  API(TVMFFIObjectDecRef)(fn);
  munmap(map, (size_t)page * 3);
}

/* FN-121: the TypeError of FN-033 (an int) and of FN-127 (an object of
 * another type) names the function and the argument. */
TEST(registry, FN_121_method_info_type_error_named) {
  TVMFFIMethodInfo info = method_info(NAME("conformance.fn121"), NULL);
  info.method.type_index = kTVMFFIInt;
  info.method.v_int64 = 3;
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"TVMFFIFunctionSetGlobalFromMethodInfo"});
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"method"});
  TVMFFIObjectHandle make = core_global("ffi.Array", 0);
  TVMFFIAny arr = {0};
  cr_assert_eq(API(TVMFFIFunctionCall)(make, NULL, 0, &arr), 0, "ffi.Array() failed");
  API(TVMFFIObjectDecRef)(make);
  info.method = arr;
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"TVMFFIFunctionSetGlobalFromMethodInfo"});
  cr_assert_eq(API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"method"});
  API(TVMFFIObjectDecRef)(arr.v_obj);
}

/* FN-127: a method that is an object of another kind than Function (an
 * ffi.Array, whose type index lies above Function's) is refused as in
 * FN-033: -1, a TypeError, and nothing registered under the name. */
TEST(registry, FN_127_method_info_other_object_rejected) {
  TVMFFIObjectHandle make = core_global("ffi.Array", 0);
  TVMFFIAny arr = {0};
  cr_assert_eq(API(TVMFFIFunctionCall)(make, NULL, 0, &arr), 0, "ffi.Array() failed");
  API(TVMFFIObjectDecRef)(make);
  cr_assert_eq(arr.type_index, kTVMFFIArray, "ffi.Array() gave type index %d", arr.type_index);
  TVMFFIMethodInfo info = method_info(NAME("conformance.fn127"), NULL);
  info.method = arr;
  int rc = API(TVMFFIFunctionSetGlobalFromMethodInfo)(&info, 0);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_eq(rc, -1, "an ffi.Array was registered as a function (rc %d)", rc);
  cr_assert_not_null(err, "-1 with nothing raised");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_expect(cell->kind.size == 9 && memcmp(cell->kind.data, "TypeError", 9) == 0,
            "raised %.*s, expected TypeError", (int)cell->kind.size, cell->kind.data);
  API(TVMFFIObjectDecRef)(err);
  cr_expect_null(get_global(NAME("conformance.fn127")), "the name was registered");
  API(TVMFFIObjectDecRef)(arr.v_obj);
}

/* FN-128: TVMFFIFunctionSetGlobal of a taken name (allow_override 0)
 * raises a RuntimeError whose message holds the whole name, however long:
 * a name of 5000 bytes (a 4096-byte prefix of it is not enough), and not
 * the byte after it. */
TEST(registry, FN_128_taken_name_quoted_whole) {
  enum { LEN = 5000 };
  /* A byte after the name that the message must not show. */
  static char name[LEN + 2];
  for (int i = 0; i < LEN; ++i) name[i] = (char)('a' + i % 26);
  memcpy(name + LEN - 8, "TAILNAME#", 9);
  TVMFFIObjectHandle fn = make_fn(128);
  cr_assert_eq(set_global(name, LEN, fn, 0), 0);
  cr_assert_eq(set_global(name, LEN, fn, 0), -1, "a taken name was registered again");
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "-1 with nothing raised");
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_expect(cell->kind.size == 12 && memcmp(cell->kind.data, "RuntimeError", 12) == 0,
            "raised %.*s, expected RuntimeError", (int)cell->kind.size, cell->kind.data);
  int whole = 0;
  for (size_t i = 0; !whole && i + LEN <= cell->message.size; ++i)
    whole = memcmp(cell->message.data + i, name, LEN) == 0;
  cr_expect(whole, "the message (%zu bytes) does not hold the whole %d-byte name",
            cell->message.size, LEN);
  cr_expect_null(memmem(cell->message.data, cell->message.size, "TAILNAME#", 9),
                 "the message quotes the byte after the name's size");
  API(TVMFFIObjectDecRef)(err);
  API(TVMFFIObjectDecRef)(fn);
}
