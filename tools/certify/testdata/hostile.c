/* A kernel library whose error messages are hostile to report writers:
 * markup, a CDATA terminator, terminal escapes, control bytes and invalid
 * UTF-8. It raises the error and then returns 0 (a defect), so certify
 * quotes the message as evidence; every report must carry it as inert,
 * escaped text. */
#include <tvm/ffi/c_api.h>

static const char hostile_message[] =
    "<script>alert('x')</script> ]]> & \"q\" \033[2J\001 \xff\xfe end";

__attribute__((visibility("default"))) int __tvm_ffi_hostile(void* handle, const TVMFFIAny* args,
                                                             int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)num_args;
  (void)result;
  TVMFFIErrorSetRaisedFromCStr("TypeError", hostile_message);
  return 0;
}
