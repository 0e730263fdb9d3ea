/* Reading back what a call left behind (the error it raised, the object it
 * returned) the way a host built against the runtime's own release reads
 * it: that release's Python package, or any C++ host compiled with its
 * headers. A library built against older headers than the runtime's makes
 * objects with the older, smaller layout; a host of the newer release reads
 * the fields the library never wrote, or past the end of the object.
 *
 * Every read goes through cert_safe_read, so an unreadable byte is a
 * finding, not a crash of the probe; and in a call process with the strict
 * heap on (strict_heap.h) the first byte past an allocation is unreadable.
 * Runs in the probe child; the layouts come from release_layouts.inc. */
#ifndef CERT_PROBE_READBACK_H_
#define CERT_PROBE_READBACK_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* What a host of one release reads of an error: -1 where it has nothing. */
typedef struct {
  char release[24];       /* the wheel (or "reference") whose headers say so */
  char reported[24];      /* the version the runtime reported */
  int32_t cell_size;      /* sizeof(TVMFFIErrorCell) */
  int32_t cause_offset;   /* offsetof(TVMFFIErrorCell, cause_chain) */
  int32_t context_offset; /* offsetof(TVMFFIErrorCell, extra_context) */
} CertHostLayout;

/* The layout of the release whose runtime reports `v` (the newest wheel
 * that reports it, or the nearest older one; a version past every
 * recorded release gets the reference's). */
void cert_host_layout(const TVMFFIVersion* v, CertHostLayout* out);

/* The same by wheel version ("0.1.7") or "reference"; 0, or -1 when the
 * table has no such release. */
int cert_host_layout_named(const char* release, CertHostLayout* out);

/* The release that first laid a field out at `offset` in an error cell of
 * `host` (the one that added cause_chain), and the cell size of the
 * release before it; 0, or -1 when every recorded release has it. */
int cert_layout_introduced(const CertHostLayout* host, int32_t offset, const char** release,
                           int32_t* size_before);

typedef enum {
  CERT_RB_OK = 0,
  CERT_RB_HEADER,   /* the object's header is unreadable or inconsistent */
  CERT_RB_TEXT,     /* a byte array (kind, message, backtrace, str payload) is not readable */
  CERT_RB_PAST_END, /* a field the host reads lies past the end of the allocation */
  CERT_RB_CAUSE,    /* cause_chain neither NULL nor an Error object */
  CERT_RB_CONTEXT,  /* extra_context neither NULL nor an object */
  CERT_RB_PAYLOAD,  /* a shape's or tensor's payload is not readable */
} CertReadbackProblem;

/* What reading back found; `problem` 0 is a clean read. */
typedef struct {
  int32_t checked;    /* 1: something was read back */
  int32_t problem;    /* CertReadbackProblem */
  int32_t type_index; /* of the object read back */
  int32_t cell_size;  /* the host's error cell size used (errors) */
  int32_t offset;     /* cell offset of the field that was wrong, or -1 */
  int32_t alloc_size; /* bytes of the strict-heap block holding the object, or -1 */
  int32_t found_type; /* type index at the pointer the field held, or -1 unreadable */
  uint64_t value;     /* what the field held */
  char field[24];     /* its name: "cause_chain", "kind", "data", ... */
  char host[24];      /* the release whose layout was used */
} CertReadback;

/* Reads back a raised error (an owned handle) with `host`'s layout. */
void cert_readback_error(TVMFFIObjectHandle err, const CertHostLayout* host, CertReadback* out);

/* Reads back a returned value: objects by their header and, for strings,
 * bytes, shapes, tensors and errors, their payload. */
void cert_readback_result(const TVMFFIAny* result, const CertHostLayout* host, CertReadback* out);

/* Copies n bytes from addr into out unless any of them is unreadable; 0 or
 * -1. Safe on any address. */
int cert_safe_read(uintptr_t addr, void* out, size_t n);

#endif
