#include "probe_readback.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "strict_heap.h"

/* ---- the table ------------------------------------------------------------ */

typedef struct {
  const char* wheel;
  const char* reported;
  int32_t cell_size, cause_offset, context_offset;
} Row;

static const Row kRows[] = {
#define CERT_LAYOUT_WHEEL(w, r, size, cause, context) {w, r, size, cause, context},
#include "tools/certify/release_layouts.inc"
#undef CERT_LAYOUT_WHEEL
};
static const Row kReference = {
#define CERT_LAYOUT_REFERENCE(size, cause, context) "reference", "", size, cause, context
#include "tools/certify/release_layouts.inc"
#undef CERT_LAYOUT_REFERENCE
};
enum { N_ROWS = sizeof kRows / sizeof kRows[0] };

static void from_row(const Row* r, const char* reported, CertHostLayout* out) {
  snprintf(out->release, sizeof out->release, "%s", r->wheel);
  snprintf(out->reported, sizeof out->reported, "%s", reported);
  out->cell_size = r->cell_size;
  out->cause_offset = r->cause_offset;
  out->context_offset = r->context_offset;
}

/* major.minor.patch of a reported version string, compared as numbers. */
static long version_rank(const char* s) {
  unsigned a = 0, b = 0, c = 0;
  if (sscanf(s, "%u.%u.%u", &a, &b, &c) < 2) return -1;
  return ((long)a << 40) | ((long)b << 20) | (long)c;
}

void cert_host_layout(const TVMFFIVersion* v, CertHostLayout* out) {
  char reported[24];
  snprintf(reported, sizeof reported, "%u.%u.%u", v->major, v->minor, v->patch);
  long want = version_rank(reported);
  const Row* best = NULL;
  for (size_t k = 0; k < N_ROWS; ++k) {
    long r = version_rank(kRows[k].reported);
    /* Later wheels win ties: 0.1.9 is reported by 0.1.8.post0 and 0.1.9. */
    if (r <= want && (best == NULL || r >= version_rank(best->reported))) best = &kRows[k];
  }
  long newest = 0;
  for (size_t k = 0; k < N_ROWS; ++k) {
    if (version_rank(kRows[k].reported) > newest) newest = version_rank(kRows[k].reported);
  }
  if (best == NULL || want > newest) best = &kReference;
  if (best == NULL) best = &kRows[N_ROWS - 1];
  from_row(best, reported, out);
}

int cert_host_layout_named(const char* release, CertHostLayout* out) {
  if (strcmp(release, "reference") == 0) {
    from_row(&kReference, "", out);
    return 0;
  }
  for (size_t k = 0; k < N_ROWS; ++k) {
    if (strcmp(kRows[k].wheel, release) == 0) {
      from_row(&kRows[k], kRows[k].reported, out);
      return 0;
    }
  }
  return -1;
}

int cert_layout_introduced(const CertHostLayout* host, int32_t offset, const char** release,
                           int32_t* size_before) {
  for (size_t k = 1; k < N_ROWS; ++k) {
    int had = kRows[k - 1].cause_offset == offset || kRows[k - 1].context_offset == offset;
    int has = kRows[k].cause_offset == offset || kRows[k].context_offset == offset;
    if (!had && has && kRows[k].cell_size == host->cell_size) {
      *release = kRows[k].wheel;
      *size_before = kRows[k - 1].cell_size;
      return 0;
    }
  }
  return -1;
}

/* ---- reading safely ---------------------------------------------------- */

int cert_safe_read(uintptr_t addr, void* out, size_t n) {
  if (n == 0) return 0;
  if (addr == 0 || addr + n < addr) return -1;
  struct iovec local = {out, n}, remote = {(void*)addr, n};
  ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (got == (ssize_t)n) return 0;
  if (got >= 0 || (errno != ENOSYS && errno != EPERM)) return -1;
  /* Where the system refuses process_vm_readv, a pipe's write tells the
   * same: it fails with EFAULT on an unreadable byte. */
  int p[2];
  if (pipe(p) != 0) return -1;
  int rc = 0;
  for (size_t done = 0; done < n && rc == 0;) {
    size_t chunk = n - done < 4096 ? n - done : 4096;
    rc = write(p[1], (const char*)addr + done, chunk) == (ssize_t)chunk &&
                 read(p[0], (char*)out + done, chunk) == (ssize_t)chunk
             ? 0
             : -1;
    done += chunk;
  }
  close(p[0]);
  close(p[1]);
  return rc;
}

/* ---- errors ---------------------------------------------------------------- */

static void problem(CertReadback* out, CertReadbackProblem p, const char* field, int32_t offset,
                    uint64_t value) {
  if (out->problem != CERT_RB_OK) return;
  out->problem = p;
  out->offset = offset;
  out->value = value;
  snprintf(out->field, sizeof out->field, "%s", field);
}

/* The object header at addr: its type index, or -1 when unreadable or
 * without a live strong reference. */
static int32_t header_type(uintptr_t addr) {
  TVMFFIObject h;
  if (cert_safe_read(addr, &h, sizeof h) != 0) return -1;
  uint32_t strong = (uint32_t)(h.combined_ref_count & 0xffffffffu);
  return strong >= 1 ? h.type_index : -1;
}

/* A byte array the host would copy: its size sane and every byte readable. */
static int readable_bytes(const TVMFFIByteArray* b) {
  if (b->size == 0) return 1;
  if (b->size > ((size_t)1 << 24) || b->data == NULL) return 0;
  char buf[256];
  for (size_t done = 0; done < b->size; done += sizeof buf) {
    size_t n = b->size - done < sizeof buf ? b->size - done : sizeof buf;
    if (cert_safe_read((uintptr_t)b->data + done, buf, n) != 0) return 0;
  }
  return 1;
}

/* How far the strict-heap block holding `obj` reaches, when it is one. */
static void note_allocation(uintptr_t obj, CertReadback* out) {
  uintptr_t start;
  size_t size;
  out->alloc_size = -1;
  /* Find the block's guard by walking its pages; a block past a few pages
   * is no object header's. */
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  for (uintptr_t at = obj; at < obj + (1u << 16); at = (at | (page - 1)) + 1) {
    if (cert_strict_heap_owner(at, &start, &size) && start <= obj) {
      out->alloc_size = (int32_t)(size < (1u << 30) ? size : (1u << 30));
      return;
    }
    char probe;
    if (cert_safe_read(at, &probe, 1) != 0) return;
  }
}

static void read_handle_field(uintptr_t cell, const char* name, int32_t offset, CertReadback* out,
                              int want_error) {
  uint64_t v = 0;
  if (cert_safe_read(cell + (uintptr_t)offset, &v, sizeof v) != 0) {
    problem(out, CERT_RB_PAST_END, name, offset, 0);
    return;
  }
  if (v == 0) return;
  int32_t t = header_type((uintptr_t)v);
  out->found_type = t;
  if (want_error ? t != kTVMFFIError : t < kTVMFFIStaticObjectBegin) {
    problem(out, want_error ? CERT_RB_CAUSE : CERT_RB_CONTEXT, name, offset, v);
  }
}

static void read_error(uintptr_t obj, const CertHostLayout* host, CertReadback* out, int depth) {
  uintptr_t cell = obj + sizeof(TVMFFIObject);
  struct {
    TVMFFIByteArray kind, message, backtrace;
  } text;
  if (cert_safe_read(cell, &text, sizeof text) != 0) {
    problem(out, CERT_RB_PAST_END, "kind", 0, 0);
    return;
  }
  const TVMFFIByteArray* parts[] = {&text.kind, &text.message, &text.backtrace};
  const char* names[] = {"kind", "message", "backtrace"};
  for (int k = 0; k < 3; ++k) {
    if (!readable_bytes(parts[k])) {
      problem(out, CERT_RB_TEXT, names[k], (int32_t)(k * sizeof(TVMFFIByteArray)),
              (uint64_t)(uintptr_t)parts[k]->data);
      return;
    }
  }
  if (host->cause_offset >= 0) read_handle_field(cell, "cause_chain", host->cause_offset, out, 1);
  if (host->context_offset >= 0)
    read_handle_field(cell, "extra_context", host->context_offset, out, 0);
  if (out->problem == CERT_RB_OK && host->cause_offset >= 0 && depth < 4) {
    uint64_t cause = 0;
    cert_safe_read(cell + (uintptr_t)host->cause_offset, &cause, sizeof cause);
    if (cause) read_error((uintptr_t)cause, host, out, depth + 1);
  }
}

static void begin(CertReadback* out, const CertHostLayout* host) {
  memset(out, 0, sizeof *out);
  out->checked = 1;
  out->offset = -1;
  out->alloc_size = -1;
  out->found_type = -1;
  out->cell_size = host->cell_size;
  snprintf(out->host, sizeof out->host, "%s", host->release);
}

void cert_readback_error(TVMFFIObjectHandle err, const CertHostLayout* host, CertReadback* out) {
  begin(out, host);
  uintptr_t obj = (uintptr_t)err;
  out->type_index = header_type(obj);
  if (out->type_index != kTVMFFIError) {
    problem(out, CERT_RB_HEADER, "type_index", -1, (uint64_t)(int64_t)out->type_index);
  } else {
    read_error(obj, host, out, 0);
  }
  if (out->problem != CERT_RB_OK) note_allocation(obj, out);
}

static void read_shape(uintptr_t cell, CertReadback* out) {
  TVMFFIShapeCell s;
  if (cert_safe_read(cell, &s, sizeof s) != 0) {
    problem(out, CERT_RB_PAST_END, "data", 0, 0);
    return;
  }
  int64_t x;
  if (s.size > (1u << 20) ||
      (s.size > 0 &&
       cert_safe_read((uintptr_t)s.data + (s.size - 1) * sizeof x, &x, sizeof x) != 0) ||
      (s.size > 0 && cert_safe_read((uintptr_t)s.data, &x, sizeof x) != 0)) {
    problem(out, CERT_RB_PAYLOAD, "data", 0, (uint64_t)(uintptr_t)s.data);
  }
}

static void read_tensor(uintptr_t cell, CertReadback* out) {
  DLTensor t;
  if (cert_safe_read(cell, &t, sizeof t) != 0) {
    problem(out, CERT_RB_PAST_END, "ndim", 0, 0);
    return;
  }
  int64_t dims[64];
  if (t.ndim < 0 || t.ndim > 64) {
    problem(out, CERT_RB_PAYLOAD, "ndim", (int32_t)offsetof(DLTensor, ndim),
            (uint64_t)(int64_t)t.ndim);
  } else if (t.ndim > 0 &&
             cert_safe_read((uintptr_t)t.shape, dims, (size_t)t.ndim * sizeof dims[0]) != 0) {
    problem(out, CERT_RB_PAYLOAD, "shape", (int32_t)offsetof(DLTensor, shape),
            (uint64_t)(uintptr_t)t.shape);
  } else if (t.ndim > 0 && t.strides &&
             cert_safe_read((uintptr_t)t.strides, dims, (size_t)t.ndim * sizeof dims[0]) != 0) {
    problem(out, CERT_RB_PAYLOAD, "strides", (int32_t)offsetof(DLTensor, strides),
            (uint64_t)(uintptr_t)t.strides);
  }
}

void cert_readback_result(const TVMFFIAny* result, const CertHostLayout* host, CertReadback* out) {
  begin(out, host);
  out->type_index = result->type_index;
  if (result->type_index < kTVMFFIStaticObjectBegin) {
    out->checked = 0; /* an inline value: nothing behind it */
    return;
  }
  uintptr_t obj = (uintptr_t)result->v_obj;
  int32_t t = header_type(obj);
  if (t != result->type_index) {
    out->found_type = t;
    problem(out, CERT_RB_HEADER, "type_index", -1, (uint64_t)obj);
    return;
  }
  uintptr_t cell = obj + sizeof(TVMFFIObject);
  switch (t) {
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      TVMFFIByteArray b;
      if (cert_safe_read(cell, &b, sizeof b) != 0) {
        problem(out, CERT_RB_PAST_END, "data", 0, 0);
      } else if (!readable_bytes(&b)) {
        problem(out, CERT_RB_TEXT, "data", 0, (uint64_t)(uintptr_t)b.data);
      }
      break;
    }
    case kTVMFFIShape: read_shape(cell, out); break;
    case kTVMFFITensor: read_tensor(cell, out); break;
    case kTVMFFIError: read_error(obj, host, out, 0); break;
    default: break;
  }
  if (out->problem != CERT_RB_OK) note_allocation(obj, out);
}
