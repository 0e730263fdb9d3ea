/* The exit status, the verdict line and the terminal table. */
#include "report.h"
#include "report_releases.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "checks.h"
#include "report_index.h"
#include "text.h"

#define CERT_EVIDENCE_LINES 4 /* the JSON report has the rest */
#define CERT_SKIP_EVIDENCE_LINES 1

int cert_exit_status(const CertFindings* f, int tool_error) {
  int status = tool_error ? CERT_EXIT_TOOL_ERROR : 0;
  for (size_t i = 0; i < f->n; ++i) {
    if (f->items[i].verdict == CERT_FAIL) status |= CERT_EXIT_MUST;
    if (f->items[i].verdict == CERT_NONSTRICT) status |= CERT_EXIT_NONSTRICT;
  }
  if (cert_findings_nothing_called(f)) status |= CERT_EXIT_UNTESTED;
  return status;
}

void cert_report_verdict(FILE* out, const CertRunInfo* run, const CertFindings* f) {
  CertIndex ix;
  char* line = NULL;
  if (cert_index_build(f, &ix) == 0) {
    line = cert_verdict_text(run, &ix);
    cert_index_free(&ix);
  }
  char* clean = cert_text_clean(line ? line : "certify: out of memory");
  fprintf(out, "%s\n", clean ? clean : "certify: out of memory");
  free(clean);
  free(line);
}

/* How the table is laid out for this output. */
typedef struct {
  FILE* out;
  int width;
  int colour;
  const CertRunInfo* run;
} CertTable;

static const char* verdict_colour(CertVerdict v) {
  switch (v) {
    case CERT_PASS: return "\033[32m";
    case CERT_SKIP: return "\033[36m";
    case CERT_WARN: return "\033[33m";
    case CERT_NONSTRICT: return "\033[35m";
    case CERT_FAIL: return "\033[1;31m";
  }
  return "";
}

static void put_verdict(const CertTable* t, CertVerdict v) {
  if (t->colour) fputs(verdict_colour(v), t->out);
  fprintf(t->out, "%-9s", cert_verdict_name(v));
  if (t->colour) fputs("\033[0m", t->out);
}

static int table_width(FILE* out) {
  const char* env = getenv("COLUMNS");
  int width = env ? atoi(env) : 0;
  struct winsize ws;
  if (width <= 0 && isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0) {
    width = ws.ws_col;
  }
  if (width <= 0) width = 100;
  return width < 60 ? 60 : width > 200 ? 200 : width;
}

/* Writes clean text word-wrapped at `indent`, the first line already
 * positioned; at most `max_lines` lines (0: no limit), then a note. */
static void wrap(const CertTable* t, const char* raw, int indent, int max_lines) {
  char* text = cert_text_clean(raw);
  if (text == NULL) return;
  int room = t->width - indent;
  int lines = 0;
  const char* p = text;
  while (*p) {
    if (max_lines && lines == max_lines) {
      fprintf(t->out, "%*s... (more in the JSON report)\n", indent, "");
      break;
    }
    if (lines > 0) fprintf(t->out, "%*s", indent, "");
    /* Take up to `room` bytes, breaking at the last space or a newline. */
    const char* nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    size_t take = len;
    if ((int)take > room) {
      take = (size_t)room;
      while (take > (size_t)room / 2 && p[take] != ' ') --take;
      if (p[take] != ' ') take = (size_t)room;
      /* Never split a UTF-8 sequence. */
      while (take > 0 && ((unsigned char)p[take] & 0xC0) == 0x80) --take;
    }
    fprintf(t->out, "%.*s\n", (int)take, p);
    p += take;
    while (*p == ' ') ++p;
    if (*p == '\n') ++p;
    ++lines;
  }
  if (lines == 0) fputc('\n', t->out);
  free(text);
}

/* "reference+upstream", "-" for static findings. */
static void put_runtimes(const CertTable* t, const char** labels, size_t n) {
  char buf[64];
  size_t used = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < n; ++k) {
    const char* name = labels[k][0] ? cert_base_name(labels[k]) : "static";
    int w = snprintf(buf + used, sizeof buf - used, "%s%s", k ? "+" : "", name);
    if (w < 0 || (size_t)w >= sizeof buf - used) break;
    used += (size_t)w;
  }
  char* clean = cert_text_clean(buf);
  fprintf(t->out, " %s", clean ? clean : "?");
  free(clean);
}

static void put_replay(const CertTable* t, const CertFinding* x) {
  if (x->replay[0] == '\0') return;
  char* line = cert_text_clean(x->replay);
  if (line == NULL) return;
  const CertRunInfo* run = t->run;
  fprintf(t->out, "%13sreplay:   %s", "", run->replay_prefix ? run->replay_prefix : "certify");
  if (x->runtime[0] && strstr(line, "runtime=") == NULL) { /* the line names it otherwise */
    fputs(" --runtime ", t->out);
    char* rt = cert_text_clean(x->runtime);
    cert_text_put_shell(t->out, rt ? rt : "");
    free(rt);
  }
  fputs(" --replay ", t->out);
  cert_text_put_shell(t->out, line);
  fputc('\n', t->out);
  free(line);
}

static int same_report(const CertFinding* a, const CertFinding* b) {
  return a->verdict == b->verdict && strcmp(a->reason, b->reason) == 0 &&
         strcmp(a->evidence, b->evidence) == 0 && strcmp(a->replay, b->replay) == 0 &&
         strcmp(a->clause, b->clause) == 0;
}

/* One non-PASS finding, merged with its twins under the other runtimes
 * (same verdict, reason, evidence and replay) so each is shown once. */
static void put_finding(const CertTable* t, const CertIndex* ix, const CertCell* cells,
                        size_t n_cells, size_t ci, size_t k, const CertFinding* x) {
  const char* labels[16];
  size_t n_labels = 0;
  for (size_t c = 0; c < n_cells && n_labels < 16; ++c) {
    for (size_t j = 0; j < cells[c].n; ++j) {
      const CertFinding* y = cert_cell_at(ix, &cells[c], j);
      if (!same_report(x, y)) continue;
      if (c < ci || (c == ci && j < k)) return; /* shown already with an earlier twin */
      if (n_labels == 0 || strcmp(labels[n_labels - 1], y->runtime) != 0) {
        labels[n_labels++] = y->runtime;
      }
    }
  }
  fputs("  ", t->out);
  put_verdict(t, x->verdict);
  char* check = cert_text_clean(x->check);
  char* clause = cert_text_clean(x->clause[0] ? x->clause : "-");
  fprintf(t->out, " %-28s %-8s", check ? check : "?", clause ? clause : "?");
  free(check);
  free(clause);
  put_runtimes(t, labels, n_labels);
  fputc('\n', t->out);
  fprintf(t->out, "%13s", "");
  wrap(t, x->reason, 13, 0);
  if (x->evidence[0]) {
    fprintf(t->out, "%13sevidence: ", "");
    int lines = x->verdict == CERT_SKIP ? CERT_SKIP_EVIDENCE_LINES : CERT_EVIDENCE_LINES;
    wrap(t, x->evidence, 23, lines);
  }
  put_replay(t, x);
}

/* Where the runtimes disagree on this check: "reference FAIL, upstream PASS". */
static void put_differences(const CertTable* t, const CertCell* cells, size_t n_cells,
                            const CertIndex* ix) {
  int differ = 0;
  for (size_t c = 1; c < n_cells; ++c) differ |= cells[c].worst != cells[0].worst;
  if (!differ) return;
  fprintf(t->out, "%13sruntimes differ: ", "");
  for (size_t c = 0; c < n_cells; ++c) {
    char* rt = cert_text_clean(cert_base_name(cert_cell_at(ix, &cells[c], 0)->runtime));
    fprintf(t->out, "%s%s %s", c ? ", " : "", rt ? rt : "?", cert_verdict_name(cells[c].worst));
    free(rt);
  }
  fputc('\n', t->out);
}

/* The checks of one function whose every cell passed, on wrapped lines. */
static void put_passed(const CertTable* t, const CertIndex* ix, const CertCell* cells,
                       size_t n_cells) {
  char* list = NULL;
  size_t size = 0;
  FILE* mem = open_memstream(&list, &size);
  if (mem == NULL) return;
  size_t n = 0;
  for (size_t c = 0; c < n_cells;) {
    size_t end = c + 1;
    const char* check = cert_cell_at(ix, &cells[c], 0)->check;
    while (end < n_cells && strcmp(cert_cell_at(ix, &cells[end], 0)->check, check) == 0) ++end;
    int all_pass = 1;
    for (size_t k = c; k < end; ++k) all_pass &= cells[k].worst == CERT_PASS;
    if (all_pass) fprintf(mem, "%s%s", n++ ? ", " : "", check);
    c = end;
  }
  fclose(mem);
  if (n > 0) {
    fputs("  ", t->out);
    put_verdict(t, CERT_PASS);
    fputc(' ', t->out);
    wrap(t, list, 12, 0);
  }
  free(list);
}

/* Which upstream releases the library can run on is worth reading even
 * when it passed: its reason is shown under the passes. */
static void put_release_range(const CertTable* t, const CertIndex* ix, const CertCell* cells,
                              size_t n_cells) {
  for (size_t c = 0; c < n_cells; ++c) {
    const CertFinding* x = cert_cell_at(ix, &cells[c], 0);
    if (cells[c].worst != CERT_PASS ||
        strcmp(x->check, cert_checks[CERT_CHECK_STATIC_RELEASES].id) != 0)
      continue;
    fprintf(t->out, "%12s", "");
    wrap(t, x->reason, 12, 2);
    return;
  }
}

/* Cells of one function, non-PASS checks first (worst first). */
static void put_function(const CertTable* t, const CertIndex* ix, const CertCell* cells,
                         size_t n_cells) {
  const char* name = cert_cell_at(ix, &cells[0], 0)->function;
  size_t count[CERT_FAIL + 1] = {0};
  for (size_t c = 0; c < n_cells; ++c) {
    for (size_t k = 0; k < cells[c].n; ++k) count[cert_cell_at(ix, &cells[c], k)->verdict]++;
  }
  char* clean = cert_text_clean(name);
  fprintf(t->out, "\n%s%s%s", t->colour ? "\033[1m" : "",
          name[0] ? (clean ? clean : "?") : "(library)", t->colour ? "\033[0m" : "");
  free(clean);
  fputs("  [", t->out);
  int first = 1;
  for (int v = CERT_FAIL; v >= CERT_PASS; --v) {
    if (count[v] == 0) continue;
    fprintf(t->out, "%s%zu %s", first ? "" : ", ", count[v], cert_verdict_name((CertVerdict)v));
    first = 0;
  }
  fputs("]\n", t->out);
  for (int v = CERT_FAIL; v > CERT_PASS; --v) {
    for (size_t c = 0; c < n_cells;) {
      size_t end = c + 1;
      const char* check = cert_cell_at(ix, &cells[c], 0)->check;
      while (end < n_cells && strcmp(cert_cell_at(ix, &cells[end], 0)->check, check) == 0) ++end;
      CertVerdict worst = CERT_PASS;
      for (size_t k = c; k < end; ++k) worst = cells[k].worst > worst ? cells[k].worst : worst;
      if ((int)worst == v) {
        for (size_t k = c; k < end; ++k) {
          for (size_t j = 0; j < cells[k].n; ++j) {
            const CertFinding* x = cert_cell_at(ix, &cells[k], j);
            if (x->verdict != CERT_PASS) put_finding(t, ix, cells + c, end - c, k - c, j, x);
          }
        }
        put_differences(t, cells + c, end - c, ix);
      }
      c = end;
    }
  }
  put_passed(t, ix, cells, n_cells);
  put_release_range(t, ix, cells, n_cells);
}

void cert_report_table(FILE* out, const CertRunInfo* run, const CertFindings* f) {
  CertIndex ix;
  if (cert_index_build(f, &ix) != 0) {
    fputs("certify: out of memory writing the table\n", out);
    return;
  }
  const char* no_colour = getenv("NO_COLOR");
  CertTable t = {out, table_width(out), isatty(fileno(out)) && !(no_colour && *no_colour), run};
  char* lib = cert_text_clean(run->lib_path ? run->lib_path : "?");
  fprintf(out, "certify %s", lib ? lib : "?");
  free(lib);
  if (run->n_runtimes) fputs("  (runtimes:", out);
  for (size_t r = 0; r < run->n_runtimes; ++r) {
    char* rt = cert_text_clean(run->runtimes[r]);
    fprintf(out, " %s", rt ? rt : "?");
    free(rt);
  }
  fputs(run->n_runtimes ? ")\n" : "\n", out);
  /* Cells are sorted by function: each function is one run of cells. */
  for (size_t c = 0; c < ix.n_cells;) {
    const char* fn = cert_cell_at(&ix, &ix.cells[c], 0)->function;
    size_t end = c + 1;
    while (end < ix.n_cells && strcmp(cert_cell_at(&ix, &ix.cells[end], 0)->function, fn) == 0) {
      ++end;
    }
    put_function(&t, &ix, ix.cells + c, end - c);
    c = end;
  }
  fputc('\n', out);
  if (run->releases) cert_report_releases_table(out, run->releases, t.width);
  cert_index_free(&ix);
}
