/*
 * Fuzz harness: certify's two parsers of user text, the manifest
 * (tools/certify/manifest.c, over Jansson) and the replay line
 * (tools/certify/probe_call.c), both fed the whole input.
 *
 * Invariants. The manifest parser either refuses with a reason or returns
 * functions whose every count and index is inside its fixed bounds, and
 * whose names and kinds are NUL-terminated. The replay parser either
 * refuses with a reason or gives a call that formats to a line which parses
 * again to the same line (the replay of a replay is itself).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "tools/certify/manifest.h"
#include "tools/certify/probe_call.h"

static void check_function(const CertManifestFunction* f) {
  FUZZ_CHECK(memchr(f->name, '\0', sizeof f->name) != NULL && f->name[0] != '\0', "function name");
  FUZZ_CHECK(f->nargs >= 0 && f->nargs < CERT_MAX_ARGS, "nargs %d", f->nargs);
  FUZZ_CHECK(f->ndtypes >= 0 && f->ndtypes <= CERT_MANIFEST_MAX_DTYPES, "ndtypes %d", f->ndtypes);
  for (int k = 0; k < f->nargs; ++k) {
    const CertManifestArg* a = &f->args[k];
    FUZZ_CHECK(memchr(a->name, '\0', sizeof a->name) != NULL && a->name[0] != '\0', "arg name");
    FUZZ_CHECK(a->ndim >= 0 && a->ndim <= CERT_MAX_NDIM, "ndim %d", a->ndim);
    FUZZ_CHECK(a->kind != CERT_MKIND_TENSOR || f->ndtypes > 0, "a tensor argument without dtypes");
  }
  if (f->has_reference) {
    const CertExpr* e = &f->reference;
    FUZZ_CHECK(e->out_arg >= 0 && e->out_arg < f->nargs, "reference output %d", e->out_arg);
    FUZZ_CHECK(e->nterms >= 1 && e->nterms <= CERT_EXPR_MAX, "nterms %d", e->nterms);
    for (int k = 0; k < e->nterms; ++k) {
      FUZZ_CHECK(e->term_arg[k] >= -1 && e->term_arg[k] < f->nargs, "term %d", e->term_arg[k]);
    }
  }
  for (int c = 0; c < CERT_ERR_COUNT; ++c) {
    FUZZ_CHECK(memchr(f->errors[c].kind, '\0', sizeof f->errors[c].kind) != NULL, "error kind");
    FUZZ_CHECK(!f->errors[c].documented || f->errors[c].kind[0] != '\0',
               "documented without a kind");
  }
}

static void fuzz_manifest(const uint8_t* data, size_t size) {
  CertManifest m;
  char err[512] = "";
  if (cert_manifest_parse((const char*)data, size, &m, err, sizeof err) != 0) {
    FUZZ_CHECK(err[0] != '\0', "a refused manifest came without a reason");
    FUZZ_CHECK(m.fns == NULL && m.n == 0, "a refused manifest left functions behind");
    return;
  }
  FUZZ_CHECK(m.n <= CERT_MANIFEST_MAX_FUNCTIONS, "%zu functions", m.n);
  for (size_t k = 0; k < m.n; ++k) check_function(&m.fns[k]);
  cert_manifest_free(&m);
}

static void fuzz_replay(const uint8_t* data, size_t size) {
  if (size > 4096) return;
  char* line = malloc(size + 1);
  if (line == NULL) return;
  memcpy(line, data, size);
  line[size] = '\0';
  CertCall call;
  char err[256] = "";
  if (cert_call_parse(line, &call, err, sizeof err) != 0) {
    FUZZ_CHECK(err[0] != '\0', "a refused replay line came without a reason");
    free(line);
    return;
  }
  char once[8192], twice[8192];
  FUZZ_CHECK(cert_call_format(&call, once, sizeof once) < (int)sizeof once, "format overflow");
  CertCall again;
  FUZZ_CHECK(cert_call_parse(once, &again, err, sizeof err) == 0, "'%s' does not parse back: %s",
             once, err);
  cert_call_format(&again, twice, sizeof twice);
  FUZZ_CHECK(strcmp(once, twice) == 0, "'%s' formats back as '%s'", once, twice);
  free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_manifest(data, size);
  fuzz_replay(data, size);
  return 0;
}
