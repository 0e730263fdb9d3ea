/*
 * A deliberately wrong "implementation" for tools/report_test.py: it
 * accepts every dtype string, raises nothing, reports release 0.1.3 while
 * exporting TVMFFIHandleInitOnce (which first appeared in 0.1.5), and lacks
 * the rest of the C API. Conformance binaries run against it must FAIL
 * DT-014 and VER-002 and SKIP, naming the symbol, what needs the rest.
 */
#include <string.h>
#include <tvm/ffi/c_api.h>

void TVMFFIGetVersion(TVMFFIVersion* out) {
  out->major = 0;
  out->minor = 1;
  out->patch = 3;
}

int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out) {
  (void)str;
  out->code = kDLInt;
  out->bits = 32;
  out->lanes = 1;
  return 0;
}

void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result) { *result = NULL; }

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  (void)obj;
  return 0;
}

int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result)) {
  return *handle_addr ? 0 : init_func(handle_addr);
}
