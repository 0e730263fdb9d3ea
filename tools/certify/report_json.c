/* The JSON report (schema: tools/certify/README.md), with Jansson. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_index.h"
#include "report_releases.h"
#include "text.h"

#define CERT_JSON_SCHEMA "tvm-ffi-certify/1"

/* Jansson refuses invalid UTF-8, and a library's messages may hold any
 * bytes: every string goes through the cleaner first. */
static json_t* cert_json_text(const char* s) {
  char* clean = cert_text_clean(s);
  if (clean == NULL) return NULL;
  json_t* j = json_string(clean);
  free(clean);
  return j;
}

/* json_object_set_new that also fails when `value` is NULL. */
static int cert_json_put(json_t* obj, const char* key, json_t* value) {
  if (value == NULL) return -1;
  return json_object_set_new(obj, key, value);
}

static json_t* cert_json_finding(const CertFinding* x) {
  json_t* o = json_object();
  if (o == NULL) return NULL;
  int bad = cert_json_put(o, "function", cert_json_text(x->function)) |
            cert_json_put(o, "check", cert_json_text(x->check)) |
            cert_json_put(o, "clause", cert_json_text(x->clause)) |
            cert_json_put(o, "runtime", cert_json_text(x->runtime)) |
            cert_json_put(o, "verdict", json_string(cert_verdict_name(x->verdict))) |
            cert_json_put(o, "reason", cert_json_text(x->reason)) |
            cert_json_put(o, "evidence", cert_json_text(x->evidence)) |
            cert_json_put(o, "replay", cert_json_text(x->replay));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t* cert_json_counts(const CertIndex* ix) {
  json_t* o = json_object();
  if (o == NULL) return NULL;
  int bad = 0;
  for (int v = CERT_PASS; v <= CERT_FAIL; ++v) {
    bad |= cert_json_put(o, cert_verdict_name((CertVerdict)v), json_integer((json_int_t)ix->count[v]));
  }
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Every (function, check) whose worst verdict is not the same under every
 * runtime that ran it: {"function", "check", "verdicts": {runtime: verdict}}. */
static json_t* cert_json_differences(const CertIndex* ix) {
  json_t* list = json_array();
  if (list == NULL) return NULL;
  for (size_t c = 0; c < ix->n_cells;) {
    const CertFinding* head = cert_cell_at(ix, &ix->cells[c], 0);
    int differ;
    size_t end = cert_index_pair_end(ix, c, &differ);
    if (differ) {
      json_t* d = json_object();
      json_t* verdicts = json_object();
      int bad = d == NULL || verdicts == NULL;
      for (size_t k = c; k < end && !bad; ++k) {
        char* rt = cert_text_clean(cert_cell_at(ix, &ix->cells[k], 0)->runtime);
        bad |= rt == NULL ||
               cert_json_put(verdicts, rt, json_string(cert_verdict_name(ix->cells[k].worst)));
        free(rt);
      }
      if (!bad) {
        bad |= cert_json_put(d, "function", cert_json_text(head->function)) |
               cert_json_put(d, "check", cert_json_text(head->check)) |
               cert_json_put(d, "verdicts", verdicts);
        verdicts = NULL;
      }
      json_decref(verdicts);
      if (bad) json_decref(d);
      if (bad || json_array_append_new(list, d) != 0) {
        json_decref(list);
        return NULL;
      }
    }
    c = end;
  }
  return list;
}

static json_t* cert_json_report(const CertRunInfo* run, const CertFindings* f, const CertIndex* ix) {
  json_t* root = json_object();
  json_t* runtimes = json_array();
  json_t* functions = json_array();
  json_t* findings = json_array();
  char* verdict = cert_verdict_text(run, ix);
  int bad = !root || !runtimes || !functions || !findings || !verdict;
  for (size_t r = 0; r < run->n_runtimes && !bad; ++r) {
    bad |= json_array_append_new(runtimes, cert_json_text(run->runtimes[r])) != 0;
  }
  for (size_t k = 1; k < ix->n_functions && !bad; ++k) {
    bad |= json_array_append_new(functions, cert_json_text(ix->functions[k])) != 0;
  }
  for (size_t i = 0; i < f->n && !bad; ++i) {
    bad |= json_array_append_new(findings, cert_json_finding(&f->items[i])) != 0;
  }
  if (!bad) {
    int status = cert_exit_status(f, run->error != NULL);
    bad |= cert_json_put(root, "schema", json_string(CERT_JSON_SCHEMA)) |
           cert_json_put(root, "library", cert_json_text(run->lib_path)) |
           cert_json_put(root, "verdict", json_string(cert_verdict_word(run, ix))) |
           cert_json_put(root, "summary", cert_json_text(verdict)) |
           cert_json_put(root, "exit_status", json_integer(status)) |
           cert_json_put(root, "error", run->error ? cert_json_text(run->error) : json_null()) |
           cert_json_put(root, "seconds", json_real(run->seconds)) |
           cert_json_put(root, "n_functions", json_integer((json_int_t)run->n_functions)) |
           cert_json_put(root, "runtimes", runtimes) |
           cert_json_put(root, "counts", cert_json_counts(ix)) |
           cert_json_put(root, "functions", functions) |
           cert_json_put(root, "differences", cert_json_differences(ix)) |
           cert_json_put(root, "findings", findings);
    runtimes = functions = findings = NULL; /* owned by root now */
    if (!bad && run->releases) bad |= cert_report_releases_json(root, run->releases) != 0;
  }
  free(verdict);
  json_decref(runtimes);
  json_decref(functions);
  json_decref(findings);
  if (bad) {
    json_decref(root);
    return NULL;
  }
  return root;
}

int cert_report_json(const char* path, const CertRunInfo* run, const CertFindings* f) {
  CertIndex ix;
  if (cert_index_build(f, &ix) != 0) return -1;
  json_t* root = cert_json_report(run, f, &ix);
  cert_index_free(&ix);
  if (root == NULL) {
    errno = ENOMEM;
    return -1;
  }
  int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (rc != 0 && errno == 0) errno = EIO;
  return rc == 0 ? 0 : -1;
}
