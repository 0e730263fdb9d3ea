/* CST-006, CST-007, CST-008: needs libcert_absent.so (not shipped), calls a
 * function only it defines, and imports a TVMFFI* function no runtime has. */
#include <tvm/ffi/c_api.h>

int cert_absent_fn(int x);
int TVMFFINoSuchFunction(int x);

__attribute__((visibility("default"))) int __tvm_ffi_go(void* handle, const TVMFFIAny* args,
                                                        int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  result->type_index = kTVMFFIInt;
  result->v_int64 = cert_absent_fn(num_args) + TVMFFINoSuchFunction(num_args);
  return 0;
}
