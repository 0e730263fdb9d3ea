/* The optional manifest: what a library's functions take and promise, so
 * certify can make valid calls, check their results, and check that
 * invalid calls fail with the documented error kinds. JSON (Jansson):
 *
 * {"functions": {"scale": {
 *    "device": "cpu",                              cpu | cuda
 *    "dtypes": ["float32", "float64"],             every tensor argument has one of these
 *    "args": [{"name": "output", "kind": "tensor", "shape": ["n"]},
 *             {"name": "input",  "kind": "tensor", "shape": ["n"]},
 *             {"name": "factor", "kind": "float"}],   tensor | float | int | bool
 *    "returns": "none",                            optional: the result slot stays None
 *    "reference": "output = input * factor",       optional, CPU only
 *    "errors": {"arity": "TypeError", "type": "TypeError",
 *               "dtype": {"kind": "TypeError", "names": "input"},
 *               "device": "ValueError", "shape": "ValueError",
 *               "layout": "ValueError", "null_data": "ValueError"},
 *    "errors_name_argument": true }}}              messages name the wrong argument
 *
 * Shapes are lists of extents: a name (the same name means the same extent
 * in every argument) or a number. The reference is `NAME = term {op term}`
 * with terms argument names or numbers and ops + - *, computed per element
 * in the dtype's arithmetic (float32 for the 16-bit floats, rounded back).
 * Everything is bounded: unknown keys are refused, names are short. */
#ifndef CERT_MANIFEST_H_
#define CERT_MANIFEST_H_

#include <dlpack/dlpack.h>
#include <stddef.h>

#include "probe_call.h"

enum { CERT_MANIFEST_MAX_FUNCTIONS = 64, CERT_MANIFEST_MAX_DTYPES = 8, CERT_EXPR_MAX = 8 };

typedef enum { CERT_MKIND_TENSOR, CERT_MKIND_FLOAT, CERT_MKIND_INT, CERT_MKIND_BOOL } CertManifestKind;

typedef enum {
  CERT_ERR_ARITY,
  CERT_ERR_TYPE,
  CERT_ERR_DTYPE,
  CERT_ERR_DEVICE,
  CERT_ERR_SHAPE,
  CERT_ERR_LAYOUT,
  CERT_ERR_NULL_DATA,
  CERT_ERR_COUNT
} CertErrorCase;

typedef struct {
  char name[32];
  CertManifestKind kind;
  int32_t ndim;
  char dims[CERT_MAX_NDIM][16]; /* a name or a decimal extent */
} CertManifestArg;

typedef struct {
  int documented;
  char kind[32];
  char names[32]; /* the argument the message must name, "" = the wrong one */
} CertManifestError;

/* out = t0 op0 t1 op1 t2 ...; a term is an argument index or a constant. */
typedef struct {
  int out_arg;
  int nterms;
  int term_arg[CERT_EXPR_MAX]; /* -1: constant */
  double term_const[CERT_EXPR_MAX];
  char ops[CERT_EXPR_MAX];     /* ops[k] joins term k and k+1 */
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
const char* cert_error_case_name(CertErrorCase c); /* "arity", "type", ... */

/* The reference check the children run (a CertCheckFn): ctx is the
 * CertManifest. */
int cert_manifest_check(void* ctx, const CertCall* call, void* const* tensors,
                        void* const* inputs_before, char* note, size_t note_size);

#endif
