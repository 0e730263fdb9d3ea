/*
 * scale(output, input, factor) for CUDA tensors: output[i] = input[i] * factor.
 *
 * Exported as __tvm_ffi_scale in the plain C ABI (no upstream C++ headers),
 * so one build runs under any TVM-FFI runtime: the TVMFFI* functions it
 * calls are left undefined and bind to the runtime loaded in the process.
 *
 * The host function follows the kernel-library contract: validate (shared
 * with the CPU kernel, scale_check.h), make the tensors' device current,
 * launch on the environment's stream for that device, restore the caller's
 * device. Every CUDA failure becomes a RuntimeError naming the CUDA error;
 * nothing here aborts or synchronises.
 *
 * Rounding is the CPU kernel's: 16-bit types widen to float, multiply by the
 * float factor, and round to nearest-even; float32 multiplies by the float
 * factor; float64 by the double factor.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "scale_check.h"

namespace {

const int kDtypes = KERN_SCALE_F16 | KERN_SCALE_BF16 | KERN_SCALE_F32 | KERN_SCALE_F64;
const int kThreads = 256;
/* Enough blocks to fill any current GPU several times over; the grid-stride
 * loop covers inputs larger than the grid. */
const int64_t kMaxBlocks = 8192;

/* One element: widen, multiply, round back. */
__device__ __forceinline__ float mul(float x, float f) { return x * f; }
__device__ __forceinline__ double mul(double x, double f) { return x * f; }
__device__ __forceinline__ __half mul(__half x, float f) {
  return __float2half_rn(__half2float(x) * f);
}
__device__ __forceinline__ __nv_bfloat16 mul(__nv_bfloat16 x, float f) {
  return __float2bfloat16_rn(__bfloat162float(x) * f);
}

/* 16-byte vectors when both pointers allow them: one load and one store
 * instruction per 16 bytes keeps the memory system saturated. The element
 * tail past the last whole vector is done by the first threads. */
template <typename T, typename F>
__global__ void scale_vec16(T* out, const T* in, F f, int64_t n) {
  const int per = 16 / sizeof(T);
  union Pack {
    uint4 raw;
    T v[16 / sizeof(T)];
  };
  int64_t nvec = n / per;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint4* vin = reinterpret_cast<const uint4*>(in);
  uint4* vout = reinterpret_cast<uint4*>(out);
  for (int64_t i = first; i < nvec; i += stride) {
    Pack p;
    p.raw = vin[i];
#pragma unroll
    for (int j = 0; j < per; ++j) p.v[j] = mul(p.v[j], f);
    vout[i] = p.raw;
  }
  int64_t tail = nvec * per + first;
  if (tail < n) out[tail] = mul(in[tail], f);
}

/* Element at a time, for pointers not aligned to 16 bytes. */
template <typename T, typename F>
__global__ void scale_scalar(T* out, const T* in, F f, int64_t n) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = mul(in[i], f);
  }
}

int raise_cuda(const char* what, cudaError_t e) {
  return kern_scale_raise("RuntimeError", "scale: CUDA error %s in %s: %s", cudaGetErrorName(e),
                          what, cudaGetErrorString(e));
}

template <typename T, typename F>
cudaError_t launch(void* out, const void* in, F f, int64_t n, cudaStream_t stream) {
  T* o = static_cast<T*>(out);
  const T* i = static_cast<const T*>(in);
  bool aligned = ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in)) & 15) == 0;
  int64_t work = aligned ? (n + (16 / (int64_t)sizeof(T)) - 1) / (16 / (int64_t)sizeof(T)) : n;
  int64_t blocks = (work + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks < 1) blocks = 1;
  void* params[] = {&o, &i, &f, &n};
  const void* fn = aligned ? reinterpret_cast<const void*>(&scale_vec16<T, F>)
                           : reinterpret_cast<const void*>(&scale_scalar<T, F>);
  /* cudaLaunchKernel reports its own launch error, so no sticky state from
   * earlier unrelated calls is read or cleared. */
  return cudaLaunchKernel(fn, dim3((unsigned)blocks), dim3(kThreads), params, 0, stream);
}

cudaError_t dispatch(const KernScaleArgs& a, cudaStream_t stream) {
  void* out = kern_scale_data(a.output);
  const void* in = kern_scale_data(a.input);
  float f32 = (float)a.factor;
  switch (kern_scale_dtype_bit(a.input->dtype)) {
    case KERN_SCALE_F32: return launch<float, float>(out, in, f32, a.n, stream);
    case KERN_SCALE_F64: return launch<double, double>(out, in, a.factor, a.n, stream);
    case KERN_SCALE_F16: return launch<__half, float>(out, in, f32, a.n, stream);
    default: return launch<__nv_bfloat16, float>(out, in, f32, a.n, stream);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int __tvm_ffi_scale(void* handle,
                                                                      const TVMFFIAny* args,
                                                                      int32_t num_args,
                                                                      TVMFFIAny* result) {
  (void)handle;
  (void)result;                           /* returns None */
  KernScaleArgs a = {NULL, NULL, 0.0, 0}; /* zeroed only to quiet -Wmaybe-uninitialized */
  if (kern_scale_unpack(args, num_args, kDLCUDA, "CUDA", kDtypes, &a) != 0) return -1;
  if (a.n == 0) return 0; /* nothing to launch: no device needed */
  int device = a.input->device.device_id;
  int previous = 0;
  cudaError_t e = cudaGetDevice(&previous);
  if (e != cudaSuccess) return raise_cuda("cudaGetDevice", e);
  if (previous != device) {
    e = cudaSetDevice(device);
    if (e != cudaSuccess) return raise_cuda("cudaSetDevice", e);
  }
  cudaStream_t stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, device));
  e = dispatch(a, stream);
  cudaError_t restore = previous != device ? cudaSetDevice(previous) : cudaSuccess;
  if (e != cudaSuccess) return raise_cuda("cudaLaunchKernel", e);
  if (restore != cudaSuccess)
    return raise_cuda("cudaSetDevice (restoring the caller's device)", restore);
  return 0;
}
