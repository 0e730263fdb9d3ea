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
static json_t* json_text(const char* s) {
  char* clean = cert_text_clean(s);
  if (clean == NULL) return NULL;
  json_t* j = json_string(clean);
  free(clean);
  return j;
}

/* json_object_set_new that also fails when `value` is NULL. */
static int json_put(json_t* obj, const char* key, json_t* value) {
  if (value == NULL) return -1;
  return json_object_set_new(obj, key, value);
}

static json_t* json_finding(const CertFinding* x) {
  json_t* o = json_object();
  if (o == NULL) return NULL;
  int bad =
      json_put(o, "function", json_text(x->function)) | json_put(o, "check", json_text(x->check)) |
      json_put(o, "clause", json_text(x->clause)) | json_put(o, "runtime", json_text(x->runtime)) |
      json_put(o, "verdict", json_string(cert_verdict_name(x->verdict))) |
      json_put(o, "reason", json_text(x->reason)) |
      json_put(o, "evidence", json_text(x->evidence)) | json_put(o, "replay", json_text(x->replay));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t* json_counts(const CertIndex* ix) {
  json_t* o = json_object();
  if (o == NULL) return NULL;
  int bad = 0;
  for (int v = CERT_PASS; v <= CERT_FAIL; ++v) {
    bad |= json_put(o, cert_verdict_name((CertVerdict)v), json_integer((json_int_t)ix->count[v]));
  }
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Every (function, check) whose worst verdict is not the same under every
 * runtime that ran it: {"function", "check", "verdicts": {runtime: verdict}}. */
static json_t* json_differences(const CertIndex* ix) {
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
               json_put(verdicts, rt, json_string(cert_verdict_name(ix->cells[k].worst)));
        free(rt);
      }
      if (!bad) {
        bad |= json_put(d, "function", json_text(head->function)) |
               json_put(d, "check", json_text(head->check)) | json_put(d, "verdicts", verdicts);
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

static json_t* json_report(const CertRunInfo* run, const CertFindings* f, const CertIndex* ix) {
  json_t* root = json_object();
  json_t* runtimes = json_array();
  json_t* functions = json_array();
  json_t* findings = json_array();
  char* verdict = cert_verdict_text(run, ix);
  int bad = !root || !runtimes || !functions || !findings || !verdict;
  for (size_t r = 0; r < run->n_runtimes && !bad; ++r) {
    bad |= json_array_append_new(runtimes, json_text(run->runtimes[r])) != 0;
  }
  for (size_t k = 1; k < ix->n_functions && !bad; ++k) {
    bad |= json_array_append_new(functions, json_text(ix->functions[k])) != 0;
  }
  for (size_t i = 0; i < f->n && !bad; ++i) {
    bad |= json_array_append_new(findings, json_finding(&f->items[i])) != 0;
  }
  if (!bad) {
    int status = cert_exit_status(f, run->error != NULL);
    bad |= json_put(root, "schema", json_string(CERT_JSON_SCHEMA)) |
           json_put(root, "library", json_text(run->lib_path)) |
           json_put(root, "verdict", json_string(cert_verdict_word(run, ix))) |
           json_put(root, "summary", json_text(verdict)) |
           json_put(root, "exit_status", json_integer(status)) |
           json_put(root, "error", run->error ? json_text(run->error) : json_null()) |
           json_put(root, "seconds", json_real(run->seconds)) |
           json_put(root, "n_functions", json_integer((json_int_t)run->n_functions)) |
           json_put(root, "runtimes", runtimes) | json_put(root, "counts", json_counts(ix)) |
           json_put(root, "functions", functions) |
           json_put(root, "differences", json_differences(ix)) |
           json_put(root, "findings", findings);
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
  json_t* root = json_report(run, f, &ix);
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
