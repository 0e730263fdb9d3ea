/* The findings arranged the way every report reads them: grouped by
 * function (the library itself first), then by check, then by runtime. A
 * cell is one (function, check, runtime) triple and holds every finding for
 * it; its verdict is the worst of them. Shared by the report writers. */
#ifndef CERT_REPORT_INDEX_H_
#define CERT_REPORT_INDEX_H_

#include <stddef.h>
#include <stdio.h>

#include "finding.h"
#include "report_run.h"

typedef struct {
  size_t first; /* position of its first finding in CertIndex.order */
  size_t n;     /* findings in the cell */
  CertVerdict worst;
} CertCell;

typedef struct {
  const CertFindings* f;
  size_t* order; /* finding indexes, sorted by function, check, runtime */
  CertCell* cells;
  size_t n_cells;
  const char** functions; /* distinct names, the library ("") first, then as met */
  size_t n_functions;
  size_t count[CERT_FAIL + 1]; /* findings by verdict */
} CertIndex;

/* Returns 0, or -1 when out of memory (then `ix` holds nothing). */
int cert_index_build(const CertFindings* f, CertIndex* ix);
void cert_index_free(CertIndex* ix);

/* Indexes `f`, opens `path` and hands both to `write`; 0, or -1 with errno
 * set when indexing, opening, writing or closing failed. */
int cert_index_write_file(const char* path, const CertRunInfo* run, const CertFindings* f,
                          int (*write)(FILE* out, const CertRunInfo* run, const CertIndex* ix));

/* The cells from `c` on that share cell c's (function, check), one per
 * runtime: returns the index past the last, and sets *differ when their
 * verdicts are not all the same. */
size_t cert_index_pair_end(const CertIndex* ix, size_t c, int* differ);

/* The k-th finding of a cell. */
const CertFinding* cert_cell_at(const CertIndex* ix, const CertCell* c, size_t k);

/* The whole verdict line without a trailing newline, e.g.
 * "certify: libfoo.so: NOT CERTIFIED: 2 MUST failures, 1 warning (3
 * functions, 2 runtimes, 4.1 s)". Malloc'd; NULL when out of memory. */
char* cert_verdict_text(const CertRunInfo* run, const CertIndex* ix);

/* "CERTIFIED", "NOT CERTIFIED", "NOT STRICTLY CERTIFIED" or "ERROR". */
const char* cert_verdict_word(const CertRunInfo* run, const CertIndex* ix);

/* The file name part of a path (borrowed). */
const char* cert_base_name(const char* path);

#endif
