/* The reference check the children run after a valid call of a CPU
 * function whose manifest gives a reference expression: every output
 * element against the expression computed in the dtype's arithmetic. */
#include "manifest_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_16bit_float(DLDataType t) {
  return t.lanes == 1 && t.bits == 16 && (t.code == kDLFloat || t.code == kDLBfloat);
}

/* Rounds v to the arithmetic the dtype computes in. */
static double in_arith(DLDataType t, double v) {
  if (t.code == kDLFloat && t.bits == 64) return v;
  if (t.code == kDLFloat || t.code == kDLBfloat) return (double)(float)v;
  return v;
}

static double scalar_of(const CertCall* call, int arg, int item) {
  const CertArg* a = &call->args[arg];
  if (item >= 0 && a->kind == CERT_ARG_ARRAY && a->i + item < call->nitems)
    a = &call->items[a->i + item];
  if (a->kind == CERT_ARG_FLOAT) return a->f;
  if (a->kind == CERT_ARG_INT || a->kind == CERT_ARG_BOOL) return (double)a->i;
  return 0;
}

/* Byte offset of row-major element i in a DLTensor (non-negative strides). */
static int64_t element_offset(const DLTensor* t, int64_t i) {
  int64_t off = 0, rem = i;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    int64_t st = t->strides ? t->strides[d] : 1;
    if (!t->strides) {
      st = 1;
      for (int32_t e = d + 1; e < t->ndim; ++e) st *= t->shape[e];
    }
    off += (rem % t->shape[d]) * st;
    rem /= t->shape[d];
  }
  return off * (int64_t)cert_dtype_bytes(t->dtype);
}

int cert_manifest_check(void* ctx, const CertCall* call, void* const* tensors,
                        void* const* inputs_before, char* note, size_t note_size) {
  const CertManifestFunction* f = cert_manifest_find(ctx, call->function);
  if (f == NULL || !f->has_reference) return snprintf(note, note_size, "no reference"), -1;
  const CertExpr* e = &f->reference;
  const DLTensor* out = tensors[e->out_arg];
  if (out == NULL || (out->data == NULL && cert_arg_elements(&call->args[e->out_arg]) > 0)) {
    return snprintf(note, note_size, "the output is not a CPU tensor"), -1;
  }
  int64_t n = cert_arg_elements(&call->args[e->out_arg]);
  DLDataType dt = out->dtype;
  int mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    double acc = 0, prod = 0;
    char pending = '+';
    for (int k = 0; k < e->nterms; ++k) {
      double v;
      int a = e->term_arg[k];
      if (a < 0) {
        v = e->term_const[k];
      } else if (tensors[a] && e->term_item[k] < 0) {
        const DLTensor* t = tensors[a];
        /* The value the argument held before the call (in-place safe). */
        const char* base =
            inputs_before[a] ? inputs_before[a] : (const char*)t->data + t->byte_offset;
        if (base == NULL || cert_value_load(t->dtype, base + element_offset(t, i), &v) != 0) {
          return snprintf(note, note_size, "cannot read argument %d", a), -1;
        }
      } else {
        v = scalar_of(call, a, e->term_item[k]);
      }
      v = in_arith(dt, v);
      /* Products bind tighter than sums. */
      if (k == 0) {
        prod = v;
      } else if (e->ops[k - 1] == '*') {
        prod = in_arith(dt, prod * v);
      } else {
        acc = in_arith(dt, pending == '+' ? acc + prod : acc - prod);
        pending = e->ops[k - 1];
        prod = v;
      }
    }
    acc = in_arith(dt, pending == '+' ? acc + prod : acc - prod);
    char want[16] = {0}, got[16] = {0};
    size_t es = cert_dtype_bytes(dt);
    if (es > sizeof want || cert_value_store(dt, want, acc) != 0) {
      return snprintf(note, note_size, "no reference arithmetic for this dtype"), -1;
    }
    memcpy(got, (const char*)out->data + out->byte_offset + element_offset(out, i), es);
    if (memcmp(want, got, es) != 0) {
      if (mismatches == 0) {
        double g = 0;
        cert_value_load(dt, got, &g);
        snprintf(note, note_size, "element %lld: got %.9g, the reference gives %.9g%s",
                 (long long)i, g, acc,
                 is_16bit_float(dt) ? " (computed in float32, rounded to nearest even)" : "");
      }
      ++mismatches;
    }
  }
  return mismatches;
}
