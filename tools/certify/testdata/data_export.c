/* CST-002: `__tvm_ffi_table` is data, beside one real function. */
#include <tvm/ffi/c_api.h>

__attribute__((visibility("default"))) int __tvm_ffi_table[4] = {1, 2, 3, 4};

__attribute__((visibility("default"))) int __tvm_ffi_ok(void* handle, const TVMFFIAny* args,
                                                        int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFINone;
  return 0;
}
