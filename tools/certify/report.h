/* certify's outputs: the table on stdout, the one-line verdict, JSON,
 * JUnit XML and a static HTML page, all from the same findings. Every
 * string from a finding is treated as untrusted (it may carry a library's
 * own error message): each writer cleans and escapes it (text.h). */
#ifndef CERT_REPORT_H_
#define CERT_REPORT_H_

#include <stdio.h>

#include "finding.h"
#include "report_run.h"

/* Exit status bits, as abidiff documents its own. 0: certified. */
enum {
  CERT_EXIT_TOOL_ERROR = 1, /* certify itself could not do its job */
  CERT_EXIT_USAGE = 2,      /* the command line was wrong (set with bit 1) */
  CERT_EXIT_MUST = 4,       /* at least one FAIL */
  CERT_EXIT_NONSTRICT = 8,  /* at least one NONSTRICT */
  CERT_EXIT_UNTESTED = 16,  /* nothing could be called: no probe reached the library */
};

/* The bit mask above: tool_error sets bit 1, any FAIL bit 4, any
 * NONSTRICT bit 8, nothing called (cert_findings_nothing_called, checks.h) bit 16. */
int cert_exit_status(const CertFindings* f, int tool_error);

/* The readable table, grouped by function (the library itself first). */
void cert_report_table(FILE* out, const CertRunInfo* run, const CertFindings* f);

/* The one-line verdict, with a newline. */
void cert_report_verdict(FILE* out, const CertRunInfo* run, const CertFindings* f);

/* Each writes a file and returns 0, or -1 with errno set (nothing usable
 * written). The JSON schema is in tools/certify/README.md. */
int cert_report_json(const char* path, const CertRunInfo* run, const CertFindings* f);
int cert_report_junit(const char* path, const CertRunInfo* run, const CertFindings* f);
int cert_report_html(const char* path, const CertRunInfo* run, const CertFindings* f);

#endif
