/* What the static stage's tests share: the checks run on one library
 * under one runtime, and their findings looked up. */
#ifndef CERT_STATIC_CHECKS_TEST_H_
#define CERT_STATIC_CHECKS_TEST_H_

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tools/certify/cert_test_util.h"
#include "tools/certify/elf_facts.h"

typedef struct {
  CertFindings f;
  char summary[4096];
} Checked;

/* "VERDICT check[ fn]" per finding, one per line. */
static inline void run_checks(const char* lib, const char* runtime, Checked* out) {
  memset(out, 0, sizeof *out);
  CertElf elf;
  cert_read_ok(lib, &elf);
  cr_assert_eq(cert_static_checks(&elf, cert_runfile(runtime), &out->f), 0);
  cert_elf_free(&elf);
  size_t used = 0;
  for (size_t i = 0; i < out->f.n; ++i) {
    const CertFinding* x = &out->f.items[i];
    used += (size_t)snprintf(out->summary + used, sizeof out->summary - used, "%s %s%s%s\n",
                             cert_verdict_name(x->verdict), x->check, x->function[0] ? " " : "",
                             x->function);
  }
}

static inline const CertFinding* finding(const Checked* c, const char* check, CertVerdict v) {
  for (size_t i = 0; i < c->f.n; ++i) {
    if (strcmp(c->f.items[i].check, check) == 0 && c->f.items[i].verdict == v)
      return &c->f.items[i];
  }
  cr_assert_fail("no %s finding %s in:\n%s", cert_verdict_name(v), check, c->summary);
  return NULL;
}

#define EXPECT_HAS(text, part) \
  cr_expect(strstr((text), (part)) != NULL, "'%s' does not contain '%s'", (text), (part))

#endif
