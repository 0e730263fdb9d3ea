/* Clauses KER-040 to KER-043 of spec/kernels.md: the CUDA kernel meeting the
 * CUDA runtime. KER-040 runs everywhere (without a GPU the runtime fails and
 * the caller must get RuntimeError); the others need a GPU and SKIP, saying
 * why, when there is none. kernels/run_gpu_checks.sh runs them on a GPU. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/kernel_harness.h"
#include "kernels/scale_oracle.h"

#define CUDA_LIB "kernels/libscale_cuda.so"

/* The few CUDA runtime entry points the tests use, taken from the very
 * libcudart the kernel library loaded (RTLD_NOLOAD), so both share one
 * runtime instance and one notion of the current device. Declared by hand:
 * the tests stay plain C with no CUDA headers. */
typedef int CudaErr;
typedef struct {
  CudaErr (*GetDeviceCount)(int*);
  CudaErr (*GetDevice)(int*);
  CudaErr (*SetDevice)(int);
  CudaErr (*Malloc)(void**, size_t);
  CudaErr (*Free)(void*);
  CudaErr (*Memcpy)(void*, const void*, size_t, int);
  CudaErr (*MemcpyAsync)(void*, const void*, size_t, int, void*);
  CudaErr (*StreamCreateWithFlags)(void**, unsigned);
  CudaErr (*StreamDestroy)(void*);
  CudaErr (*StreamSynchronize)(void*);
  CudaErr (*StreamQuery)(void*);
  CudaErr (*LaunchHostFunc)(void*, void (*)(void*), void*);
  const char* (*GetErrorName)(CudaErr);
} Cuda;

enum { kH2D = 1, kD2H = 2, kNonBlocking = 1, kNotReady = 600 };

static Cuda cuda;

/* Loads the kernel and binds `cuda`; returns the number of usable GPUs
 * (0 when the runtime reports none or fails), with the reason in why. */
static int gpu_count(KernKernel* k, char* why, size_t why_size) {
  kern_kernel_open(k, CUDA_LIB, "scale");
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(rt, "the CUDA kernel did not load libcudart.so.13: %s", dlerror());
#define BIND(name) *(void**)(&cuda.name) = dlsym(rt, "cuda" #name); \
  cr_assert_not_null(cuda.name, "libcudart lacks cuda" #name)
  BIND(GetDeviceCount); BIND(GetDevice); BIND(SetDevice); BIND(Malloc); BIND(Free);
  BIND(Memcpy); BIND(MemcpyAsync); BIND(StreamCreateWithFlags); BIND(StreamDestroy);
  BIND(StreamSynchronize); BIND(StreamQuery); BIND(LaunchHostFunc); BIND(GetErrorName);
#undef BIND
  int count = 0;
  CudaErr e = cuda.GetDeviceCount(&count);
  if (e != 0) {
    snprintf(why, why_size, "no GPU: cudaGetDeviceCount failed with %s", cuda.GetErrorName(e));
    return 0;
  }
  if (count == 0) snprintf(why, why_size, "no GPU: cudaGetDeviceCount reports 0 devices");
  return count;
}

#define REQUIRE_GPU(k)                                          \
  char why_[160];                                               \
  int ngpu_ = gpu_count((k), why_, sizeof why_);                 \
  if (ngpu_ == 0) criterion_skip_test("%s", why_)

#define CUDA_OK(call)                                                           \
  do {                                                                          \
    CudaErr e_ = (call);                                                        \
    cr_assert_eq(e_, 0, "%s failed: %s", #call, cuda.GetErrorName(e_));          \
  } while (0)

/* KER-040: a valid non-empty CUDA pair reaches the runtime; its failure is
 * a RuntimeError naming the cudaError. Without a GPU the runtime itself
 * fails; with one, a device index past the last one makes it fail. */
TEST(scale_cuda, KER_040_cuda_failure_is_runtime_error) {
  KernKernel k;
  char why[160];
  int ngpu = gpu_count(&k, why, sizeof why);
  int64_t n = 16, m = 16;
  DLDevice dev = kern_device(kDLCUDA, ngpu); /* 0 without a GPU, one past the end with */
  void* fake = (void*)(uintptr_t)0x10000; /* never dereferenced: the call must fail first */
  DLTensor tin = kern_dltensor_1d(fake, &n, kern_dtype(kDLFloat, 32), dev);
  DLTensor tout = kern_dltensor_1d(fake, &m, kern_dtype(kDLFloat, 32), dev);
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(2)};
  EXPECT_CALL_FAILS(&k, args, 3, "RuntimeError", "cudaError", "scale");
  /* A second call fails the same way: no sticky state, no crash. */
  EXPECT_CALL_FAILS(&k, args, 3, "RuntimeError", "cudaError");
  kern_kernel_close(&k);
}

static const int64_t kSizes[] = {0, 1, 7, 4096 + 3, 1 << 20};

/* KER-041: on a GPU the results are bit for bit the oracle's. */
TEST(scale_cuda, KER_041_gpu_numerics, .timeout = 120) {
  KernKernel k;
  REQUIRE_GPU(&k);
  DLDevice dev = kern_device(kDLCUDA, 0);
  for (int d = 0; d < ORACLE_NUM; ++d) {
    for (size_t s = 0; s < sizeof kSizes / sizeof kSizes[0]; ++s) {
      for (int use_int = 0; use_int < 2; ++use_int) {
        int64_t n = kSizes[s], m = n;
        size_t bytes = (size_t)n * oracle_sizes[d];
        unsigned char* in = malloc(bytes + 1);
        unsigned char* out = malloc(bytes + 1);
        cr_assert(in && out);
        oracle_fill((OracleDtype)d, in, n, 1234 + (uint64_t)n);
        void *din = NULL, *dout = NULL;
        CUDA_OK(cuda.Malloc(&din, bytes + 16));
        CUDA_OK(cuda.Malloc(&dout, bytes + 16));
        CUDA_OK(cuda.Memcpy(din, in, bytes, kH2D));
        DLTensor tin = kern_dltensor_1d(din, &n, oracle_dl((OracleDtype)d), dev);
        DLTensor tout = kern_dltensor_1d(dout, &m, oracle_dl((OracleDtype)d), dev);
        double fv = use_int ? -3.0 : 1.7;
        TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin),
                             use_int ? kern_arg_int(-3) : kern_arg_float(1.7)};
        kern_kernel_call_ok(&k, args, 3);
        CUDA_OK(cuda.StreamSynchronize(NULL));
        CUDA_OK(cuda.Memcpy(out, dout, bytes, kD2H));
        char why[160];
        for (int64_t i = 0; i < n; ++i) {
          if (!oracle_check((OracleDtype)d, in, out, i, fv, why, sizeof why)) {
            cr_assert_fail("GPU %s n=%lld element %lld: %s", oracle_names[d], (long long)n,
                           (long long)i, why);
          }
        }
        CUDA_OK(cuda.Free(din));
        CUDA_OK(cuda.Free(dout));
        free(in);
        free(out);
      }
    }
  }
  kern_kernel_close(&k);
}

/* KER-041: pointers not aligned to 16 bytes take the element-wise path and
 * still give the oracle's results. */
TEST(scale_cuda, KER_041_gpu_unaligned) {
  KernKernel k;
  REQUIRE_GPU(&k);
  int64_t n = 4099, m = 4099;
  float* in = malloc((size_t)n * 4);
  float* out = malloc((size_t)n * 4);
  oracle_fill(ORACLE_F32, in, n, 99);
  void *din = NULL, *dout = NULL;
  CUDA_OK(cuda.Malloc(&din, (size_t)n * 4 + 64));
  CUDA_OK(cuda.Malloc(&dout, (size_t)n * 4 + 64));
  CUDA_OK(cuda.Memcpy((char*)din + 4, in, (size_t)n * 4, kH2D));
  DLTensor tin = kern_dltensor_1d(din, &n, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, 0));
  DLTensor tout = kern_dltensor_1d(dout, &m, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, 0));
  tin.byte_offset = 4;
  tout.byte_offset = 8;
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(0.1)};
  kern_kernel_call_ok(&k, args, 3);
  CUDA_OK(cuda.StreamSynchronize(NULL));
  CUDA_OK(cuda.Memcpy(out, (char*)dout + 8, (size_t)n * 4, kD2H));
  char why[160];
  for (int64_t i = 0; i < n; ++i) {
    if (!oracle_check(ORACLE_F32, in, out, i, 0.1, why, sizeof why)) {
      cr_assert_fail("unaligned element %lld: %s", (long long)i, why);
    }
  }
  CUDA_OK(cuda.Free(din));
  CUDA_OK(cuda.Free(dout));
  free(in);
  free(out);
  kern_kernel_close(&k);
}

/* A host function that holds its stream until the test lets go. */
static volatile int gate_open;
static void hold_stream(void* arg) {
  (void)arg;
  while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE)) usleep(100);
}

/* KER-042: the launch goes to the environment stream of the tensors'
 * device, and the call returns without waiting for the device: with that
 * stream held shut, the call returns and the output stays unwritten until
 * the stream is released. */
static void check_env_stream_launch(void);

TEST(scale_cuda, KER_042_launches_on_env_stream, .timeout = 60) { check_env_stream_launch(); }

/* DEV-005: the work goes to the environment stream of the tensor device. */
TEST(scale_cuda, DEV_005_env_stream_of_tensor_device, .timeout = 60) { check_env_stream_launch(); }

/* DEV-007: the kernel returns without waiting for its work (the held stream
 * would block it forever otherwise). */
TEST(scale_cuda, DEV_007_does_not_wait, .timeout = 60) { check_env_stream_launch(); }

static void check_env_stream_launch(void) {
  KernKernel k;
  REQUIRE_GPU(&k);
  int64_t n = 1 << 16, m = n;
  size_t bytes = (size_t)n * 4;
  float* host = malloc(bytes);
  for (int64_t i = 0; i < n; ++i) host[i] = (float)i;
  void *din = NULL, *dout = NULL, *stream = NULL, *side = NULL;
  CUDA_OK(cuda.Malloc(&din, bytes));
  CUDA_OK(cuda.Malloc(&dout, bytes));
  CUDA_OK(cuda.Memcpy(din, host, bytes, kH2D));
  memset(host, 0, bytes);
  CUDA_OK(cuda.Memcpy(dout, host, bytes, kH2D));
  CUDA_OK(cuda.StreamCreateWithFlags(&stream, kNonBlocking));
  CUDA_OK(cuda.StreamCreateWithFlags(&side, kNonBlocking));
  TVMFFIStreamHandle previous = NULL;
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, stream, &previous), 0);
  gate_open = 0;
  CUDA_OK(cuda.LaunchHostFunc(stream, hold_stream, NULL));
  DLTensor tin = kern_dltensor_1d(din, &n, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, 0));
  DLTensor tout = kern_dltensor_1d(dout, &m, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, 0));
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(2)};
  kern_kernel_call_ok(&k, args, 3); /* would hang here if it synchronised */
  cr_expect_eq(cuda.StreamQuery(stream), kNotReady, "the held stream has no pending work");
  usleep(200 * 1000); /* a launch on any other stream would have finished by now */
  CUDA_OK(cuda.MemcpyAsync(host, dout, bytes, kD2H, side));
  CUDA_OK(cuda.StreamSynchronize(side));
  cr_expect_eq(host[n - 1], 0.0f, "output was written while the environment stream was held");
  __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
  CUDA_OK(cuda.StreamSynchronize(stream));
  CUDA_OK(cuda.Memcpy(host, dout, bytes, kD2H));
  for (int64_t i = 0; i < n; ++i) cr_assert_eq(host[i], 2.0f * (float)i, "element %lld", (long long)i);
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, previous, NULL), 0);
  CUDA_OK(cuda.StreamDestroy(stream));
  CUDA_OK(cuda.StreamDestroy(side));
  CUDA_OK(cuda.Free(din));
  CUDA_OK(cuda.Free(dout));
  free(host);
  kern_kernel_close(&k);
}

/* KER-043: the caller's current device survives the call: after a success
 * on the last GPU while device 0 is current (when there are two or more),
 * and after a failure on a device index that does not exist. */
static void check_device_placement(void);

TEST(scale_cuda, KER_043_restores_current_device) { check_device_placement(); }

/* DEV-001: the work runs on the tensors' device whatever is current (with
 * two or more GPUs the last one's memory is used while device 0 is current;
 * the numbers it writes are checked). */
TEST(scale_cuda, DEV_001_runs_on_tensor_device) { check_device_placement(); }

/* DEV-002: the caller's device is current again after success and failure. */
TEST(scale_cuda, DEV_002_restores_callers_device) { check_device_placement(); }

static void check_device_placement(void) {
  KernKernel k;
  REQUIRE_GPU(&k);
  int last = ngpu_ - 1;
  int64_t n = 1024, m = 1024;
  CUDA_OK(cuda.SetDevice(last));
  void *din = NULL, *dout = NULL;
  CUDA_OK(cuda.Malloc(&din, (size_t)n * 4));
  CUDA_OK(cuda.Malloc(&dout, (size_t)n * 4));
  float host[1024];
  for (int i = 0; i < 1024; ++i) host[i] = (float)i;
  CUDA_OK(cuda.Memcpy(din, host, sizeof host, kH2D));
  CUDA_OK(cuda.SetDevice(0));
  DLTensor tin = kern_dltensor_1d(din, &n, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, last));
  DLTensor tout = kern_dltensor_1d(dout, &m, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, last));
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(2)};
  kern_kernel_call_ok(&k, args, 3);
  int current = -1;
  CUDA_OK(cuda.GetDevice(&current));
  cr_expect_eq(current, 0, "current device %d after a call on device %d", current, last);
  tin.device.device_id = tout.device.device_id = ngpu_; /* does not exist */
  EXPECT_CALL_FAILS(&k, args, 3, "RuntimeError", "cudaErrorInvalidDevice");
  CUDA_OK(cuda.GetDevice(&current));
  cr_expect_eq(current, 0, "current device %d after a failed call", current);
  CUDA_OK(cuda.SetDevice(last));
  CUDA_OK(cuda.StreamSynchronize(NULL));
  CUDA_OK(cuda.Memcpy(host, dout, sizeof host, kD2H));
  for (int i = 0; i < 1024; ++i) cr_assert_eq(host[i], 2.0f * (float)i, "element %d", i);
  CUDA_OK(cuda.Free(din));
  CUDA_OK(cuda.Free(dout));
  kern_kernel_close(&k);
}

/* KER-002: the CUDA kernel needs the CUDA runtime but no TVM-FFI runtime,
 * and its errors reach the runtime that loaded it. */
TEST(scale_cuda, KER_002_binds_to_loaded_runtime) {
  KernKernel k;
  kern_kernel_open(&k, CUDA_LIB, "scale");
  cr_expect_eq(kern_loaded_lib_needs("libscale_cuda.so", "tvm_ffi"), 0);
  cr_expect_eq(kern_loaded_lib_needs("libscale_cuda.so", "libcudart"), 1);
  TVMFFIAny args[1] = {kern_arg_int(1)};
  EXPECT_CALL_FAILS(&k, args, 1, "TypeError", "scale");
  kern_kernel_close(&k);
}
