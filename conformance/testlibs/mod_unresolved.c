/* Test library that cannot load: a data reference to a symbol nobody
 * defines must be resolved at load time, so the loader refuses it. */
#include "mod_common.h"

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
CONF_EXPORT int __tvm_ffi_never(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result);

extern int conf_symbol_nobody_defines;
CONF_EXPORT int* conf_unresolved_ref = &conf_symbol_nobody_defines;

CONF_EXPORT int __tvm_ffi_never(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, *conf_unresolved_ref);
}
