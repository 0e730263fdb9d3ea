/* One call in a batch's process: its arguments built, the function called
 * (from two threads at once when the call says so), the outcome, raised
 * error and result read back as the runtime's release lays them out, and a
 * fault reported as a record naming the region it hit. */
#ifndef CERT_PROBE_INVOKE_H_
#define CERT_PROBE_INVOKE_H_

#include "probe_protocol.h"
#include "probe_readback.h"

/* The loaded library calls are looked up in, and how its runtime's release
 * lays out what calls return. */
void cert_invoke_use(void* lib, const CertHostLayout* host);

/* Reports a fatal signal (SEGV, BUS, ILL, FPE, ABRT, TRAP) as a record,
 * then dies of it. */
void cert_install_fault_handlers(void);

void cert_run_call(const CertChildConfig* cfg, const CertCall* call, void* guard_page,
                   CertOutcome* out);

#endif
