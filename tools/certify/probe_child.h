/* The child side of a probe: a worker process forked from a parent that
 * never loaded the library. It loads the runtime (RTLD_GLOBAL) and then the
 * library (RTLD_LOCAL), runs the calls the parent sends it, and reports each
 * one to the parent as records on a pipe. A fatal signal is reported by its handler
 * (with the guard region the faulting address lies in) before the child
 * dies of it, so the parent can say what was read or written. */
#ifndef CERT_PROBE_CHILD_H_
#define CERT_PROBE_CHILD_H_

#include <stddef.h>
#include <stdint.h>

#include "probe_args.h"
#include "probe_call.h"

/* Records: a header, then `len` bytes of payload. */
typedef enum {
  CERT_REC_START = 1, /* payload none: call `index` begins */
  CERT_REC_DONE,      /* payload CertOutcome */
  CERT_REC_SIGNAL,    /* payload CertSignal, written by the signal handler */
  CERT_REC_LOAD,      /* payload text: the runtime or library did not load */
  CERT_REC_TEXT,      /* payload text: the string a call returned (metadata, doc) */
  CERT_REC_END,       /* payload CertEndRecord: how the call's process ended */
  CERT_REC_READY,     /* payload none: loaded, waiting for calls */
} CertRecordType;

/* What the parent sends a worker: run this call, report it as `index`. */
typedef struct {
  int32_t index;
  CertCall call;
} CertCommand;

typedef struct {
  int32_t type;
  int32_t index;
  uint32_t len;
} CertRecordHeader;

enum { CERT_KIND_MAX = 64, CERT_MSG_MAX = 480, CERT_NOTE_MAX = 400, CERT_TEXT_MAX = 65536 };

typedef struct {
  int32_t signo;
  int32_t region; /* CertRegion */
  int32_t arg;    /* the argument the region belongs to, or -1 */
  int32_t thread; /* 0 or 1 */
  uint64_t addr;
} CertSignal;

/* Each call runs in a process of its own, forked from the worker process
 * that loaded the runtime and the library once (and paid the runtime's
 * first-error costs once): a crash costs one fork, and no call sees what
 * an earlier one left behind. The worker reports how the call's process
 * ended. */
typedef struct {
  int32_t how;  /* 0 exited, 1 killed by a signal, 2 timed out, 3 could not fork */
  int32_t code; /* exit status or signal number */
  int64_t maxrss_kb;
} CertEndRecord;

typedef enum {
  CERT_CALL_RETURNED = 0, /* the function returned; see the fields */
  CERT_CALL_NO_SYMBOL,    /* __tvm_ffi_<function> is not in the library */
  CERT_CALL_UNBUILT,      /* the arguments could not be built (note says why) */
} CertCallStatus;

typedef struct {
  int32_t rc;
  int32_t has_error;          /* TVMFFIErrorMoveFromRaised gave an error */
  int32_t result_type;        /* the result slot's type index after the call */
  int32_t result_valid;       /* 1: None or a well-formed owned value */
  char kind[CERT_KIND_MAX];   /* the raised error's kind and message */
  char message[CERT_MSG_MAX];
} CertThreadOutcome;

typedef struct {
  int32_t status;             /* CertCallStatus */
  int32_t threads;
  CertThreadOutcome t[2];
  int32_t ref_arg;            /* an object argument whose strong count changed, or -1 */
  int32_t ref_before, ref_after;
  int32_t checked;            /* 1: outputs compared with the reference */
  int32_t mismatches;         /* elements that differ */
  char note[CERT_NOTE_MAX];   /* the first mismatch, a build failure, ... */
} CertOutcome;

/* Compares the call's outputs with a reference; writes the first mismatch
 * to `note` and returns the number of elements that differ, or -1 when it
 * cannot judge (note says why). `tensors[k]` is argument k's DLTensor or
 * NULL; `inputs_before[k]` a copy of argument k's bytes taken before the
 * call (NULL for non-tensors). */
typedef int (*CertCheckFn)(void* ctx, const CertCall* call, void* const* tensors,
                           void* const* inputs_before, char* note, size_t note_size);

typedef struct {
  const char* runtime_path;
  const char* lib_path;
  CertCheckFn check; /* may be NULL */
  void* check_ctx;
  double timeout_s;  /* per call */
} CertChildConfig;

/* In a worker process: loads the runtime and the library, then runs each
 * CertCommand read from cmd_fd in a process of its own, reporting to fd,
 * until cmd_fd reaches end of file. Never returns. */
void cert_child_main(const CertChildConfig* cfg, int cmd_fd, int fd) __attribute__((noreturn));

#endif
