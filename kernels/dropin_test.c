/* KER-052: a kernel built from upstream's own C++ headers with its typed
 * export macro (kernels/dropin/scale_dropin.cc) runs on the runtime under
 * test: results, the macro's own argument conversion errors, and errors the
 * kernel throws. It needs TVMFFIErrorSetRaised, TVMFFIBacktrace and
 * TVMFFIGetTypeInfo from the runtime. */
#include <string.h>

#include "kernels/kernel_harness.h"

#define DROPIN_LIB "kernels/libscale_dropin.so"

typedef struct {
  float in[5], out[5];
  int64_t n_in, n_out;
  DLTensor tin, tout;
} Buffers;

static void buffers_init(Buffers* b) {
  memset(b, 0, sizeof *b);
  b->n_in = b->n_out = 5;
  for (int i = 0; i < 5; ++i) b->in[i] = (float)i - 2.0f;
  DLDevice cpu = kern_device(kDLCPU, 0);
  b->tin = kern_dltensor_1d(b->in, &b->n_in, kern_dtype(kDLFloat, 32), cpu);
  b->tout = kern_dltensor_1d(b->out, &b->n_out, kern_dtype(kDLFloat, 32), cpu);
}

/* Opens the drop-in kernel and prepares a valid call: (out, in, 1.5) as
 * DLTensor* views of b's buffers. */
static void dropin_open(KernKernel* k, Buffers* b, TVMFFIAny args[3]) {
  kern_kernel_open(k, DROPIN_LIB, "scale_dropin");
  buffers_init(b);
  args[0] = kern_arg_dltensor(&b->tout);
  args[1] = kern_arg_dltensor(&b->tin);
  args[2] = kern_arg_float(1.5);
}

/* KER-052: results, through DLTensor* views and through Tensor objects,
 * with a float and with an int factor. */
TEST(dropin, KER_052_dropin_runs) {
  KernKernel k;
  Buffers b;
  TVMFFIAny args[3];
  dropin_open(&k, &b, args);
  kern_kernel_call_ok(&k, args, 3);
  for (int i = 0; i < 5; ++i) cr_expect_eq(b.out[i], ((float)i - 2.0f) * 1.5f, "element %d", i);
  int deleted = 0;
  TVMFFIObjectHandle oin = kern_tensor_object(&b.tin, &deleted);
  TVMFFIObjectHandle oout = kern_tensor_object(&b.tout, &deleted);
  args[0] = kern_arg_object(oout, kTVMFFITensor);
  args[1] = kern_arg_object(oin, kTVMFFITensor);
  args[2] = kern_arg_int(-4);
  kern_kernel_call_ok(&k, args, 3);
  for (int i = 0; i < 5; ++i) cr_expect_eq(b.out[i], ((float)i - 2.0f) * -4.0f, "element %d", i);
  API(TVMFFIObjectDecRef)(oin);
  API(TVMFFIObjectDecRef)(oout);
  cr_expect_eq(deleted, 2);
  kern_kernel_close(&k);
}

/* KER-052: the export macro's own checks (argument count, argument types)
 * reach the caller as TypeError naming the function. */
TEST(dropin, KER_052_dropin_conversion_errors) {
  KernKernel k;
  Buffers b;
  TVMFFIAny args[3];
  dropin_open(&k, &b, args);
  EXPECT_CALL_FAILS(&k, args, 2, "TypeError", "scale_dropin");
  args[0] = kern_arg_int(7);
  EXPECT_CALL_FAILS(&k, args, 3, "TypeError", "scale_dropin", "#0");
  args[0] = kern_arg_dltensor(&b.tout);
  memset(&args[2], 0, sizeof args[2]);
  EXPECT_CALL_FAILS(&k, args, 3, "TypeError", "scale_dropin", "#2");
  kern_kernel_close(&k);
}

/* KER-052: errors the kernel throws keep their kind and message. */
TEST(dropin, KER_052_dropin_thrown_errors) {
  KernKernel k;
  Buffers b;
  TVMFFIAny args[3];
  dropin_open(&k, &b, args);
  b.n_out = 4;
  EXPECT_CALL_FAILS(&k, args, 3, "ValueError", "output has 4 elements, input 5");
  b.n_out = 5;
  b.tin.dtype = b.tout.dtype = kern_dtype(kDLFloat, 64);
  EXPECT_CALL_FAILS(&k, args, 3, "TypeError", "input dtype is not float32");
  b.tin.dtype = b.tout.dtype = kern_dtype(kDLFloat, 32);
  b.tin.device = kern_device(kDLCUDA, 0);
  EXPECT_CALL_FAILS(&k, args, 3, "ValueError", "input is not on the CPU");
  for (int i = 0; i < 5; ++i) cr_expect_eq(b.out[i], 0.0f, "a refused call wrote element %d", i);
  kern_kernel_close(&k);
}

/* KER-002: the drop-in names no TVM-FFI runtime among its needed libraries
 * either; its TVMFFI* references bind to the runtime under test. */
TEST(dropin, KER_002_dropin_links_no_runtime) {
  KernKernel k;
  kern_kernel_open(&k, DROPIN_LIB, "scale_dropin");
  cr_expect_eq(kern_loaded_lib_needs("libscale_dropin.so", "tvm_ffi"), 0);
  kern_kernel_close(&k);
}
