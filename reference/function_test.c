/* Unit tests of function objects and the registry's internal API. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "registry.h"
#include "unit_test_support.h"

static int echo(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n;
  rv->type_index = kTVMFFIInt;
  rv->zero_padding = 0;
  rv->v_int64 = (int64_t)(intptr_t)self;
  return 0;
}

Test(function, trampoline_only_when_there_is_context) {
  TVMFFIObject* direct = tffi_function_new(NULL, echo, NULL);
  TVMFFIObject* wrapped = tffi_function_new((void*)5, echo, NULL);
  cr_assert_eq(TVMFFIFunctionGetCellPtr(direct)->safe_call, echo);
  cr_assert_neq(TVMFFIFunctionGetCellPtr(wrapped)->safe_call, echo);
  cr_assert_null(TVMFFIFunctionGetCellPtr(wrapped)->cpp_call);
  TVMFFIAny rv = {0};
  cr_assert_eq(TVMFFIFunctionCall(wrapped, NULL, 0, &rv), 0);
  cr_assert_eq(rv.v_int64, 5);
  tffi_decref(direct);
  tffi_decref(wrapped);
}

Test(function, create_rejects_null_out) {
  cr_assert_eq(TVMFFIFunctionCreate(NULL, echo, NULL, NULL), -1);
  expect_raised("ValueError", "out");
}

Test(registry, internal_get_set_by_length) {
  TVMFFIObject* fn = tffi_function_new((void*)1, echo, NULL);
  cr_assert_eq(tffi_global_set("unit.abc", 6, fn, 0), 0); /* "unit.a" */
  TVMFFIObject* got = NULL;
  cr_assert_eq(tffi_global_get("unit.aXXXX", 6, &got), 0);
  cr_assert_eq(got, fn);
  tffi_decref(got);
  cr_assert_eq(tffi_global_get("unit.abc", 8, &got), 0);
  cr_assert_null(got);
  tffi_decref(fn);
}

Test(registry, grows_past_many_entries) {
  char name[32];
  TVMFFIObject* fn = tffi_function_new((void*)1, echo, NULL);
  for (int i = 0; i < 5000; ++i) {
    int len = snprintf(name, sizeof name, "unit.grow.%d", i);
    cr_assert_eq(tffi_global_set(name, (size_t)len, fn, 0), 0);
  }
  cr_assert_eq(tffi_strong_count(fn), 5001);
  for (int i = 0; i < 5000; ++i) {
    int len = snprintf(name, sizeof name, "unit.grow.%d", i);
    TVMFFIObject* got = NULL;
    cr_assert_eq(tffi_global_get(name, (size_t)len, &got), 0);
    cr_assert_eq(got, fn, "%s lost after growth", name);
    tffi_decref(got);
  }
  tffi_decref(fn);
}

Test(registry, rejects_non_function) {
  TVMFFIByteArray k = {"ValueError", 10};
  TVMFFIObject* err = tffi_error_new(&k, &k, NULL, NULL, NULL);
  cr_assert_eq(tffi_global_set("unit.err", 8, err, 0), -1);
  expect_raised("TypeError", "`f`");
  cr_assert_eq(tffi_strong_count(err), 1);
  tffi_decref(err);
}

Test(registry, rejects_bad_names) {
  TVMFFIObject* fn = tffi_function_new((void*)1, echo, NULL);
  cr_assert_eq(tffi_global_set(NULL, 3, fn, 0), -1);
  expect_raised("ValueError", "name.data");
  cr_assert_eq(tffi_global_set("x", (size_t)1 << 40, fn, 0), -1);
  expect_raised("ValueError", "name.size");
  TVMFFIObject* got = (TVMFFIObject*)1;
  cr_assert_eq(tffi_global_get(NULL, 3, &got), -1);
  cr_assert_null(got);
  expect_raised("ValueError", "name.data");
  cr_assert_eq(TVMFFIFunctionSetGlobal(NULL, fn, 0), -1);
  expect_raised("ValueError", "name");
  cr_assert_eq(TVMFFIFunctionGetGlobal(NULL, (TVMFFIObjectHandle*)&got), -1);
  expect_raised("ValueError", "name");
  TVMFFIByteArray n = {"x", 1};
  cr_assert_eq(TVMFFIFunctionGetGlobal(&n, NULL), -1);
  expect_raised("ValueError", "out");
  cr_assert_eq(tffi_strong_count(fn), 1);
  tffi_decref(fn);
}

static int init_ok(void** out) {
  static int x;
  *out = &x;
  return 0;
}
static int deinit_ok(void* h) {
  (void)h;
  return 0;
}

Test(init_once, rejects_null_arguments) {
  cr_assert_eq(TVMFFIHandleInitOnce(NULL, init_ok), -1);
  expect_raised("ValueError", "handle_addr");
  void* h = NULL;
  cr_assert_eq(TVMFFIHandleInitOnce(&h, NULL), -1);
  expect_raised("ValueError", "init_func");
  cr_assert_eq(TVMFFIHandleDeinitOnce(NULL, deinit_ok), -1);
  expect_raised("ValueError", "handle_addr");
  cr_assert_eq(TVMFFIHandleDeinitOnce(&h, NULL), -1);
  expect_raised("ValueError", "deinit_func");
}

Test(backtrace, names_frame_whole) {
  const TVMFFIByteArray* bt = TVMFFIBacktrace("a.c", 7, "f", 0);
  cr_assert_str_eq(bt->data, "  File \"a.c\", line 7, in f\n");
  cr_assert_eq(bt->size, strlen(bt->data));
  char longname[4000];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  bt = TVMFFIBacktrace(longname, 1, "f", 0);
  cr_assert_eq(bt->size, sizeof longname - 1 + strlen("  File \"\", line 1, in f\n"));
  cr_assert_eq(bt->size, strlen(bt->data));
  cr_assert_not_null(strstr(bt->data, longname));
  bt = TVMFFIBacktrace(NULL, 0, NULL, 0);
  cr_assert_eq(bt->size, 0);
  cr_assert_str_eq(bt->data, "");
}
