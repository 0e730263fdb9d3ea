/* The HTML report: one self-contained page (inline CSS and a few lines of
 * JS to filter by verdict, function, runtime and text). Every string that
 * came from a finding is cleaned and escaped: the library under test wrote
 * some of them. The script never turns them into markup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_index.h"
#include "report_releases.h"
#include "text.h"

#define CERT_INLINE_EVIDENCE 160 /* longer evidence folds into <details> */

static const char cert_html_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}\n"
    "header{background:#1d2330;color:#fff;padding:14px 24px}\n"
    "header h1{font-size:18px;margin:0 0 6px}header code{color:#cfd8e3}\n"
    ".verdict{font-size:16px;font-weight:600;margin:6px 0;padding:6px 10px;border-radius:4px;"
    "display:inline-block}\n"
    ".meta{margin:4px 0 0;color:#b8c2d0}\n"
    "main{padding:12px 24px}\n"
    "#filters{display:flex;flex-wrap:wrap;gap:14px;align-items:center;background:#fff;"
    "border:1px solid #dde1e7;border-radius:6px;padding:8px 12px;margin-bottom:12px}\n"
    "#filters label{white-space:nowrap}#shown{color:#5b6472;margin-left:auto}\n"
    "table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e7}\n"
    "th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid #eceef2}\n"
    "th{background:#eef1f5;position:sticky;top:0}\n"
    "td.fn,td.ck{font-family:ui-monospace,monospace;font-size:13px;white-space:nowrap}\n"
    "td.cl,td.rt{white-space:nowrap}\n"
    "pre,code{font-family:ui-monospace,monospace;font-size:12.5px}\n"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;background:#f3f4f6;padding:4px "
    "6px;"
    "border-radius:3px}\n"
    ".ev{color:#3b4352;margin-top:3px;overflow-wrap:anywhere}.replay{margin-top:3px;color:#5b6472;"
    "overflow-wrap:anywhere}\n"
    ".badge{display:inline-block;min-width:78px;text-align:center;font-weight:600;font-size:12px;"
    "padding:2px 6px;border-radius:3px;color:#fff}\n"
    ".v-FAIL{background:#c62828;color:#fff}.v-NONSTRICT{background:#7b1fa2;color:#fff}\n"
    ".v-WARN{background:#f9a825;color:#1d2330}.v-SKIP{background:#607d8b;color:#fff}\n"
    ".v-PASS{background:#2e7d32;color:#fff}.v-ERROR{background:#c62828;color:#fff}\n"
    "tr.r-FAIL td{background:#fdecea}tr.r-NONSTRICT td{background:#f6ecf9}\n"
    "tr.r-WARN td{background:#fff8e1}tr.r-SKIP td{background:#f2f5f7}\n"
    "h2{font-size:15px;margin:18px 0 6px}\n"
    ".counts span{margin-right:6px}\n";

static const char cert_html_script[] =
    "(function(){\n"
    "var rows=document.querySelectorAll('#findings tbody tr');\n"
    "function val(id){return document.getElementById(id).value;}\n"
    "function apply(){\n"
    "  var want={};\n"
    "  document.querySelectorAll('#filters input[type=checkbox]').forEach(function(b){"
    "want[b.value]=b.checked;});\n"
    "  var fn=val('f-function'),rt=val('f-runtime'),q=val('f-text').toLowerCase(),n=0;\n"
    "  rows.forEach(function(r){\n"
    "    var ok=want[r.dataset.verdict]&&(!fn||r.dataset.function===fn)&&"
    "(!rt||r.dataset.runtime===rt)&&(!q||r.textContent.toLowerCase().indexOf(q)>=0);\n"
    "    r.hidden=!ok;if(ok)n++;\n"
    "  });\n"
    "  document.getElementById('shown').textContent=n+' of '+rows.length+' findings shown';\n"
    "}\n"
    "document.querySelectorAll('#filters input,#filters select').forEach(function(e){"
    "e.addEventListener('input',apply);e.addEventListener('change',apply);});\n"
    "apply();\n"
    "})();\n";

static const char* html_function(const char* name) { return name[0] ? name : "(library)"; }
static const char* html_runtime(const char* name) { return name[0] ? name : "static"; }

static void html_header(FILE* out, const CertRunInfo* run, const CertIndex* ix) {
  const char* lib = run->lib_path ? run->lib_path : "?";
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>certify: ",
        out);
  cert_text_put_untrusted(out, cert_base_name(lib));
  fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>certify <code>",
          cert_html_style);
  cert_text_put_untrusted(out, lib);
  const char* word = cert_verdict_word(run, ix);
  const char* cls = run->error                  ? "ERROR"
                    : ix->count[CERT_FAIL]      ? "FAIL"
                    : ix->count[CERT_NONSTRICT] ? "NONSTRICT"
                                                : "PASS";
  fprintf(out, "</code></h1>\n<div class=\"verdict v-%s\">", cls);
  char* line = cert_verdict_text(run, ix);
  cert_text_put_untrusted(out, line ? line : word);
  free(line);
  fputs("</div>\n<p class=\"meta\">runtimes:", out);
  for (size_t r = 0; r < run->n_runtimes; ++r) {
    fputs(r ? ", " : " ", out);
    cert_text_put_untrusted(out, run->runtimes[r]);
  }
  if (run->n_runtimes == 0) fputs(" none (static checks only)", out);
  fprintf(out, " &middot; exit status %d</p>\n</header>\n<main>\n",
          cert_exit_status(ix->f, run->error != NULL));
}

/* Distinct runtime labels of the findings, in the order met. */
static size_t html_runtimes(const CertFindings* f, const char** out) {
  size_t n = 0;
  for (size_t i = 0; i < f->n; ++i) {
    size_t k = 0;
    while (k < n && strcmp(out[k], f->items[i].runtime) != 0) ++k;
    if (k == n) out[n++] = f->items[i].runtime;
  }
  return n;
}

static void html_option(FILE* out, const char* value) {
  fputs("<option value=\"", out);
  cert_text_put_untrusted(out, value);
  fputs("\">", out);
  cert_text_put_untrusted(out, value);
  fputs("</option>", out);
}

static void html_filters(FILE* out, const CertIndex* ix, const char** runtimes, size_t n_runtimes) {
  fputs("<div id=\"filters\">\n<strong>Show</strong>\n", out);
  int any_problem = ix->f->n > ix->count[CERT_PASS];
  for (int v = CERT_FAIL; v >= CERT_PASS; --v) {
    const char* name = cert_verdict_name((CertVerdict)v);
    /* With problems to read, passes start hidden (one click away). */
    int checked = v != CERT_PASS || !any_problem;
    fprintf(out,
            "<label><input type=\"checkbox\" value=\"%s\"%s> <span class=\"badge v-%s\">%s "
            "(%zu)</span></label>\n",
            name, checked ? " checked" : "", name, name, ix->count[v]);
  }
  fputs("<label>Function <select id=\"f-function\"><option value=\"\">all</option>", out);
  for (size_t k = 0; k < ix->n_functions; ++k) {
    if (k == 0 && ix->f->n > 0) {
      int library_has = 0;
      for (size_t i = 0; i < ix->f->n; ++i) library_has |= ix->f->items[i].function[0] == '\0';
      if (!library_has) continue;
    }
    html_option(out, html_function(ix->functions[k]));
  }
  fputs(
      "</select></label>\n<label>Runtime <select id=\"f-runtime\"><option value=\"\">all</option>",
      out);
  for (size_t r = 0; r < n_runtimes; ++r) html_option(out, html_runtime(runtimes[r]));
  fputs(
      "</select></label>\n<label>Text <input id=\"f-text\" type=\"search\" size=\"18\"></label>\n"
      "<span id=\"shown\"></span>\n</div>\n",
      out);
}

/* The (function, check) pairs whose verdict depends on the runtime. */
static void html_differences(FILE* out, const CertIndex* ix) {
  int any = 0;
  for (size_t c = 0; c < ix->n_cells;) {
    const CertFinding* head = cert_cell_at(ix, &ix->cells[c], 0);
    int differ;
    size_t end = cert_index_pair_end(ix, c, &differ);
    if (differ) {
      if (!any) {
        fputs(
            "<h2>Where the runtimes differ</h2>\n<table id=\"differences\">\n<thead><tr>"
            "<th>Function</th><th>Check</th><th>Verdict by runtime</th></tr></thead>\n<tbody>\n",
            out);
      }
      any = 1;
      fputs("<tr><td class=\"fn\">", out);
      cert_text_put_untrusted(out, html_function(head->function));
      fputs("</td><td class=\"ck\">", out);
      cert_text_put_untrusted(out, head->check);
      fputs("</td><td>", out);
      for (size_t k = c; k < end; ++k) {
        const char* v = cert_verdict_name(ix->cells[k].worst);
        cert_text_put_untrusted(out, html_runtime(cert_cell_at(ix, &ix->cells[k], 0)->runtime));
        fprintf(out, " <span class=\"badge v-%s\">%s</span> ", v, v);
      }
      fputs("</td></tr>\n", out);
    }
    c = end;
  }
  if (any) fputs("</tbody>\n</table>\n", out);
}

static void html_evidence(FILE* out, const char* evidence) {
  if (evidence[0] == '\0') return;
  if (strlen(evidence) <= CERT_INLINE_EVIDENCE && strchr(evidence, '\n') == NULL) {
    fputs("<div class=\"ev\">evidence: <code>", out);
    cert_text_put_untrusted(out, evidence);
    fputs("</code></div>", out);
    return;
  }
  fputs("<details class=\"ev\"><summary>evidence</summary><pre>", out);
  cert_text_put_untrusted(out, evidence);
  fputs("</pre></details>", out);
}

/* The command that runs the probe again, as the table prints it. */
static void html_replay(FILE* out, const CertRunInfo* run, const CertFinding* x) {
  char* cmd = NULL;
  size_t size = 0;
  FILE* mem = open_memstream(&cmd, &size);
  if (mem == NULL) return;
  fputs(run->replay_prefix ? run->replay_prefix : "certify", mem);
  if (x->runtime[0] && strstr(x->replay, "runtime=") == NULL) {
    fputs(" --runtime ", mem);
    cert_text_put_shell(mem, x->runtime);
  }
  fputs(" --replay ", mem);
  cert_text_put_shell(mem, x->replay);
  if (fclose(mem) == 0) cert_text_put_untrusted(out, cmd);
  free(cmd);
}

static void html_row(FILE* out, const CertRunInfo* run, const CertFinding* x) {
  const char* v = cert_verdict_name(x->verdict);
  fprintf(out, "<tr class=\"r-%s\" data-verdict=\"%s\" data-function=\"", v, v);
  cert_text_put_untrusted(out, html_function(x->function));
  fputs("\" data-runtime=\"", out);
  cert_text_put_untrusted(out, html_runtime(x->runtime));
  fputs("\"><td class=\"fn\">", out);
  cert_text_put_untrusted(out, html_function(x->function));
  fputs("</td><td class=\"ck\">", out);
  cert_text_put_untrusted(out, x->check);
  fputs("</td><td class=\"cl\">", out);
  cert_text_put_untrusted(out, x->clause);
  fputs("</td><td class=\"rt\">", out);
  cert_text_put_untrusted(out, html_runtime(x->runtime));
  fprintf(out, "</td><td><span class=\"badge v-%s\">%s</span></td><td>", v, v);
  cert_text_put_untrusted(out, x->reason);
  html_evidence(out, x->evidence);
  if (x->replay[0]) {
    fputs("<div class=\"replay\">replay: <code>", out);
    html_replay(out, run, x);
    fputs("</code></div>", out);
  }
  fputs("</td></tr>\n", out);
}

/* Rows by function (as the index orders them), worst verdict first. */
static void html_findings(FILE* out, const CertRunInfo* run, const CertIndex* ix) {
  fputs(
      "<h2>Findings</h2>\n<table id=\"findings\">\n<thead><tr><th>Function</th><th>Check</th>"
      "<th>Clause</th><th>Runtime</th><th>Verdict</th><th>Reason and evidence</th></tr>"
      "</thead>\n<tbody>\n",
      out);
  size_t n = ix->f->n;
  for (size_t start = 0; start < n;) {
    const char* fn = ix->f->items[ix->order[start]].function;
    size_t end = start + 1;
    while (end < n && strcmp(ix->f->items[ix->order[end]].function, fn) == 0) ++end;
    for (int v = CERT_FAIL; v >= CERT_PASS; --v) {
      for (size_t k = start; k < end; ++k) {
        const CertFinding* x = &ix->f->items[ix->order[k]];
        if ((int)x->verdict == v) html_row(out, run, x);
      }
    }
    start = end;
  }
  fputs("</tbody>\n</table>\n", out);
}

static int html_write(FILE* out, const CertRunInfo* run, const CertIndex* ix) {
  const char** runtimes = malloc((ix->f->n + 1) * sizeof *runtimes);
  if (runtimes == NULL) return -1;
  size_t n_runtimes = html_runtimes(ix->f, runtimes);
  html_header(out, run, ix);
  html_filters(out, ix, runtimes, n_runtimes);
  html_differences(out, ix);
  if (run->releases) cert_report_releases_html(out, run->releases, ix->f);
  html_findings(out, run, ix);
  fprintf(out, "</main>\n<script>\n%s</script>\n</body>\n</html>\n", cert_html_script);
  free(runtimes);
  return 0;
}

int cert_report_html(const char* path, const CertRunInfo* run, const CertFindings* f) {
  return cert_index_write_file(path, run, f, html_write);
}
