/* The answer to "which releases can this library run on?": one row per
 * runtime certify ran it under with --releases (the chosen upstream
 * releases, oldest first, then the reference), whether it runs there, and
 * for a release where it fails the first failing finding, its clause and
 * its cause in one line; then the whole answer in one line:
 *
 *   runs on: 0.1.0 - 0.1.7; fails on: 0.1.8.post0 - 0.1.15.post2, reference
 *   (error cells made by the library are 56 bytes; ...)
 *
 * Built from the findings alone: a release runs when no finding that holds
 * for it (its own, or a static one every runtime shares) is a FAIL and some
 * call reached the library there; where nothing could be called
 * (CERT_CHECK_NOTHING_CALLED) and nothing failed, it is untested, never
 * "runs". */
#ifndef CERT_RELEASE_ANSWER_H_
#define CERT_RELEASE_ANSWER_H_

#include <stddef.h>

#include "finding.h"

typedef enum {
  CERT_REL_RUNS = 0,
  CERT_REL_FAILS,
  CERT_REL_SKIPPED,  /* not run: its library could not be had */
  CERT_REL_UNTESTED, /* run, but no call reached the library */
} CertReleaseStatus;

typedef struct {
  char label[32]; /* "0.1.8.post0", "reference" */
  CertReleaseStatus status;
  CertVerdict worst;  /* the worst verdict that holds for it */
  char same_as[32];   /* the release whose byte-identical library ran for it, or "" */
  char function[128]; /* the first failing finding: function ("" = the library) */
  char check[64];     /*   check */
  char clause[16];    /*   clause */
  char cause[640];    /* its cause in one line; for a skipped or untested release, why */
} CertReleaseRow;

typedef struct {
  CertReleaseRow* rows;
  size_t n;
  size_t n_run; /* distinct libraries actually run (the reference included) */
  char* answer; /* the one line; malloc'd */
} CertReleaseAnswer;

/* One input row: a runtime label, the index of the row whose findings
 * stand for it (a byte-identical library run once) or -1, and why it was
 * not run (NULL when it was). */
typedef struct {
  const char* label;
  int same_as;
  const char* skip;
} CertReleaseInput;

/* 0, or -1 when out of memory. */
int cert_release_answer(const CertReleaseInput* in, size_t n, const CertFindings* f,
                        CertReleaseAnswer* out);
void cert_release_answer_free(CertReleaseAnswer* a);

/* "runs", "FAILS", "skipped", "untested". */
const char* cert_release_status_name(CertReleaseStatus s);

#endif
