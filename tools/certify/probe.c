/* The dynamic stage: which calls to make (probe_plan.c), running them in
 * children (probe_engine.c), and turning what happened into findings
 * (probe_judge.c). This file holds the two entry points. */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest.h"
#include "probe_engine.h"
#include "probe_plan.h"

static void engine_options(const CertProbeOptions* opt, CertEngineOptions* e) {
  memset(e, 0, sizeof *e);
  e->child.runtime_path = opt->runtime_path;
  e->child.lib_path = opt->lib_path;
  e->child.layout_release = opt->runtime_label;
  e->child.check = opt->manifest ? cert_manifest_check : NULL;
  e->child.check_ctx = (void*)opt->manifest;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  e->jobs = opt->jobs > 0 ? opt->jobs : (cpus > 0 ? (int)cpus : 1);
  e->timeout_s = opt->timeout_s > 0 ? opt->timeout_s : 10.0;
  e->child.timeout_s = e->timeout_s;
  e->memory_limit = opt->memory_limit ? opt->memory_limit : (size_t)4 << 30;
  e->progress = opt->progress;
  e->progress_ctx = opt->progress_ctx;
}

/* Runs the plan's calls from `from` on; returns -1 on a tool error. */
static int run_phase(CertEngine* engine, CertPlan* plan, size_t from) {
  size_t n = plan->n - from;
  if (n == 0) return 0;
  CertCall* calls = malloc(n * sizeof *calls);
  if (calls == NULL) return -1;
  for (size_t k = 0; k < n; ++k) calls[k] = plan->probes[from + k].call;
  int rc = cert_engine_run(engine, calls, n, plan->results + from);
  free(calls);
  return rc;
}

static int find_load_failure(const CertPlan* plan, const CertProbeOptions* opt, CertFindings* out,
                             int* failed) {
  *failed = 0;
  for (size_t k = 0; k < plan->n; ++k) {
    const CertResult* r = &plan->results[k];
    if (r->end != CERT_END_LOAD) continue;
    *failed = 1;
    char evidence[4600];
    snprintf(evidence, sizeof evidence, "%s%s%s", r->text ? r->text : "",
             r->output && r->output[0] ? "\noutput: " : "", r->output ? r->output : "");
    return cert_findings_add(out, "", "probe.load", "CDY-001", opt->runtime_label, CERT_FAIL, evidence,
                             "", "The library does not load under this runtime (RTLD_NOW | RTLD_LOCAL "
                             "after the runtime RTLD_GLOBAL), so none of its functions can be called.");
  }
  return 0;
}

int cert_probe_functions(const char* const* names, size_t n_names, const char* const* meta_symbols,
                         size_t n_meta, const CertProbeOptions* opt, CertFindings* out) {
  CertPlan plan;
  if (cert_plan_init(&plan, opt) != 0) return -1;
  CertEngineOptions eo;
  engine_options(opt, &eo);
  CertEngine* engine = cert_engine_open(&eo);
  int rc = -1;
  if (engine == NULL) goto done;
  if (n_names == 0 && n_meta == 0) {
    rc = cert_findings_add(out, "", "probe.functions", "", opt->runtime_label, CERT_SKIP, "", "",
                           "The library exports no callable __tvm_ffi_<name> function: nothing to probe.");
    goto done;
  }
  /* Phase 1: arity, base-call search, metadata. */
  for (size_t k = 0; k < n_names; ++k) {
    if (cert_plan_discovery(&plan, names[k]) != 0) goto done;
  }
  for (size_t k = 0; k < n_meta; ++k) {
    if (cert_plan_metadata(&plan, meta_symbols[k]) != 0) goto done;
  }
  if (run_phase(engine, &plan, 0) != 0) goto done;
  int failed = 0;
  if (find_load_failure(&plan, opt, out, &failed) != 0) goto done;
  if (failed) {
    rc = 0;
    goto done;
  }
  /* Phase 2: every probe built on each function's base call. */
  size_t phase2 = plan.n;
  for (size_t k = 0; k < n_names; ++k) {
    if (cert_plan_probes(&plan, names[k]) != 0) goto done;
  }
  if (run_phase(engine, &plan, phase2) != 0) goto done;
  rc = cert_plan_judge(&plan, out);
done:
  cert_engine_close(engine);
  cert_plan_free(&plan);
  return rc;
}

static int is_prefixed(const char* s, const char* prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

int cert_probe_library(const CertElf* elf, const CertProbeOptions* opt, CertFindings* out) {
  size_t n = elf->exports.n;
  const char** names = calloc(n + 1, sizeof *names);
  const char** meta = calloc(n + 1, sizeof *meta);
  size_t nn = 0, nm = 0;
  int rc = -1;
  if (names == NULL || meta == NULL) goto done;
  for (size_t k = 0; k < n; ++k) {
    const CertSymbol* s = &elf->exports.items[k];
    if (!s->is_function || !is_prefixed(s->name, "__tvm_ffi_")) continue;
    if (is_prefixed(s->name, "__tvm_ffi__metadata_") || is_prefixed(s->name, "__tvm_ffi__doc_")) {
      meta[nm++] = s->name;
    } else if (!is_prefixed(s->name, "__tvm_ffi__") && strlen(s->name) < CERT_NAME_MAX + 10) {
      names[nn++] = s->name + strlen("__tvm_ffi_");
    }
  }
  rc = cert_probe_functions(names, nn, meta, nm, opt, out);
done:
  free(names);
  free(meta);
  return rc;
}

int cert_probe_replay(const char* replay, const CertProbeOptions* opt, CertFindings* out) {
  CertCall call;
  char err[256];
  if (cert_call_parse(replay, &call, err, sizeof err) != 0) {
    fprintf(stderr, "certify: the replay line does not parse: %s\n", err);
    return -1;
  }
  snprintf(call.runtime, sizeof call.runtime, "%s", opt->runtime_label ? opt->runtime_label : "");
  CertPlan plan;
  if (cert_plan_init(&plan, opt) != 0) return -1;
  CertEngineOptions eo;
  engine_options(opt, &eo);
  CertEngine* engine = cert_engine_open(&eo);
  int rc = -1;
  if (engine == NULL || cert_plan_add_replay(&plan, &call) != 0) goto done;
  if (run_phase(engine, &plan, 0) != 0) goto done;
  cert_plan_describe(&plan, 0, stdout);
  int failed = 0;
  if (find_load_failure(&plan, opt, out, &failed) != 0) goto done;
  rc = failed ? 0 : cert_plan_judge(&plan, out);
done:
  cert_engine_close(engine);
  cert_plan_free(&plan);
  return rc;
}

int cert_probe_replay_runtime(const char* replay, char* buf, size_t size) {
  CertCall call;
  char err[256];
  if (cert_call_parse(replay, &call, err, sizeof err) != 0 || call.runtime[0] == '\0') return -1;
  snprintf(buf, size, "%s", call.runtime);
  return 0;
}
