/* Text built piece by piece (evidence, the release answer, the registry
 * listing): a growing string, and lists of names that stop after
 * CERT_MAX_LISTED ("..., and N more") so a library of many symbols cannot
 * make a finding of any size. Out of memory, it stops growing (`failed`)
 * and ends as "". */
#ifndef CERT_BUF_H_
#define CERT_BUF_H_

#include <stddef.h>

/* Evidence lists stop after this many names ("... and N more"). */
#define CERT_MAX_LISTED 40

typedef struct {
  char* s;
  size_t len, cap;
  size_t items;
  int failed;
} CertBuf;

void cert_buf_add(CertBuf* t, const char* piece);

/* Adds one name to a comma-separated list, stopping at CERT_MAX_LISTED. */
void cert_buf_item(CertBuf* t, const char* name);

/* The text (with "... and N more" where names were left out); "" when out
 * of memory. Borrowed: valid until the next call on t. */
const char* cert_buf_end(CertBuf* t);

void cert_buf_free(CertBuf* t);

#endif
