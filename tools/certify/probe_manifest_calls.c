#include "probe_manifest_calls.h"

#include <stdlib.h>

/* A tensor's extent for one of the manifest's dimension words: `n`, made a
 * multiple of what the manifest says the named extent must divide by. */
static int64_t extent_of(const CertManifestFunction* f, const char* dim, int64_t n) {
  if (dim[0] >= '0' && dim[0] <= '9') return strtoll(dim, NULL, 10);
  int64_t by = cert_manifest_divisor(f, dim);
  return (n + by - 1) / by * by;
}

static CertArg manifest_layout(const CertManifestFunction* f, CertManifestKind kind, int32_t ndim,
                               const char (*dims)[16], DLDataType dt, int64_t n,
                               CertArgKind tkind) {
  int64_t shape[CERT_MAX_NDIM];
  for (int32_t d = 0; d < ndim; ++d) shape[d] = extent_of(f, dims[d], n);
  DLDevice dev = {f->device, 0};
  CertArgKind k = kind == CERT_MKIND_POINTER ? CERT_ARG_DATAPTR
                  : kind == CERT_MKIND_SHAPE ? CERT_ARG_SHAPE
                                             : tkind;
  return cert_arg_tensor(k, dt, ndim, shape, dev);
}

/* One argument (or tuple item) of a valid call. */
static CertArg manifest_value(const CertManifestFunction* f, CertManifestKind kind, int32_t ndim,
                              const char (*dims)[16], DLDataType dt, int64_t n, CertArgKind tkind) {
  CertArg a = cert_arg_simple(CERT_ARG_NONE);
  switch (kind) {
    case CERT_MKIND_TENSOR:
    case CERT_MKIND_POINTER:
    case CERT_MKIND_SHAPE: return manifest_layout(f, kind, ndim, dims, dt, n, tkind);
    case CERT_MKIND_FLOAT: return cert_arg_float(2.5);
    case CERT_MKIND_INT: return cert_arg_int(3);
    case CERT_MKIND_BOOL:
      a.kind = CERT_ARG_BOOL;
      a.i = 1;
      return a;
    case CERT_MKIND_STREAM: /* the default stream: a NULL opaque pointer */
      a.kind = CERT_ARG_PTR;
      return a;
    case CERT_MKIND_TUPLE: break;
  }
  return a;
}

CertCall cert_manifest_call(const CertManifestFunction* f, DLDataType dt, int64_t n,
                            CertArgKind tkind) {
  CertCall c = cert_call_new(f->name);
  for (int k = 0; k < f->nargs; ++k) {
    const CertManifestArg* a = &f->args[k];
    if (a->kind == CERT_MKIND_INT && a->extent[0]) {
      c.args[k] = cert_arg_int(extent_of(f, a->extent, n));
      continue;
    }
    if (a->kind != CERT_MKIND_TUPLE) {
      c.args[k] = manifest_value(f, a->kind, a->ndim, (const char(*)[16])a->dims, dt, n, tkind);
      c.args[k].align = a->align;
      continue;
    }
    /* Items of an ffi.Array are owned values: tensors in it are Tensor objects. */
    c.args[k] = cert_arg_simple(CERT_ARG_ARRAY);
    c.args[k].i = c.nitems;
    for (int i = 0; i < a->nitems && c.nitems < CERT_MAX_ITEMS; ++i) {
      const CertManifestItem* it = &a->items[i];
      c.items[c.nitems++] = manifest_value(f, it->kind, it->ndim, (const char(*)[16])it->dims, dt,
                                           n, CERT_ARG_TENSOR);
      c.args[k].ndim++;
    }
  }
  c.nargs = f->nargs;
  c.returns_none = f->returns_none;
  return c;
}

DLDataType cert_manifest_foreign_dtype(const CertManifestFunction* f) {
  static const DLDataType kTry[] = {
      {kDLInt, 32, 1}, {kDLUInt, 8, 1}, {kDLFloat, 64, 1}, {kDLInt, 64, 1}};
  for (size_t k = 0; k < sizeof kTry / sizeof kTry[0]; ++k) {
    int listed = 0;
    for (int d = 0; d < f->ndtypes; ++d) {
      listed |= f->dtypes[d].code == kTry[k].code && f->dtypes[d].bits == kTry[k].bits;
    }
    if (!listed) return kTry[k];
  }
  return (DLDataType){kDLComplex, 64, 1};
}
