/*
 * A test library for the Python error-kind check: each exported function
 * raises one kind of error through the C API and fails, so Python can see
 * which exception class the kind turns into. Loaded by tvm_ffi.load_module,
 * which finds functions by their `__tvm_ffi_` symbol prefix; the C API
 * symbols resolve against the libtvm_ffi that Python already loaded.
 */
#include <tvm/ffi/c_api.h>

#define EXPORT __attribute__((visibility("default")))

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
EXPORT int __tvm_ffi_raise_parts(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result);
EXPORT int __tvm_ffi_ok(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result);
EXPORT int __tvm_ffi_fail_silently(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result);

/* One exported function per kind (declared first: no header declares the
 * exports); the message names the kind and carries characters that survive
 * only if the bytes pass unchanged. */
#define RAISER(KIND)                                                                   \
  EXPORT int __tvm_ffi_raise_##KIND(void* self, const TVMFFIAny* args, int32_t n,      \
                                    TVMFFIAny* result);                                \
  EXPORT int __tvm_ffi_raise_##KIND(void* self, const TVMFFIAny* args, int32_t n,      \
                                    TVMFFIAny* result) {                               \
    (void)self, (void)args, (void)n, (void)result;                                     \
    TVMFFIErrorSetRaisedFromCStr(#KIND, "argument `x` of raise_" #KIND " is bad: 42"); \
    return -1;                                                                         \
  }

RAISER(RuntimeError)
RAISER(ValueError)
RAISER(TypeError)
RAISER(AttributeError)
RAISER(KeyError)
RAISER(IndexError)
RAISER(AssertionError)
RAISER(MemoryError)
RAISER(NotImplementedError)
RAISER(MyCustomError)

/* A message assembled from parts, with non-ASCII UTF-8 bytes. */
EXPORT int __tvm_ffi_raise_parts(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  const char* parts[] = {"shape ", (const char*)0, "[2, 3] \xc3\xa9", " mismatch"};
  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 4);
  return -1;
}

/* Succeeds: shows that the library loads and calls work at all. */
EXPORT int __tvm_ffi_ok(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 7;
  return 0;
}

/* Fails without raising anything. */
EXPORT int __tvm_ffi_fail_silently(void* self, const TVMFFIAny* args, int32_t n,
                                   TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  return -1;
}
