/* What every report says about the run as a whole, beside its findings
 * (report.h writes the reports; report_index.h arranges their findings). */
#ifndef CERT_REPORT_RUN_H_
#define CERT_REPORT_RUN_H_

#include <stddef.h>

#include "release_answer.h"

typedef struct {
  const char* lib_path;
  const char** runtimes; /* the runtime labels the probes ran under */
  size_t n_runtimes;
  double seconds;                    /* how long the run took */
  size_t n_functions;                /* callable __tvm_ffi_ functions the library exports */
  const char* error;                 /* one-line reason certify could not finish, or NULL */
  const char* replay_prefix;         /* what precedes `--replay '<line>'` in the table
                                        (e.g. "certify lib.so"); NULL: "certify" */
  const CertReleaseAnswer* releases; /* --releases: the rows and the answer; NULL without */
} CertRunInfo;

#endif
