/* Test support for certify's static stage: runfile paths, optional wheels,
 * and symbol lists as one sorted comma-joined string (so a test asserts a
 * whole set in one comparison and a failure shows both sets). */
#ifndef CERT_TEST_UTIL_H_
#define CERT_TEST_UTIL_H_

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/certify/elf_facts.h"
#include "tools/certify/symbol_names.h"

static inline const char* cert_runfile(const char* path) {
  static _Thread_local char bufs[4][4096];
  static _Thread_local int next;
  char* buf = bufs[next++ % 4];
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  if (srcdir == NULL || workspace == NULL) return path;
  snprintf(buf, sizeof bufs[0], "%s/%s/%s", srcdir, workspace, path);
  return buf;
}

#define CERT_JAX_SO "../jax_tvm_ffi/wheel/jax_tvm_ffi/jax_tvm_ffi.so"
#define CERT_TESTING_SO "../tvm_ffi_upstream/lib/libtvm_ffi_testing.so"
#define CERT_UPSTREAM_SO "../tvm_ffi_upstream/lib/libtvm_ffi.so"
#define CERT_REFERENCE_SO "reference/libtvm_ffi.so"

/* SKIPs the calling test, with the wheel's own reason, unless the wheel
 * whose pypi_wheel status.txt is at `status` (a runfile) was fetched. */
static inline void cert_require_wheel(const char* status, const char* what) {
  char line[512] = "unavailable: status.txt missing";
  FILE* f = fopen(cert_runfile(status), "r");
  if (f != NULL) {
    if (fgets(line, sizeof line, f) == NULL)
      snprintf(line, sizeof line, "unavailable: empty status");
    fclose(f);
  }
  line[strcspn(line, "\n")] = '\0';
  if (strncmp(line, "available", 9) != 0) cr_skip_test("%s wheel %s", what, line);
}

static inline void cert_require_jax(void) {
  cert_require_wheel("../jax_tvm_ffi/status.txt", "jax-tvm-ffi");
}

static int cert_cmp_str(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* What a sanitizer build (--config=asan/tsan) adds to our own libraries:
 * left out of the compared sets, so one expectation holds in every build. */
static inline int cert_is_sanitizer_name(const char* name) {
  static const char* const kPrefixes[] = {"__asan",   "__ubsan",  "__sanitizer", "__tsan",
                                          "__lsan",   "libasan.", "libubsan.",   "libtsan.",
                                          "liblsan.", NULL};
  for (const char* const* p = kPrefixes; *p != NULL; ++p) {
    if (cert_starts_with(name, *p)) return 1;
  }
  return 0;
}

/* The names in `list` that start with `prefix` ("" for all), sorted and
 * joined with ','. Caller frees. */
static inline char* cert_joined(const CertSymbols* list, const char* prefix) {
  const char** names = calloc(list->n + 1, sizeof *names);
  size_t n = 0, len = 1;
  for (size_t i = 0; i < list->n; ++i) {
    if (!cert_starts_with(list->items[i].name, prefix)) continue;
    if (cert_is_sanitizer_name(list->items[i].name)) continue;
    names[n++] = list->items[i].name;
    len += strlen(list->items[i].name) + 1;
  }
  qsort(names, n, sizeof *names, cert_cmp_str);
  char* out = calloc(len, 1);
  for (size_t i = 0; i < n; ++i) {
    if (i) strcat(out, ",");
    strcat(out, names[i]);
  }
  free(names);
  return out;
}

static inline char* cert_joined_needed(const CertElf* elf) {
  size_t len = 1;
  for (size_t i = 0; i < elf->n_needed; ++i) len += strlen(elf->needed[i]) + 1;
  char* out = calloc(len, 1);
  for (size_t i = 0; i < elf->n_needed; ++i) {
    if (cert_is_sanitizer_name(elf->needed[i])) continue;
    if (out[0]) strcat(out, ",");
    strcat(out, elf->needed[i]);
  }
  return out;
}

static inline void cert_read_ok(const char* runfile, CertElf* elf) {
  char err[512] = "";
  int rc = cert_elf_read(cert_runfile(runfile), elf, err, sizeof err);
  cr_assert_eq(rc, 0, "cert_elf_read(%s): %s", runfile, err);
}

#define CERT_EXPECT_SET(list, prefix, expected)                                             \
  do {                                                                                      \
    char* got_ = cert_joined((list), (prefix));                                             \
    cr_expect_str_eq(got_, (expected), "%s with prefix %s: got %s", #list, (prefix), got_); \
    free(got_);                                                                             \
  } while (0)

#endif
