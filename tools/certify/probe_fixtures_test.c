/* Every fixture kernel (kernels/fixtures, one defect each) is flagged by
 * the probes for exactly its own defect and nothing else, and our own
 * kernels (CPU, CUDA, the C++ drop-in) probe clean, under both runtimes. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/certify/manifest.h"
#include "tools/certify/probe.h"

typedef struct {
  const char* lib;      /* runfiles path */
  const char* manifest; /* runfiles path */
  const char* function;
  const char* checks[3]; /* the checks that must fail (FAIL or NONSTRICT); no other may */
  const char* clause;    /* the clause the first check names */
} Case;

static void probe_case(const Case* c, const char* runtime, const char* label) {
  char lib[PATH_MAX], rt[PATH_MAX], err[512];
  cr_assert_not_null(realpath(c->lib, lib), "%s", c->lib);
  cr_assert_not_null(realpath(runtime, rt), "%s", runtime);
  CertManifest m;
  cr_assert_eq(cert_manifest_load(c->manifest, &m, err, sizeof err), 0, "%s", err);
  CertProbeOptions o;
  memset(&o, 0, sizeof o);
  o.lib_path = lib;
  o.runtime_path = rt;
  o.runtime_label = label;
  o.manifest = &m;
  o.jobs = 2;
  o.timeout_s = 10;
  CertFindings f = {0};
  const char* names[] = {c->function};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, &o, &f), 0);
  int seen[3] = {0};
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    int expected = -1;
    for (int e = 0; e < 3 && c->checks[e]; ++e) {
      if (strcmp(x->check, c->checks[e]) == 0) expected = e;
    }
    if (x->verdict == CERT_FAIL || x->verdict == CERT_NONSTRICT) {
      cr_expect_geq(expected, 0, "%s under %s: unexpected %s %s: %s [%s] replay: %s", c->lib, label,
                    cert_verdict_name(x->verdict), x->check, x->reason, x->evidence, x->replay);
      if (expected >= 0) seen[expected] = 1;
      if (expected == 0 && c->clause) cr_expect_str_eq(x->clause, c->clause, "%s", c->lib);
    }
  }
  for (int e = 0; e < 3 && c->checks[e]; ++e) {
    cr_expect(seen[e], "%s under %s: %s was not flagged", c->lib, label, c->checks[e]);
  }
  cert_findings_free(&f);
  cert_manifest_free(&m);
}

#define REF "reference/libtvm_ffi.so"
#define UP "../tvm_ffi_upstream/lib/libtvm_ffi.so"
#define FX(name) "kernels/fixtures/lib" name ".so"
#define F32 "kernels/fixtures/scale_f32.manifest.json"

static void both(const Case* c) {
  probe_case(c, REF, "reference");
  probe_case(c, UP, "upstream");
}

Test(fixtures, CDY_004_bad_aborts, .timeout = 300) {
  Case c = {FX("bad_aborts"), F32, "scale", {"probe.tensor-forms", "manifest.errors"}, "CDY-004"};
  both(&c);
}
Test(fixtures, CDY_011_bad_leaks_reference, .timeout = 300) {
  Case c = {FX("bad_leaks_reference"), F32, "scale", {"probe.refcounts"}, "CDY-011"};
  both(&c);
}
Test(fixtures, CDY_008_bad_no_raise, .timeout = 300) {
  Case c = {FX("bad_no_raise"), F32, "scale", {"probe.error-hygiene"}, "CDY-008"};
  both(&c);
}
Test(fixtures, CDY_023_bad_null_data, .timeout = 300) {
  Case c = {FX("bad_null_data"), F32, "scale", {"manifest.errors"}, "CDY-002"};
  both(&c);
}
Test(fixtures, CDY_009_bad_raise_returns_zero, .timeout = 300) {
  Case c = {FX("bad_raise_returns_zero"), F32, "scale", {"probe.error-hygiene"}, "CDY-009"};
  both(&c);
}
Test(fixtures, CDY_003_bad_reads_past_args, .timeout = 300) {
  Case c = {FX("bad_reads_past_args"), F32, "scale", {"probe.args-bounds"}, "CDY-003"};
  both(&c);
}
Test(fixtures, CDY_022_bad_sets_result, .timeout = 300) {
  Case c = {FX("bad_sets_result"), F32, "scale", {"manifest.returns"}, "CDY-022"};
  both(&c);
}
Test(fixtures, CDY_024_bad_unnamed_argument, .timeout = 300) {
  Case c = {FX("bad_unnamed_argument"), F32, "scale", {"manifest.errors"}, "CDY-024"};
  both(&c);
}
Test(fixtures, CDY_005_bad_writes_past_end, .timeout = 300) {
  Case c = {FX("bad_writes_past_end"), F32, "scale", {"probe.tensor-bounds"}, "CDY-005"};
  both(&c);
}
Test(fixtures, CDY_023_bad_wrong_kind, .timeout = 300) {
  Case c = {FX("bad_wrong_kind"), F32, "scale", {"manifest.errors"}, "CDY-023"};
  both(&c);
}
/* Its defect (the wrong stream) needs a GPU to show; without one the probes
 * must find nothing else wrong. Its missing export is the static stage's. */
Test(fixtures, CDY_020_bad_ignores_stream_probes_clean_without_a_gpu, .timeout = 300) {
  Case c = {FX("bad_ignores_stream"),
            "kernels/fixtures/scale_cuda_f32.manifest.json",
            "scale",
            {NULL},
            NULL};
  both(&c);
}

Test(fixtures, CDY_020_our_cpu_kernel_is_clean, .timeout = 300) {
  Case c = {"kernels/libscale_cpu.so", "kernels/scale_cpu.manifest.json", "scale", {NULL}, NULL};
  both(&c);
}
Test(fixtures, CDY_020_our_cuda_kernel_is_clean, .timeout = 300) {
  Case c = {"kernels/libscale_cuda.so", "kernels/scale_cuda.manifest.json", "scale", {NULL}, NULL};
  both(&c);
}
Test(fixtures, CDY_020_the_dropin_kernel_is_clean, .timeout = 300) {
  Case c = {"kernels/libscale_dropin.so",
            "kernels/dropin/scale_dropin.manifest.json",
            "scale_dropin",
            {NULL},
            NULL};
  both(&c);
}

/* bad_symbol_prefix exports no __tvm_ffi_scale: asked for it, every probe
 * says so (SKIP), nothing fails. */
Test(fixtures, CDY_002_bad_symbol_prefix_has_nothing_to_call, .timeout = 120) {
  char lib[PATH_MAX], rt[PATH_MAX];
  cr_assert_not_null(realpath(FX("bad_symbol_prefix"), lib));
  cr_assert_not_null(realpath(REF, rt));
  CertProbeOptions o;
  memset(&o, 0, sizeof o);
  o.lib_path = lib;
  o.runtime_path = rt;
  o.runtime_label = "reference";
  o.jobs = 2;
  CertFindings f = {0};
  const char* names[] = {"scale"};
  cr_assert_eq(cert_probe_functions(names, 1, NULL, 0, &o, &f), 0);
  cr_assert_gt(f.n, 0);
  int nothing = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    if (x->function[0] == '\0') {
      /* It loads; nothing could be called, which is the library's verdict. */
      nothing += strcmp(x->check, "probe.valid-call") == 0 && x->verdict == CERT_SKIP &&
                 strstr(x->reason, "Nothing could be called") != NULL;
      continue;
    }
    cr_expect_eq(x->verdict, CERT_SKIP, "%s: %s", x->check, x->reason);
    cr_expect_not_null(strstr(x->reason, "__tvm_ffi_scale is not exported"), "%s", x->reason);
  }
  cr_expect_eq(nothing, 1);
  cert_findings_free(&f);
}
