#include "impl_load.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ConfApi conf_api;
ConfApiPresent conf_api_present;

static char impl_path[PATH_MAX];
static char load_error[1024];
static void* impl_handle;
static char impl_version[64];
static int impl_is_reference;
static int relative_under_bazel;
static int load_rc = 1; /* 1: not tried yet */

const char* conf_runfile(const char* path) {
  static _Thread_local char buf[PATH_MAX];
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  if (srcdir == NULL || workspace == NULL) return path;
  snprintf(buf, sizeof buf, "%s/%s/%s", srcdir, workspace, path);
  return buf;
}

const char* conf_library_path(const char* runfile) {
  static _Thread_local char buf[PATH_MAX];
  const char* path = conf_runfile(runfile);
  if (access(path, R_OK) == 0) return path;
  char exe[PATH_MAX], base[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return path;
  exe[n] = '\0';
  snprintf(base, sizeof base, "%s", runfile);
  snprintf(buf, sizeof buf, "%s/lib/%s", dirname(exe), basename(base));
  return access(buf, R_OK) == 0 ? buf : path;
}

/* TVMFFI_IMPL: unset, empty or "reference" picks the bundled runtime;
 * "upstream" the pinned pip library; anything else is a path. */
static void resolve_path(void) {
  const char* want = getenv("TVMFFI_IMPL");
  char bundled[PATH_MAX], path[PATH_MAX];
  snprintf(bundled, sizeof bundled, "%s", conf_library_path("reference/libtvm_ffi.so"));
  if (want == NULL || *want == '\0' || strcmp(want, "reference") == 0) {
    snprintf(path, sizeof path, "%s", bundled);
  } else if (strcmp(want, "upstream") == 0) {
    snprintf(path, sizeof path, "%s", conf_runfile("../tvm_ffi_upstream/lib/libtvm_ffi.so"));
  } else {
    snprintf(path, sizeof path, "%s", want);
  }
  if (realpath(path, impl_path) == NULL) snprintf(impl_path, sizeof impl_path, "%s", path);
  relative_under_bazel =
      want != NULL && want[0] != '/' && strcmp(path, want) == 0 && getenv("TEST_SRCDIR") != NULL;
  /* The bundled reference, however it was named: deviations recorded for
   * other implementations never apply to it. */
  char real_bundled[PATH_MAX];
  impl_is_reference =
      realpath(bundled, real_bundled) != NULL && strcmp(real_bundled, impl_path) == 0;
}

/* Fills the API table (impl_load.h: all 50 functions of the C API, all of
 * which the reference exports); a symbol the library lacks stays NULL. */
static void resolve_api(void) {
#define CONF_API_RESOLVE(name)                                  \
  conf_api.name = (__typeof__(&name))dlsym(impl_handle, #name); \
  conf_api_present.name = conf_api.name != NULL;
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
#define CONF_API_MISSING(name)                     \
  if (!conf_api_present.name && at < sizeof names) \
    at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? "," : "", #name);
  CONF_API_FUNCTIONS(CONF_API_MISSING)
#undef CONF_API_MISSING
  return names;
}

int conf_impl_load(void) {
  if (load_rc != 1) return load_rc;
  resolve_path();
  impl_handle = dlopen(impl_path, RTLD_NOW | RTLD_GLOBAL);
  if (impl_handle == NULL) {
    const char* why = dlerror();
    snprintf(load_error, sizeof load_error, "%s", why ? why : "unknown dlopen failure");
    if (relative_under_bazel)
      snprintf(load_error + strlen(load_error), sizeof load_error - strlen(load_error),
               " (TVMFFI_IMPL is a relative path, and bazel test runs each test in a directory "
               "of its own without saying where you ran bazel: pass an absolute path, e.g. "
               "--test_env=TVMFFI_IMPL=$PWD/%s)",
               getenv("TVMFFI_IMPL"));
    return load_rc = -1;
  }
  resolve_api();
  TVMFFIVersion v = {0, 0, 0};
  if (conf_api_present.TVMFFIGetVersion) {
    conf_api.TVMFFIGetVersion(&v);
    snprintf(impl_version, sizeof impl_version, "%u.%u.%u", v.major, v.minor, v.patch);
  }
  return load_rc = 0;
}

const char* conf_impl_path(void) { return impl_path; }
void* conf_impl_handle(void) { return impl_handle; }
const char* conf_impl_load_error(void) { return impl_handle ? NULL : load_error; }
const char* conf_impl_version(void) { return impl_version; }
int conf_impl_is_reference(void) { return impl_is_reference; }
