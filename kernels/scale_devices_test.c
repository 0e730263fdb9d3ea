/* Clauses of spec/devices.md that hold without a GPU, checked on the scale
 * kernels. The GPU ones (DEV-001, 002, 005, 007) are in scale_cuda_test.c. */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/kernel_harness.h"

#define CPU_LIB "kernels/libscale_cpu.so"
#define CUDA_LIB "kernels/libscale_cuda.so"

typedef struct {
  float in[4], out[4];
  int64_t n_in, n_out;
  DLTensor tin, tout;
  TVMFFIAny args[3];
} Pair;

static void pair_init(Pair* p, int32_t device_type) {
  memset(p, 0, sizeof *p);
  p->n_in = p->n_out = 4;
  for (int i = 0; i < 4; ++i) p->in[i] = (float)i;
  DLDevice dev = kern_device(device_type, 0);
  p->tin = kern_dltensor_1d(p->in, &p->n_in, kern_dtype(kDLFloat, 32), dev);
  p->tout = kern_dltensor_1d(p->out, &p->n_out, kern_dtype(kDLFloat, 32), dev);
  p->args[0] = kern_arg_dltensor(&p->tout);
  p->args[1] = kern_arg_dltensor(&p->tin);
  p->args[2] = kern_arg_float(3.0);
}

/* Whether a library is in the process already; the probe's reference is
 * given back so that the check changes nothing. */
static bool is_loaded(const char* soname) {
  void* h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}

/* DEV-003: tensors of one call on different devices are refused before any
 * launch, naming the arguments; for the CUDA kernel (other index) and the
 * CPU kernel (other type, caught as the wrong device for it). */
TEST(scale_devices, DEV_003_different_devices_refused) {
  KernKernel k;
  kern_kernel_open(&k, CUDA_LIB, "scale");
  Pair p;
  pair_init(&p, kDLCUDA);
  p.tout.device.device_id = 3;
  EXPECT_CALL_FAILS(&k, p.args, 3, "ValueError", "output", "input", "devices differ");
  kern_kernel_close(&k);
  kern_kernel_open(&k, CPU_LIB, "scale");
  pair_init(&p, kDLCPU);
  p.tout.device.device_id = 1;
  EXPECT_CALL_FAILS(&k, p.args, 3, "ValueError", "output", "input", "devices differ");
  p.tout.device = kern_device(kDLCUDA, 0);
  EXPECT_CALL_FAILS(&k, p.args, 3, "ValueError", "output", "cuda:0");
  kern_kernel_close(&k);
}

/* DEV-004: a CPU tensor given to the CUDA kernel is refused with
 * ValueError naming the argument and its device type. */
TEST(scale_devices, DEV_004_unsupported_device_type) {
  KernKernel k;
  kern_kernel_open(&k, CUDA_LIB, "scale");
  Pair p;
  pair_init(&p, kDLCPU);
  EXPECT_CALL_FAILS(&k, p.args, 3, "ValueError", "output", "CUDA", "cpu:0");
  p.tout.device = kern_device(kDLCUDA, 0);
  EXPECT_CALL_FAILS(&k, p.args, 3, "ValueError", "input", "CUDA", "cpu:0");
  pair_init(&p, kDLCUDAHost); /* pinned host memory is not a CUDA device tensor */
  EXPECT_CALL_FAILS(&k, p.args, 3, "ValueError", "output", "cuda_host:0");
  kern_kernel_close(&k);
}

/* DEV-006: the environment stream table is the same after a call (success
 * or failure) as before, for the kernel's device and others. */
TEST(scale_devices, DEV_006_env_streams_untouched) {
  TVMFFIStreamHandle s0 = (TVMFFIStreamHandle)(uintptr_t)0x1000;
  TVMFFIStreamHandle s1 = (TVMFFIStreamHandle)(uintptr_t)0x2000;
  TVMFFIStreamHandle cpu = (TVMFFIStreamHandle)(uintptr_t)0x3000;
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, s0, NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 1, s1, NULL), 0);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCPU, 0, cpu, NULL), 0);
  static const char* const libs[] = {CPU_LIB, CUDA_LIB};
  static const int32_t types[] = {kDLCPU, kDLCUDA};
  for (int l = 0; l < 2; ++l) {
    KernKernel k;
    kern_kernel_open(&k, libs[l], "scale");
    Pair p;
    pair_init(&p, types[l]);
    if (types[l] == kDLCPU) {
      kern_kernel_call_ok(&k, p.args, 3);
      cr_expect_eq(p.out[3], 9.0f);
    } else {
      /* Empty tensors: a complete call that launches nothing, so the
       * made-up stream handles are never given to the CUDA runtime. */
      p.tin.data = p.tout.data = NULL;
      p.n_in = p.n_out = 0;
      kern_kernel_call_ok(&k, p.args, 3);
    }
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 0), s0);
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 1), s1);
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCPU, 0), cpu);
    /* a refused call as well */
    p.args[2] = kern_arg_dltensor(&p.tin);
    EXPECT_CALL_FAILS(&k, p.args, 3, "TypeError", "factor");
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 0), s0);
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCUDA, 1), s1);
    cr_expect_eq(API(TVMFFIEnvGetStream)(kDLCPU, 0), cpu);
    kern_kernel_close(&k);
  }
  API(TVMFFIEnvSetStream)(kDLCUDA, 0, NULL, NULL);
  API(TVMFFIEnvSetStream)(kDLCUDA, 1, NULL, NULL);
  API(TVMFFIEnvSetStream)(kDLCPU, 0, NULL, NULL);
}

/* DEV-008: a device runtime failure is RuntimeError naming the failing
 * runtime call (here: no usable GPU, or a device index that does not
 * exist), and the process carries on. */
TEST(scale_devices, DEV_008_runtime_failure_names_call) {
  KernKernel k;
  kern_kernel_open(&k, CUDA_LIB, "scale");
  Pair p;
  pair_init(&p, kDLCUDA);
  p.tin.device.device_id = p.tout.device.device_id = 4096; /* no machine has this many */
  EXPECT_CALL_FAILS(&k, p.args, 3, "RuntimeError", "cudaError", " in cuda");
  EXPECT_CALL_FAILS(&k, p.args, 3, "RuntimeError", "cudaError", " in cuda");
  kern_kernel_close(&k);
}

/* DEV-009: the CPU kernel needs no accelerator runtime: calling it loads no
 * CUDA runtime, and a garbage CPU environment stream does not matter. */
TEST(scale_devices, DEV_009_cpu_kernel_touches_no_accelerator) {
  /* A tool can put the driver in the process before main (compute-sanitizer
   * injects libcuda.so.1): then only a CUDA runtime can tell on the kernel. */
  bool driver_before = is_loaded("libcuda.so.1");
  KernKernel k;
  kern_kernel_open(&k, CPU_LIB, "scale");
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCPU, 0, (TVMFFIStreamHandle)(uintptr_t)0x8, NULL), 0);
  Pair p;
  pair_init(&p, kDLCPU);
  kern_kernel_call_ok(&k, p.args, 3);
  cr_expect(p.out[0] == 0.0f && p.out[1] == 3.0f && p.out[2] == 6.0f && p.out[3] == 9.0f);
  cr_expect(!is_loaded("libcudart.so.13"),
            "the CPU kernel brought a CUDA runtime into the process");
  cr_expect(driver_before || !is_loaded("libcuda.so.1"),
            "the CPU kernel brought the CUDA driver into the process");
  API(TVMFFIEnvSetStream)(kDLCPU, 0, NULL, NULL);
  kern_kernel_close(&k);
}
