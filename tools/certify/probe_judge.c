/* From results to findings: each probe's result becomes at most one issue
 * (the first problem in the order crash, error hygiene, result slot,
 * reference counts, threads, documented behaviour), and the issues of one
 * function and check fold into one finding that keeps the worst. */
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "layout_explain.h"
#include "probe_plan.h"

typedef struct {
  const char* check;
  const char* clause;
  CertVerdict verdict;
  char reason[700];
  char evidence[1600];
} Issue;

static void set(Issue* is, const char* check, const char* clause, CertVerdict v, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void set(Issue* is, const char* check, const char* clause, CertVerdict v, const char* fmt, ...) {
  is->check = check;
  is->clause = clause;
  is->verdict = v;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(is->reason, sizeof is->reason, fmt, ap);
  va_end(ap);
}

static const char* class_check(CertProbeClass c) {
  switch (c) {
    case CERT_P_ARITY:
    case CERT_P_BASE: return "probe.arity";
    case CERT_P_KINDS: return "probe.arg-kinds";
    case CERT_P_FORMS: return "probe.tensor-forms";
    case CERT_P_LEGACY: return "probe.legacy-forms";
    case CERT_P_INVALID: return "probe.invalid-tensors";
    case CERT_P_THREADS: return "probe.threads";
    case CERT_P_VALID: return "manifest.valid-calls";
    case CERT_P_ERRORS: return "manifest.errors";
    case CERT_P_META: return "probe.metadata";
    case CERT_P_REPLAY: return "replay";
  }
  return "probe";
}

/* The clause a crash of this class of call breaks, and how hard. */
static const char* crash_clause(CertProbeClass c, CertVerdict* v) {
  *v = CERT_FAIL;
  switch (c) {
    case CERT_P_FORMS: return "CDY-004";
    case CERT_P_LEGACY: return *v = CERT_NONSTRICT, "CDY-006";
    case CERT_P_INVALID: return *v = CERT_WARN, "CDY-007";
    case CERT_P_THREADS: return "CDY-012";
    case CERT_P_META: return "CDY-013";
    default: return "CDY-002";
  }
}

static const char* pass_reason(const char* check) {
  static const struct {
    const char* check;
    const char* reason;
  } k[] = {
      {"probe.arity", "Every argument count (0 to 4, the array ending at an unreadable page) returned "
                      "cleanly and read nothing past num_args."},
      {"probe.arg-kinds", "Every argument kind in every position returned 0 or -1 with a proper error."},
      {"probe.tensor-forms", "Every DLPack 1.2 tensor form (strides, byte_offset, empty, 0-d, 2-D, "
                             "dtypes, device types, Tensor objects) was accepted or refused cleanly."},
      {"probe.legacy-forms", "Tensors with NULL strides (legacy DLPack) were accepted or refused cleanly."},
      {"probe.invalid-tensors", "Non-empty tensors with NULL data were refused cleanly."},
      {"probe.threads", "The same call from two threads at once gave the same outcome on both."},
      {"manifest.valid-calls", "Valid calls of every listed dtype and several sizes and layouts returned "
                               "0, with outputs equal to the reference where one is given."},
      {"manifest.errors", "Every documented invalid call failed with the documented error kind."},
      {"probe.metadata", "The metadata/doc function returned a string."},
      {"replay", "The call returned cleanly."},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) {
    if (strcmp(k[i].check, check) == 0) return k[i].reason;
  }
  return "Passed.";
}

static int no_gpu_message(const char* m) {
  return strstr(m, "cudaErrorInsufficientDriver") || strstr(m, "cudaErrorNoDevice") ||
         strstr(m, "CUDA_ERROR_NO_DEVICE") || strstr(m, "CUDA_ERROR_NOT_INITIALIZED") ||
         strstr(m, "no CUDA-capable device");
}

static void append(char* buf, size_t size, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char* buf, size_t size, const char* fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, size - len, fmt, ap);
  va_end(ap);
}

static void output_tail(const CertResult* r, char* ev, size_t size) {
  if (r->output == NULL || r->output[0] == '\0') return;
  size_t n = strlen(r->output);
  const char* tail = n > 600 ? r->output + n - 600 : r->output;
  append(ev, size, "; its output ended: %s", tail);
}

/* The last line of a process's output that reads like a raised error
 * ("InternalError: Check failed: ..."): what a runtime or library printed
 * before it ended the process. */
static int last_error_line(const char* output, char* buf, size_t size) {
  buf[0] = '\0';
  for (const char* line = output; line && *line;) {
    const char* end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    const char* colon = memchr(line, ':', n);
    if (colon && colon - line >= 5 && colon - line < 40 && strncmp(colon - 5, "Error", 5) == 0 &&
        memchr(line, ' ', (size_t)(colon - line)) == NULL) {
      snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), line);
    }
    line = end ? end + 1 : NULL;
  }
  return buf[0] != '\0';
}

static void judge_death(const CertProbe* p, const CertResult* r, const CertPlan* plan, Issue* is) {
  CertVerdict v;
  const char* clause = crash_clause(p->cls, &v);
  const char* check = class_check(p->cls);
  if (r->has_sig && r->sig.region == CERT_REGION_ARGS_END) {
    set(is, "probe.args-bounds", "CDY-003", CERT_FAIL,
        "Read past the end of the argument array: args[%d] and beyond lie on an unreadable page "
        "and the function touched them (num_args was %d).",
        p->call.nargs, p->call.nargs);
  } else if (r->has_sig && r->sig.region == CERT_REGION_DATA_END) {
    set(is, "probe.tensor-bounds", "CDY-005", CERT_FAIL,
        "Touched memory past the last element of tensor argument %d (it ends right before an "
        "unreadable page).", r->sig.arg);
  } else if (r->has_sig && r->sig.region == CERT_REGION_HEAP_END) {
    set(is, "probe.heap-bounds", "CDY-042", CERT_FAIL, "%s", "");
    cert_explain_heap_end(&r->sig, is->reason, sizeof is->reason);
  } else if (r->has_sig && r->sig.region == CERT_REGION_DATA_GUARD) {
    set(is, "probe.tensor-bounds", "CDY-005", CERT_FAIL,
        "Dereferenced on the host a pointer certify made unreadable: the data of a non-CPU tensor "
        "or an opaque pointer argument.");
  } else if (p->cls == CERT_P_INVALID && r->end == CERT_END_SIGNAL && r->signo == SIGSEGV) {
    set(is, check, clause, v,
        "Dereferenced the NULL data pointer of a non-empty tensor (not valid DLPack) instead of "
        "refusing it with an error.");
  } else if (r->memory_exhausted) {
    set(is, check, clause, v, "Exhausted the memory cap (%zu MiB) and died instead of raising an error.",
        plan->opt->memory_limit ? plan->opt->memory_limit >> 20 : (size_t)4096);
  } else if (r->end == CERT_END_SIGNAL) {
    set(is, check, clause, v, "The call took the process down with signal %d (%s)%s.", r->signo,
        strsignal(r->signo), r->signo == SIGABRT ? ": it aborted instead of raising an error" : "");
  } else if (r->end == CERT_END_EXIT) {
    char said[300];
    int printed = last_error_line(r->output, said, sizeof said);
    set(is, check, clause, v, "The call ended the process with exit(%d) instead of returning%s%s%s.",
        r->exit_status, printed ? " after printing '" : "", said, printed ? "'" : "");
  } else {
    set(is, check, clause, v, "The call did not return within the time limit (%.0f s)%s.",
        plan->opt->timeout_s > 0 ? plan->opt->timeout_s : 10.0,
        r->memory_exhausted ? " and had exhausted the memory cap" : "");
  }
  if (r->end == CERT_END_SIGNAL) {
    snprintf(is->evidence, sizeof is->evidence, "signal %d (%s)", r->signo, strsignal(r->signo));
    if (r->has_sig && (r->signo == SIGSEGV || r->signo == SIGBUS)) {
      append(is->evidence, sizeof is->evidence, " at address 0x%llx on thread %d",
             (unsigned long long)r->sig.addr, r->sig.thread);
    }
  } else if (r->end == CERT_END_EXIT) {
    snprintf(is->evidence, sizeof is->evidence, "exit status %d", r->exit_status);
  } else {
    snprintf(is->evidence, sizeof is->evidence, "killed after the time limit");
  }
  append(is->evidence, sizeof is->evidence, "; peak memory %ld KiB", r->maxrss_kb);
  output_tail(r, is->evidence, sizeof is->evidence);
}

static void judge_meta(const CertProbe* p, const CertResult* r, Issue* is) {
  const CertThreadOutcome* t = &r->out.t[0];
  if (t->rc != 0) {
    set(is, "probe.metadata", "CDY-013", CERT_FAIL, "The metadata/doc function %s failed.", p->call.function);
    snprintf(is->evidence, sizeof is->evidence, "rc %d, %s: %s", t->rc, t->kind, t->message);
    return;
  }
  if (r->text == NULL) {
    set(is, "probe.metadata", "CDY-013", CERT_FAIL,
        "The metadata/doc function returned type index %d, not a str.", t->result_type);
    return;
  }
  snprintf(is->evidence, sizeof is->evidence, "%.1200s", r->text);
  if (strncmp(p->call.function, "_metadata_", 10) == 0) {
    json_error_t err;
    json_t* j = json_loads(r->text, 0, &err);
    if (j == NULL || !json_is_object(j)) {
      set(is, "probe.metadata", "CDY-013", CERT_WARN,
          "The metadata string is not a JSON object (%s), so hosts cannot read the signature from it.",
          j ? "another JSON value" : err.text);
      json_decref(j);
      return;
    }
    set(is, "probe.metadata", "", CERT_PASS, "The metadata function returned a JSON object with %zu keys.",
        json_object_size(j));
    json_decref(j);
    return;
  }
  set(is, "probe.metadata", "", CERT_PASS, "The doc function returned a string of %zu bytes.", strlen(r->text));
}

/* -1 with one good error, 0 with none: per thread. */
static int judge_hygiene(const CertProbe* p, const CertThreadOutcome* t, int thread, Issue* is) {
  const char* on = thread ? " (on the second thread)" : "";
  if (t->rc != 0 && t->rc != -1) {
    set(is, "probe.error-hygiene", "CDY-008", CERT_FAIL, "Returned %d%s: a safe call returns only 0 or -1.",
        t->rc, on);
  } else if (t->rc == -1 && !t->has_error) {
    set(is, "probe.error-hygiene", "CDY-008", CERT_FAIL,
        "Returned -1 with no error raised%s: the caller has nothing to report.", on);
  } else if (t->rc == -1 && (t->kind[0] == '\0' || t->message[0] == '\0')) {
    set(is, "probe.error-hygiene", "CDY-008", CERT_FAIL,
        "Returned -1 with an error whose %s is empty%s.", t->kind[0] ? "message" : "kind", on);
  } else if (t->rc == 0 && t->has_error) {
    set(is, "probe.error-hygiene", "CDY-009", CERT_FAIL,
        "Returned 0 but left an error raised%s: the caller sees success and a stale error.", on);
  } else if (t->rc == 0 && !t->result_valid) {
    set(is, "probe.result", "CDY-010", CERT_FAIL,
        "Returned 0 with a result slot that is not a valid owned value (type index %d)%s.", t->result_type, on);
  } else {
    return 0;
  }
  snprintf(is->evidence, sizeof is->evidence, "rc %d; raised: %s%s%s", t->rc,
           t->has_error ? t->kind : "nothing", t->has_error ? ": " : "", t->has_error ? t->message : "");
  (void)p;
  return 1;
}

/* The raised error, or the returned object, read back as the runtime's
 * release lays it out (probe_readback.h). */
static int judge_readback(const CertThreadOutcome* t, Issue* is) {
  int is_error = t->error_rb.problem != CERT_RB_OK;
  const CertReadback* rb = is_error ? &t->error_rb : &t->result_rb;
  if (rb->problem == CERT_RB_OK) return 0;
  set(is, is_error ? "probe.error-readback" : "probe.returned-objects", is_error ? "CDY-040" : "CDY-041",
      CERT_FAIL, "%s", "");
  cert_explain_readback(rb, is_error, is->reason, sizeof is->reason, is->evidence, sizeof is->evidence);
  return 1;
}

static void judge_documented(const CertProbe* p, const CertResult* r, Issue* is) {
  const CertCall* c = &p->call;
  const CertThreadOutcome* t = &r->out.t[0];
  snprintf(is->evidence, sizeof is->evidence, "rc %d; raised: %s%s%s", t->rc,
           t->has_error ? t->kind : "nothing", t->has_error ? ": " : "", t->has_error ? t->message : "");
  if (c->expect_kind[0]) {
    const char* what = p->cls == CERT_P_ERRORS ? cert_error_case_name((CertErrorCase)p->error_case) : "invalid";
    if (t->rc == 0) {
      set(is, "manifest.errors", "CDY-023", CERT_FAIL,
          "Accepted an invalid call (%s) that the manifest documents as %s.", what, c->expect_kind);
    } else if (no_gpu_message(t->message) && strcmp(c->expect_kind, t->kind) != 0) {
      set(is, "manifest.errors", "", CERT_SKIP,
          "Could not check the %s error here: the call failed for want of a GPU.", what);
    } else if (strcmp(c->expect_kind, t->kind) != 0) {
      set(is, "manifest.errors", "CDY-023", CERT_FAIL,
          "An invalid call (%s) failed with %s instead of the documented %s.", what, t->kind, c->expect_kind);
    } else if (c->expect_name[0] && strstr(t->message, c->expect_name) == NULL) {
      set(is, "manifest.errors", "CDY-024", CERT_FAIL,
          "The %s error for an invalid call (%s) does not name the argument `%s`.", t->kind, what,
          c->expect_name);
    }
    return;
  }
  if (c->returns_none && t->rc == 0 && t->result_type != kTVMFFINone) {
    set(is, "manifest.returns", "CDY-022", CERT_FAIL,
        "Returned a value (type index %d) although the manifest says it returns nothing: the result "
        "slot must stay None.", t->result_type);
    return;
  }
  if (p->cls == CERT_P_VALID || (p->cls == CERT_P_REPLAY && c->check_reference)) {
    if (t->rc != 0 && no_gpu_message(t->message)) {
      set(is, "manifest.valid-calls", "", CERT_SKIP,
          "Valid calls fail here only because there is no usable GPU (%s); run certify on a GPU machine.",
          strstr(t->message, "cuda") ? "the CUDA runtime has no driver or device" : "no device");
    } else if (t->rc != 0) {
      set(is, "manifest.valid-calls", "CDY-020", CERT_FAIL, "Refused a call the manifest says is valid.");
    } else if (r->out.checked && r->out.mismatches > 0) {
      set(is, "manifest.results", "CDY-021", CERT_FAIL,
          "%d output element%s differ from the manifest's reference.", r->out.mismatches,
          r->out.mismatches == 1 ? "" : "s");
      snprintf(is->evidence, sizeof is->evidence, "%s", r->out.note);
    } else if (c->check_reference && !r->out.checked) {
      set(is, "manifest.results", "", CERT_SKIP, "Could not compare with the reference: %s.", r->out.note);
    }
  }
}

static void judge_one(const CertPlan* plan, size_t k, Issue* is) {
  const CertProbe* p = &plan->probes[k];
  const CertResult* r = &plan->results[k];
  memset(is, 0, sizeof *is);
  set(is, class_check(p->cls), "", CERT_PASS, "%s", pass_reason(class_check(p->cls)));
  switch (r->end) {
    case CERT_END_TOOL:
      set(is, class_check(p->cls), "", CERT_SKIP, "certify could not run this probe (fork or pipe failed).");
      return;
    case CERT_END_LOAD:
      set(is, class_check(p->cls), "", CERT_SKIP, "The library did not load.");
      return;
    case CERT_END_SIGNAL:
    case CERT_END_EXIT:
    case CERT_END_TIMEOUT:
      judge_death(p, r, plan, is);
      return;
    case CERT_END_DONE:
      break;
  }
  if (r->out.status == CERT_CALL_NO_SYMBOL) {
    set(is, class_check(p->cls), "", CERT_SKIP, "%s", r->out.note);
    return;
  }
  if (r->out.status == CERT_CALL_UNBUILT) {
    set(is, class_check(p->cls), "", CERT_SKIP, "This probe could not be built: %s.", r->out.note);
    return;
  }
  for (int t = 0; t < r->out.threads; ++t) {
    if (judge_hygiene(p, &r->out.t[t], t, is)) return;
  }
  for (int t = 0; t < r->out.threads; ++t) {
    if (judge_readback(&r->out.t[t], is)) return;
  }
  if (p->cls == CERT_P_META) {
    judge_meta(p, r, is);
    return;
  }
  if (r->out.ref_arg >= 0) {
    set(is, "probe.refcounts", "CDY-011", CERT_FAIL,
        "Changed the strong reference count of object argument %d from %d to %d: the call %s a reference.",
        r->out.ref_arg, r->out.ref_before, r->out.ref_after,
        r->out.ref_after > r->out.ref_before ? "leaks" : "steals");
    return;
  }
  if (r->out.threads == 2) {
    const CertThreadOutcome* a = &r->out.t[0];
    const CertThreadOutcome* b = &r->out.t[1];
    if (a->rc != b->rc || strcmp(a->kind, b->kind) != 0) {
      set(is, "probe.threads", "CDY-012", CERT_FAIL,
          "The same call on two threads at once gave different outcomes.");
      snprintf(is->evidence, sizeof is->evidence, "thread 0: rc %d %s; thread 1: rc %d %s", a->rc, a->kind,
               b->rc, b->kind);
      return;
    }
  }
  judge_documented(p, r, is);
  if (is->verdict == CERT_PASS && is->evidence[0] == '\0') {
    const CertThreadOutcome* t = &r->out.t[0];
    snprintf(is->evidence, sizeof is->evidence, "rc %d%s%s%s%s", t->rc, t->has_error ? "; " : "",
             t->has_error ? t->kind : "", t->has_error ? ": " : "", t->has_error ? t->message : "");
  }
}

/* ---- folding issues into findings ------------------------------------------- */

typedef struct {
  char function[CERT_NAME_MAX];
  const char* check;
  Issue worst;
  size_t worst_probe;
  size_t calls, bad;
} Cell;

static const char* function_of(const CertProbe* p) {
  const char* f = p->call.function;
  if (strncmp(f, "_metadata_", 10) == 0) return f + 10;
  if (strncmp(f, "_doc_", 5) == 0) return f + 5;
  return f;
}

int cert_plan_judge(const CertPlan* plan, CertFindings* out) {
  Cell* cells = calloc(plan->n + 1, sizeof *cells);
  if (cells == NULL) return -1;
  size_t ncells = 0;
  Issue is;
  for (size_t k = 0; k < plan->n; ++k) {
    judge_one(plan, k, &is);
    const char* fn = function_of(&plan->probes[k]);
    size_t c = 0;
    while (c < ncells && !(strcmp(cells[c].function, fn) == 0 && strcmp(cells[c].check, is.check) == 0)) ++c;
    if (c == ncells) {
      snprintf(cells[c].function, sizeof cells[c].function, "%s", fn);
      cells[c].check = is.check;
      cells[c].worst = is;
      cells[c].worst_probe = k;
      ncells++;
    }
    cells[c].calls++;
    if (is.verdict != CERT_PASS) cells[c].bad++;
    if (is.verdict > cells[c].worst.verdict) {
      cells[c].worst = is;
      cells[c].worst_probe = k;
    }
  }
  int rc = 0;
  for (size_t k = 0; k < plan->n_no_base && rc == 0; ++k) {
    rc = cert_findings_add(out, plan->no_base[k], "probe.valid-call", "", plan->opt->runtime_label, CERT_SKIP,
                           "", "",
                           "No call certify could guess was accepted (0 to 4 tensors, scalars last, or only "
                           "ints or floats), so the probes reached only its argument checks; a manifest "
                           "(--manifest) describes valid calls.");
  }
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
    rc = cert_findings_add(out, cell->function, cell->check, cell->worst.clause, plan->opt->runtime_label,
                           cell->worst.verdict, cell->worst.evidence, replay, "%s%s", cell->worst.reason,
                           more);
  }
  free(cells);
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
                o->has_error ? o->kind : "nothing", o->has_error ? ": " : "", o->has_error ? o->message : "",
                o->result_type);
      }
      if (r->out.ref_arg >= 0) {
        fprintf(f, "argument %d: strong count %d before, %d after\n", r->out.ref_arg, r->out.ref_before,
                r->out.ref_after);
      }
      if (r->out.checked) fprintf(f, "reference: %d mismatching elements %s\n", r->out.mismatches, r->out.note);
      if (r->text) fprintf(f, "returned text: %.2000s\n", r->text);
      break;
    case CERT_END_SIGNAL:
      fprintf(f, "killed by signal %d (%s)", r->signo, strsignal(r->signo));
      if (r->has_sig && (r->signo == SIGSEGV || r->signo == SIGBUS)) {
        static const char* const kWhere[] = {
            "", ": on the page after args[num_args - 1]", ": on the page after the last element of argument",
            ": on the unreadable page given as device data or an opaque pointer", ""};
        int region = r->sig.region >= 0 && r->sig.region <= 4 ? r->sig.region : 0;
        fprintf(f, " at address 0x%llx%s", (unsigned long long)r->sig.addr, kWhere[region]);
        if (region == CERT_REGION_DATA_END) fprintf(f, " %d", r->sig.arg);
      }
      fputc('\n', f);
      break;
    case CERT_END_EXIT: fprintf(f, "the process exited with status %d during the call\n", r->exit_status); break;
    case CERT_END_TIMEOUT: fprintf(f, "did not return within the time limit\n"); break;
    case CERT_END_LOAD: fprintf(f, "did not load: %s\n", r->text ? r->text : ""); break;
    case CERT_END_TOOL: fprintf(f, "certify could not run it\n"); break;
  }
  if (r->output && r->output[0]) fprintf(f, "output:\n%s\n", r->output);
}
