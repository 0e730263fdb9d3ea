/* The dynamic stage: calls into a kernel library under a chosen runtime,
 * in processes of their own with a time limit per call and a memory cap, so
 * a crash, hang, abort, exit() or memory bomb becomes a verdict. */
#ifndef CERT_PROBE_H_
#define CERT_PROBE_H_

#include <stddef.h>

#include "elf_facts.h"
#include "finding.h"
#include "probe_options.h"

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
