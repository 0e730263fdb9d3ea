/* The calls a manifest describes (manifest.h): a valid call of any size and
 * dtype, its extents made multiples of what they must divide by. */
#ifndef CERT_PROBE_MANIFEST_CALLS_H_
#define CERT_PROBE_MANIFEST_CALLS_H_

#include <stdint.h>

#include "manifest.h"
#include "probe_call.h"

/* The valid call the manifest describes, with `n` for every named extent
 * and tensors of kind `tkind` (a DLTensor* or a Tensor object). */
CertCall cert_manifest_call(const CertManifestFunction* f, DLDataType dt, int64_t n,
                            CertArgKind tkind);

/* A dtype outside the function's list. */
DLDataType cert_manifest_foreign_dtype(const CertManifestFunction* f);

#endif
