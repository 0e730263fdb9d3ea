#include "probe_classes.h"

#include <stdio.h>
#include <string.h>

#include "manifest.h"

static const struct {
  CertProbeClass cls;
  const char* word;
} kClassWords[] = {
    {CERT_P_ARITY, "arity"},         {CERT_P_BASE, "base"},
    {CERT_P_KINDS, "arg-kinds"},     {CERT_P_FORMS, "tensor-forms"},
    {CERT_P_LEGACY, "legacy-forms"}, {CERT_P_INVALID, "invalid-tensors"},
    {CERT_P_THREADS, "threads"},     {CERT_P_VALID, "valid-calls"},
    {CERT_P_ERRORS, "errors"},       {CERT_P_META, "metadata"},
};

const char* cert_probe_class_word(CertProbeClass cls, int error_case, char* buf, size_t size) {
  buf[0] = '\0';
  for (size_t k = 0; k < sizeof kClassWords / sizeof kClassWords[0]; ++k) {
    if (kClassWords[k].cls != cls) continue;
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
    if (strcmp(word, kClassWords[k].word) == 0 && kClassWords[k].cls != CERT_P_ERRORS) {
      *cls = kClassWords[k].cls;
      return 0;
    }
  }
  return -1;
}
