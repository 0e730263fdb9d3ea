/* The dynamic stage on whole libraries, as certify runs it: every callable
 * export found by the ELF reader, metadata/doc functions decoded, under
 * both runtimes. The third-party libraries are what real users hand in;
 * the test prints every finding and what the run cost. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/certify/cert_test_util.h"
#include "tools/certify/probe.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void probe_lib(const char* lib_runfile, const char* runtime_runfile, const char* label,
                      CertFindings* f) {
  char lib[PATH_MAX], rt[PATH_MAX], err[512];
  cr_assert_not_null(realpath(cert_runfile(lib_runfile), lib), "%s", lib_runfile);
  cr_assert_not_null(realpath(cert_runfile(runtime_runfile), rt), "%s", runtime_runfile);
  CertElf elf;
  cr_assert_eq(cert_elf_read(lib, &elf, err, sizeof err), 0, "%s", err);
  CertProbeOptions o;
  memset(&o, 0, sizeof o);
  o.lib_path = lib;
  o.runtime_path = rt;
  o.runtime_label = label;
  o.jobs = 2;
  double t0 = now_s();
  cr_assert_eq(cert_probe_library(&elf, &o, f), 0);
  fprintf(stderr, "== %s under %s: %zu findings in %.2f s\n", lib_runfile, label, f->n,
          now_s() - t0);
  for (size_t k = 0; k < f->n; ++k) {
    const CertFinding* x = &f->items[k];
    fprintf(stderr, "%-10s %-24s %-9s %s | %.300s | %s\n", x->function, x->check,
            cert_verdict_name(x->verdict), x->reason, x->evidence, x->replay);
  }
  cert_elf_free(&elf);
}

static const CertFinding* find(const CertFindings* f, const char* function, const char* check) {
  for (size_t k = 0; k < f->n; ++k) {
    if (strcmp(f->items[k].function, function) == 0 && strcmp(f->items[k].check, check) == 0) {
      return &f->items[k];
    }
  }
  return NULL;
}

/* Loads under upstream, which lists the global functions and types it
 * registers; its metadata and doc getters are functions that return
 * strings. */
Test(library, CDY_013_libtvm_ffi_testing_under_upstream, .timeout = 300) {
  CertFindings f = {0};
  probe_lib(CERT_TESTING_SO, CERT_UPSTREAM_SO, "upstream", &f);
  const CertFinding* load = find(&f, "", "probe.load");
  cr_assert_not_null(load);
  cr_expect_eq(load->verdict, CERT_PASS, "%s", load->reason);
  cr_expect_not_null(strstr(load->evidence, "global functions: "), "%s", load->evidence);
  cr_expect_not_null(strstr(load->evidence, "testing.TestObjectBase"), "%s", load->evidence);
  int meta = 0;
  for (size_t k = 0; k < f.n; ++k) {
    const CertFinding* x = &f.items[k];
    if (strcmp(x->check, "probe.metadata") != 0) continue;
    meta++;
    cr_expect_eq(x->verdict, CERT_PASS, "%s: %s %s", x->function, x->reason, x->evidence);
  }
  cr_expect_gt(meta, 0, "metadata and doc functions decoded");
  cert_findings_free(&f);
}

/* Under the reference it loads as hosts load it (lazily: a function the
 * reference lacks matters only to a call that reaches it), and the types
 * it registers are listed: never a crash. */
Test(library, CDY_001_libtvm_ffi_testing_under_reference, .timeout = 300) {
  CertFindings f = {0};
  probe_lib(CERT_TESTING_SO, CERT_REFERENCE_SO, "reference", &f);
  const CertFinding* load = find(&f, "", "probe.load");
  cr_assert_not_null(load);
  if (load->verdict == CERT_PASS) {
    cr_expect_not_null(strstr(load->evidence, "testing.TestObjectBase"), "%s", load->evidence);
  } else {
    cr_expect_not_null(strstr(load->evidence, "undefined symbol"), "%s", load->evidence);
  }
  cr_expect_gt(f.n, 0);
  cert_findings_free(&f);
}

Test(library, CDY_002_jax_tvm_ffi_under_both_runtimes, .timeout = 300) {
  cert_require_jax();
  const char* rts[2][2] = {{CERT_REFERENCE_SO, "reference"}, {CERT_UPSTREAM_SO, "upstream"}};
  for (int r = 0; r < 2; ++r) {
    CertFindings f = {0};
    probe_lib(CERT_JAX_SO, rts[r][0], rts[r][1], &f);
    cr_expect_gt(f.n, 0);
    cert_findings_free(&f);
  }
}

Test(library, CDY_002_our_cpu_kernel_without_a_manifest, .timeout = 300) {
  const char* rts[2][2] = {{CERT_REFERENCE_SO, "reference"}, {CERT_UPSTREAM_SO, "upstream"}};
  for (int r = 0; r < 2; ++r) {
    CertFindings f = {0};
    probe_lib("kernels/libscale_cpu.so", rts[r][0], rts[r][1], &f);
    for (size_t k = 0; k < f.n; ++k) {
      cr_expect_eq(f.items[k].verdict, CERT_PASS, "%s %s: %s", f.items[k].check, rts[r][1],
                   f.items[k].reason);
    }
    cert_findings_free(&f);
  }
}
