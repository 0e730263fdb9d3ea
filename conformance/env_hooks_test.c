/* Clauses of spec/env.md on the host hooks: what TVMFFIEnvCheckSignals
 * returns and calls as registrations come and go. Each test runs in its
 * own process, so registrations never leak between tests. */
#include <stdint.h>

#include "core_support.h"

static int checks_a, checks_b, ensures, releases;
static int check_result;

static int check_a(void) {
  checks_a++;
  if (check_result != 0) conf_api.TVMFFIErrorSetRaisedFromCStr("KeyboardInterrupt", "signal 2");
  return check_result;
}

static int check_b(void) {
  checks_b++;
  return 0;
}

static void* ensure(void) {
  ensures++;
  return (void*)(uintptr_t)0x6170;
}

static void release(void* state) {
  (void)state;
  releases++;
}

static void register_all(void* check) {
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyGILState_Ensure", (void*)ensure), 0);
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyGILState_Release", (void*)release), 0);
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_CheckSignals", check), 0);
}

/* ENV-052: when the registered check fails, TVMFFIEnvCheckSignals returns
 * exactly -1 (the ABI's failure code), whatever nonzero the check gave. */
TEST(env_hooks, ENV_052_failed_check_returns_minus_one) {
  register_all((void*)check_a);
  static const int results[] = {-1, 1, 7, -5};
  for (int i = 0; i < 4; ++i) {
    check_result = results[i];
    int rc = API(TVMFFIEnvCheckSignals)();
    cr_assert_eq(rc, -1, "the check returned %d; TVMFFIEnvCheckSignals returned %d", results[i],
                 rc);
    EXPECT_RAISED(.kind = "KeyboardInterrupt", .says = {"signal 2"});
  }
  cr_assert_eq(checks_a, 4);
}

/* ENV-053: registering a function again replaces the earlier one, and
 * registering NULL for PyErr_CheckSignals removes the check:
 * TVMFFIEnvCheckSignals then returns 0 and calls no host function. */
TEST(env_hooks, ENV_053_registration_replaces_and_clears) {
  register_all((void*)check_a);
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_CheckSignals", (void*)check_b), 0);
  cr_assert_eq(API(TVMFFIEnvCheckSignals)(), 0);
  cr_assert_eq(checks_a, 0, "the replaced check ran");
  cr_assert_eq(checks_b, 1, "the new check ran %d times", checks_b);
  cr_assert_eq(ensures, 1);
  cr_assert_eq(releases, 1);
  cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_CheckSignals", NULL), 0);
  cr_assert_eq(API(TVMFFIEnvCheckSignals)(), 0);
  cr_assert_eq(checks_b, 1, "a cleared check ran");
  cr_assert_eq(ensures, 1, "PyGILState_Ensure called with no check registered");
}

/* ENV-054: with PyErr_CheckSignals registered but PyGILState_Ensure or
 * PyGILState_Release not, TVMFFIEnvCheckSignals calls nothing and returns
 * -1 with a RuntimeError naming the missing function's family
 * (PyGILState). */
TEST(env_hooks, ENV_054_check_without_gil_functions_refused) {
  for (int missing = 0; missing < 2; ++missing) {
    cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyErr_CheckSignals", (void*)check_b), 0);
    cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyGILState_Ensure", missing ? (void*)ensure : NULL),
                 0);
    cr_assert_eq(API(TVMFFIEnvRegisterCAPI)("PyGILState_Release", missing ? NULL : (void*)release),
                 0);
    int rc = API(TVMFFIEnvCheckSignals)();
    cr_assert_eq(rc, -1, "missing %s: returned %d", missing ? "Release" : "Ensure", rc);
    EXPECT_RAISED(.kind = "RuntimeError", .says = {"PyGILState"});
    cr_assert_eq(checks_b + ensures + releases, 0, "a host function was called");
  }
}

/* ENV-055: the ValueError for an unknown name (near misses of the known
 * names included) quotes the name whole (a name of 300 bytes too), its
 * message is text: no NUL byte inside its size, a NUL right after it; and
 * nothing is registered. */
TEST(env_hooks, ENV_055_unknown_name_quoted_whole) {
  char name[301];
  for (int i = 0; i < 300; ++i) name[i] = (char)('a' + i % 26);
  name[300] = '\0';
  /* Near misses of the three names: prefixes, extensions, other case, and
   * names that sort before and after each. */
  const char* names[] = {"PyErr_NoSuchThing",
                         name,
                         "",
                         "A",
                         "PyErr_",
                         "PyErr_CheckSignal",
                         "PyErr_CheckSignalsX",
                         "pyerr_checksignals",
                         "PyErr_BadSignals",
                         "PyGILState_Ensur",
                         "PyGILState_EnsureX",
                         "PyGILState_Acquire",
                         "PyGILState_Releas",
                         "PyGILState_ReleaseX",
                         "PyGILState_Zzz",
                         "Zzz"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    cr_assert_eq(API(TVMFFIEnvRegisterCAPI)(names[i], (void*)check_b), -1);
    TVMFFIObjectHandle err = core_take_raised();
    cr_assert_not_null(err, "nothing raised");
    TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    cr_assert(cell->kind.size == 10 && memcmp(cell->kind.data, "ValueError", 10) == 0);
    cr_assert_not_null(memmem(cell->message.data, cell->message.size, names[i], strlen(names[i])),
                       "the message does not quote the name whole: %.*s", (int)cell->message.size,
                       cell->message.data);
    cr_assert_null(memchr(cell->message.data, 0, cell->message.size), "a NUL inside the message");
    cr_assert_eq(cell->message.data[cell->message.size], '\0', "no NUL after the message");
    API(TVMFFIObjectDecRef)(err);
  }
  /* Nothing was registered by the refused names. */
  cr_assert_eq(API(TVMFFIEnvCheckSignals)(), 0);
  cr_assert_eq(checks_b, 0, "a refused name was registered as the check");
}
