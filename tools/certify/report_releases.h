/* The --releases part of certify's reports (release_answer.h holds the
 * rows and the answer; these write them). */
#ifndef CERT_REPORT_RELEASES_H_
#define CERT_REPORT_RELEASES_H_

#include <jansson.h>
#include <stdio.h>

#include "finding.h"
#include "release_answer.h"

/* The table: a row per release (result, first failing check and clause,
 * the cause wrapped to `width`). */
void cert_report_releases_table(FILE* out, const CertReleaseAnswer* a, int width);

/* "certify: runs on: ...; fails on: ..." and a newline. */
void cert_report_releases_answer(FILE* out, const CertReleaseAnswer* a);

/* Adds "answer" and "releases" to the JSON report's root; 0 or -1. */
int cert_report_releases_json(json_t* root, const CertReleaseAnswer* a);

/* A testsuite with one testcase per release (FAILS: a failure with the
 * cause; skipped: skipped with the reason), and its counts for the
 * document's totals. */
void cert_report_releases_junit(FILE* out, const char* lib, const CertReleaseAnswer* a);
void cert_report_releases_junit_counts(const CertReleaseAnswer* a, size_t* tests, size_t* failures,
                                       size_t* skipped);

/* The answer and a release x check grid (each cell the worst verdict of
 * that check under that release). */
void cert_report_releases_html(FILE* out, const CertReleaseAnswer* a, const CertFindings* f);

#endif
