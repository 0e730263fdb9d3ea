/* Shaped like a CuTe DSL kernel library exported with TVM-FFI: it needs the
 * NVIDIA driver (DT_NEEDED libcuda.so.1), its function takes only CUDA
 * tensors, checks its arguments in CuTe's order and words, and reads the
 * strides it is given without looking for NULL, so a legacy tensor (NULL
 * strides) crashes it. Without a driver certify loads it against the CUDA
 * toolkit's driver stub; then the launch fails for want of a GPU. */
#include "tools/certify/testdata/dsl_shape.h"

int cuInit(unsigned flags);
int cuDeviceGetCount(int* count);
int cuGetErrorName(int error, const char** name);

/* Where the launch would be: the driver must answer. */
static int launch(void) {
  int rc = cuInit(0), n = 0;
  if (rc == 0) rc = cuDeviceGetCount(&n);
  if (rc == 0 && n > 0) return 0;
  const char* name = NULL;
  if (rc == 0 || cuGetErrorName(rc, &name) != 0 || name == NULL) name = "CUDA_ERROR_NO_DEVICE";
  char msg[256];
  snprintf(msg, sizeof msg, "CUDA Error: %s", name);
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", msg);
  return -1;
}

static const char kSig[] = "add_one(x: Tensor([n], float32), y: Tensor([n], float32))";

DSL_EXPORT __tvm_ffi_add_one(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (dsl_arity(n, 2, kSig) != 0) return -1;
  const DLTensor* x = dsl_tensor(args, 0, kDLCUDA, kSig, 0);
  const DLTensor* y = x ? dsl_tensor(args, 1, kDLCUDA, kSig, 0) : NULL;
  if (y == NULL) return -1;
  if (y->shape[0] != x->shape[0]) {
    return dsl_fail("ValueError", "Mismatched y.shape[0] on argument #%d when calling: `%s`, %s", 1,
                    kSig, "symbolic constraint violated");
  }
  return launch();
}
