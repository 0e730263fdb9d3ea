/* CST-006, CST-007, CST-008: needs libcert_absent.so (not on the search
 * path), calls twelve functions only it defines, and imports a TVMFFI*
 * function no runtime has. The missing library is one finding: the twelve
 * symbols it would define are not judged. */
#include <tvm/ffi/c_api.h>

#define USES(k) int cert_absent_fn##k(int x)
USES(0);
USES(1);
USES(2);
USES(3);
USES(4);
USES(5);
USES(6);
USES(7);
USES(8);
USES(9);
USES(10);
USES(11);
int TVMFFINoSuchFunction(int x);

__attribute__((visibility("default"))) int __tvm_ffi_go(void* handle, const TVMFFIAny* args,
                                                        int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  int x = num_args;
  x = cert_absent_fn0(x) + cert_absent_fn1(x) + cert_absent_fn2(x) + cert_absent_fn3(x);
  x = cert_absent_fn4(x) + cert_absent_fn5(x) + cert_absent_fn6(x) + cert_absent_fn7(x);
  x = cert_absent_fn8(x) + cert_absent_fn9(x) + cert_absent_fn10(x) + cert_absent_fn11(x);
  result->type_index = kTVMFFIInt;
  result->v_int64 = x + TVMFFINoSuchFunction(num_args);
  return 0;
}
