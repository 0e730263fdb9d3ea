/* CST-008: calls a function nothing defines. Built twice: bound lazily (it
 * loads, as hosts load it, and only a call that reaches the function
 * fails: a warning) and with immediate binding (it does not load: a
 * failure). */
#include <tvm/ffi/c_api.h>

int cert_missing_everywhere(int x);

__attribute__((visibility("default"))) int __tvm_ffi_go(void* handle, const TVMFFIAny* args,
                                                        int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  if (num_args != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "go: expected 1 argument");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->v_int64 = cert_missing_everywhere(num_args);
  return 0;
}
