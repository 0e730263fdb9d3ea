/* One-time initialisation of a process-wide handle, safe under races. */
#include <pthread.h>
#include <stddef.h>

#include "arg.h"
#include "tffi_error.h"

/* Initialisation is rare; one lock for every handle keeps it simple. */
static pthread_mutex_t tffi_init_lock = PTHREAD_MUTEX_INITIALIZER;

int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result)) {
  if (handle_addr == NULL) return tffi_arg_null("TVMFFIHandleInitOnce", "handle_addr");
  /* Acquire pairs with the release below: whoever sees the handle also sees
   * everything init_func wrote before publishing it. */
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) != NULL) return 0;
  if (init_func == NULL) return tffi_arg_null("TVMFFIHandleInitOnce", "init_func");
  pthread_mutex_lock(&tffi_init_lock);
  int rc = 0;
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) == NULL) {
    void* result = NULL;
    rc = init_func(&result);
    if (rc == 0 && result == NULL)
      rc = tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFIHandleInitOnce: init_func succeeded but left its result NULL");
    if (rc == 0) __atomic_store_n(handle_addr, result, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tffi_init_lock);
  return rc;
}

int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit_func)(void* handle)) {
  if (handle_addr == NULL) return tffi_arg_null("TVMFFIHandleDeinitOnce", "handle_addr");
  if (deinit_func == NULL) return tffi_arg_null("TVMFFIHandleDeinitOnce", "deinit_func");
  /* The exchange hands the handle to exactly one caller. */
  void* old = __atomic_exchange_n(handle_addr, NULL, __ATOMIC_ACQ_REL);
  return old != NULL ? deinit_func(old) : 0;
}
