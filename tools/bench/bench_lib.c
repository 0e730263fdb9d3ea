/* The library the module benchmarks load: one exported function that does
 * nothing, and (from the genrule) a __tvm_ffi__library_bin of N entries. */
#include <tvm/ffi/c_api.h>

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
__attribute__((visibility("default"))) int __tvm_ffi_bench_noop(void* self, const TVMFFIAny* args,
                                                                int32_t num_args,
                                                                TVMFFIAny* result);

__attribute__((visibility("default"))) int __tvm_ffi_bench_noop(void* self, const TVMFFIAny* args,
                                                                int32_t num_args,
                                                                TVMFFIAny* result) {
  (void)self, (void)args, (void)num_args;
  result->type_index = kTVMFFINone;
  result->v_int64 = 0;
  return 0;
}
