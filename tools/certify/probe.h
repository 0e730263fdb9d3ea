/* The dynamic stage: calls into a kernel library under a chosen runtime,
 * in processes of their own with a time limit per call and a memory cap, so
 * a crash, hang, abort, exit() or memory bomb becomes a verdict. */
#ifndef CERT_PROBE_H_
#define CERT_PROBE_H_

#include <stddef.h>

#include "elf_facts.h"
#include "finding.h"

typedef struct CertManifest CertManifest; /* manifest.h */

/* What a call may allocate beyond what its process held (RLIMIT_DATA): a
 * memory bomb fills it in a second or two even where page faults are slow,
 * well inside the time limit, so the same call gets the same verdict every
 * time. Where a GPU driver is present it gets 4 GiB: creating a CUDA
 * context takes host memory of its own. */
#define CERT_DEFAULT_MEMORY_LIMIT ((size_t)512 << 20)
#define CERT_DEFAULT_MEMORY_LIMIT_GPU ((size_t)4 << 30)

typedef struct {
  const char* lib_path;      /* the library under test, absolute */
  const char* runtime_path;  /* the libtvm_ffi.so loaded RTLD_GLOBAL first, absolute */
  const char* runtime_label; /* "reference", "upstream" or the path, for findings */
  const CertManifest* manifest; /* NULL: probes without typed signatures */
  int jobs;                  /* child processes at once; <= 0: the number of CPUs */
  double timeout_s;          /* per probe; <= 0: a default */
  size_t memory_limit;       /* bytes a call may allocate; 0: CERT_DEFAULT_MEMORY_LIMIT */
  const char* driver_stubs;  /* the CUDA toolkit's driver stubs folder (lib64/stubs), or NULL */
  /* Called from the parent as probes finish, with the functions done and
   * in all (calls, for a replay); may be NULL. */
  void (*progress)(void* ctx, size_t done, size_t total, const char* what);
  void* progress_ctx;
} CertProbeOptions;

/* Runs every probe on every callable function of `elf` (and decodes
 * metadata/doc symbols that are functions) and appends the findings: the
 * library-level ones (probe.load: how it loaded and what it registered;
 * probe.valid-call: nothing could be called; manifest.functions: the
 * manifest describes a function the library lacks), then each function's.
 * A library without callable exports is still loaded. Returns 0, or -1 on
 * a tool error, with the reason in cert_probe_error() (the library not
 * loading is a finding, not a tool error). */
int cert_probe_library(const CertElf* elf, const CertProbeOptions* opt, CertFindings* out);

/* Why the last call returned -1, or "". */
const char* cert_probe_error(void);

/* The same on functions named explicitly (without the __tvm_ffi_ prefix)
 * and on full metadata/doc symbol names (`__tvm_ffi__metadata_<name>`,
 * `__tvm_ffi__doc_<name>`) that are functions. */
int cert_probe_functions(const char* const* names, size_t n_names, const char* const* meta_symbols,
                         size_t n_meta, const CertProbeOptions* opt, CertFindings* out);

/* Runs the single probe a finding's `replay` line describes, printing what
 * happened, and appends its finding. Returns 0, or -1 when the line does not
 * parse (with the reason on stderr). */
int cert_probe_replay(const char* replay, const CertProbeOptions* opt, CertFindings* out);

/* The `runtime=` word of a replay line ("reference", "upstream", a path)
 * into buf; 0, or -1 when the line names none. The line's grammar is in
 * probe_call.h. */
int cert_probe_replay_runtime(const char* replay, char* buf, size_t size);

#endif
