#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/vec.h"

void cert_buf_add(CertBuf* t, const char* piece) {
  size_t n = strlen(piece);
  if (t->failed) return;
  if (tffi_vec_reserve(&t->s, &t->cap, t->len + n + 1, 1) != 0) {
    t->failed = 1;
    return;
  }
  memcpy(t->s + t->len, piece, n + 1);
  t->len += n;
}

/* Adds one name to a comma-separated list, stopping at CERT_MAX_LISTED. */
void cert_buf_item(CertBuf* t, const char* name) {
  t->items++;
  if (t->items > CERT_MAX_LISTED) return;
  if (t->items > 1) cert_buf_add(t, ", ");
  cert_buf_add(t, name);
}

const char* cert_buf_end(CertBuf* t) {
  if (t->items > CERT_MAX_LISTED) {
    char more[64];
    snprintf(more, sizeof more, ", ... and %zu more", t->items - CERT_MAX_LISTED);
    cert_buf_add(t, more);
  }
  return t->failed || t->s == NULL ? "" : t->s;
}

void cert_buf_free(CertBuf* t) { free(t->s); }
