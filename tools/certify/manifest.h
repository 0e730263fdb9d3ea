/* The optional manifest: what a library's functions take and promise, so
 * certify can make valid calls, check their results, and check that
 * invalid calls fail with the documented error kinds. JSON (Jansson):
 *
 * {"functions": {"scale": {
 *    "device": "cpu",                              cpu | cuda
 *    "dtypes": ["float32", "float64"],             every tensor argument has one of these
 *    "args": [{"name": "output", "kind": "tensor", "shape": ["n"]},
 *             {"name": "input",  "kind": "tensor", "shape": ["n"], "align": 16},
 *             {"name": "factor", "kind": "float"}],
 *    "divisible": {"n": 16},                       optional: extents that must be multiples
 *    "byte_offset": false,                         optional: tensors must have byte_offset 0
 *                                                  (DSLs such as CuTe refuse others)
 *    "returns": "none",                            optional: the result slot stays None
 *    "reference": "output = input * factor",       optional, CPU only
 *    "errors": {"arity": "TypeError", "type": "TypeError",
 *               "dtype": {"kind": "TypeError", "names": "input"},
 *               "device": "ValueError", "shape": "ValueError",
 *               "layout": "ValueError", "null_data": "ValueError",
 *               "divisibility": "ValueError"},
 *    "errors_name_argument": true }}}              messages name the wrong argument
 *
 * Argument kinds, as kernel DSLs (CuTe DSL's TVM-FFI export) take them:
 *   tensor   a DLTensor* or Tensor object; `shape` lists its extents, `align`
 *            the bytes its data must be aligned to
 *   float | int | bool   an int may say `"extent": "n"`: it is passed that extent's value
 *   stream   a CUDA stream as an opaque pointer (None or NULL: the default
 *            stream, which certify passes)
 *   pointer  a raw data pointer (opaque pointer) to memory of `shape` and
 *            the dtype, as a DSL's data pointer argument
 *   shape    an ffi.Shape of the extents in `shape`
 *   tuple    an ffi.Array of `items` ({"kind": ...} each, scalars, tensors
 *            (passed as Tensor objects), pointers or shapes; not tuples)
 *
 * Shapes are lists of extents: a name (the same name means the same extent
 * in every argument) or a number; `divisible` says which names must be
 * multiples of what (valid calls use only such extents, and the
 * `divisibility` error case one that is not). The reference is
 * `NAME = term {op term}` with terms argument names, `NAME[k]` for item k of
 * a tuple, or numbers, and ops + - *, computed per element in the dtype's
 * arithmetic (float32 for the 16-bit floats, rounded back). Everything is
 * bounded: unknown keys are refused, names are short. */
#ifndef CERT_MANIFEST_H_
#define CERT_MANIFEST_H_

#include <dlpack/dlpack.h>
#include <stddef.h>

#include "probe_call.h"

enum {
  CERT_MANIFEST_MAX_FUNCTIONS = 64,
  CERT_MANIFEST_MAX_DTYPES = 8,
  CERT_EXPR_MAX = 8,
  CERT_MANIFEST_MAX_ITEMS = 4,
  CERT_MANIFEST_MAX_DIVISIBLE = 4,
};

typedef enum {
  CERT_MKIND_TENSOR,
  CERT_MKIND_FLOAT,
  CERT_MKIND_INT,
  CERT_MKIND_BOOL,
  CERT_MKIND_STREAM,
  CERT_MKIND_POINTER,
  CERT_MKIND_SHAPE,
  CERT_MKIND_TUPLE,
} CertManifestKind;

typedef enum {
  CERT_ERR_ARITY,
  CERT_ERR_TYPE,
  CERT_ERR_DTYPE,
  CERT_ERR_DEVICE,
  CERT_ERR_SHAPE,
  CERT_ERR_LAYOUT,
  CERT_ERR_NULL_DATA,
  CERT_ERR_DIVISIBILITY,
  CERT_ERR_COUNT
} CertErrorCase;

/* An element of a tuple. */
typedef struct {
  CertManifestKind kind;
  int32_t ndim;
  char dims[CERT_MAX_NDIM][16];
} CertManifestItem;

typedef struct {
  char name[32];
  CertManifestKind kind;
  int32_t ndim;
  char dims[CERT_MAX_NDIM][16]; /* a name or a decimal extent */
  uint32_t align;               /* tensors, pointers: data alignment in bytes, or 0 */
  char extent[16];              /* ints: the extent whose value it is passed, or "" */
  int32_t nitems;               /* tuples */
  CertManifestItem items[CERT_MANIFEST_MAX_ITEMS];
} CertManifestArg;

/* An extent name whose values must be multiples of `by`. */
typedef struct {
  char name[16];
  int64_t by;
} CertDivisible;

typedef struct {
  int documented;
  char kind[32];
  char names[32]; /* the argument the message must name, "" = the wrong one */
} CertManifestError;

/* out = t0 op0 t1 op1 t2 ...; a term is an argument index (and, for a
 * tuple, an item) or a constant. */
typedef struct {
  int out_arg;
  int nterms;
  int term_arg[CERT_EXPR_MAX];  /* -1: constant */
  int term_item[CERT_EXPR_MAX]; /* the tuple item of term_arg, or -1 */
  double term_const[CERT_EXPR_MAX];
  char ops[CERT_EXPR_MAX]; /* ops[k] joins term k and k+1 */
} CertExpr;

typedef struct {
  char name[CERT_NAME_MAX];
  DLDeviceType device;
  DLDataType dtypes[CERT_MANIFEST_MAX_DTYPES];
  int ndtypes;
  CertManifestArg args[CERT_MAX_ARGS];
  int nargs;
  int returns_none;
  int has_reference;
  CertExpr reference;
  CertManifestError errors[CERT_ERR_COUNT];
  int errors_name_argument;
  CertDivisible divisible[CERT_MANIFEST_MAX_DIVISIBLE];
  int ndivisible;
  int refuses_byte_offset; /* "byte_offset": false */
} CertManifestFunction;

struct CertManifest {
  CertManifestFunction* fns;
  size_t n;
};
typedef struct CertManifest CertManifest;

/* Parses a manifest. Returns 0, or -1 with a reason naming the offending
 * key in err; on failure `out` holds nothing to free. */
int cert_manifest_parse(const char* text, size_t len, CertManifest* out, char* err, size_t errlen);
int cert_manifest_load(const char* path, CertManifest* out, char* err, size_t errlen);
void cert_manifest_free(CertManifest* m);

const CertManifestFunction* cert_manifest_find(const CertManifest* m, const char* name);

/* What the named extent must be a multiple of (1 when nothing). */
int64_t cert_manifest_divisor(const CertManifestFunction* f, const char* extent);
const char* cert_error_case_name(CertErrorCase c); /* "arity", "type", ... */

#endif
