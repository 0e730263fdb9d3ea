#include "report_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort has no context argument; the index being sorted is the only user. */
static const CertIndex* cert_sorting;
static size_t* cert_sorting_rank;

static int cert_order_cmp(const void* a, const void* b) {
  size_t i = *(const size_t*)a, j = *(const size_t*)b;
  const CertFinding* x = &cert_sorting->f->items[i];
  const CertFinding* y = &cert_sorting->f->items[j];
  if (cert_sorting_rank[i] != cert_sorting_rank[j]) {
    return cert_sorting_rank[i] < cert_sorting_rank[j] ? -1 : 1;
  }
  int c = strcmp(x->check, y->check);
  if (c == 0) c = strcmp(x->runtime, y->runtime);
  if (c == 0) c = i < j ? -1 : (i > j);
  return c;
}

/* The position of `name` among the distinct function names, adding it. */
static size_t cert_function_rank(CertIndex* ix, const char* name) {
  for (size_t k = 0; k < ix->n_functions; ++k) {
    if (strcmp(ix->functions[k], name) == 0) return k;
  }
  ix->functions[ix->n_functions] = name;
  return ix->n_functions++;
}

static void cert_index_cells(CertIndex* ix) {
  const CertFinding* items = ix->f->items;
  for (size_t k = 0; k < ix->f->n; ++k) {
    const CertFinding* x = &items[ix->order[k]];
    CertCell* last = ix->n_cells ? &ix->cells[ix->n_cells - 1] : NULL;
    const CertFinding* head = last ? &items[ix->order[last->first]] : NULL;
    if (head && strcmp(head->function, x->function) == 0 && strcmp(head->check, x->check) == 0 &&
        strcmp(head->runtime, x->runtime) == 0) {
      last->n++;
      if (x->verdict > last->worst) last->worst = x->verdict;
      continue;
    }
    ix->cells[ix->n_cells++] = (CertCell){k, 1, x->verdict};
  }
}

int cert_index_build(const CertFindings* f, CertIndex* ix) {
  memset(ix, 0, sizeof *ix);
  ix->f = f;
  size_t n = f->n;
  ix->order = malloc((n ? n : 1) * sizeof *ix->order);
  ix->cells = malloc((n ? n : 1) * sizeof *ix->cells);
  ix->functions = malloc((n + 1) * sizeof *ix->functions);
  size_t* rank = malloc((n ? n : 1) * sizeof *rank);
  if (!ix->order || !ix->cells || !ix->functions || !rank) {
    free(rank);
    cert_index_free(ix);
    return -1;
  }
  ix->functions[ix->n_functions++] = ""; /* the library: always first */
  for (size_t i = 0; i < n; ++i) {
    ix->order[i] = i;
    rank[i] = cert_function_rank(ix, f->items[i].function);
    CertVerdict v = f->items[i].verdict;
    if (v >= CERT_PASS && v <= CERT_FAIL) ix->count[v]++;
  }
  cert_sorting = ix;
  cert_sorting_rank = rank;
  qsort(ix->order, n, sizeof *ix->order, cert_order_cmp);
  cert_sorting = NULL;
  cert_sorting_rank = NULL;
  free(rank);
  cert_index_cells(ix);
  return 0;
}

void cert_index_free(CertIndex* ix) {
  free(ix->order);
  free(ix->cells);
  free(ix->functions);
  memset(ix, 0, sizeof *ix);
}

const CertFinding* cert_cell_at(const CertIndex* ix, const CertCell* c, size_t k) {
  return &ix->f->items[ix->order[c->first + k]];
}

const char* cert_base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

const char* cert_verdict_word(const CertRunInfo* run, const CertIndex* ix) {
  if (run->error) return "ERROR";
  if (ix->count[CERT_FAIL] || cert_findings_nothing_called(ix->f)) return "NOT CERTIFIED";
  if (ix->count[CERT_NONSTRICT]) return "NOT STRICTLY CERTIFIED";
  return "CERTIFIED";
}

static void cert_put_count(FILE* out, int* first, size_t n, const char* one, const char* many) {
  if (n == 0) return;
  fprintf(out, "%s%zu %s", *first ? "" : ", ", n, n == 1 ? one : many);
  *first = 0;
}

char* cert_verdict_text(const CertRunInfo* run, const CertIndex* ix) {
  char* text = NULL;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (out == NULL) return NULL;
  fprintf(out, "certify: %s: %s", cert_base_name(run->lib_path ? run->lib_path : "?"),
          cert_verdict_word(run, ix));
  if (run->error) {
    fprintf(out, ": %s", run->error);
  } else {
    int first = 1;
    fputs(": ", out);
    if (cert_findings_nothing_called(ix->f)) fputs("nothing could be called; ", out);
    cert_put_count(out, &first, ix->count[CERT_FAIL], "MUST failure", "MUST failures");
    cert_put_count(out, &first, ix->count[CERT_NONSTRICT], "NONSTRICT", "NONSTRICT");
    cert_put_count(out, &first, ix->count[CERT_WARN], "warning", "warnings");
    cert_put_count(out, &first, ix->count[CERT_SKIP], "skipped", "skipped");
    cert_put_count(out, &first, ix->count[CERT_PASS], "passed", "passed");
    if (first) fputs("no findings", out);
  }
  fprintf(out, " (%zu function%s, %zu runtime%s, %.1f s)", run->n_functions,
          run->n_functions == 1 ? "" : "s", run->n_runtimes, run->n_runtimes == 1 ? "" : "s",
          run->seconds);
  if (fclose(out) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

int cert_index_write_file(const char* path, const CertRunInfo* run, const CertFindings* f,
                          int (*write)(FILE* out, const CertRunInfo* run, const CertIndex* ix)) {
  CertIndex ix;
  if (cert_index_build(f, &ix) != 0) return -1;
  FILE* out = fopen(path, "w");
  if (out == NULL) {
    cert_index_free(&ix);
    return -1;
  }
  int rc = write(out, run, &ix);
  cert_index_free(&ix);
  int failed = ferror(out);
  if (fclose(out) != 0 || failed || rc != 0) {
    if (errno == 0) errno = EIO;
    return -1;
  }
  return 0;
}

size_t cert_index_pair_end(const CertIndex* ix, size_t c, int* differ) {
  const CertFinding* head = cert_cell_at(ix, &ix->cells[c], 0);
  size_t end = c + 1;
  *differ = 0;
  while (end < ix->n_cells) {
    const CertFinding* y = cert_cell_at(ix, &ix->cells[end], 0);
    if (strcmp(y->function, head->function) != 0 || strcmp(y->check, head->check) != 0) break;
    *differ |= ix->cells[end].worst != ix->cells[c].worst;
    ++end;
  }
  return end;
}
