/* The classes of probe a plan makes, and the words a replay line names
 * them by (probe=arity, probe=errors.shape). */
#ifndef CERT_PROBE_CLASSES_H_
#define CERT_PROBE_CLASSES_H_

#include <stddef.h>

#include "checks.h"

typedef enum {
  CERT_P_ARITY,   /* n tensors, n = 0..4 */
  CERT_P_BASE,    /* a candidate base call */
  CERT_P_KINDS,   /* one argument replaced by another kind */
  CERT_P_FORMS,   /* every tensor in one DLPack 1.2+ form */
  CERT_P_LEGACY,  /* NULL strides with ndim > 0 */
  CERT_P_INVALID, /* non-empty tensors with NULL data */
  CERT_P_THREADS, /* the base call from two threads */
  CERT_P_VALID,   /* manifest: a valid call */
  CERT_P_ERRORS,  /* manifest: an invalid call with a documented error */
  CERT_P_META,    /* a metadata or doc function */
  CERT_P_REPLAY,  /* a call given on the command line */
} CertProbeClass;

/* The check (checks.def) a class's calls are judged under. */
CertCheckName cert_probe_class_check(CertProbeClass cls);

/* The word a replay line names a probe class by (`probe=` attribute), and
 * back; -1 when the word names none. */
const char* cert_probe_class_word(CertProbeClass cls, int error_case, char* buf, size_t size);
int cert_probe_class_parse(const char* word, CertProbeClass* cls, int* error_case);

#endif
