/* The dynamic stage: which calls to make (probe_plan.c), running them in
 * children (probe_engine.c), and turning what happened into findings
 * (probe_judge.c). This file holds the entry points and the findings about
 * the library as a whole: how it loaded, what loading registered, and
 * whether any call reached it at all. */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib_search.h"
#include "manifest.h"
#include "manifest_check.h"
#include "probe_engine.h"
#include "probe_plan.h"
#include "symbol_names.h"

static char g_error[1024];

const char* cert_probe_error(void) { return g_error; }

/* Progress in functions over the whole library, while the engine counts
 * the calls of one chunk's phase. */
typedef struct {
  const CertProbeOptions* opt;
  size_t before; /* functions of the chunks already done */
  size_t in_chunk;
  size_t total;
  int phase; /* 0: discovery, 1: the rest */
} Progress;

static void chunk_progress(void* ctx, size_t done, size_t total, const char* what) {
  const Progress* p = ctx;
  if (total == 0) return;
  /* Discovery is the first quarter of a chunk's calls, give or take. */
  double share = p->phase == 0 ? 0.25 * (double)done / (double)total
                               : 0.25 + 0.75 * (double)done / (double)total;
  size_t at = p->before + (size_t)(share * (double)p->in_chunk);
  p->opt->progress(p->opt->progress_ctx, at, p->total, what);
}

static void engine_options(const CertProbeOptions* opt, CertEngineOptions* e) {
  memset(e, 0, sizeof *e);
  e->child.runtime_path = opt->runtime_path;
  e->child.lib_path = opt->lib_path;
  e->child.layout_release = opt->runtime_label;
  e->child.check = opt->manifest ? cert_manifest_check : NULL;
  e->child.check_ctx = (void*)opt->manifest;
  e->child.driver_stubs = opt->driver_stubs;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  e->jobs = opt->jobs > 0 ? opt->jobs : (cpus > 0 ? (int)cpus : 1);
  e->timeout_s = opt->timeout_s > 0 ? opt->timeout_s : 10.0;
  e->child.timeout_s = e->timeout_s;
  e->memory_limit = opt->memory_limit                     ? opt->memory_limit
                    : access("/dev/nvidiactl", F_OK) == 0 ? CERT_DEFAULT_MEMORY_LIMIT_GPU
                                                          : CERT_DEFAULT_MEMORY_LIMIT;
  e->child.memory_limit = e->memory_limit;
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

/* ---- how it loaded ------------------------------------------------------ */

/* The file a loader message says it could not open ("X: cannot open shared
 * object file"), into buf; 0 when the message says something else. */
static int unopened(const char* text, char* buf, size_t size) {
  const char* tail = strstr(text, ": cannot open shared object file");
  if (tail == NULL) return 0;
  const char* start = tail;
  while (start > text && start[-1] != ' ' && start[-1] != ':') --start;
  snprintf(buf, size, "%.*s", (int)(tail - start), start);
  return 1;
}

/* A load failure: the library's (FAIL), or this machine's or runtime's
 * gap (SKIP, with the finding that says more). */
static int report_load_failure(const char* text, const char* output, const CertProbeOptions* opt,
                               CertFindings* out) {
  char evidence[4600], name[1024], stub[64];
  snprintf(evidence, sizeof evidence, "%s%s%s", text, output && output[0] ? "\noutput: " : "",
           output ? output : "");
  const char* undefined = strstr(text, "undefined symbol: ");
  char symbol[256] = "";
  if (undefined)
    snprintf(symbol, sizeof symbol, "%.*s", (int)strcspn(undefined + 18, " \n,"), undefined + 18);
  const char* rt = opt->runtime_label;
  if (unopened(text, name, sizeof name) && strchr(name, '/') == NULL) {
    int driver = cert_driver_stub_name(name, stub, sizeof stub);
    return cert_findings_add(
        out, "", "probe.load", "", rt, CERT_SKIP, evidence, "",
        driver ? "Not loaded: it needs the NVIDIA driver (%s), which this machine does not "
                 "have, and no driver stub of the CUDA toolkit stood in (static.driver)."
               : "Not loaded: a library it needs (%s) is not found here; static.needed-found "
                 "says where the loader looked and what follows.",
        name);
  }
  if (symbol[0] && cert_is_upstream_cxx_symbol(symbol)) {
    return cert_findings_add(
        out, "", "probe.load", "", rt, CERT_SKIP, evidence, "",
        "Not loaded under this runtime: it needs %s of upstream's C++ API, which this "
        "runtime does not define (static.cxx-api).",
        symbol);
  }
  return cert_findings_add(
      out, "", "probe.load", "CDY-001", rt, CERT_FAIL, evidence, "",
      "The library does not load as hosts load it (dlopen RTLD_LAZY | RTLD_LOCAL after the "
      "runtime RTLD_GLOBAL, as tvm_ffi.load_module does), so none of its functions can be "
      "called.");
}

static size_t count_lines(const char* s) {
  size_t n = 0;
  for (; s && *s; ++s) n += *s == '\n';
  return n;
}

/* "a, b, c" from "a\nb\nc\n", at most `size` bytes. */
static void join_lines(const char* s, char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (const char* p = s; p && *p && used + 1 < size;) {
    const char* nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    int w = snprintf(buf + used, size - used, "%s%.*s", used ? ", " : "", (int)n, p);
    if (w < 0) break;
    used += (size_t)w < size - used ? (size_t)w : size - used - 1;
    p += n + (nl != NULL);
  }
}

/* It loaded: how (a driver stub standing in), and what it registered. */
static int report_loaded(const CertEngine* engine, const CertProbeOptions* opt, CertFindings* out) {
  int listable = 0;
  const char* globals = cert_engine_registered_globals(engine, &listable);
  const char* types = cert_engine_registered_types(engine);
  const char* note = cert_engine_load_note(engine);
  size_t ng = count_lines(globals), nt = count_lines(types);
  char g[1500], t[1500], what[700], evidence[3400];
  join_lines(globals, g, sizeof g);
  join_lines(types, t, sizeof t);
  if (globals == NULL || types == NULL) {
    snprintf(what, sizeof what, "what it registered could not be listed");
  } else if (!listable) {
    snprintf(what, sizeof what,
             "it registered %zu type%s (this runtime cannot list global functions)", nt,
             nt == 1 ? "" : "s");
  } else {
    snprintf(what, sizeof what, "it registered %zu global function%s and %zu type%s", ng,
             ng == 1 ? "" : "s", nt, nt == 1 ? "" : "s");
  }
  snprintf(evidence, sizeof evidence, "%s%s%s%s%s%s%s", note ? note : "",
           note && (ng || nt) ? "\n" : "", ng ? "global functions: " : "", g, ng && nt ? "\n" : "",
           nt ? "types: " : "", t);
  return cert_findings_add(
      out, "", "probe.load", "CDY-001", opt->runtime_label, CERT_PASS, evidence, "",
      "Loads as hosts load it (dlopen RTLD_LAZY | RTLD_LOCAL after the runtime RTLD_GLOBAL, "
      "as tvm_ffi.load_module does)%s; %s.",
      note ? ", with the CUDA toolkit's driver stub standing in for the NVIDIA driver" : "", what);
}

/* The library is not certified when nothing reached it. */
static int report_nothing_called(const char* why, const CertProbeOptions* opt, CertFindings* out) {
  return cert_findings_add(out, "", "probe.valid-call", "", opt->runtime_label, CERT_SKIP, "", "",
                           "Nothing could be called: %s.", why);
}

/* Manifest entries for functions the library does not export. */
static int report_manifest_strays(const char* const* names, size_t n_names,
                                  const CertProbeOptions* opt, CertFindings* out) {
  for (size_t k = 0; opt->manifest && k < opt->manifest->n; ++k) {
    const char* f = opt->manifest->fns[k].name;
    int exported = 0;
    for (size_t j = 0; j < n_names && !exported; ++j) exported = strcmp(names[j], f) == 0;
    if (exported) continue;
    if (cert_findings_add(
            out, f, "manifest.functions", "", opt->runtime_label, CERT_WARN, f, "",
            "The manifest describes %s, but the library exports no __tvm_ffi_%s: nothing of it "
            "was checked (a misspelt manifest entry, or a function the build lost).",
            f, f) != 0) {
      return -1;
    }
  }
  return 0;
}

/* ---- the entry points ------------------------------------------------------ */

/* Functions are probed this many at a time: the plan of a library of
 * thousands of functions never sits in memory whole (nor in every worker
 * forked from this process). */
enum { CHUNK = 32 };

static int nothing_called(const CertEngine* engine, size_t n_names, size_t n_meta,
                          const CertProbeOptions* opt, CertFindings* out) {
  char why[1800];
  if (n_names == 0 && n_meta == 0) {
    int listable = 0;
    const char* globals = cert_engine_registered_globals(engine, &listable);
    const char* types = cert_engine_registered_types(engine);
    char g[700] = "", t[700] = "";
    join_lines(globals, g, sizeof g);
    join_lines(types, t, sizeof t);
    snprintf(why, sizeof why,
             "it exports no __tvm_ffi_<name> function; loading it registered %zu global "
             "function%s%s%s%s and %zu type%s%s%s%s, which certify does not call",
             count_lines(globals), count_lines(globals) == 1 ? "" : "s", g[0] ? " (" : "", g,
             g[0] ? ")" : "", count_lines(types), count_lines(types) == 1 ? "" : "s",
             t[0] ? " (" : "", t, t[0] ? ")" : "");
    if (count_lines(globals) + count_lines(types) == 0) {
      snprintf(why, sizeof why,
               "it exports no __tvm_ffi_<name> function, and registered nothing %s when it loaded",
               listable ? "(no global function, no type)" : "that this runtime can list (no type)");
    } else if (!listable) {
      snprintf(why, sizeof why,
               "it exports no __tvm_ffi_<name> function; loading it registered %zu type%s%s%s%s "
               "(this runtime cannot list global functions), which certify does not call",
               count_lines(types), count_lines(types) == 1 ? "" : "s", t[0] ? " (" : "", t,
               t[0] ? ")" : "");
    }
  } else {
    snprintf(why, sizeof why,
             "no call got past the argument checks of %s %zu function%s; give a manifest "
             "(--manifest) that describes valid calls",
             n_names + n_meta == 1 ? "its" : "any of its", n_names + n_meta,
             n_names + n_meta == 1 ? "" : "s");
  }
  return report_nothing_called(why, opt, out);
}

/* One chunk of functions (and, in the first, the metadata functions): both
 * phases, judged. On the first chunk also what loading showed; sets
 * *stop when nothing more can run (the library did not load). */
static int probe_chunk(CertEngine* engine, Progress* progress, const char* const* names, size_t n,
                       const char* const* meta, size_t n_meta, int first,
                       const CertProbeOptions* opt, CertFindings* out, size_t* reached, int* stop) {
  progress->in_chunk = n + n_meta;
  progress->phase = 0;
  CertPlan plan;
  if (cert_plan_init(&plan, opt) != 0) return -1;
  int rc = -1;
  for (size_t k = 0; k < n; ++k) {
    if (cert_plan_discovery(&plan, names[k]) != 0) goto done;
  }
  for (size_t k = 0; k < n_meta; ++k) {
    if (cert_plan_metadata(&plan, meta[k]) != 0) goto done;
  }
  int phase1 = plan.n > 0 ? run_phase(engine, &plan, 0) : cert_engine_load(engine);
  if (cert_engine_error(engine)) {
    snprintf(g_error, sizeof g_error, "%s", cert_engine_error(engine));
    goto done;
  }
  if (phase1 != 0) goto done;
  const char* output = NULL;
  const char* failure = cert_engine_load_failure(engine, &output);
  if (failure) {
    *stop = 1;
    rc = report_load_failure(failure, output, opt, out);
    if (rc == 0) rc = report_nothing_called("the library did not load here (probe.load)", opt, out);
    goto done;
  }
  if (first && report_loaded(engine, opt, out) != 0) goto done;
  progress->phase = 1;
  size_t phase2 = plan.n;
  for (size_t k = 0; k < n; ++k) {
    if (cert_plan_probes(&plan, names[k]) != 0) goto done;
  }
  if (run_phase(engine, &plan, phase2) != 0) goto done;
  size_t here = 0;
  if (cert_plan_judge(&plan, out, &here) != 0) goto done;
  *reached += here;
  rc = 0;
done:
  cert_plan_free(&plan);
  return rc;
}

int cert_probe_functions(const char* const* names, size_t n_names, const char* const* meta_symbols,
                         size_t n_meta, const CertProbeOptions* opt, CertFindings* out) {
  g_error[0] = '\0';
  CertEngineOptions eo;
  engine_options(opt, &eo);
  Progress progress = {opt, 0, 0, n_names + n_meta, 0};
  if (opt->progress) {
    eo.progress = chunk_progress;
    eo.progress_ctx = &progress;
  }
  CertEngine* engine = cert_engine_open(&eo);
  int rc = engine == NULL || report_manifest_strays(names, n_names, opt, out) != 0 ? -1 : 0;
  size_t reached = 0;
  int stop = 0;
  for (size_t from = 0; rc == 0 && !stop && (from < n_names || from == 0); from += CHUNK) {
    size_t n = n_names - from < CHUNK ? n_names - from : CHUNK;
    rc = probe_chunk(engine, &progress, names + from, n, meta_symbols, from == 0 ? n_meta : 0,
                     from == 0, opt, out, &reached, &stop);
    progress.before += n + (from == 0 ? n_meta : 0);
  }
  if (rc == 0 && !stop && reached == 0) rc = nothing_called(engine, n_names, n_meta, opt, out);
  if (rc != 0 && g_error[0] == '\0')
    snprintf(g_error, sizeof g_error, "the probes could not finish");
  cert_engine_close(engine);
  return rc;
}

int cert_probe_library(const CertElf* elf, const CertProbeOptions* opt, CertFindings* out) {
  size_t n = elf->exports.n;
  const char** names = calloc(n + 1, sizeof *names);
  const char** meta = calloc(n + 1, sizeof *meta);
  size_t nn = 0, nm = 0;
  int rc = -1;
  if (names == NULL || meta == NULL) goto done;
  for (size_t k = 0; k < n; ++k) {
    const CertSymbol* s = &elf->exports.items[k];
    if (!s->is_function || !cert_starts_with(s->name, CERT_EXPORT_PREFIX)) continue;
    if (cert_starts_with(s->name, CERT_METADATA_PREFIX) ||
        cert_starts_with(s->name, CERT_DOC_PREFIX)) {
      meta[nm++] = s->name;
    } else if (!cert_starts_with(s->name, CERT_RESERVED_PREFIX) &&
               strlen(s->name) < CERT_NAME_MAX + 10) {
      names[nn++] = s->name + strlen(CERT_EXPORT_PREFIX);
    }
  }
  rc = cert_probe_functions(names, nn, meta, nm, opt, out);
done:
  free(names);
  free(meta);
  return rc;
}

int cert_probe_replay(const char* replay, const CertProbeOptions* opt, CertFindings* out) {
  g_error[0] = '\0';
  CertCall call;
  char err[256];
  if (cert_call_parse(replay, &call, err, sizeof err) != 0) {
    snprintf(g_error, sizeof g_error, "the replay line does not parse: %s", err);
    fprintf(stderr, "certify: %s\n", g_error);
    return -1;
  }
  snprintf(call.runtime, sizeof call.runtime, "%s", opt->runtime_label ? opt->runtime_label : "");
  CertPlan plan;
  if (cert_plan_init(&plan, opt) != 0) return -1;
  CertEngineOptions eo;
  engine_options(opt, &eo);
  eo.progress = opt->progress;
  eo.progress_ctx = opt->progress_ctx;
  CertEngine* engine = cert_engine_open(&eo);
  int rc = -1;
  size_t reached = 0;
  if (engine == NULL || cert_plan_add_replay(&plan, &call) != 0) goto done;
  if (run_phase(engine, &plan, 0) != 0) {
    if (cert_engine_error(engine))
      snprintf(g_error, sizeof g_error, "%s", cert_engine_error(engine));
    goto done;
  }
  cert_plan_describe(&plan, 0, stdout);
  const char* output = NULL;
  const char* failure = cert_engine_load_failure(engine, &output);
  rc = failure ? report_load_failure(failure, output, opt, out)
               : cert_plan_judge(&plan, out, &reached);
done:
  if (rc != 0 && g_error[0] == '\0') snprintf(g_error, sizeof g_error, "the replay could not run");
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
