#include "probe_classes.h"

#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "manifest.h"

/* Each class: the word a replay line names it by (none for a plain
 * replayed call) and the check (checks.def) its calls are judged under. */
static const struct {
  CertProbeClass cls;
  const char* word;
  CertCheckName check;
} kClassWords[] = {
    {CERT_P_ARITY, "arity", CERT_CHECK_PROBE_ARITY},
    {CERT_P_BASE, "base", CERT_CHECK_PROBE_ARITY},
    {CERT_P_KINDS, "arg-kinds", CERT_CHECK_PROBE_ARG_KINDS},
    {CERT_P_FORMS, "tensor-forms", CERT_CHECK_PROBE_TENSOR_FORMS},
    {CERT_P_LEGACY, "legacy-forms", CERT_CHECK_PROBE_LEGACY_FORMS},
    {CERT_P_INVALID, "invalid-tensors", CERT_CHECK_PROBE_INVALID_TENSORS},
    {CERT_P_THREADS, "threads", CERT_CHECK_PROBE_THREADS},
    {CERT_P_VALID, "valid-calls", CERT_CHECK_MANIFEST_VALID_CALLS},
    {CERT_P_ERRORS, "errors", CERT_CHECK_MANIFEST_ERRORS},
    {CERT_P_META, "metadata", CERT_CHECK_PROBE_METADATA},
    {CERT_P_REPLAY, NULL, CERT_CHECK_REPLAY},
};

CertCheckName cert_probe_class_check(CertProbeClass cls) {
  for (size_t k = 0; k < sizeof kClassWords / sizeof kClassWords[0]; ++k) {
    if (kClassWords[k].cls == cls) return kClassWords[k].check;
  }
  return CERT_CHECK_REPLAY;
}

const char* cert_probe_class_word(CertProbeClass cls, int error_case, char* buf, size_t size) {
  buf[0] = '\0';
  for (size_t k = 0; k < sizeof kClassWords / sizeof kClassWords[0]; ++k) {
    if (kClassWords[k].cls != cls || kClassWords[k].word == NULL) continue;
    if (cls == CERT_P_ERRORS) {
      snprintf(buf, size, "errors.%s", cert_error_case_name((CertErrorCase)error_case));
    } else {
      snprintf(buf, size, "%s", kClassWords[k].word);
    }
  }
  return buf;
}

int cert_probe_class_parse(const char* word, CertProbeClass* cls, int* error_case) {
  *error_case = 0;
  if (strncmp(word, "errors.", 7) == 0) {
    for (int e = 0; e < CERT_ERR_COUNT; ++e) {
      if (strcmp(word + 7, cert_error_case_name((CertErrorCase)e)) != 0) continue;
      *cls = CERT_P_ERRORS;
      *error_case = e;
      return 0;
    }
    return -1;
  }
  for (size_t k = 0; k < sizeof kClassWords / sizeof kClassWords[0]; ++k) {
    if (kClassWords[k].word && strcmp(word, kClassWords[k].word) == 0 &&
        kClassWords[k].cls != CERT_P_ERRORS) {
      *cls = kClassWords[k].cls;
      return 0;
    }
  }
  return -1;
}
