#include "impl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* The stand-ins for missing functions: one per name, so the skip can say
 * which. They take no arguments; called through the function's own pointer
 * type they ignore the arguments and never return. An armed allocation
 * failure (alloc_fail.h, present in every conformance binary) is stopped
 * first: the skip message allocates. */
__attribute__((weak)) long conf_alloc_off(void);

static _Noreturn void missing_called(const char* name) {
  if (conf_alloc_off) conf_alloc_off();
  criterion_skip_test("%s does not export %s", conf_impl_path(), name);
}

#define CONF_API_STAND_IN(name) \
  static void missing_##name(void) { missing_called(#name); }
CONF_API_FUNCTIONS(CONF_API_STAND_IN)
#undef CONF_API_STAND_IN

static int is_stand_in(const void* fn) {
#define CONF_API_IS(name) \
  if (fn == (const void*)missing_##name) return 1;
  CONF_API_FUNCTIONS(CONF_API_IS)
#undef CONF_API_IS
  return 0;
}

/* Runs before main in the runner and in every test worker (Criterion starts
 * workers as fresh processes), so each has the library loaded, and every
 * function it lacks replaced by its stand-in, before any test code runs. */
__attribute__((constructor)) static void load_impl(void) {
  if (conf_impl_load() != 0) return;
#define CONF_API_FILL(name) \
  if (!conf_api_present.name) conf_api.name = (__typeof__(&name))missing_##name;
  CONF_API_FUNCTIONS(CONF_API_FILL)
#undef CONF_API_FILL
}

/* The banner, printed once by the runner: which library this run checks. */
ReportHook(PRE_ALL)(struct criterion_test_set* set) {
  (void)set;
  fprintf(stderr, "conformance: implementation under test: %s\n", conf_impl_path());
  if (conf_impl_handle() == NULL) {
    fprintf(stderr, "conformance: cannot load it: %s\n", conf_impl_load_error());
    return;
  }
  fprintf(stderr, "conformance: TVMFFIGetVersion: %s; exports %d of the %d TVMFFI* functions\n",
          conf_api_present.TVMFFIGetVersion ? conf_impl_version() : "(not exported)",
          conf_impl_exported(), conf_impl_api_total());
}

void conf_impl_require(void) {
  if (conf_impl_handle() == NULL) {
    cr_assert_fail("cannot load %s: %s", conf_impl_path(), conf_impl_load_error());
  }
}

void conf_impl_need(const void* fn, const char* name) {
  if (fn == NULL || is_stand_in(fn))
    criterion_skip_test("%s does not export %s", conf_impl_path(), name);
}

void conf_impl_need_present(int present, const char* name) {
  if (!present) criterion_skip_test("%s does not export %s", conf_impl_path(), name);
}

void conf_impl_skip_if_unresolved(const char* dlerror_text, const char* library) {
  static const char marker[] = "undefined symbol: ";
  const char* at = dlerror_text ? strstr(dlerror_text, marker) : NULL;
  if (at == NULL || conf_impl_handle() == NULL) return;
  char name[256];
  at += sizeof marker - 1;
  size_t n = strcspn(at, " \t\n,;()");
  snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), at);
  if (dlsym(conf_impl_handle(), name) == NULL)
    criterion_skip_test("%s does not export %s, which %s needs", conf_impl_path(), name, library);
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
