/*
 * The GPU half of scale_bench: the CUDA scale kernel against
 * cudaMemcpyAsync device to device on the same buffers, timed with CUDA
 * events on one stream (the environment stream the kernel launches on),
 * after warm-up, median of the repetitions.
 *
 * The CUDA runtime is the one the kernel library loaded (RTLD_NOLOAD), its
 * entry points declared by hand so this file needs no CUDA headers and
 * builds where CUDA is absent. Without a GPU sb_gpu says why and returns 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#define SB_EXPORT __attribute__((visibility("default")))

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
SB_EXPORT int sb_gpu(const char* kernel_path, size_t bytes, int reps, char* report, size_t size);

typedef int CudaErr;
typedef struct {
  CudaErr (*GetDeviceCount)(int*);
  CudaErr (*Malloc)(void**, size_t);
  CudaErr (*Free)(void*);
  CudaErr (*Memset)(void*, int, size_t);
  CudaErr (*MemcpyAsync)(void*, const void*, size_t, int, void*);
  CudaErr (*StreamCreateWithFlags)(void**, unsigned);
  CudaErr (*StreamDestroy)(void*);
  CudaErr (*StreamSynchronize)(void*);
  CudaErr (*EventCreate)(void**);
  CudaErr (*EventDestroy)(void*);
  CudaErr (*EventRecord)(void*, void*);
  CudaErr (*EventSynchronize)(void*);
  CudaErr (*EventElapsedTime)(float*, void*, void*);
  const char* (*GetErrorName)(CudaErr);
} Cuda;

enum { kD2D = 3, kNonBlocking = 1 };

typedef int (*SetStreamFn)(int32_t, int32_t, void*, void**);

typedef struct {
  Cuda cu;
  TVMFFISafeCallType kernel;
  void* stream;
  void *start, *stop;
  char* why;
  size_t why_size;
} Gpu;

static int fail(Gpu* g, const char* what, CudaErr e) {
  snprintf(g->why, g->why_size, "%s failed: %s", what, g->cu.GetErrorName(e));
  return -1;
}

#define CU(g, call)                           \
  do {                                        \
    CudaErr e_ = (call);                      \
    if (e_ != 0) return fail((g), #call, e_); \
  } while (0)

static int bind(Gpu* g, const char* kernel_path) {
  void* lib = dlopen(kernel_path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    snprintf(g->why, g->why_size, "cannot load %s: %s", kernel_path, dlerror());
    return -1;
  }
  g->kernel = (TVMFFISafeCallType)dlsym(lib, "__tvm_ffi_scale");
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (g->kernel == NULL || rt == NULL) {
    snprintf(g->why, g->why_size, "%s lacks __tvm_ffi_scale or did not load libcudart.so.13",
             kernel_path);
    return -1;
  }
#define BIND(name)                                               \
  *(void**)(&g->cu.name) = dlsym(rt, "cuda" #name);              \
  if (g->cu.name == NULL) {                                      \
    snprintf(g->why, g->why_size, "libcudart lacks cuda" #name); \
    return -1;                                                   \
  }
  // clang-format off
  BIND(GetDeviceCount)
  BIND(Malloc)
  BIND(Free)
  BIND(Memset)
  BIND(MemcpyAsync)
  BIND(StreamCreateWithFlags)
  BIND(StreamDestroy)
  BIND(StreamSynchronize)
  BIND(EventCreate)
  BIND(EventDestroy)
  BIND(EventRecord)
  BIND(EventSynchronize)
  BIND(EventElapsedTime)
  BIND(GetErrorName)
  // clang-format on
#undef BIND
  return 0;
}

static int cmp_float(const void* a, const void* b) {
  float x = *(const float*)a, y = *(const float*)b;
  return (x > y) - (x < y);
}

/* One timed operation: the kernel on (out, in) of dtype (code, bits), or
 * (kernel == 0) the copy of the same bytes. Milliseconds. */
static int timed(Gpu* g, int kernel, void* out, void* in, size_t bytes, uint8_t code, uint8_t bits,
                 float* ms) {
  int64_t n = (int64_t)(bytes / (bits / 8));
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.device.device_type = kDLCUDA;
  t.ndim = 1;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = &n;
  DLTensor tin = t, tout = t;
  tin.data = in;
  tout.data = out;
  TVMFFIAny args[3], result;
  memset(args, 0, sizeof args);
  memset(&result, 0, sizeof result);
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &tout;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &tin;
  args[2].type_index = kTVMFFIFloat;
  args[2].v_float64 = 1.5;
  CU(g, g->cu.EventRecord(g->start, g->stream));
  if (kernel) {
    if (g->kernel(NULL, args, 3, &result) != 0) {
      snprintf(g->why, g->why_size, "the CUDA kernel call failed");
      return -1;
    }
  } else {
    CU(g, g->cu.MemcpyAsync(out, in, bytes, kD2D, g->stream));
  }
  CU(g, g->cu.EventRecord(g->stop, g->stream));
  CU(g, g->cu.EventSynchronize(g->stop));
  CU(g, g->cu.EventElapsedTime(ms, g->start, g->stop));
  return 0;
}

static const struct {
  const char* name;
  uint8_t code, bits;
} kDtypes[] = {{"float32", 2, 32}, {"float16", 2, 16}, {"bfloat16", 4, 16}, {"float64", 2, 64}};

/* Median milliseconds of kernel and copy per dtype, interleaved round by
 * round, appended to report as JSON lines. */
static int measure(Gpu* g, void* out, void* in, size_t bytes, int reps, char* report, size_t size) {
  float* k = calloc((size_t)reps, sizeof(float));
  float* c = calloc((size_t)reps, sizeof(float));
  if (k == NULL || c == NULL) {
    free(k);
    free(c);
    snprintf(g->why, g->why_size, "out of host memory");
    return -1;
  }
  size_t used = strlen(report);
  int rc = 0;
  for (size_t d = 0; d < sizeof kDtypes / sizeof kDtypes[0] && rc == 0; ++d) {
    for (int r = -3; r < reps && rc == 0; ++r) { /* three warm-up rounds */
      float mk = 0, mc = 0;
      rc = timed(g, 1, out, in, bytes, kDtypes[d].code, kDtypes[d].bits, &mk);
      if (rc == 0) rc = timed(g, 0, out, in, bytes, kDtypes[d].code, kDtypes[d].bits, &mc);
      if (r >= 0) k[r] = mk, c[r] = mc;
    }
    if (rc != 0) break;
    qsort(k, (size_t)reps, sizeof(float), cmp_float);
    qsort(c, (size_t)reps, sizeof(float), cmp_float);
    double km = k[reps / 2], cm = c[reps / 2];
    used += (size_t)snprintf(report + used, used < size ? size - used : 0,
                             "{\"dtype\":\"%s\",\"bytes\":%zu,\"reps\":%d,"
                             "\"kernel_ms\":%.4f,\"copy_ms\":%.4f,\"kernel_gbps\":%.1f,"
                             "\"copy_gbps\":%.1f,\"ratio\":%.4f}\n",
                             kDtypes[d].name, bytes, reps, km, cm, 2.0 * (double)bytes / km / 1e6,
                             2.0 * (double)bytes / cm / 1e6, cm / km);
  }
  free(k);
  free(c);
  return rc;
}

/* 0 with JSON lines in report; 1 with the reason in report when there is no
 * GPU; -1 with the reason when something failed on the GPU. */
SB_EXPORT int sb_gpu(const char* kernel_path, size_t bytes, int reps, char* report, size_t size) {
  Gpu g;
  memset(&g, 0, sizeof g);
  g.why = report;
  g.why_size = size;
  report[0] = '\0';
  if (bind(&g, kernel_path) != 0) return 1;
  int count = 0;
  CudaErr e = g.cu.GetDeviceCount(&count);
  if (e != 0 || count == 0) {
    snprintf(report, size, "no GPU: cudaGetDeviceCount %s",
             e != 0 ? g.cu.GetErrorName(e) : "reports 0 devices");
    return 1;
  }
  SetStreamFn set_stream = (SetStreamFn)dlsym(RTLD_DEFAULT, "TVMFFIEnvSetStream");
  void *in = NULL, *out = NULL, *previous = NULL;
  if (set_stream == NULL) return snprintf(report, size, "runtime lacks TVMFFIEnvSetStream"), -1;
  CU(&g, g.cu.StreamCreateWithFlags(&g.stream, kNonBlocking));
  CU(&g, g.cu.EventCreate(&g.start));
  CU(&g, g.cu.EventCreate(&g.stop));
  CU(&g, g.cu.Malloc(&in, bytes));
  CU(&g, g.cu.Malloc(&out, bytes));
  CU(&g, g.cu.Memset(in, 0x3c, bytes)); /* finite values in every dtype */
  CU(&g, g.cu.Memset(out, 0, bytes));
  if (set_stream(kDLCUDA, 0, g.stream, &previous) != 0) {
    return snprintf(report, size, "TVMFFIEnvSetStream failed"), -1;
  }
  int rc = measure(&g, out, in, bytes, reps, report, size);
  set_stream(kDLCUDA, 0, previous, NULL);
  g.cu.StreamSynchronize(g.stream);
  g.cu.Free(in);
  g.cu.Free(out);
  g.cu.EventDestroy(g.start);
  g.cu.EventDestroy(g.stop);
  g.cu.StreamDestroy(g.stream);
  return rc;
}
