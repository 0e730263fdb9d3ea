#include "impl.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

ConfApi conf_api;
ConfApiPresent conf_api_present;

static char impl_path[PATH_MAX];
static char load_error[1024];
static void* impl_handle;
static char impl_version[64];
static int impl_is_reference;
static int relative_under_bazel;

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
  relative_under_bazel = path[0] != '/' && path == want && getenv("TEST_SRCDIR") != NULL;
  /* The bundled reference, however it was named: deviations recorded for
   * other implementations never apply to it. */
  impl_is_reference = realpath(conf_runfile("reference/libtvm_ffi.so"), bundled) != NULL &&
                      strcmp(bundled, impl_path) == 0;
}

/* The stand-ins for missing functions: one per name, so the skip can say
 * which. They take no arguments; called through the function's own pointer
 * type they ignore the arguments and never return. An armed allocation
 * failure (alloc_fail.h, present in every conformance binary) is stopped
 * first: the skip message allocates. */
__attribute__((weak)) long conf_alloc_off(void);

static _Noreturn void missing_called(const char* name) {
  if (conf_alloc_off) conf_alloc_off();
  criterion_skip_test("%s does not export %s", impl_path, name);
}

#define CONF_API_STAND_IN(name) \
  static void missing_##name(void) { missing_called(#name); }
CONF_API_FUNCTIONS(CONF_API_STAND_IN)
#undef CONF_API_STAND_IN

/* Fills the API table (impl.h: every function of the C API, all of which
 * the reference exports); a symbol the library lacks gets its stand-in. */
static void resolve_api(void) {
#define CONF_API_RESOLVE(name)                                          \
  conf_api.name = (__typeof__(&name))dlsym(impl_handle, #name);         \
  conf_api_present.name = conf_api.name != NULL;                        \
  if (conf_api.name == NULL) conf_api.name = (__typeof__(&name))missing_##name;
  CONF_API_FUNCTIONS(CONF_API_RESOLVE)
#undef CONF_API_RESOLVE
}

int conf_impl_exported(void) {
  int n = 0;
#define CONF_API_COUNT(name) n += conf_api_present.name;
  CONF_API_FUNCTIONS(CONF_API_COUNT)
#undef CONF_API_COUNT
  return n;
}

int conf_impl_api_total(void) {
  int n = 0;
#define CONF_API_COUNT(name) ++n;
  CONF_API_FUNCTIONS(CONF_API_COUNT)
#undef CONF_API_COUNT
  return n;
}

const char* conf_impl_api_release(void) { return CONF_API_RELEASE; }

const char* conf_impl_missing(void) {
  static char names[2048];
  size_t at = 0;
  names[0] = '\0';
#define CONF_API_MISSING(name)                                                       \
  if (!conf_api_present.name && at < sizeof names)                                   \
    at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? "," : "", #name);
  CONF_API_FUNCTIONS(CONF_API_MISSING)
#undef CONF_API_MISSING
  return names;
}

static int is_stand_in(const void* fn) {
#define CONF_API_IS(name) if (fn == (const void*)missing_##name) return 1;
  CONF_API_FUNCTIONS(CONF_API_IS)
#undef CONF_API_IS
  return 0;
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
    if (relative_under_bazel)
      snprintf(load_error + strlen(load_error), sizeof load_error - strlen(load_error),
               " (TVMFFI_IMPL is a relative path, and bazel test runs each test in a directory "
               "of its own without saying where you ran bazel: pass an absolute path, e.g. "
               "--test_env=TVMFFI_IMPL=$PWD/%s)", getenv("TVMFFI_IMPL"));
    return;
  }
  resolve_api();
  TVMFFIVersion v = {0, 0, 0};
  if (conf_api_present.TVMFFIGetVersion) {
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
  fprintf(stderr, "conformance: TVMFFIGetVersion: %s; exports %d of the %d TVMFFI* functions\n",
          conf_api_present.TVMFFIGetVersion ? impl_version : "(not exported)", conf_impl_exported(),
          conf_impl_api_total());
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
  if (fn == NULL || is_stand_in(fn)) criterion_skip_test("%s does not export %s", impl_path, name);
}

void conf_impl_need_present(int present, const char* name) {
  if (!present) criterion_skip_test("%s does not export %s", impl_path, name);
}

void conf_impl_skip_if_unresolved(const char* dlerror_text, const char* library) {
  static const char marker[] = "undefined symbol: ";
  const char* at = dlerror_text ? strstr(dlerror_text, marker) : NULL;
  if (at == NULL || impl_handle == NULL) return;
  char name[256];
  at += sizeof marker - 1;
  size_t n = strcspn(at, " \t\n,;()");
  snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), at);
  if (dlsym(impl_handle, name) == NULL)
    criterion_skip_test("%s does not export %s, which %s needs", impl_path, name, library);
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
