#include "impl.h"

#include <stdio.h>
#include <sys/resource.h>

/* Runs before main in the runner and in every test worker (Criterion starts
 * workers as fresh processes), so each has the library loaded before any
 * test code runs. */
__attribute__((constructor)) static void load_impl(void) { conf_impl_load(); }

/* The banner, printed once by the runner: which library this run checks. */
ReportHook(PRE_ALL)(struct criterion_test_set* set) {
  (void)set;
  fprintf(stderr, "conformance: implementation under test: %s\n", conf_impl_path());
  if (conf_impl_handle() == NULL) {
    fprintf(stderr, "conformance: cannot load it: %s\n", conf_impl_load_error());
    return;
  }
  TVMFFIVersion v = {0, 0, 0};
  if (conf_api.TVMFFIGetVersion) conf_api.TVMFFIGetVersion(&v);
  fprintf(stderr, "conformance: TVMFFIGetVersion: %u.%u.%u%s\n", v.major, v.minor, v.patch,
          conf_api.TVMFFIGetVersion ? "" : " (symbol missing)");
}

void conf_impl_require(void) {
  if (conf_impl_handle() == NULL) {
    cr_assert_fail("cannot load %s: %s", conf_impl_path(), conf_impl_load_error());
  }
}

void conf_impl_need(const void* fn, const char* name) {
  if (fn == NULL) criterion_skip_test("%s does not export %s", conf_impl_path(), name);
}

/* Current size of the address space, from /proc (0 when unreadable).
 * Unused under the sanitizers, which get no cap (see below). */
__attribute__((unused)) static unsigned long long vm_size_bytes(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f == NULL) return 0;
  if (fscanf(f, "%llu", &pages) != 1) pages = 0;
  fclose(f);
  return pages * 4096ull;
}

void conf_limit_memory(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#else
  unsigned long long now = vm_size_bytes();
  if (now == 0) return;
  struct rlimit cap = {now + CONF_HOSTILE_HEADROOM, now + CONF_HOSTILE_HEADROOM};
  if (setrlimit(RLIMIT_AS, &cap) != 0) cr_log_warn("cannot cap the address space");
#endif
}
