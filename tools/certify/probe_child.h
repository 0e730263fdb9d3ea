/* The child side of a probe: a worker process forked from a parent that
 * never loaded the library. It loads the runtime (RTLD_GLOBAL) and then the
 * library as hosts do (tvm_ffi.load_module: RTLD_LAZY | RTLD_LOCAL), lists
 * what loading registered, and runs the batches of calls the parent sends
 * it, reporting each call as records on a pipe. A batch runs in a process
 * of its own forked from the worker, one call after another; a call that
 * dies, hangs or leaves processes behind ends that process, and the calls
 * after it go on in a fresh one (a death is reported only for a call that
 * ran first in its process, so no call is blamed for what an earlier one
 * left). A fatal signal is reported by its handler (with the guard region
 * the faulting address lies in) before the process dies of it. */
#ifndef CERT_PROBE_CHILD_H_
#define CERT_PROBE_CHILD_H_

#include "probe_protocol.h"

/* In a worker process: loads the runtime and the library, then runs each
 * batch read from cmd_fd, reporting to fd, until cmd_fd reaches end of
 * file. Never returns. */
void cert_child_main(const CertChildConfig* cfg, int cmd_fd, int fd) __attribute__((noreturn));

#endif
