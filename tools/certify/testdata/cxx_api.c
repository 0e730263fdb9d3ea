/* Built on upstream's C++ API, as orcjit or TVM's runtime are: it calls
 * tvm::ffi::DeepCopy(tvm::ffi::Any const&), which only upstream's
 * libtvm_ffi.so defines (the C ABI has no such function). It loads on any
 * runtime (bound lazily); a call that reaches DeepCopy runs only on
 * upstream's. */
#include <tvm/ffi/c_api.h>

/* The C view of `Any DeepCopy(const Any&)`: the result is returned through
 * a hidden first pointer, as the C++ ABI does for a class with a
 * destructor. */
void tvm_ffi_deep_copy(TVMFFIAny* result,
                       const TVMFFIAny* value) __asm__("_ZN3tvm3ffi8DeepCopyERKNS0_3AnyE");

__attribute__((visibility("default"))) int __tvm_ffi_copy_value(void* h, const TVMFFIAny* args,
                                                                int32_t n, TVMFFIAny* r) {
  (void)h;
  if (n != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "copy_value: expected 1 argument");
    return -1;
  }
  int32_t t = args[0].type_index;
  if (t != kTVMFFINone && t != kTVMFFIInt && t != kTVMFFIFloat && t != kTVMFFIBool) {
    TVMFFIErrorSetRaisedFromCStr("TypeError",
                                 "copy_value: value: expected None, bool, int or float");
    return -1;
  }
  tvm_ffi_deep_copy(r, &args[0]);
  return 0;
}
