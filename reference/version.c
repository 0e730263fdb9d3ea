#include <tvm/ffi/c_api.h>

void TVMFFIGetVersion(TVMFFIVersion* out_version) {
  if (out_version == NULL) return;
  out_version->major = TVM_FFI_VERSION_MAJOR;
  out_version->minor = TVM_FFI_VERSION_MINOR;
  out_version->patch = TVM_FFI_VERSION_PATCH;
}
