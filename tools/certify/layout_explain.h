/* Words for what reading back through a runtime's layout found: the
 * reason names the change of spec/layouts.json that explains it (which
 * struct and field, its size in the library's release and the runtime's)
 * and the remedy; the evidence says what was read. Used by the judge. */
#ifndef CERT_LAYOUT_EXPLAIN_H_
#define CERT_LAYOUT_EXPLAIN_H_

#include <stddef.h>

#include "probe_child.h"

/* A raised error (is_error) or returned object that did not read back. */
void cert_explain_readback(const CertReadback* rb, int is_error, char* reason, size_t reason_size,
                           char* evidence, size_t evidence_size);

/* A fault on the page right after a strict-heap block. */
void cert_explain_heap_end(const CertSignal* sig, char* reason, size_t reason_size);

#endif
