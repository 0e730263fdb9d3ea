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
#include <unistd.h>

#include "layout_explain.h"
#include "probe_plan.h"

#include "elf_facts.h"

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
      {"probe.processes", "Every call left no process behind when it returned."},
      {"replay", "The call returned cleanly."},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) {
    if (strcmp(k[i].check, check) == 0) return k[i].reason;
  }
  return "Passed.";
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

static void judge_death(const CertProbe* p, const CertResult* r, const CertPlan* plan, Issue* is) {
  CertVerdict v;
  const char* clause = crash_clause(p->cls, &v);
  const char* check = class_check(p->cls);
  char symbol[256];
  size_t cap_mib = (plan->opt->memory_limit                      ? plan->opt->memory_limit
                    : access("/dev/nvidiactl", F_OK) == 0 ? CERT_DEFAULT_MEMORY_LIMIT_GPU
                                                           : CERT_DEFAULT_MEMORY_LIMIT) >> 20;
  if (unresolved_symbol(r, symbol, sizeof symbol) && cert_is_upstream_cxx_symbol(symbol)) {
    set(is, check, "", CERT_SKIP,
        "The call needs %s of upstream's C++ API, which this runtime does not define: the library "
        "runs only on upstream's runtime, where this call is judged.", symbol);
  } else if (unresolved_symbol(r, symbol, sizeof symbol)) {
    set(is, check, "CDY-001", CERT_FAIL,
        "The call reached %s, which nothing loaded defines: with lazy binding, as hosts load the library, "
        "the dynamic loader ends the host process at that call ('symbol lookup error').", symbol);
  } else if (is_dl_null(p) && r->end == CERT_END_SIGNAL && r->signo == SIGSEGV) {
    set(is, "probe.invalid-tensors", "CDY-007", CERT_WARN,
        "Dereferenced a NULL DLTensor* (argument %d) instead of refusing it with an error; upstream's "
        "runtime never makes one, but a raw C caller can.", p->varied_arg);
  } else if (r->has_sig && r->sig.region == CERT_REGION_ARGS_END) {
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
  } else if (p->cls == CERT_P_LEGACY && r->end == CERT_END_SIGNAL) {
    set(is, check, clause, v,
        "Crashed (signal %d, %s) on tensors with NULL strides, which DLPack before 1.0 allowed for compact "
        "tensors and raw C callers still send: it reads strides without checking for NULL.",
        r->signo, strsignal(r->signo));
  } else if (p->cls == CERT_P_INVALID && r->end == CERT_END_SIGNAL && r->signo == SIGSEGV) {
    set(is, check, clause, v,
        "Dereferenced the NULL data pointer of a non-empty tensor (not valid DLPack) instead of "
        "refusing it with an error.");
  } else if (r->memory_exhausted) {
    set(is, check, clause, v, "Exhausted the memory cap (%zu MiB) and died instead of raising an error.",
        cap_mib);
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
    } else if (cert_no_gpu_message(t->message) && strcmp(c->expect_kind, t->kind) != 0) {
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
    if (t->rc != 0 && cert_no_gpu_message(t->message)) {
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

/* What a function's calls showed as a whole, for judging each one. */
typedef struct {
  int reached;      /* some call got past its argument checks (returned 0, failed only for want of a
                       GPU, or died) */
  int base_died;    /* its base call crashed, exited or hung: variations of it die for that reason */
  int has_symbol;   /* it is exported */
  char refusal[600]; /* the first clean refusal, for saying why nothing reached it */
} FunctionView;

static int is_variation(CertProbeClass c) {
  return c == CERT_P_KINDS || c == CERT_P_FORMS || c == CERT_P_LEGACY || c == CERT_P_INVALID ||
         c == CERT_P_THREADS || c == CERT_P_VALID || c == CERT_P_ERRORS;
}

static int died(const CertResult* r) {
  return r->end == CERT_END_SIGNAL || r->end == CERT_END_EXIT || r->end == CERT_END_TIMEOUT;
}

static void judge_returned(const CertPlan* plan, const CertProbe* p, const CertResult* r, Issue* is) {
  (void)plan;
  if (r->out.left_processes || r->strays > 0) {
    set(is, "probe.processes", "CDY-014", CERT_NONSTRICT,
        "Left %d process%s running or unreaped after it returned, which certify had to end: in a host "
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

static void judge_one(const CertPlan* plan, size_t k, const FunctionView* fv, Issue* is) {
  const CertProbe* p = &plan->probes[k];
  const CertResult* r = &plan->results[k];
  const char* check = class_check(p->cls);
  memset(is, 0, sizeof *is);
  set(is, check, "", CERT_PASS, "%s", pass_reason(check));
  switch (r->end) {
    case CERT_END_TOOL:
      set(is, check, "", CERT_SKIP, "certify could not run this probe (fork or pipe failed).");
      return;
    case CERT_END_LOAD:
      set(is, check, "", CERT_SKIP, "The library did not load.");
      return;
    case CERT_END_NOT_RUN:
      set(is, check, "", CERT_SKIP,
          "Not run: %s hung or exhausted the memory cap on another call, which is its finding (such a "
          "function is judged once).",
          p->call.function);
      return;
    case CERT_END_FDS:
      set(is, "probe.descriptors", "CDY-015", CERT_FAIL,
          "Closed or replaced file descriptors it did not open (certify's report pipe among them): in a "
          "host it would close the host's files, sockets and pipes.");
      snprintf(is->evidence, sizeof is->evidence, "certify's descriptors were gone when the call returned");
      return;
    case CERT_END_SIGNAL:
    case CERT_END_EXIT:
    case CERT_END_TIMEOUT:
      if (fv && fv->base_died && is_variation(p->cls)) {
        set(is, check, "", CERT_SKIP,
            "Not judged: %s dies on its base call too, whatever it is given, so this death says nothing "
            "about this variation (the base call's death is its finding).", p->call.function);
        return;
      }
      judge_death(p, r, plan, is);
      return;
    case CERT_END_DONE:
      break;
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
        "Not reached: %s refused every call certify made (its argument checks stopped them all), so this "
        "probe tested nothing; a manifest (--manifest) describes valid calls.", p->call.function);
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

static void view_function(const CertPlan* plan, const CertPlanFunction* fn, FunctionView* fv) {
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
      snprintf(fv->refusal, sizeof fv->refusal, "%.200s: %.120s: %.240s", line, t->kind, t->message);
    }
  }
  fv->base_died = fn->base != SIZE_MAX && died(&plan->results[fn->base]);
}

static const FunctionView* view_of(const CertPlan* plan, const FunctionView* views, const char* function) {
  for (size_t f = 0; f < plan->n_fns; ++f) {
    if (strcmp(plan->fns[f].name, function) == 0) return &views[f];
  }
  return NULL;
}

/* Functions no call reached, each once. */
static int report_unreached(const CertPlan* plan, const FunctionView* views, CertFindings* out) {
  for (size_t f = 0; f < plan->n_fns; ++f) {
    const FunctionView* fv = &views[f];
    if (fv->reached || !fv->has_symbol) continue;
    const CertManifestFunction* m = cert_manifest_find(plan->opt->manifest, plan->fns[f].name);
    if (cert_findings_add(out, plan->fns[f].name, "probe.valid-call", "", plan->opt->runtime_label, CERT_SKIP,
                          fv->refusal, "",
                          m ? "No call reached it: even the manifest's valid calls were refused, so the probes "
                              "tested only its argument checks."
                            : "No call reached it: every call certify could guess (0 to 4 tensors on the CPU or "
                              "CUDA, scalars last, or only ints or floats) was refused by its argument checks, "
                              "so its probes tested nothing; a manifest (--manifest) describes valid calls.") != 0) {
      return -1;
    }
  }
  return 0;
}

int cert_plan_judge(const CertPlan* plan, CertFindings* out, size_t* reached) {
  Cell* cells = calloc(plan->n + 1, sizeof *cells);
  FunctionView* views = calloc(plan->n_fns + 1, sizeof *views);
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
  Issue is;
  for (size_t k = 0; k < plan->n; ++k) {
    const char* fn = function_of(&plan->probes[k]);
    judge_one(plan, k, view_of(plan, views, plan->probes[k].call.function), &is);
    if (plan->probes[k].cls == CERT_P_META && is.verdict == CERT_PASS) ++*reached;
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
    rc = cert_findings_add(out, cell->function, cell->check, cell->worst.clause, plan->opt->runtime_label,
                           cell->worst.verdict, cell->worst.evidence, replay, "%s%s", cell->worst.reason,
                           more);
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
    case CERT_END_NOT_RUN: fprintf(f, "not run: its function hung or exhausted memory on another call\n"); break;
    case CERT_END_FDS: fprintf(f, "returned with certify's file descriptors closed or replaced\n"); break;
  }
  if (r->strays > 0) fprintf(f, "left %d process%s behind (first: %s)\n", r->strays, r->strays > 1 ? "es" : "", r->stray);
  if (r->output && r->output[0]) fprintf(f, "output:\n%s\n", r->output);
}
