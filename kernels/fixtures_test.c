/* The broken fixture kernels (kernels/fixtures) really break the clause
 * their comment names: each test shows the violation the certifier must
 * report. A fixture that behaved would make its certifier check untestable,
 * so these are checks on the fixtures, named by the clause each breaks. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel_harness.h"

#define FIXTURE(name) "kernels/fixtures/lib" name ".so"

typedef struct {
  float in[4], out[5];
  int64_t n_in, n_out;
  DLTensor tin, tout;
  TVMFFIAny args[3];
  KernKernel k;
} Fx;

static void fx_init(Fx* f, const char* lib) {
  memset(f, 0, sizeof *f);
  f->n_in = f->n_out = 4;
  for (int i = 0; i < 4; ++i) f->in[i] = (float)(i + 1);
  f->out[4] = -1.0f; /* the element past the end */
  DLDevice cpu = kern_device(kDLCPU, 0);
  f->tin = kern_dltensor_1d(f->in, &f->n_in, kern_dtype(kDLFloat, 32), cpu);
  f->tout = kern_dltensor_1d(f->out, &f->n_out, kern_dtype(kDLFloat, 32), cpu);
  f->args[0] = kern_arg_dltensor(&f->tout);
  f->args[1] = kern_arg_dltensor(&f->tin);
  f->args[2] = kern_arg_float(2.0);
  kern_kernel_open(&f->k, lib, "scale");
}

/* A raw call: no harness assertions, the result slot handed back. */
static int fx_call(Fx* f, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  memset(result, 0, sizeof *result);
  return API(TVMFFIFunctionCall)(f->k.fn, args, n, result);
}

/* KER-001: bad_symbol_prefix exports tvm_ffi_scale, so no host finds
 * __tvm_ffi_scale in it. */
TEST(fixtures, KER_001_fixture_wrong_prefix) {
  void* lib = dlopen(conf_runfile(FIXTURE("bad_symbol_prefix")), RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(lib, "%s", dlerror());
  cr_expect_null(dlsym(lib, "__tvm_ffi_scale"));
  cr_expect_not_null(dlsym(lib, "tvm_ffi_scale"));
}

/* KER-003: bad_sets_result leaves an int in the result slot. */
TEST(fixtures, KER_003_fixture_sets_result) {
  Fx f;
  fx_init(&f, FIXTURE("bad_sets_result"));
  TVMFFIAny result;
  cr_assert_eq(fx_call(&f, f.args, 3, &result), 0);
  cr_expect_eq(result.type_index, kTVMFFIInt);
  kern_kernel_close(&f.k);
}

/* KER-012: bad_leaks_reference keeps a reference to the input object. */
TEST(fixtures, KER_012_fixture_leaks_reference) {
  Fx f;
  fx_init(&f, FIXTURE("bad_leaks_reference"));
  int deleted = 0;
  TVMFFIObjectHandle obj = kern_tensor_object(&f.tin, &deleted);
  f.args[1] = kern_arg_object(obj, kTVMFFITensor);
  uint32_t before = kern_strong_refs(obj);
  TVMFFIAny result;
  cr_assert_eq(fx_call(&f, f.args, 3, &result), 0);
  cr_expect_eq(kern_strong_refs(obj), before + 1);
  API(TVMFFIObjectDecRef)(obj); /* the leaked one */
  API(TVMFFIObjectDecRef)(obj);
  cr_expect_eq(deleted, 1);
  kern_kernel_close(&f.k);
}

static void call_with_guarded_args(void* ctx) {
  Fx* f = ctx;
  TVMFFIAny* args = kern_guarded_args(3);
  memcpy(args, f->args, sizeof f->args);
  TVMFFIAny result;
  fx_call(f, args, 3, &result);
}

/* KER-013: bad_reads_past_args reads args[3]: with the array ending at an
 * unreadable page the call cannot survive. */
TEST(fixtures, KER_013_fixture_reads_past_args) {
  Fx f;
  fx_init(&f, FIXTURE("bad_reads_past_args"));
  cr_expect_not(kern_survives(call_with_guarded_args, &f), "the out-of-bounds read went unnoticed");
  kern_kernel_close(&f.k);
}

/* KER-014: bad_writes_past_end writes output[n]. */
TEST(fixtures, KER_014_fixture_writes_past_end) {
  Fx f;
  fx_init(&f, FIXTURE("bad_writes_past_end"));
  TVMFFIAny result;
  float in5[5] = {1, 2, 3, 4, 5}; /* in5[4] readable: the overread stays harmless */
  f.tin.data = in5;
  cr_assert_eq(fx_call(&f, f.args, 3, &result), 0);
  cr_expect_neq(f.out[4], -1.0f, "element n was not written");
  kern_kernel_close(&f.k);
}

/* KER-020: bad_no_raise returns -1 for a wrong arity with nothing raised. */
TEST(fixtures, KER_020_fixture_no_raise) {
  Fx f;
  fx_init(&f, FIXTURE("bad_no_raise"));
  TVMFFIAny result;
  cr_assert_eq(fx_call(&f, f.args, 2, &result), -1);
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_expect_null(err);
  if (err) API(TVMFFIObjectDecRef)(err);
  kern_kernel_close(&f.k);
}

/* KER-020: bad_raise_returns_zero raises and still returns 0. */
TEST(fixtures, KER_020_fixture_raise_returns_zero) {
  Fx f;
  fx_init(&f, FIXTURE("bad_raise_returns_zero"));
  TVMFFIAny result;
  cr_assert_eq(fx_call(&f, f.args, 2, &result), 0);
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_expect_not_null(err, "no stale error was left raised");
  if (err) API(TVMFFIObjectDecRef)(err);
  kern_kernel_close(&f.k);
}

/* KER-021: bad_unnamed_argument's TypeError does not name the argument. */
TEST(fixtures, KER_021_fixture_unnamed_argument) {
  Fx f;
  fx_init(&f, FIXTURE("bad_unnamed_argument"));
  f.args[0] = kern_arg_int(1);
  TVMFFIAny result;
  cr_assert_eq(fx_call(&f, f.args, 3, &result), -1);
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  char msg[256];
  snprintf(msg, sizeof msg, "%.*s", (int)cell->message.size, cell->message.data);
  cr_expect_null(strstr(msg, "output"), "the message names the argument: %s", msg);
  API(TVMFFIObjectDecRef)(err);
  kern_kernel_close(&f.k);
}

/* KER-029: bad_wrong_kind reports a count mismatch as RuntimeError. */
TEST(fixtures, KER_029_fixture_wrong_kind) {
  Fx f;
  fx_init(&f, FIXTURE("bad_wrong_kind"));
  f.n_in = 3;
  TVMFFIAny result;
  cr_assert_eq(fx_call(&f, f.args, 3, &result), -1);
  EXPECT_RAISED("RuntimeError", "element counts differ");
  kern_kernel_close(&f.k);
}

static void call_plain(void* ctx) {
  Fx* f = ctx;
  TVMFFIAny result;
  fx_call(f, f->args, 3, &result);
}

/* KER-030: bad_aborts takes the process down on an unsupported dtype. */
TEST(fixtures, KER_030_fixture_aborts) {
  Fx f;
  fx_init(&f, FIXTURE("bad_aborts"));
  f.tin.dtype = f.tout.dtype = kern_dtype(kDLInt, 32);
  cr_expect_not(kern_survives(call_plain, &f), "the process survived");
  kern_kernel_close(&f.k);
}

/* KER-031: bad_null_data dereferences a NULL data pointer. */
TEST(fixtures, KER_031_fixture_null_data) {
  Fx f;
  fx_init(&f, FIXTURE("bad_null_data"));
  f.tin.data = NULL;
  cr_expect_not(kern_survives(call_plain, &f), "the process survived");
  kern_kernel_close(&f.k);
}

/* KER-042: bad_ignores_stream needs a GPU to show its defect; what can be
 * checked here is that it exists and exports the symbol. */
TEST(fixtures, KER_042_fixture_ignores_stream_present) {
  void* lib = dlopen(conf_runfile(FIXTURE("bad_ignores_stream")), RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(lib, "%s", dlerror());
  cr_expect_not_null(dlsym(lib, "__tvm_ffi_scale"));
}
