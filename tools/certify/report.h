/* certify's outputs: the table on stdout, the one-line verdict, JSON,
 * JUnit XML and a static HTML page, all from the same findings. */
#ifndef CERT_REPORT_H_
#define CERT_REPORT_H_

#include <stdio.h>

#include "finding.h"

/* Exit status bits, as abidiff documents its own. 0: certified. */
enum {
  CERT_EXIT_TOOL_ERROR = 1, /* certify itself could not do its job */
  CERT_EXIT_MUST = 4,       /* at least one FAIL */
  CERT_EXIT_NONSTRICT = 8,  /* at least one NONSTRICT (and no tool error) */
};

typedef struct {
  const char* lib_path;
  const char** runtimes; /* the runtime labels the probes ran under */
  size_t n_runtimes;
  double seconds;        /* how long the run took */
} CertRunInfo;

int cert_exit_status(const CertFindings* f, int tool_error);
void cert_report_table(FILE* out, const CertRunInfo* run, const CertFindings* f);
void cert_report_verdict(FILE* out, const CertRunInfo* run, const CertFindings* f);
int cert_report_json(const char* path, const CertRunInfo* run, const CertFindings* f);
int cert_report_junit(const char* path, const CertRunInfo* run, const CertFindings* f);
int cert_report_html(const char* path, const CertRunInfo* run, const CertFindings* f);

#endif
