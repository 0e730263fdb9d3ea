/* The reference check (manifest_check.c). */
#ifndef CERT_MANIFEST_CHECK_H_
#define CERT_MANIFEST_CHECK_H_

#include "manifest.h"

/* The reference check the children run (a CertCheckFn): ctx is the
 * CertManifest. */
int cert_manifest_check(void* ctx, const CertCall* call, void* const* tensors,
                        void* const* inputs_before, char* note, size_t note_size);

#endif
