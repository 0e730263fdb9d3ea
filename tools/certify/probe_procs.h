/* Process control for the probes: every process a probe starts ends with
 * the probe. Each process that runs calls is a child subreaper, so what a
 * library forks and abandons (a daemon that called setsid and left its
 * process group) is re-parented to it instead of to init; what remains
 * after a call is found, named and killed here. Internal to the dynamic
 * stage. */
#ifndef CERT_PROBE_PROCS_H_
#define CERT_PROBE_PROCS_H_

#include <stddef.h>
#include <sys/types.h>

/* Makes orphaned descendants of this process its children. 0, or -1 where
 * the kernel cannot (then strays may escape to init). */
int cert_become_subreaper(void);

/* 1 when this process has a child, running or exited and not yet waited
 * for; 0 when it has none. */
int cert_has_children(void);

/* Kills every child of this process except those in keep[0..n_keep), and
 * what they leave behind (re-parented here as they die), and waits for
 * them. Returns how many it ended; `first` gets the first one's pid and
 * command name ("1234 (sleep)"), when first_size > 0. Bounded: a process
 * that forks faster than it can be killed is given up on after a while. */
size_t cert_sweep_children(const pid_t* keep, size_t n_keep, char* first, size_t first_size);

/* A field of /proc/self/status in kB ("VmData", "VmRSS"), or -1. */
long cert_self_status_kb(const char* field);

#endif
