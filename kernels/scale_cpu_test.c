/* Clauses of spec/kernels.md checked on the CPU kernel (kernels/scale_cpu.c),
 * called through the runtime under test. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/kernel_harness.h"
#include "kernels/scale_cpu.h"
#include "kernels/scale_oracle.h"

#define CPU_LIB "kernels/libscale_cpu.so"

static const int64_t kSizes[] = {0, 1, 7, 4096 + 3, 1 << 20};
static const DLDevice kCpu = {kDLCPU, 0};

/* Runs scale on n elements of dtype d with the given factor argument and
 * checks every element against the oracle, and that nothing past the end
 * was written. `as_object` passes both tensors as Tensor objects. */
static void run_and_check(KernKernel* k, OracleDtype d, int64_t n, TVMFFIAny factor,
                          double factor_value, int as_object) {
  size_t es = oracle_sizes[d];
  size_t guard = 64;
  unsigned char* in = malloc((size_t)n * es + 1);
  unsigned char* out = malloc((size_t)n * es + guard);
  cr_assert(in && out);
  oracle_fill(d, in, n, 0x5eed0000u + (uint64_t)n);
  memset(out, 0xa5, (size_t)n * es + guard);
  int64_t extent_in = n, extent_out = n;
  DLTensor tin = kern_dltensor_1d(in, &extent_in, oracle_dl(d), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &extent_out, oracle_dl(d), kCpu);
  int deleted = 0;
  TVMFFIObjectHandle oin = NULL, oout = NULL;
  TVMFFIAny args[3];
  if (as_object) {
    oin = kern_tensor_object(&tin, &deleted);
    oout = kern_tensor_object(&tout, &deleted);
    args[0] = kern_arg_object(oout, kTVMFFITensor);
    args[1] = kern_arg_object(oin, kTVMFFITensor);
  } else {
    args[0] = kern_arg_dltensor(&tout);
    args[1] = kern_arg_dltensor(&tin);
  }
  args[2] = factor;
  kern_kernel_call_ok(k, args, 3);
  char why[160];
  for (int64_t i = 0; i < n; ++i) {
    if (!oracle_check(d, in, out, i, factor_value, why, sizeof why)) {
      cr_assert_fail("%s n=%lld element %lld: %s", oracle_names[d], (long long)n, (long long)i,
                     why);
    }
  }
  for (size_t j = 0; j < guard; ++j) {
    cr_assert_eq(out[(size_t)n * es + j], 0xa5, "%s n=%lld: wrote past the end", oracle_names[d],
                 (long long)n);
  }
  if (as_object) {
    API(TVMFFIObjectDecRef)(oin);
    API(TVMFFIObjectDecRef)(oout);
    cr_assert_eq(deleted, 2, "the tensor objects were not released");
  }
  free(in);
  free(out);
}

static void check_dtype(OracleDtype d) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  for (size_t s = 0; s < sizeof kSizes / sizeof kSizes[0]; ++s) {
    run_and_check(&k, d, kSizes[s], kern_arg_float(1.7), 1.7, 0);
    run_and_check(&k, d, kSizes[s], kern_arg_float(-0.3125), -0.3125, 0);
  }
  kern_kernel_close(&k);
}

/* KER-004: float64 multiplies in double precision, every element. */
TEST(scale_cpu, KER_004_float64_exact) { check_dtype(ORACLE_F64); }

/* KER-005: float32 multiplies by the float32-rounded factor. */
TEST(scale_cpu, KER_005_float32_exact) { check_dtype(ORACLE_F32); }

/* KER-006: float16 widens, multiplies in float32, rounds to nearest-even. */
TEST(scale_cpu, KER_006_float16_rounding) { check_dtype(ORACLE_F16); }

/* KER-006: bfloat16 likewise. */
TEST(scale_cpu, KER_006_bfloat16_rounding) { check_dtype(ORACLE_BF16); }

/* KER-007: an int factor gives the result of the equal float. */
TEST(scale_cpu, KER_007_int_factor) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  for (int d = 0; d < ORACLE_NUM; ++d) {
    for (size_t s = 0; s < sizeof kSizes / sizeof kSizes[0]; ++s) {
      run_and_check(&k, (OracleDtype)d, kSizes[s], kern_arg_int(3), 3.0, 0);
      run_and_check(&k, (OracleDtype)d, kSizes[s], kern_arg_int(-2), -2.0, 0);
    }
  }
  kern_kernel_close(&k);
}

/* KER-008: Tensor objects are accepted and give the same results. */
TEST(scale_cpu, KER_008_tensor_objects) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  for (int d = 0; d < ORACLE_NUM; ++d) {
    run_and_check(&k, (OracleDtype)d, 4099, kern_arg_float(2.5), 2.5, 1);
  }
  kern_kernel_close(&k);
}

/* KER-008: one argument a view and the other an object is fine too. */
TEST(scale_cpu, KER_008_mixed_view_and_object) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  float in[3] = {1.0f, 2.0f, 3.0f}, out[3] = {0};
  int64_t n = 3, m = 3;
  DLTensor tin = kern_dltensor_1d(in, &n, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &m, kern_dtype(kDLFloat, 32), kCpu);
  int deleted = 0;
  TVMFFIObjectHandle oin = kern_tensor_object(&tin, &deleted);
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_object(oin, kTVMFFITensor),
                       kern_arg_float(-1.0)};
  kern_kernel_call_ok(&k, args, 3);
  cr_expect(out[0] == -1.0f && out[1] == -2.0f && out[2] == -3.0f, "got %g %g %g", (double)out[0],
            (double)out[1], (double)out[2]);
  API(TVMFFIObjectDecRef)(oin);
  cr_expect_eq(deleted, 1);
  kern_kernel_close(&k);
}

/* KER-001: the symbol is __tvm_ffi_scale with the safe-call signature and
 * works with a NULL handle, as a library module calls it. */
TEST(scale_cpu, KER_001_direct_call_null_handle) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  double in[2] = {1.5, -4.0}, out[2] = {0, 0};
  int64_t n = 2, m = 2;
  DLTensor tin = kern_dltensor_1d(in, &n, kern_dtype(kDLFloat, 64), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &m, kern_dtype(kDLFloat, 64), kCpu);
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(2.0)};
  TVMFFIAny result;
  memset(&result, 0, sizeof result);
  cr_assert_eq(k.sym(NULL, args, 3, &result), 0);
  cr_expect_eq(result.type_index, kTVMFFINone);
  cr_expect(out[0] == 3.0 && out[1] == -8.0, "got %g %g", out[0], out[1]);
  kern_kernel_close(&k);
}

/* KER-003: success returns 0 and leaves the result None. */
TEST(scale_cpu, KER_003_returns_none) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  float in[1] = {2.0f}, out[1] = {0};
  int64_t n = 1, m = 1;
  DLTensor tin = kern_dltensor_1d(in, &n, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &m, kern_dtype(kDLFloat, 32), kCpu);
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_int(4)};
  cr_assert_eq(kern_kernel_call(&k, args, 3), 0); /* the harness asserts the None result */
  cr_expect(out[0] == 8.0f);
  kern_kernel_close(&k);
}

/* KER-002: the library needs no runtime of its own; its TVMFFI* calls bind
 * to the one loaded RTLD_GLOBAL (the error it raises reaches this runtime's
 * TVMFFIErrorMoveFromRaised). */
TEST(scale_cpu, KER_002_binds_to_loaded_runtime) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  cr_expect_eq(kern_loaded_lib_needs("libscale_cpu.so", "tvm_ffi"), 0,
               "libscale_cpu.so lists a TVM-FFI runtime as a needed library");
  TVMFFIAny args[1] = {kern_arg_int(1)};
  EXPECT_CALL_FAILS(&k, args, 1, "TypeError", "scale");
  kern_kernel_close(&k);
}

/* KER-009: zero elements touch nothing, even with NULL data. */
TEST(scale_cpu, KER_009_empty_null_data) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  int64_t n = 0, m = 0;
  DLTensor tin = kern_dltensor_1d(NULL, &n, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor tout = kern_dltensor_1d(NULL, &m, kern_dtype(kDLFloat, 32), kCpu);
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(2.0)};
  kern_kernel_call_ok(&k, args, 3);
  kern_kernel_close(&k);
}

/* KER-010: byte_offset moves element 0. */
TEST(scale_cpu, KER_010_byte_offset) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  float in[5] = {9, 9, 1, 2, 3}, out[4] = {0, 0, 0, 0};
  int64_t n = 3, m = 3;
  DLTensor tin = kern_dltensor_1d(in, &n, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &m, kern_dtype(kDLFloat, 32), kCpu);
  tin.byte_offset = 2 * sizeof(float);
  tout.byte_offset = 1 * sizeof(float);
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(10.0)};
  kern_kernel_call_ok(&k, args, 3);
  cr_expect(out[0] == 0 && out[1] == 10 && out[2] == 20 && out[3] == 30, "got %g %g %g %g",
            (double)out[0], (double)out[1], (double)out[2], (double)out[3]);
  kern_kernel_close(&k);
}

/* KER-011: in place equals out of place, for every dtype. */
TEST(scale_cpu, KER_011_in_place) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  for (int d = 0; d < ORACLE_NUM; ++d) {
    int64_t n = 4099;
    size_t bytes = (size_t)n * oracle_sizes[d];
    unsigned char* orig = malloc(bytes);
    unsigned char* buf = malloc(bytes);
    cr_assert(orig && buf);
    oracle_fill((OracleDtype)d, orig, n, 77);
    memcpy(buf, orig, bytes);
    DLTensor t = kern_dltensor_1d(buf, &n, oracle_dl((OracleDtype)d), kCpu);
    TVMFFIAny args[3] = {kern_arg_dltensor(&t), kern_arg_dltensor(&t), kern_arg_float(0.75)};
    kern_kernel_call_ok(&k, args, 3);
    char why[160];
    for (int64_t i = 0; i < n; ++i) {
      if (!oracle_check((OracleDtype)d, orig, buf, i, 0.75, why, sizeof why)) {
        cr_assert_fail("%s in place, element %lld: %s", oracle_names[d], (long long)i, why);
      }
    }
    free(orig);
    free(buf);
  }
  kern_kernel_close(&k);
}

/* KER-012: reference counts of object arguments are unchanged, after a
 * success and after a refusal. */
TEST(scale_cpu, KER_012_references_unchanged) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  float in[4] = {1, 2, 3, 4}, out[4];
  int64_t n = 4, m = 4, bad = 3;
  DLTensor tin = kern_dltensor_1d(in, &n, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &m, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor tshort = kern_dltensor_1d(out, &bad, kern_dtype(kDLFloat, 32), kCpu);
  int deleted = 0;
  TVMFFIObjectHandle oin = kern_tensor_object(&tin, &deleted);
  TVMFFIObjectHandle oout = kern_tensor_object(&tout, &deleted);
  TVMFFIObjectHandle oshort = kern_tensor_object(&tshort, &deleted);
  uint32_t before_in = kern_strong_refs(oin), before_out = kern_strong_refs(oout);
  TVMFFIAny ok[3] = {kern_arg_object(oout, kTVMFFITensor), kern_arg_object(oin, kTVMFFITensor),
                     kern_arg_float(2)};
  kern_kernel_call_ok(&k, ok, 3);
  cr_expect_eq(kern_strong_refs(oin), before_in);
  cr_expect_eq(kern_strong_refs(oout), before_out);
  TVMFFIAny refused[3] = {kern_arg_object(oshort, kTVMFFITensor),
                          kern_arg_object(oin, kTVMFFITensor), kern_arg_float(2)};
  EXPECT_CALL_FAILS(&k, refused, 3, "ValueError", "element counts differ");
  cr_expect_eq(kern_strong_refs(oin), before_in);
  cr_expect_eq(kern_strong_refs(oshort), 1u);
  API(TVMFFIObjectDecRef)(oin);
  API(TVMFFIObjectDecRef)(oout);
  API(TVMFFIObjectDecRef)(oshort);
  cr_expect_eq(deleted, 3);
  kern_kernel_close(&k);
}

/* KER-014: only output's n elements are written: guard zones before
 * element 0 (reached through byte_offset) and after element n - 1 stay
 * intact, for every dtype and several sizes. */
TEST(scale_cpu, KER_014_writes_only_output) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  static const int64_t sizes[] = {1, 7, 4099};
  for (int d = 0; d < ORACLE_NUM; ++d) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
      int64_t n = sizes[s], m = n;
      size_t es = oracle_sizes[d], guard = 64;
      unsigned char* in = malloc((size_t)n * es);
      unsigned char* out = malloc((size_t)n * es + 2 * guard);
      cr_assert(in && out);
      oracle_fill((OracleDtype)d, in, n, 5);
      memset(out, 0x5a, (size_t)n * es + 2 * guard);
      DLTensor tin = kern_dltensor_1d(in, &n, oracle_dl((OracleDtype)d), kCpu);
      DLTensor tout = kern_dltensor_1d(out, &m, oracle_dl((OracleDtype)d), kCpu);
      tout.byte_offset = guard;
      TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(3)};
      kern_kernel_call_ok(&k, args, 3);
      for (size_t j = 0; j < guard; ++j) {
        cr_assert_eq(out[j], 0x5a, "%s n=%lld: wrote before element 0", oracle_names[d],
                     (long long)n);
        cr_assert_eq(out[guard + (size_t)n * es + j], 0x5a, "%s n=%lld: wrote past the end",
                     oracle_names[d], (long long)n);
      }
      free(in);
      free(out);
    }
  }
  kern_kernel_close(&k);
}

/* The shapes the fast paths can take: n elements of dtype d, element 0 of
 * input and output `in_off` and `out_off` bytes past a 64-byte boundary
 * (any byte count: element-aligned or not), in place or not. Guard bytes
 * on both sides of the output must survive; every element must be the
 * oracle's. */
typedef struct {
  OracleDtype d;
  int64_t n;
  size_t in_off, out_off;
  int in_place;
  double factor;
} Span;

static void check_span(KernKernel* k, Span s) {
  size_t es = oracle_sizes[s.d], bytes = (size_t)s.n * es, guard = 128;
  unsigned char* orig = malloc(bytes + 1);
  size_t cap = (bytes + 2 * guard + 63) & ~(size_t)63; /* aligned_alloc wants a multiple */
  unsigned char* in = aligned_alloc(64, cap);
  unsigned char* out = aligned_alloc(64, cap);
  cr_assert(orig && in && out);
  oracle_fill(s.d, orig, s.n, 0xabcd0000u + (uint64_t)s.n + s.in_off);
  memcpy(in + s.in_off, orig, bytes);
  memset(out, 0x5a, bytes + 2 * guard);
  if (s.in_place) memcpy(out + s.out_off, orig, bytes);
  int64_t extent_in = s.n, extent_out = s.n;
  DLTensor tin = kern_dltensor_1d(s.in_place ? out : in, &extent_in, oracle_dl(s.d), kCpu);
  DLTensor tout = kern_dltensor_1d(out, &extent_out, oracle_dl(s.d), kCpu);
  tin.byte_offset = s.in_place ? s.out_off : s.in_off;
  tout.byte_offset = s.out_off;
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(s.factor)};
  kern_kernel_call_ok(k, args, 3);
  char why[160];
  /* Unaligned spans are compared through a copy at an aligned address. */
  unsigned char* got = malloc(bytes + 1);
  cr_assert(got);
  memcpy(got, out + s.out_off, bytes);
  for (int64_t i = 0; i < s.n; ++i) {
    if (!oracle_check(s.d, orig, got, i, s.factor, why, sizeof why)) {
      cr_assert_fail("%s n=%lld offsets in %zu out %zu%s, element %lld: %s", oracle_names[s.d],
                     (long long)s.n, s.in_off, s.out_off, s.in_place ? " in place" : "",
                     (long long)i, why);
    }
  }
  for (size_t j = 0; j < s.out_off; ++j) {
    cr_assert_eq(out[j], 0x5a, "%s n=%lld: wrote before element 0", oracle_names[s.d],
                 (long long)s.n);
  }
  for (size_t j = s.out_off + bytes; j < bytes + 2 * guard; ++j) {
    cr_assert_eq(out[j], 0x5a, "%s n=%lld: wrote past the end", oracle_names[s.d], (long long)s.n);
  }
  free(got);
  free(orig);
  free(in);
  free(out);
}

/* Element counts just below, at and above `threshold` bytes, where the
 * kernel switches to streaming stores, plus tails of every length modulo a
 * 64-byte line. */
static int64_t around(OracleDtype d, int64_t threshold, int which) {
  static const int64_t delta[] = {-1, 0, 1, 31};
  return threshold / (int64_t)oracle_sizes[d] + delta[which];
}

/* Every dtype around `threshold`, with element 0 aligned to a line, one
 * element past it, and input and output at different offsets. */
static void check_fast_paths(KernKernel* k, int64_t threshold) {
  for (int d = 0; d < ORACLE_NUM; ++d) {
    size_t es = oracle_sizes[d];
    OracleDtype od = (OracleDtype)d;
    check_span(k, (Span){od, around(od, threshold, 0), 0, 0, 0, 1.7});
    check_span(k, (Span){od, around(od, threshold, 1), es, es, 0, -0.3125});
    check_span(k, (Span){od, around(od, threshold, 2), 3 * es, 5 * es, 0, 3.0});
    check_span(k, (Span){od, around(od, threshold, 3), 0, 7 * es, 0, 1.7});
    check_span(k, (Span){od, around(od, threshold, 3), 0, 0, 1, 0.75});  /* in place */
    check_span(k, (Span){od, around(od, threshold, 2), 0, es, 1, 0.75}); /* in place */
    for (int64_t n = 1; n <= 70; n += 3) { /* every head and tail length */
      check_span(k, (Span){od, n, es, 2 * es, 0, 1.7});
    }
  }
}

/* A private copy of the CPU kernel library, so that its once-per-process
 * configuration is read afresh from the environment given: `isa` for
 * KERN_SCALE_CPU_ISA and `stream_bytes` for KERN_SCALE_CPU_STREAM_BYTES
 * (NULL leaves a variable unset). */
static void open_configured(KernKernel* k, const char* isa, const char* stream_bytes) {
  char copy[] = "/tmp/libscale_cpu_testXXXXXX";
  int fd = mkstemp(copy);
  cr_assert_neq(fd, -1);
  FILE* src = fopen(conf_runfile(CPU_LIB), "rb");
  cr_assert_not_null(src);
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, src)) > 0)
    cr_assert_eq(write(fd, buf, got), (ssize_t)got);
  fclose(src);
  close(fd);
  if (isa) cr_assert_eq(setenv(KERN_SCALE_ISA_ENV, isa, 1), 0);
  if (stream_bytes) cr_assert_eq(setenv(KERN_SCALE_STREAM_ENV, stream_bytes, 1), 0);
  memset(k, 0, sizeof *k);
  k->lib = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(k->lib, "%s", dlerror());
  unlink(copy); /* the mapping stays */
  k->sym = (TVMFFISafeCallType)dlsym(k->lib, "__tvm_ffi_scale");
  cr_assert_not_null(k->sym);
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, k->sym, NULL, &k->fn), 0);
  /* The configuration is read at the first call; make it now. */
  float one = 1.0f;
  int64_t n = 1, m = 1;
  DLTensor t = kern_dltensor_1d(&one, &n, kern_dtype(kDLFloat, 32), kCpu);
  DLTensor u = kern_dltensor_1d(&one, &m, kern_dtype(kDLFloat, 32), kCpu);
  TVMFFIAny args[3] = {kern_arg_dltensor(&u), kern_arg_dltensor(&t), kern_arg_float(1.0)};
  kern_kernel_call_ok(k, args, 3);
  unsetenv(KERN_SCALE_ISA_ENV);
  unsetenv(KERN_SCALE_STREAM_ENV);
}

/* KER-004..006, KER-010, KER-011, KER-014 on the streaming path, with the
 * threshold lowered to 64 KiB so every dtype is cheap to cover: results are
 * the oracle's bit for bit, and only the output's bytes are written,
 * whatever the size relative to the threshold, the alignment of element 0,
 * the tail length, in place or not. */
TEST(scale_cpu, KER_006_streaming_every_dtype_offset_and_tail, .timeout = 300) {
  KernKernel k;
  open_configured(&k, NULL, "65536");
  check_fast_paths(&k, 65536);
  kern_kernel_close(&k);
}

/* KER-005 at the real threshold (KERN_SCALE_STREAM_BYTES), float32 and
 * float64, whose oracles are cheap at these sizes. */
TEST(scale_cpu, KER_005_streaming_at_default_threshold, .timeout = 300) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  for (int d = ORACLE_F32; d <= ORACLE_F64; ++d) {
    OracleDtype od = (OracleDtype)d;
    size_t es = oracle_sizes[d];
    check_span(&k, (Span){od, around(od, KERN_SCALE_STREAM_BYTES, 0), es, 0, 0, 1.7});
    check_span(&k, (Span){od, around(od, KERN_SCALE_STREAM_BYTES, 1), 0, 0, 0, 1.7});
    check_span(&k, (Span){od, around(od, KERN_SCALE_STREAM_BYTES, 3), 0, es, 0, -2.5});
  }
  kern_kernel_close(&k);
}

/* KER-004..006 below the threshold, on the cached vector path, for every
 * dtype at the sizes where the vector loop's head and tail matter. */
TEST(scale_cpu, KER_006_cached_vector_path) {
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  for (int d = 0; d < ORACLE_NUM; ++d) {
    size_t es = oracle_sizes[d];
    for (int64_t n = 1; n <= 200; n += 7) {
      check_span(&k, (Span){(OracleDtype)d, n, 0, es, 0, 1.7});
      check_span(&k, (Span){(OracleDtype)d, n, 5 * es, 0, 1, -0.3125});
    }
  }
  kern_kernel_close(&k);
}

/* KER-010: element 0 anywhere, even at an address that is not a multiple
 * of the element size, below and above the streaming threshold. */
TEST(scale_cpu, KER_010_byte_offset_not_element_aligned, .timeout = 300) {
  KernKernel k;
  open_configured(&k, NULL, "65536");
  for (int d = 0; d < ORACLE_NUM; ++d) {
    check_span(&k, (Span){(OracleDtype)d, 4099, 1, 3, 0, 2.5});
    check_span(&k, (Span){(OracleDtype)d, around((OracleDtype)d, 65536, 2), 3, 1, 0, 2.5});
    check_span(&k, (Span){(OracleDtype)d, 999, 0, 1, 1, 2.5}); /* in place */
  }
  kern_kernel_close(&k);
}

/* KER-004..006 on the portable path every x86-64 CPU (and every other
 * architecture) takes, forced with KERN_SCALE_CPU_ISA=portable. */
TEST(scale_cpu, KER_006_portable_path, .timeout = 300) {
  KernKernel k;
  open_configured(&k, "portable", "65536");
  check_fast_paths(&k, 65536);
  kern_kernel_close(&k);
}
