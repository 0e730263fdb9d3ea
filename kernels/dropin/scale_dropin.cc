// A kernel written the way upstream's users write one: C++ against the pip
// package's own headers, exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC. It
// links no runtime, so it must run on whichever runtime loads it; the tests
// (kernels/dropin_test.c) load it on the reference and on upstream
// (spec/kernels.md, KER-052).
//
// It computes the CPU float32 scale and checks its arguments with the
// header-provided error macros, so the typed-argument conversion errors and
// the thrown errors both have to cross the reference runtime's C ABI.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

void ScaleFloat32(ffi::TensorView output, ffi::TensorView input, double factor) {
  TVM_FFI_CHECK(output.device().device_type == kDLCPU, ValueError) << "output is not on the CPU";
  TVM_FFI_CHECK(input.device().device_type == kDLCPU, ValueError) << "input is not on the CPU";
  TVM_FFI_CHECK(input.ndim() == 1 && output.ndim() == 1, ValueError)
      << "input and output are not 1-D";
  TVM_FFI_CHECK(input.numel() == output.numel(), ValueError)
      << "output has " << output.numel() << " elements, input " << input.numel();
  DLDataType dt = input.dtype();
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1 || output.dtype().code != dt.code ||
      output.dtype().bits != dt.bits) {
    TVM_FFI_THROW(TypeError) << "input dtype is not float32";
  }
  // data_ptr() is DLTensor::data: element 0 lives byte_offset bytes after it.
  const float* in = reinterpret_cast<const float*>(static_cast<const char*>(input.data_ptr()) +
                                                   input.byte_offset());
  float* out =
      reinterpret_cast<float*>(static_cast<char*>(output.data_ptr()) + output.byte_offset());
  const float f = static_cast<float>(factor);
  for (int64_t i = 0; i < input.numel(); ++i) out[i] = in[i] * f;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_dropin, ScaleFloat32);
