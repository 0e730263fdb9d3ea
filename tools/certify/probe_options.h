/* How the dynamic stage runs: the options every part of it reads (probe.h
 * runs it; probe_plan.h and the engine carry them). */
#ifndef CERT_PROBE_OPTIONS_H_
#define CERT_PROBE_OPTIONS_H_

#include <stddef.h>

typedef struct CertManifest CertManifest; /* manifest.h */

/* What a call may allocate beyond what its process held (RLIMIT_DATA): a
 * memory bomb fills it in a second or two even where page faults are slow,
 * well inside the time limit, so the same call gets the same verdict every
 * time. Where a GPU driver is present it gets 4 GiB: creating a CUDA
 * context takes host memory of its own. */
#define CERT_DEFAULT_MEMORY_LIMIT ((size_t)512 << 20)
#define CERT_DEFAULT_MEMORY_LIMIT_GPU ((size_t)4 << 30)

typedef struct {
  const char* lib_path;         /* the library under test, absolute */
  const char* runtime_path;     /* the libtvm_ffi.so loaded RTLD_GLOBAL first, absolute */
  const char* runtime_label;    /* "reference", "upstream" or the path, for findings */
  const CertManifest* manifest; /* NULL: probes without typed signatures */
  int jobs;                     /* child processes at once; <= 0: the number of CPUs */
  double timeout_s;             /* per probe; <= 0: a default */
  size_t memory_limit;          /* bytes a call may allocate; 0: CERT_DEFAULT_MEMORY_LIMIT */
  const char* driver_stubs;     /* the CUDA toolkit's driver stubs folder (lib64/stubs), or NULL */
  /* Called from the parent as probes finish, with the functions done and
   * in all (calls, for a replay); may be NULL. */
  void (*progress)(void* ctx, size_t done, size_t total, const char* what);
  void* progress_ctx;
} CertProbeOptions;

#endif
