/* CST-030: needs GLIBC_2.34 (close_range), beyond manylinux_2_28; and
 * CST imports: TVMFFIErrorCreateWithCauseAndExtraContext, first declared in
 * 0.1.8.post0, so certify can tell it was built against >= 0.1.8.post0. */
#define _GNU_SOURCE
#include <tvm/ffi/c_api.h>
#include <unistd.h>

__attribute__((visibility("default"))) int __tvm_ffi_go(void* handle, const TVMFFIAny* args,
                                                        int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  if (num_args == 99) close_range(1000, 1001, 0);
  if (num_args == 98) {
    TVMFFIByteArray kind = {"ValueError", 10}, msg = {"x", 1}, bt = {"", 0};
    TVMFFIObjectHandle e = NULL;
    TVMFFIErrorCreateWithCauseAndExtraContext(&kind, &msg, &bt, NULL, NULL, &e);
    TVMFFIErrorSetRaised(e);
    TVMFFIObjectDecRef(e);
    return -1;
  }
  result->type_index = kTVMFFINone;
  return 0;
}
