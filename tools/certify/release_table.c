#include "release_table.h"

#include <string.h>

#include "release_symbols.inc"

_Static_assert(CERT_N_RELEASES <= 32, "one bit per release in a uint32_t mask");

size_t cert_release_count(void) { return CERT_N_RELEASES; }

const char* cert_release_name(size_t i) { return i < CERT_N_RELEASES ? kCertReleases[i] : NULL; }

uint32_t cert_release_mask(const char* symbol) {
  for (size_t i = 0; i < sizeof kCertReleaseSymbols / sizeof kCertReleaseSymbols[0]; ++i) {
    if (strcmp(kCertReleaseSymbols[i].symbol, symbol) == 0) return kCertReleaseSymbols[i].releases;
  }
  return 0;
}

const CertReleaseSymbol* cert_release_symbol(size_t i) {
  size_t n = sizeof kCertReleaseSymbols / sizeof kCertReleaseSymbols[0];
  return i < n ? &kCertReleaseSymbols[i] : NULL;
}
