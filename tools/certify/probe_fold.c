/* From issues to findings: the issues of one function and check fold into
 * one finding that keeps the worst (and says how many calls shared it);
 * functions no call reached are said once; and a probe's result described
 * in full for --replay. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_judge.h"
#include "probe_plan.h"

static int died(const CertResult* r) {
  return r->end == CERT_END_SIGNAL || r->end == CERT_END_EXIT || r->end == CERT_END_TIMEOUT;
}

typedef struct {
  char function[CERT_NAME_MAX];
  const char* check;
  CertIssue worst;
  size_t worst_probe;
  size_t calls, bad;
} Cell;

static const char* function_of(const CertProbe* p) {
  const char* f = p->call.function;
  if (strncmp(f, "_metadata_", 10) == 0) return f + 10;
  if (strncmp(f, "_doc_", 5) == 0) return f + 5;
  return f;
}

static void view_function(const CertPlan* plan, const CertPlanFunction* fn, CertFunctionView* fv) {
  memset(fv, 0, sizeof *fv);
  for (size_t k = 0; k < plan->n; ++k) {
    const CertProbe* p = &plan->probes[k];
    const CertResult* r = &plan->results[k];
    if (strcmp(p->call.function, fn->name) != 0) continue;
    if (died(r) || r->end == CERT_END_FDS) {
      /* Its code ran past any check into something that ended the call. */
      fv->reached = fv->has_symbol = 1;
      continue;
    }
    if (r->end != CERT_END_DONE || r->out.status == CERT_CALL_NO_SYMBOL) continue;
    fv->has_symbol = 1;
    if (r->out.status != CERT_CALL_RETURNED) continue;
    const CertThreadOutcome* t = &r->out.t[0];
    if (t->rc == 0 || (t->rc == -1 && cert_no_gpu_message(t->message))) fv->reached = 1;
    if (t->rc == -1 && t->has_error && fv->refusal[0] == '\0') {
      char line[2048];
      cert_call_format(&p->call, line, sizeof line);
      snprintf(fv->refusal, sizeof fv->refusal, "%.200s: %.120s: %.240s", line, t->kind,
               t->message);
    }
  }
  fv->base_died = fn->base != SIZE_MAX && died(&plan->results[fn->base]);
}

static const CertFunctionView* view_of(const CertPlan* plan, const CertFunctionView* views,
                                       const char* function) {
  for (size_t f = 0; f < plan->n_fns; ++f) {
    if (strcmp(plan->fns[f].name, function) == 0) return &views[f];
  }
  return NULL;
}

/* Functions no call reached, each once. */
static int report_unreached(const CertPlan* plan, const CertFunctionView* views,
                            CertFindings* out) {
  for (size_t f = 0; f < plan->n_fns; ++f) {
    const CertFunctionView* fv = &views[f];
    if (fv->reached || !fv->has_symbol) continue;
    const CertManifestFunction* m = cert_manifest_find(plan->opt->manifest, plan->fns[f].name);
    if (cert_findings_add(
            out, plan->fns[f].name, "probe.valid-call", "", plan->opt->runtime_label, CERT_SKIP,
            fv->refusal, "",
            m ? "No call reached it: even the manifest's valid calls were refused, so the probes "
                "tested only its argument checks."
              : "No call reached it: every call certify could guess (0 to 4 tensors on the CPU or "
                "CUDA, scalars last, or only ints or floats) was refused by its argument checks, "
                "so its probes tested nothing; a manifest (--manifest) describes valid calls.") !=
        0) {
      return -1;
    }
  }
  return 0;
}

int cert_plan_judge(const CertPlan* plan, CertFindings* out, size_t* reached) {
  Cell* cells = calloc(plan->n + 1, sizeof *cells);
  CertFunctionView* views = calloc(plan->n_fns + 1, sizeof *views);
  if (cells == NULL || views == NULL) {
    free(cells);
    free(views);
    return -1;
  }
  *reached = 0;
  for (size_t f = 0; f < plan->n_fns; ++f) {
    view_function(plan, &plan->fns[f], &views[f]);
    *reached += views[f].reached;
  }
  size_t ncells = 0;
  CertIssue is;
  for (size_t k = 0; k < plan->n; ++k) {
    const char* fn = function_of(&plan->probes[k]);
    cert_judge_one(plan, k, view_of(plan, views, plan->probes[k].call.function), &is);
    if (plan->probes[k].cls == CERT_P_META && is.verdict == CERT_PASS) ++*reached;
    size_t c = 0;
    while (c < ncells &&
           !(strcmp(cells[c].function, fn) == 0 && strcmp(cells[c].check, is.check) == 0))
      ++c;
    if (c == ncells) {
      snprintf(cells[c].function, sizeof cells[c].function, "%s", fn);
      cells[c].check = is.check;
      cells[c].worst = is;
      cells[c].worst_probe = k;
      ncells++;
    }
    cells[c].calls++;
    if (is.verdict > cells[c].worst.verdict) {
      cells[c].worst = is;
      cells[c].worst_probe = k;
      cells[c].bad = 0;
    }
    if (is.verdict == cells[c].worst.verdict && is.verdict != CERT_PASS) cells[c].bad++;
  }
  int rc = report_unreached(plan, views, out);
  char replay[2048];
  for (size_t c = 0; c < ncells && rc == 0; ++c) {
    const Cell* cell = &cells[c];
    cert_call_format(&plan->probes[cell->worst_probe].call, replay, sizeof replay);
    char more[96] = "";
    if (cell->worst.verdict != CERT_PASS && cell->bad > 1) {
      snprintf(more, sizeof more, " (%zu of %zu such calls)", cell->bad, cell->calls);
    } else if (cell->worst.verdict == CERT_PASS) {
      snprintf(more, sizeof more, " (%zu call%s)", cell->calls, cell->calls == 1 ? "" : "s");
    }
    rc = cert_findings_add(out, cell->function, cell->check, cell->worst.clause,
                           plan->opt->runtime_label, cell->worst.verdict, cell->worst.evidence,
                           replay, "%s%s", cell->worst.reason, more);
  }
  free(cells);
  free(views);
  return rc;
}

void cert_plan_describe(const CertPlan* plan, size_t k, FILE* f) {
  const CertResult* r = &plan->results[k];
  char line[2048];
  cert_call_format(&plan->probes[k].call, line, sizeof line);
  fprintf(f, "replay: %s\n", line);
  switch (r->end) {
    case CERT_END_DONE:
      if (r->out.status != CERT_CALL_RETURNED) {
        fprintf(f, "not called: %s\n", r->out.note);
        break;
      }
      for (int t = 0; t < r->out.threads; ++t) {
        const CertThreadOutcome* o = &r->out.t[t];
        fprintf(f, "thread %d: returned %d; raised %s%s%s; result type index %d\n", t, o->rc,
                o->has_error ? o->kind : "nothing", o->has_error ? ": " : "",
                o->has_error ? o->message : "", o->result_type);
      }
      if (r->out.ref_arg >= 0) {
        fprintf(f, "argument %d: strong count %d before, %d after\n", r->out.ref_arg,
                r->out.ref_before, r->out.ref_after);
      }
      if (r->out.checked)
        fprintf(f, "reference: %d mismatching elements %s\n", r->out.mismatches, r->out.note);
      if (r->text) fprintf(f, "returned text: %.2000s\n", r->text);
      break;
    case CERT_END_SIGNAL:
      fprintf(f, "killed by signal %d (%s)", r->signo, strsignal(r->signo));
      if (r->has_sig && (r->signo == SIGSEGV || r->signo == SIGBUS)) {
        static const char* const kWhere[] = {
            "", ": on the page after args[num_args - 1]",
            ": on the page after the last element of argument",
            ": on the unreadable page given as device data or an opaque pointer", ""};
        int region = r->sig.region >= 0 && r->sig.region <= 4 ? r->sig.region : 0;
        fprintf(f, " at address 0x%llx%s", (unsigned long long)r->sig.addr, kWhere[region]);
        if (region == CERT_REGION_DATA_END) fprintf(f, " %d", r->sig.arg);
      }
      fputc('\n', f);
      break;
    case CERT_END_EXIT:
      fprintf(f, "the process exited with status %d during the call\n", r->exit_status);
      break;
    case CERT_END_TIMEOUT: fprintf(f, "did not return within the time limit\n"); break;
    case CERT_END_LOAD: fprintf(f, "did not load: %s\n", r->text ? r->text : ""); break;
    case CERT_END_TOOL: fprintf(f, "certify could not run it\n"); break;
    case CERT_END_NOT_RUN:
      fprintf(f, "not run: its function hung or exhausted memory on another call\n");
      break;
    case CERT_END_FDS:
      fprintf(f, "returned with certify's file descriptors closed or replaced\n");
      break;
  }
  if (r->strays > 0)
    fprintf(f, "left %d process%s behind (first: %s)\n", r->strays, r->strays > 1 ? "es" : "",
            r->stray);
  if (r->output && r->output[0]) fprintf(f, "output:\n%s\n", r->output);
}
