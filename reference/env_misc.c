/*
 * Host hooks: TVMFFIEnvRegisterCAPI stores the few host (Python) C API
 * functions the runtime may call, and TVMFFIEnvCheckSignals uses them to let
 * a long-running kernel notice Ctrl-C.
 */
#include <string.h>

#include <tvm/ffi/extra/c_env_api.h>

#include "arg.h"
#include "tffi_error.h"

typedef int (*TffiCheckSignals)(void);
typedef void* (*TffiGilEnsure)(void);
typedef void (*TffiGilRelease)(void*);

/* Registered once by the host, read by any thread: atomics. */
static void* tffi_check_signals;
static void* tffi_gil_ensure;
static void* tffi_gil_release;

int TVMFFIEnvRegisterCAPI(const char* name, void* symbol) {
  if (name == NULL) return tffi_arg_null("TVMFFIEnvRegisterCAPI", "name");
  void** slot = NULL;
  if (strcmp(name, "PyErr_CheckSignals") == 0) {
    slot = &tffi_check_signals;
  } else if (strcmp(name, "PyGILState_Ensure") == 0) {
    slot = &tffi_gil_ensure;
  } else if (strcmp(name, "PyGILState_Release") == 0) {
    slot = &tffi_gil_release;
  } else {
    /* Quoted whole (tffi_arg_error would cut it): it is what the caller needs to see. */
    return tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIEnvRegisterCAPI: name '%s' is not a known host API "
                      "(PyErr_CheckSignals, PyGILState_Ensure, PyGILState_Release)",
                      name);
  }
  __atomic_store_n(slot, symbol, __ATOMIC_RELEASE);
  return 0;
}

int TVMFFIEnvCheckSignals(void) {
  void* check = __atomic_load_n(&tffi_check_signals, __ATOMIC_ACQUIRE);
  if (check == NULL) return 0;
  void* ensure = __atomic_load_n(&tffi_gil_ensure, __ATOMIC_ACQUIRE);
  void* release = __atomic_load_n(&tffi_gil_release, __ATOMIC_ACQUIRE);
  /* The host's check needs its interpreter lock; calling it without one
   * would crash the host, so refuse instead. */
  if (ensure == NULL || release == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFIEnvCheckSignals: PyErr_CheckSignals is registered but "
                      "PyGILState_Ensure or "
                      "PyGILState_Release is not");
  }
  void* state = ((TffiGilEnsure)ensure)();
  int rc = ((TffiCheckSignals)check)();
  ((TffiGilRelease)release)(state);
  return rc != 0 ? -1 : 0;
}
