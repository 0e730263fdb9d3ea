/* What a probe's parent and its children say to each other: the commands
 * (calls) the parent sends a worker, the records the worker and its batch
 * processes send back (start, done, end, signal, text), and how a call
 * ended (probe_child.h runs the child; probe_engine.h the parent). */
#ifndef CERT_PROBE_PROTOCOL_H_
#define CERT_PROBE_PROTOCOL_H_

#include <stddef.h>
#include <stdint.h>

#include "probe_call.h"
#include "probe_readback.h"

/* Records: a header, then `len` bytes of payload. */
typedef enum {
  CERT_REC_START = 1, /* payload none: call `index` begins */
  CERT_REC_DONE,      /* payload CertOutcome */
  CERT_REC_SIGNAL,    /* payload CertSignal, written by the signal handler */
  CERT_REC_LOAD,      /* payload text: the library did not load */
  CERT_REC_TEXT,      /* payload text: the string a call returned (metadata, doc) */
  CERT_REC_END,       /* payload CertEndRecord: how call `index` ended */
  CERT_REC_READY,     /* payload none: loaded, waiting for calls */
  CERT_REC_RUNTIME, /* payload text: the runtime did not load (certify's problem, not the library's)
                     */
  CERT_REC_REGISTRY, /* payload text: what loading the library registered (CertRegistry lines) */
  CERT_REC_LOADNOTE, /* payload text: how it was loaded (a driver stub stood in, ...) */
} CertRecordType;

/* What the parent sends a worker: a batch header, then `n` commands (run
 * this call, report it as `index`). */
typedef struct {
  int32_t n;
} CertBatchHeader;

typedef struct {
  int32_t index;
  CertCall call;
} CertCommand;

typedef struct {
  int32_t type;
  int32_t index;
  uint32_t len;
} CertRecordHeader;

enum {
  CERT_KIND_MAX = 64,
  CERT_MSG_MAX = 480,
  CERT_NOTE_MAX = 400,
  CERT_TEXT_MAX = 65536,
  CERT_BATCH_MAX = 256
};

/* Where a fault landed. */
typedef enum {
  CERT_REGION_UNKNOWN = 0,
  CERT_REGION_ARGS_END,   /* the page right after args[num_args - 1] */
  CERT_REGION_DATA_END,   /* the page right after a tensor's last element */
  CERT_REGION_DATA_GUARD, /* the unreadable page given as a non-CPU tensor's data */
  CERT_REGION_PTR_GUARD,  /* the unreadable page given as an opaque pointer */
  CERT_REGION_HEAP_END,   /* the page right after a strict-heap block (strict_heap.h) */
} CertRegion;

typedef struct {
  int32_t signo;
  int32_t region; /* CertRegion */
  int32_t arg;    /* the argument the region belongs to, or -1 */
  int32_t thread; /* 0 or 1 */
  uint64_t addr;
  uint64_t block;     /* HEAP_END: the block's start */
  int64_t block_size; /* HEAP_END: its size */
  int32_t block_type; /* HEAP_END: the type index an object header there holds, or -1 */
} CertSignal;

/* How a call ended. */
typedef enum {
  CERT_HOW_EXIT = 0,     /* its process exited during the call (`code`) */
  CERT_HOW_SIGNAL = 1,   /* its process died of signal `code` */
  CERT_HOW_TIMEOUT = 2,  /* it ran past the time limit and was killed */
  CERT_HOW_NOFORK = 3,   /* certify could not start a process for it */
  CERT_HOW_NOT_RUN = 4,  /* never started: an earlier call of the batch hung */
  CERT_HOW_FDS = 5,      /* it returned, but with certify's descriptors closed or replaced */
  CERT_HOW_RETURNED = 6, /* it returned; its CertOutcome came before */
} CertHow;

typedef struct {
  int32_t how;         /* CertHow */
  int32_t code;        /* exit status or signal number */
  int64_t maxrss_kb;   /* peak memory of the process it ran in */
  int64_t base_rss_kb; /* that process's memory before its first call */
  int32_t strays;      /* processes it left that certify had to end */
  char stray[64];      /* the first of them, "pid (name)" */
} CertEndRecord;

typedef enum {
  CERT_CALL_RETURNED = 0, /* the function returned; see the fields */
  CERT_CALL_NO_SYMBOL,    /* __tvm_ffi_<function> is not in the library */
  CERT_CALL_UNBUILT,      /* the arguments could not be built (note says why) */
} CertCallStatus;

typedef struct {
  int32_t rc;
  int32_t has_error;        /* TVMFFIErrorMoveFromRaised gave an error */
  int32_t result_type;      /* the result slot's type index after the call */
  int32_t result_valid;     /* 1: None or a well-formed owned value */
  char kind[CERT_KIND_MAX]; /* the raised error's kind and message */
  char message[CERT_MSG_MAX];
  CertReadback error_rb;  /* the raised error read back as the runtime's release lays it out */
  CertReadback result_rb; /* the returned object read back the same way */
} CertThreadOutcome;

typedef struct {
  int32_t status; /* CertCallStatus */
  int32_t threads;
  CertThreadOutcome t[2];
  int32_t ref_arg; /* an object argument whose strong count changed, or -1 */
  int32_t ref_before, ref_after;
  int32_t checked;          /* 1: outputs compared with the reference */
  int32_t mismatches;       /* elements that differ */
  int32_t left_processes;   /* processes it started that were still there when it returned */
  char note[CERT_NOTE_MAX]; /* the first mismatch, a build failure, ... */
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
  double timeout_s;         /* per call */
  size_t memory_limit;      /* bytes a call's process may allocate beyond what it started with */
  const char* driver_stubs; /* the CUDA toolkit's driver stubs folder, or NULL */
  int list_registry;        /* report what loading the library registered */
  /* The release whose layout reading back uses (a wheel version or
   * "reference"); NULL or unknown: the one the runtime reports. */
  const char* layout_release;
} CertChildConfig;

#endif
