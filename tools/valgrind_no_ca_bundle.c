/* Preloaded into every process that tools/valgrind_run.sh runs.
 *
 * Criterion's main() calls git_libgit2_init(), and Debian's libgit2 then
 * reads the whole system CA bundle through mbedTLS: about 140 certificates
 * base64-decoded and parsed, in the runner and again in every test worker.
 * Natively that is a millisecond; under memcheck it is most of the
 * instructions a small test worker runs. Nothing here makes a TLS
 * connection, so the bundle is never used: this stand-in leaves libgit2's
 * certificate chain empty and reports success. It covers only that library
 * call; the code under test is instrumented and checked as before. */

typedef struct cert_chain cert_chain;

int mbedtls_x509_crt_parse_file(cert_chain* chain, const char* path);

int mbedtls_x509_crt_parse_file(cert_chain* chain, const char* path) {
  (void)chain;
  (void)path;
  return 0;
}
