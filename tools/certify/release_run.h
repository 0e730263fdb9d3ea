/* certify --releases: the upstream releases a library is run under, each
 * release's libtvm_ffi.so taken from the release cache that
 * tools/releases/releases.py fills ($TVMFFI_CONFORMANCE_CACHE, default
 * ~/.cache/tvm-ffi-conformance: releases/<version>/tvm_ffi/lib/), fetched
 * once when missing; and the probes run under many runtimes at once. */
#ifndef CERT_RELEASE_RUN_H_
#define CERT_RELEASE_RUN_H_

#include <limits.h>
#include <stddef.h>

#include "elf_facts.h"
#include "finding.h"
#include "probe.h"

typedef struct {
  char version[32];    /* "0.1.8.post0" */
  char path[PATH_MAX]; /* its libtvm_ffi.so; "" when it could not be had */
  char skip[400];      /* why not, when path is "" */
  int same_as;         /* an earlier release whose library is byte-identical, or -1 */
} CertRelease;

typedef struct {
  CertRelease* items;
  size_t n, cap;
} CertReleaseSet;

/* How releases are found and fetched. */
typedef struct {
  const char* python; /* runs the fetch script; NULL or "": never fetch */
  const char* script; /* tools/releases/releases.py; NULL: never fetch */
  int quiet;          /* no progress on stderr */
} CertFetch;

/* The releases `spec` names ("all": every release certify's tables know,
 * or versions separated by commas), oldest first, each with its library
 * from the cache, fetched when missing. A release that cannot be had is
 * kept with its reason. 0, or -1 with a one-line reason (a malformed
 * version, out of memory). */
int cert_releases_resolve(const char* spec, const CertFetch* fetch, CertReleaseSet* out, char* err,
                          size_t errlen);
void cert_releases_free(CertReleaseSet* set);

/* The cached libtvm_ffi.so of one release into buf; 0, or -1 when the
 * cache has none. */
int cert_release_cached(const char* version, char* buf, size_t size);

/* 1 when `s` reads as a release version (0.1.8, 0.1.13.post2). */
int cert_is_release_version(const char* s);

/* 0 when `spec` is "all" or versions separated by commas, else -1 with a
 * one-line reason (a usage error: nothing is looked up). */
int cert_release_spec_check(const char* spec, char* err, size_t errlen);

typedef struct {
  const char* label; /* the findings' runtime */
  const char* path;  /* its libtvm_ffi.so */
} CertRuntimeRef;

/* Runs cert_probe_library under every runtime, up to `jobs` runtimes at a
 * time (each in a process of its own with one probe worker: the runtimes'
 * load costs run side by side), and appends the findings in runtime order.
 * `base` gives everything but the runtime (driver stubs included). Progress
 * goes to `progress` (may be NULL) as runtimes finish. 0, or -1 on a tool
 * error with the reason (the first runtime's that failed) in err. */
int cert_probe_runtimes(const CertElf* elf, const CertProbeOptions* base, const CertRuntimeRef* rts,
                        size_t n, int jobs,
                        void (*progress)(void* ctx, size_t done, size_t total, const char* what),
                        void* progress_ctx, CertFindings* out, char* err, size_t errlen);

#endif
