/*
 * Threading test of module imports and the system library, meant for TSan
 * (--config=tsan): eight threads append batches of imports to one shared
 * module (each batch under one lock, the cycle checks before it) while the
 * others walk that module's imports in their own cycle checks, and all of
 * them fetch the one system-library module.
 */
#include <pthread.h>
#include <stdint.h>

#include "tffi_error.h"
#include "library.h"
#include "module.h"
#include "object.h"
#include "system_lib.h"
#include "threads_test_support.h"

#define ROUNDS 25

static TVMFFIObject* hub;
static TVMFFIObject* system_module;
static TffiLibrary* lib;
static pthread_barrier_t start;

static void* worker(void* arg) {
  long t = (long)(intptr_t)arg;
  pthread_barrier_wait(&start);
  for (long r = 0; r < ROUNDS; ++r) {
    TVMFFIObject* leaves[2] = {tffi_module_new(lib), tffi_module_new(lib)};
    if (leaves[0] == NULL || leaves[1] == NULL) fail("module", t, r);
    static const uint64_t order[3] = {0, 1, 0};
    if (leaves[0] && leaves[1] && tffi_module_import_list(hub, leaves, order, 3) != 0)
      fail("import batch", t, r);
    /* hub now reaches leaves[0]: importing hub there closes a cycle. */
    if (leaves[0] && tffi_module_import(leaves[0], hub) != -1) fail("cycle refused", t, r);
    TVMFFIObject* sys = NULL;
    if (tffi_system_lib_get("", 0, &sys) != 0 || sys != system_module) fail("system lib", t, r);
    if (sys) tffi_decref(sys);
    for (int i = 0; i < 2; ++i)
      if (leaves[i]) tffi_decref(leaves[i]);
  }
  return NULL;
}

int main(void) {
  lib = tffi_library_system("", 0);
  hub = lib ? tffi_module_new(lib) : NULL;
  if (hub == NULL || tffi_system_lib_get("", 0, &system_module) != 0) {
    fail("setup", -1, 0);
    return threads_exit_status("");
  }
  pthread_barrier_init(&start, NULL, THREADS);
  run_threads(worker);
  pthread_barrier_destroy(&start);
  /* Releases the 3 * ROUNDS * THREADS imports (leak checkers see the rest). */
  tffi_module_clear_imports(hub);
  tffi_decref(hub);
  tffi_decref(system_module);
  tffi_library_release(lib);
  return threads_exit_status("module import batches and the system library");
}
