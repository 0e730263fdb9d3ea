#include "impl.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

ConfApi conf_api;

static char impl_path[PATH_MAX];
static char load_error[1024];
static void* impl_handle;
static char impl_version[64];
static int impl_is_reference;

const char* conf_runfile(const char* path) {
  static _Thread_local char buf[PATH_MAX];
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  if (srcdir == NULL || workspace == NULL) return path;
  snprintf(buf, sizeof buf, "%s/%s/%s", srcdir, workspace, path);
  return buf;
}

/* TVMFFI_IMPL: unset, empty or "reference" picks the bundled runtime;
 * "upstream" the pinned pip library; anything else is a path. */
static void resolve_path(void) {
  const char* want = getenv("TVMFFI_IMPL");
  const char* path;
  char bundled[PATH_MAX];
  if (want == NULL || *want == '\0' || strcmp(want, "reference") == 0) {
    path = conf_runfile("reference/libtvm_ffi.so");
  } else if (strcmp(want, "upstream") == 0) {
    path = conf_runfile("../tvm_ffi_upstream/lib/libtvm_ffi.so");
  } else {
    path = want;
  }
  if (realpath(path, impl_path) == NULL) snprintf(impl_path, sizeof impl_path, "%s", path);
  /* The bundled reference, however it was named: deviations recorded for
   * other implementations never apply to it. */
  impl_is_reference = realpath(conf_runfile("reference/libtvm_ffi.so"), bundled) != NULL &&
                      strcmp(bundled, impl_path) == 0;
}

/* Fills the API table (impl.h: all 50 functions of the C API, all of which
 * the reference exports); a symbol the library lacks stays NULL. */
static void resolve_api(void) {
#define CONF_API_RESOLVE(name) \
  conf_api.name = (__typeof__(&name))dlsym(impl_handle, #name);
  CONF_API_FUNCTIONS(CONF_API_RESOLVE)
#undef CONF_API_RESOLVE
}

/* Runs before main in the runner and in every test worker (Criterion starts
 * workers as fresh processes), so each has the library loaded before any
 * test code runs. */
__attribute__((constructor)) static void load_impl(void) {
  resolve_path();
  impl_handle = dlopen(impl_path, RTLD_NOW | RTLD_GLOBAL);
  if (impl_handle == NULL) {
    const char* why = dlerror();
    snprintf(load_error, sizeof load_error, "%s", why ? why : "unknown dlopen failure");
    return;
  }
  resolve_api();
  TVMFFIVersion v = {0, 0, 0};
  if (conf_api.TVMFFIGetVersion) {
    conf_api.TVMFFIGetVersion(&v);
    snprintf(impl_version, sizeof impl_version, "%u.%u.%u", v.major, v.minor, v.patch);
  }
}

/* The banner, printed once by the runner: which library this run checks. */
ReportHook(PRE_ALL)(struct criterion_test_set* set) {
  (void)set;
  fprintf(stderr, "conformance: implementation under test: %s\n", impl_path);
  if (impl_handle == NULL) {
    fprintf(stderr, "conformance: cannot load it: %s\n", load_error);
    return;
  }
  TVMFFIVersion v = {0, 0, 0};
  if (conf_api.TVMFFIGetVersion) conf_api.TVMFFIGetVersion(&v);
  fprintf(stderr, "conformance: TVMFFIGetVersion: %u.%u.%u%s\n", v.major, v.minor, v.patch,
          conf_api.TVMFFIGetVersion ? "" : " (symbol missing)");
}

const char* conf_impl_path(void) { return impl_path; }
void* conf_impl_handle(void) { return impl_handle; }
const char* conf_impl_load_error(void) { return impl_handle ? NULL : load_error; }
const char* conf_impl_version(void) { return impl_version; }
int conf_impl_is_reference(void) { return impl_is_reference; }

void conf_impl_require(void) {
  if (impl_handle == NULL) cr_assert_fail("cannot load %s: %s", impl_path, load_error);
}

void conf_impl_need(const void* fn, const char* name) {
  if (fn == NULL) criterion_skip_test("%s does not export %s", impl_path, name);
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
