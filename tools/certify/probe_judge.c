/* From results to issues: each probe's result becomes at most one issue
 * (the first problem in the order crash, error hygiene, result slot,
 * reference counts, threads, documented behaviour); probe_fold.c folds the
 * issues of one function and check into one finding. */
#include "probe_judge.h"

#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <unistd.h>

#include "checks.h"
#include "layout_explain.h"
#include "probe_plan.h"

#include "elf_facts.h"

static void set(CertIssue* is, const char* check, const char* clause, CertVerdict v,
                const char* fmt, ...) __attribute__((format(printf, 5, 6)));
static void set(CertIssue* is, const char* check, const char* clause, CertVerdict v,
                const char* fmt, ...) {
  is->check = check;
  is->clause = clause;
  is->verdict = v;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(is->reason, sizeof is->reason, fmt, ap);
  va_end(ap);
}

static void append(char* buf, size_t size, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
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

/* The symbol a lazily bound call could not find, from the loader's
 * "symbol lookup error: LIB: undefined symbol: NAME" on its way out. */
static int unresolved_symbol(const CertResult* r, char* name, size_t size) {
  if (r->end != CERT_END_EXIT || r->exit_status != 127 || r->output == NULL) return 0;
  const char* at = strstr(r->output, "symbol lookup error");
  at = at ? strstr(at, "undefined symbol: ") : NULL;
  if (at == NULL) return 0;
  at += strlen("undefined symbol: ");
  size_t n = strcspn(at, " \n,");
  snprintf(name, size, "%.*s", (int)n, at);
  return 1;
}

static int is_dl_null(const CertProbe* p) {
  return p->cls == CERT_P_KINDS && p->varied_arg >= 0 && p->varied_arg < p->call.nargs &&
         p->call.args[p->varied_arg].kind == CERT_ARG_DLNULL;
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

static void judge_death(const CertProbe* p, const CertResult* r, const CertPlan* plan,
                        CertIssue* is) {
  const CertCheck* row = &cert_checks[cert_probe_class_check(p->cls)];
  const char* check = row->id;
  const char* clause = row->crash_clause;
  CertVerdict v = row->crash_verdict;
  char symbol[256];
  size_t cap_mib = (plan->opt->memory_limit               ? plan->opt->memory_limit
                    : access("/dev/nvidiactl", F_OK) == 0 ? CERT_DEFAULT_MEMORY_LIMIT_GPU
                                                          : CERT_DEFAULT_MEMORY_LIMIT) >>
                   20;
  if (unresolved_symbol(r, symbol, sizeof symbol) && cert_is_upstream_cxx_symbol(symbol)) {
    set(is, check, "", CERT_SKIP,
        "The call needs %s of upstream's C++ API, which this runtime does not define: the library "
        "runs only on upstream's runtime, where this call is judged.",
        symbol);
  } else if (unresolved_symbol(r, symbol, sizeof symbol)) {
    set(is, check, "CDY-001", CERT_FAIL,
        "The call reached %s, which nothing loaded defines: with lazy binding, as hosts load the "
        "library, "
        "the dynamic loader ends the host process at that call ('symbol lookup error').",
        symbol);
  } else if (is_dl_null(p) && r->end == CERT_END_SIGNAL && r->signo == SIGSEGV) {
    set(is, "probe.invalid-tensors", "CDY-007", CERT_WARN,
        "Dereferenced a NULL DLTensor* (argument %d) instead of refusing it with an error; "
        "upstream's "
        "runtime never makes one, but a raw C caller can.",
        p->varied_arg);
  } else if (r->has_sig && r->sig.region == CERT_REGION_ARGS_END) {
    set(is, "probe.args-bounds", "CDY-003", CERT_FAIL,
        "Read past the end of the argument array: args[%d] and beyond lie on an unreadable page "
        "and the function touched them (num_args was %d).",
        p->call.nargs, p->call.nargs);
  } else if (r->has_sig && r->sig.region == CERT_REGION_DATA_END) {
    set(is, "probe.tensor-bounds", "CDY-005", CERT_FAIL,
        "Touched memory past the last element of tensor argument %d (it ends right before an "
        "unreadable page).",
        r->sig.arg);
  } else if (r->has_sig && r->sig.region == CERT_REGION_HEAP_END) {
    set(is, "probe.heap-bounds", "CDY-042", CERT_FAIL, "%s", "");
    cert_explain_heap_end(&r->sig, is->reason, sizeof is->reason);
  } else if (r->has_sig && r->sig.region == CERT_REGION_DATA_GUARD) {
    set(is, "probe.tensor-bounds", "CDY-005", CERT_FAIL,
        "Dereferenced on the host a pointer certify made unreadable: the data of a non-CPU tensor "
        "or an opaque pointer argument.");
  } else if (p->cls == CERT_P_LEGACY && r->end == CERT_END_SIGNAL) {
    set(is, check, clause, v,
        "Crashed (signal %d, %s) on tensors with NULL strides, which DLPack before 1.0 allowed for "
        "compact "
        "tensors and raw C callers still send: it reads strides without checking for NULL.",
        r->signo, strsignal(r->signo));
  } else if (p->cls == CERT_P_INVALID && r->end == CERT_END_SIGNAL && r->signo == SIGSEGV) {
    set(is, check, clause, v,
        "Dereferenced the NULL data pointer of a non-empty tensor (not valid DLPack) instead of "
        "refusing it with an error.");
  } else if (r->memory_exhausted) {
    set(is, check, clause, v,
        "Exhausted the memory cap (%zu MiB) and died instead of raising an error.", cap_mib);
  } else if (r->end == CERT_END_SIGNAL) {
    set(is, check, clause, v, "The call took the process down with signal %d (%s)%s.", r->signo,
        strsignal(r->signo), r->signo == SIGABRT ? ": it aborted instead of raising an error" : "");
  } else if (r->end == CERT_END_EXIT) {
    char said[300];
    int printed = last_error_line(r->output, said, sizeof said);
    set(is, check, clause, v,
        "The call ended the process with exit(%d) instead of returning%s%s%s.", r->exit_status,
        printed ? " after printing '" : "", said, printed ? "'" : "");
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

static void judge_meta(const CertProbe* p, const CertResult* r, CertIssue* is) {
  const CertThreadOutcome* t = &r->out.t[0];
  if (t->rc != 0) {
    set(is, "probe.metadata", "CDY-013", CERT_FAIL, "The metadata/doc function %s failed.",
        p->call.function);
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
          "The metadata string is not a JSON object (%s), so hosts cannot read the signature from "
          "it.",
          j ? "another JSON value" : err.text);
      json_decref(j);
      return;
    }
    set(is, "probe.metadata", "", CERT_PASS,
        "The metadata function returned a JSON object with %zu keys.", json_object_size(j));
    json_decref(j);
    return;
  }
  set(is, "probe.metadata", "", CERT_PASS, "The doc function returned a string of %zu bytes.",
      strlen(r->text));
}

/* -1 with one good error, 0 with none: per thread. */
static int judge_hygiene(const CertProbe* p, const CertThreadOutcome* t, int thread,
                         CertIssue* is) {
  const char* on = thread ? " (on the second thread)" : "";
  if (t->rc != 0 && t->rc != -1) {
    set(is, "probe.error-hygiene", "CDY-008", CERT_FAIL,
        "Returned %d%s: a safe call returns only 0 or -1.", t->rc, on);
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
        "Returned 0 with a result slot that is not a valid owned value (type index %d)%s.",
        t->result_type, on);
  } else {
    return 0;
  }
  snprintf(is->evidence, sizeof is->evidence, "rc %d; raised: %s%s%s", t->rc,
           t->has_error ? t->kind : "nothing", t->has_error ? ": " : "",
           t->has_error ? t->message : "");
  (void)p;
  return 1;
}

/* The raised error, or the returned object, read back as the runtime's
 * release lays it out (probe_readback.h). */
static int judge_readback(const CertThreadOutcome* t, CertIssue* is) {
  int is_error = t->error_rb.problem != CERT_RB_OK;
  const CertReadback* rb = is_error ? &t->error_rb : &t->result_rb;
  if (rb->problem == CERT_RB_OK) return 0;
  set(is, is_error ? "probe.error-readback" : "probe.returned-objects",
      is_error ? "CDY-040" : "CDY-041", CERT_FAIL, "%s", "");
  cert_explain_readback(rb, is_error, is->reason, sizeof is->reason, is->evidence,
                        sizeof is->evidence);
  return 1;
}

static void judge_documented(const CertProbe* p, const CertResult* r, CertIssue* is) {
  const CertCall* c = &p->call;
  const CertThreadOutcome* t = &r->out.t[0];
  snprintf(is->evidence, sizeof is->evidence, "rc %d; raised: %s%s%s", t->rc,
           t->has_error ? t->kind : "nothing", t->has_error ? ": " : "",
           t->has_error ? t->message : "");
  if (c->expect_kind[0]) {
    const char* what =
        p->cls == CERT_P_ERRORS ? cert_error_case_name((CertErrorCase)p->error_case) : "invalid";
    if (t->rc == 0) {
      set(is, "manifest.errors", "CDY-023", CERT_FAIL,
          "Accepted an invalid call (%s) that the manifest documents as %s.", what, c->expect_kind);
    } else if (cert_no_gpu_message(t->message) && strcmp(c->expect_kind, t->kind) != 0) {
      set(is, "manifest.errors", "", CERT_SKIP,
          "Could not check the %s error here: the call failed for want of a GPU.", what);
    } else if (strcmp(c->expect_kind, t->kind) != 0) {
      set(is, "manifest.errors", "CDY-023", CERT_FAIL,
          "An invalid call (%s) failed with %s instead of the documented %s.", what, t->kind,
          c->expect_kind);
    } else if (c->expect_name[0] && strstr(t->message, c->expect_name) == NULL) {
      set(is, "manifest.errors", "CDY-024", CERT_FAIL,
          "The %s error for an invalid call (%s) does not name the argument `%s`.", t->kind, what,
          c->expect_name);
    }
    return;
  }
  if (c->returns_none && t->rc == 0 && t->result_type != kTVMFFINone) {
    set(is, "manifest.returns", "CDY-022", CERT_FAIL,
        "Returned a value (type index %d) although the manifest says it returns nothing: the "
        "result "
        "slot must stay None.",
        t->result_type);
    return;
  }
  if (p->cls == CERT_P_VALID || (p->cls == CERT_P_REPLAY && c->check_reference)) {
    if (t->rc != 0 && cert_no_gpu_message(t->message)) {
      set(is, "manifest.valid-calls", "", CERT_SKIP,
          "Valid calls fail here only because there is no usable GPU (%s); run certify on a GPU "
          "machine.",
          strstr(t->message, "cuda") ? "the CUDA runtime has no driver or device" : "no device");
    } else if (t->rc != 0) {
      set(is, "manifest.valid-calls", "CDY-020", CERT_FAIL,
          "Refused a call the manifest says is valid.");
    } else if (r->out.checked && r->out.mismatches > 0) {
      set(is, "manifest.results", "CDY-021", CERT_FAIL,
          "%d output element%s differ from the manifest's reference.", r->out.mismatches,
          r->out.mismatches == 1 ? "" : "s");
      snprintf(is->evidence, sizeof is->evidence, "%s", r->out.note);
    } else if (c->check_reference && !r->out.checked) {
      set(is, "manifest.results", "", CERT_SKIP, "Could not compare with the reference: %s.",
          r->out.note);
    }
  }
}

static int is_variation(CertProbeClass c) {
  return c == CERT_P_KINDS || c == CERT_P_FORMS || c == CERT_P_LEGACY || c == CERT_P_INVALID ||
         c == CERT_P_THREADS || c == CERT_P_VALID || c == CERT_P_ERRORS;
}

static void judge_returned(const CertPlan* plan, const CertProbe* p, const CertResult* r,
                           CertIssue* is) {
  (void)plan;
  if (r->out.left_processes || r->strays > 0) {
    set(is, "probe.processes", "CDY-014", CERT_NONSTRICT,
        "Left %d process%s running or unreaped after it returned, which certify had to end: in a "
        "host "
        "they would outlive the call, hold its descriptors and never be waited for.",
        r->strays > 0 ? r->strays : 1, r->strays > 1 ? "es" : "");
    snprintf(is->evidence, sizeof is->evidence, "%s%s", r->stray[0] ? "first: " : "", r->stray);
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
        "Changed the strong reference count of object argument %d from %d to %d: the call %s a "
        "reference.",
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
      snprintf(is->evidence, sizeof is->evidence, "thread 0: rc %d %s; thread 1: rc %d %s", a->rc,
               a->kind, b->rc, b->kind);
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

void cert_judge_one(const CertPlan* plan, size_t k, const CertFunctionView* fv, CertIssue* is) {
  const CertProbe* p = &plan->probes[k];
  const CertResult* r = &plan->results[k];
  const CertCheck* row = &cert_checks[cert_probe_class_check(p->cls)];
  const char* check = row->id;
  memset(is, 0, sizeof *is);
  set(is, check, "", CERT_PASS, "%s", row->pass[0] ? row->pass : "Passed.");
  switch (r->end) {
    case CERT_END_TOOL:
      set(is, check, "", CERT_SKIP, "certify could not run this probe (fork or pipe failed).");
      return;
    case CERT_END_LOAD: set(is, check, "", CERT_SKIP, "The library did not load."); return;
    case CERT_END_NOT_RUN:
      set(is, check, "", CERT_SKIP,
          "Not run: %s hung or exhausted the memory cap on another call, which is its finding "
          "(such a "
          "function is judged once).",
          p->call.function);
      return;
    case CERT_END_FDS:
      set(is, "probe.descriptors", "CDY-015", CERT_FAIL,
          "Closed or replaced file descriptors it did not open (certify's report pipe among them): "
          "in a "
          "host it would close the host's files, sockets and pipes.");
      snprintf(is->evidence, sizeof is->evidence,
               "certify's descriptors were gone when the call returned");
      return;
    case CERT_END_SIGNAL:
    case CERT_END_EXIT:
    case CERT_END_TIMEOUT:
      if (fv && fv->base_died && is_variation(p->cls)) {
        set(is, check, "", CERT_SKIP,
            "Not judged: %s dies on its base call too, whatever it is given, so this death says "
            "nothing "
            "about this variation (the base call's death is its finding).",
            p->call.function);
        return;
      }
      judge_death(p, r, plan, is);
      return;
    case CERT_END_DONE: break;
  }
  if (r->out.status == CERT_CALL_NO_SYMBOL) {
    set(is, check, "", CERT_SKIP, "%s", r->out.note);
    return;
  }
  if (r->out.status == CERT_CALL_UNBUILT) {
    set(is, check, "", CERT_SKIP, "This probe could not be built: %s.", r->out.note);
    return;
  }
  judge_returned(plan, p, r, is);
  if (is->verdict == CERT_PASS && fv && !fv->reached && p->cls != CERT_P_META) {
    /* A refusal of a call the function never accepted in any form says
     * nothing about what the probe varied. */
    set(is, is->check, "", CERT_SKIP,
        "Not reached: %s refused every call certify made (its argument checks stopped them all), "
        "so this "
        "probe tested nothing; a manifest (--manifest) describes valid calls.",
        p->call.function);
  }
}
