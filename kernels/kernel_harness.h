/*
 * Test support for kernel libraries: load a kernel .so into the process that
 * already holds the runtime under test, call its exported function the way a
 * host does (wrapped by TVMFFIFunctionCreate, called by TVMFFIFunctionCall),
 * and build the tensor arguments it takes.
 *
 * Everything reaches the runtime through the conformance table (API()), so
 * the same tests check the reference, upstream, or any TVMFFI_IMPL.
 */
#ifndef KERNELS_KERNEL_HARNESS_H_
#define KERNELS_KERNEL_HARNESS_H_

#include <stdint.h>

#include "conformance/impl.h"

/* A kernel library opened RTLD_NOW | RTLD_LOCAL after the runtime. */
typedef struct {
  void* lib;              /* dlopen handle */
  TVMFFISafeCallType sym; /* the __tvm_ffi_<name> symbol */
  TVMFFIObjectHandle fn;  /* a Function object wrapping sym */
} KernKernel;

/* Opens runfile `path` and wraps its `__tvm_ffi_<name>`; fails the test
 * (with dlerror's text) when it cannot. */
void kern_kernel_open(KernKernel* k, const char* path, const char* name);
void kern_kernel_close(KernKernel* k);

/* Calls the kernel through TVMFFIFunctionCall. The result must come back
 * None (the kernel returns nothing); the test fails otherwise. Returns the
 * call's return code. */
int kern_kernel_call(KernKernel* k, TVMFFIAny* args, int32_t num_args);

/* Asserts that the last call failed with `kind` and that its message holds
 * every one of the NULL-terminated `parts`. Consumes the raised error. */
void kern_expect_raised(const char* kind, const char* const* parts);
#define EXPECT_RAISED(kind, ...)                           \
  do {                                                     \
    const char* const kern_parts_[] = {__VA_ARGS__, NULL}; \
    kern_expect_raised(kind, kern_parts_);                 \
  } while (0)

/* Calls and expects failure with the given kind and message parts. */
#define EXPECT_CALL_FAILS(k, args, n, kind, ...)                                          \
  do {                                                                                    \
    int kern_rc_ = kern_kernel_call((k), (args), (n));                                    \
    cr_assert_eq(kern_rc_, -1, "expected the call to fail with %s, it returned %d", kind, \
                 kern_rc_);                                                               \
    EXPECT_RAISED(kind, __VA_ARGS__);                                                     \
  } while (0)

/* Calls and fails the test with the raised error's text if it fails. */
void kern_kernel_call_ok(KernKernel* k, TVMFFIAny* args, int32_t num_args);

/* Argument views. */
TVMFFIAny kern_arg_dltensor(DLTensor* t);
TVMFFIAny kern_arg_float(double v);
TVMFFIAny kern_arg_int(int64_t v);

/* A 1-D DLTensor over `data` (no ownership): shape points at *extent. */
DLTensor kern_dltensor_1d(void* data, int64_t* extent, DLDataType dtype, DLDevice device);

/* A Tensor object viewing `t` (which must outlive it), made through
 * TVMFFITensorFromDLPack. Its deleter only counts calls in *deleted. */
TVMFFIObjectHandle kern_tensor_object(DLTensor* t, int* deleted);
TVMFFIAny kern_arg_object(TVMFFIObjectHandle obj, int32_t type_index);

/* For a library already loaded whose path contains `path_part`: 1 when one
 * of its DT_NEEDED entries contains `needle`, 0 when none does. Fails the
 * test when no such library is loaded. */
int kern_loaded_lib_needs(const char* path_part, const char* needle);

/* Strong reference count of an object (the low half of the counter). */
uint32_t kern_strong_refs(TVMFFIObjectHandle obj);

/* An array of n argument slots ending exactly at a page that cannot be
 * read, so reading args[n] faults. Free with kern_guarded_args_free(args, n). */
TVMFFIAny* kern_guarded_args(int32_t n);
void kern_guarded_args_free(TVMFFIAny* args, int32_t n);

/* Runs fn(ctx) in a forked child; returns 1 when the child returned from it
 * normally, 0 when it died (signal, sanitizer report, abort, exit). */
int kern_survives(void (*fn)(void* ctx), void* ctx);

static inline DLDataType kern_dtype(uint8_t code, uint8_t bits) {
  DLDataType t = {code, bits, 1};
  return t;
}
static inline DLDevice kern_device(int32_t type, int32_t id) {
  DLDevice d = {(DLDeviceType)type, id};
  return d;
}

#endif
