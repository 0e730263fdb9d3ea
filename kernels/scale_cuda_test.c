/* Clauses KER-040 to KER-043 of spec/kernels.md: the CUDA kernel meeting the
 * CUDA runtime. KER-040 runs everywhere (without a GPU the runtime fails and
 * the caller must get RuntimeError); the others need a GPU and SKIP, saying
 * why, when there is none. kernels/run_gpu_checks.sh and the GPU bundle
 * (//kernels:gpu_bundle) run them on a GPU.
 *
 * KER-042, DEV-005 and DEV-007 (which stream, and no waiting) are checked
 * by capturing the environment stream into a CUDA graph around the call:
 * spec/kernels.md, "Checking the stream on a GPU", says why that is sound. */
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
  CudaErr (*DeviceSynchronize)(void);
  CudaErr (*StreamBeginCapture)(void*, int);
  CudaErr (*StreamEndCapture)(void*, void**);
  CudaErr (*StreamIsCapturing)(void*, int*);
  CudaErr (*GraphGetNodes)(void*, void**, size_t*);
  CudaErr (*GraphNodeGetType)(void*, int*);
  CudaErr (*GraphInstantiate)(void**, void*, unsigned long long);
  CudaErr (*GraphLaunch)(void*, void*);
  CudaErr (*GraphExecDestroy)(void*);
  CudaErr (*GraphDestroy)(void*);
  const char* (*GetErrorName)(CudaErr);
} Cuda;

/* Values of the CUDA runtime's enums (driver_types.h). */
enum {
  kH2D = 1,
  kD2H = 2,
  kNonBlocking = 1,
  kCaptureModeThreadLocal = 1,
  kCaptureStatusActive = 1,
  kGraphNodeKernel = 0,
};

static Cuda cuda;

/* Loads the kernel and binds `cuda`; returns the number of usable GPUs
 * (0 when the runtime reports none or fails), with the reason in why. */
static int gpu_count(KernKernel* k, char* why, size_t why_size) {
  kern_kernel_open(k, CUDA_LIB, "scale");
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(rt, "the CUDA kernel did not load libcudart.so.13: %s", dlerror());
#define BIND(name)                                 \
  *(void**)(&cuda.name) = dlsym(rt, "cuda" #name); \
  cr_assert_not_null(cuda.name, "libcudart lacks cuda" #name)
  BIND(GetDeviceCount);
  BIND(GetDevice);
  BIND(SetDevice);
  BIND(Malloc);
  BIND(Free);
  BIND(Memcpy);
  BIND(MemcpyAsync);
  BIND(StreamCreateWithFlags);
  BIND(StreamDestroy);
  BIND(StreamSynchronize);
  BIND(DeviceSynchronize);
  BIND(StreamBeginCapture);
  BIND(StreamEndCapture);
  BIND(StreamIsCapturing);
  BIND(GraphGetNodes);
  BIND(GraphNodeGetType);
  BIND(GraphInstantiate);
  BIND(GraphLaunch);
  BIND(GraphExecDestroy);
  BIND(GraphDestroy);
  BIND(GetErrorName);
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

#define REQUIRE_GPU(k)                           \
  char why_[160];                                \
  int ngpu_ = gpu_count((k), why_, sizeof why_); \
  if (ngpu_ == 0) criterion_skip_test("%s", why_)

#define CUDA_OK(call)                                                   \
  do {                                                                  \
    CudaErr e_ = (call);                                                \
    cr_assert_eq(e_, 0, "%s failed: %s", #call, cuda.GetErrorName(e_)); \
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
  void* fake = (void*)(uintptr_t)0x10000;    /* never dereferenced: the call must fail first */
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

/* What capturing the environment stream around one call showed. */
typedef enum {
  STREAM_OK,          /* one kernel node captured, nothing ran early, right values */
  STREAM_CALL_FAILED, /* the call itself failed under capture */
  STREAM_WAITED,      /* the capture was invalidated: the kernel waited or synchronised */
  STREAM_ELSEWHERE,   /* the graph lacks the launch, or the output was written early */
  STREAM_WRONG,       /* the captured graph, run, gave wrong values */
} StreamVerdict;

static const char* const kVerdictNames[] = {"ok", "call failed", "waited", "elsewhere",
                                            "wrong values"};

/* Everything one capture check holds, so that every exit path cleans up. */
typedef struct {
  int64_t n, m;
  size_t bytes;
  float* host;
  void *din, *dout, *stream, *graph, *exec;
  TVMFFIStreamHandle previous;
  char why[512];
} Capture;

static void capture_setup(Capture* c) {
  memset(c, 0, sizeof *c);
  c->n = c->m = 1 << 16;
  c->bytes = (size_t)c->n * 4;
  c->host = malloc(c->bytes);
  cr_assert_not_null(c->host);
  for (int64_t i = 0; i < c->n; ++i) c->host[i] = (float)i;
  CUDA_OK(cuda.Malloc(&c->din, c->bytes));
  CUDA_OK(cuda.Malloc(&c->dout, c->bytes));
  CUDA_OK(cuda.Memcpy(c->din, c->host, c->bytes, kH2D));
  CUDA_OK(cuda.StreamCreateWithFlags(&c->stream, kNonBlocking));
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, c->stream, &c->previous), 0);
}

static void capture_teardown(Capture* c) {
  int status = 0;
  /* A check that bailed out mid-capture ends it here (the graph, if any,
   * is discarded). */
  if (cuda.StreamIsCapturing(c->stream, &status) == 0 && status != 0) {
    void* g = NULL;
    cuda.StreamEndCapture(c->stream, &g);
    if (g) cuda.GraphDestroy(g);
  }
  CUDA_OK(cuda.DeviceSynchronize());
  if (c->exec) CUDA_OK(cuda.GraphExecDestroy(c->exec));
  if (c->graph) CUDA_OK(cuda.GraphDestroy(c->graph));
  cr_assert_eq(API(TVMFFIEnvSetStream)(kDLCUDA, 0, c->previous, NULL), 0);
  CUDA_OK(cuda.StreamDestroy(c->stream));
  CUDA_OK(cuda.Free(c->din));
  CUDA_OK(cuda.Free(c->dout));
  free(c->host);
}

/* Non-blocking streams do not wait for the legacy stream's cudaMemcpy (nor
 * it for them), so the device is synchronised on both sides. */
static void zero_output(Capture* c) {
  CUDA_OK(cuda.DeviceSynchronize());
  memset(c->host, 0, c->bytes);
  CUDA_OK(cuda.Memcpy(c->dout, c->host, c->bytes, kH2D));
  CUDA_OK(cuda.DeviceSynchronize());
}

/* The call under test, with the raised error's text kept in c->why. */
static int call_kernel(KernKernel* k, Capture* c) {
  DLTensor tin = kern_dltensor_1d(c->din, &c->n, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, 0));
  DLTensor tout =
      kern_dltensor_1d(c->dout, &c->m, kern_dtype(kDLFloat, 32), kern_device(kDLCUDA, 0));
  TVMFFIAny args[3] = {kern_arg_dltensor(&tout), kern_arg_dltensor(&tin), kern_arg_float(2)};
  int rc = kern_kernel_call(k, args, 3);
  if (rc == 0) return 0;
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  if (err == NULL) {
    snprintf(c->why, sizeof c->why, "returned %d without raising", rc);
    return rc;
  }
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  snprintf(c->why, sizeof c->why, "%.*s: %.*s", (int)cell->kind.size, cell->kind.data,
           (int)cell->message.size, cell->message.data);
  API(TVMFFIObjectDecRef)(err);
  return rc;
}

/* Kernel nodes and all nodes of the captured graph. */
static void count_nodes(Capture* c, size_t* kernels, size_t* total) {
  *kernels = *total = 0;
  CUDA_OK(cuda.GraphGetNodes(c->graph, NULL, total));
  void* nodes[16];
  size_t got = *total < 16 ? *total : 16;
  if (got == 0) return;
  CUDA_OK(cuda.GraphGetNodes(c->graph, nodes, &got));
  for (size_t i = 0; i < got; ++i) {
    int type = -1;
    CUDA_OK(cuda.GraphNodeGetType(nodes[i], &type));
    if (type == kGraphNodeKernel) ++*kernels;
  }
}

/*
 * KER-042 / DEV-005 / DEV-007, one call of kernel k on float32 data of
 * device 0 with the environment stream of device 0 set to a fresh stream S:
 *   1. a first call outside any capture, so that lazy module loading (which
 *      may synchronise the context) is over before the capture starts;
 *   2. S captured (thread-local mode), the call made, the capture still
 *      active afterwards (a wait on S, or a call capture forbids, would have
 *      invalidated it or failed the call);
 *   3. the captured graph holds exactly one node, a kernel, and the output
 *      is still all zeros (a launch on another stream would have run);
 *   4. the graph, launched on S, writes input * 2.
 */
static StreamVerdict capture_verdict(KernKernel* k, Capture* c) {
  if (call_kernel(k, c) != 0) return STREAM_CALL_FAILED;
  zero_output(c);
  CUDA_OK(cuda.StreamBeginCapture(c->stream, kCaptureModeThreadLocal));
  if (call_kernel(k, c) != 0) return STREAM_CALL_FAILED;
  int status = 0;
  CUDA_OK(cuda.StreamIsCapturing(c->stream, &status));
  CudaErr e = cuda.StreamEndCapture(c->stream, &c->graph);
  if (status != kCaptureStatusActive || e != 0) {
    snprintf(c->why, sizeof c->why, "capture status %d after the call, cudaStreamEndCapture: %s",
             status, cuda.GetErrorName(e));
    return STREAM_WAITED;
  }
  size_t kernels = 0, total = 0;
  count_nodes(c, &kernels, &total);
  CUDA_OK(cuda.DeviceSynchronize()); /* whatever ran outside the capture has finished */
  CUDA_OK(cuda.Memcpy(c->host, c->dout, c->bytes, kD2H));
  int64_t written = 0;
  for (int64_t i = 0; i < c->n; ++i) written += c->host[i] != 0.0f;
  if (kernels != 1 || total != 1 || written != 0) {
    snprintf(c->why, sizeof c->why,
             "the capture of the environment stream holds %zu nodes (%zu kernels); %lld output "
             "elements were written before the captured graph ran",
             total, kernels, (long long)written);
    return STREAM_ELSEWHERE;
  }
  CUDA_OK(cuda.GraphInstantiate(&c->exec, c->graph, 0));
  CUDA_OK(cuda.GraphLaunch(c->exec, c->stream));
  CUDA_OK(cuda.StreamSynchronize(c->stream));
  CUDA_OK(cuda.Memcpy(c->host, c->dout, c->bytes, kD2H));
  for (int64_t i = 0; i < c->n; ++i) {
    if (c->host[i] != 2.0f * (float)i) {
      snprintf(c->why, sizeof c->why, "element %lld: %g, want %g", (long long)i, (double)c->host[i],
               2.0 * (double)i);
      return STREAM_WRONG;
    }
  }
  return STREAM_OK;
}

static void check_env_stream_launch(void) {
  KernKernel k;
  REQUIRE_GPU(&k);
  Capture c;
  capture_setup(&c);
  StreamVerdict v = capture_verdict(&k, &c);
  cr_expect_eq(v, STREAM_OK, "%s: %s", kVerdictNames[v], c.why);
  capture_teardown(&c);
  kern_kernel_close(&k);
}

/* KER-042: the launch goes to the environment stream of the tensors'
 * device, and the call returns without synchronising. */
TEST(scale_cuda, KER_042_launches_on_env_stream, .timeout = 60) { check_env_stream_launch(); }

/* DEV-005: the work goes to the environment stream of the tensor device. */
TEST(scale_cuda, DEV_005_env_stream_of_tensor_device, .timeout = 60) { check_env_stream_launch(); }

/* DEV-007: the kernel returns without waiting for its work. */
TEST(scale_cuda, DEV_007_does_not_wait, .timeout = 60) { check_env_stream_launch(); }

/* The same check on a fixture: it must fail it with one of `allowed`
 * verdicts (a bit set), and the reason is printed. */
static void expect_caught(const char* fixture, unsigned allowed) {
  KernKernel k;
  REQUIRE_GPU(&k);
  KernKernel bad;
  kern_kernel_open(&bad, fixture, "scale");
  Capture c;
  capture_setup(&c);
  StreamVerdict v = capture_verdict(&bad, &c);
  cr_log_info("%s: %s: %s", fixture, kVerdictNames[v], c.why);
  cr_expect(v != STREAM_OK && ((1u << v) & allowed) != 0, "%s got verdict %s (%s)", fixture,
            kVerdictNames[v], c.why);
  capture_teardown(&c);
  kern_kernel_close(&bad);
  kern_kernel_close(&k);
}

/* KER-042: a kernel that launches on the legacy default stream is caught:
 * with a non-blocking environment stream its launch is not captured and
 * runs at once (ELSEWHERE), or CUDA refuses the launch during the capture
 * and the kernel reports it (CALL_FAILED). */
TEST(scale_cuda, KER_042_catches_fixture_ignoring_stream, .timeout = 60) {
  expect_caught("kernels/fixtures/libbad_ignores_stream.so",
                (1u << STREAM_ELSEWHERE) | (1u << STREAM_CALL_FAILED));
}

/* DEV-007: a kernel that synchronises its stream after launching is
 * caught: cudaStreamSynchronize on a capturing stream is not permitted and
 * invalidates the capture (WAITED; CALL_FAILED if it reported the error). */
TEST(scale_cuda, DEV_007_catches_fixture_waiting, .timeout = 60) {
  expect_caught("kernels/fixtures/libbad_waits.so",
                (1u << STREAM_WAITED) | (1u << STREAM_CALL_FAILED));
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
