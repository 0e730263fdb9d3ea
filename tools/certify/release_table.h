/* Which upstream apache-tvm-ffi releases define which TVMFFI* function: the
 * table tools/certify/gen_release_symbols.py generates from the release
 * wheels (release_symbols.inc). */
#ifndef CERT_RELEASE_TABLE_H_
#define CERT_RELEASE_TABLE_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char* symbol;
  uint32_t releases; /* bit i: release i (cert_release_name(i)) defines it */
} CertReleaseSymbol;

/* How many releases the table knows, oldest first. */
size_t cert_release_count(void);

/* The version of release i ("0.1.0", "0.1.13.post2"), or NULL past the end. */
const char* cert_release_name(size_t i);

/* The releases that define `symbol` as a bit mask (0: none does). */
uint32_t cert_release_mask(const char* symbol);

/* Every symbol the table lists, for tests: the i-th, or NULL past the end. */
const CertReleaseSymbol* cert_release_symbol(size_t i);

#endif
