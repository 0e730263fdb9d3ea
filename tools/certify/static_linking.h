/* The static stage's loader model (static_linking.c). */
#ifndef CERT_STATIC_LINKING_H_
#define CERT_STATIC_LINKING_H_

#include <stddef.h>

#include "elf_facts.h"
#include "buf.h"
#include "finding.h"

/* Searches every DT_NEEDED entry as ld.so would and, with the runtime
 * known, resolves the undefined symbols. With runtime == NULL (unreadable)
 * the libraries are still searched, but undefined symbols are not judged
 * (runtime_err says why): the runtime might define them. */
int cert_check_linking(const CertElf* elf, const CertElf* runtime, const char* runtime_path,
                       const char* runtime_err, const CertLoadEnv* env, CertFindings* out);

/* The imports that are upstream's C++ API (tvm::ffi:: symbols), each added
 * to `list` when it is not NULL. */
size_t cert_count_cxx_imports(const CertElf* elf, CertBuf* list);

#endif
