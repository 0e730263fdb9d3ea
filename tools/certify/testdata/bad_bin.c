/* CST-004: a library_bin whose nbytes (2^40) is larger than the symbol. */
#include <tvm/ffi/c_api.h>

__attribute__((visibility("default")))
const unsigned char __tvm_ffi__library_bin[16] = {0, 0, 0, 0, 0, 1, 0, 0};

__attribute__((visibility("default"))) int __tvm_ffi_ok(void* handle, const TVMFFIAny* args,
                                                        int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFINone;
  return 0;
}
