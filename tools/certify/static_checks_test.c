/* The static stage on real files: every fixture, our kernels, the
 * third-party libraries and one test library per defect, under the
 * reference and the upstream runtime. Each test asserts the whole list of
 * findings (verdict, check, function, in order), then the key words of the
 * reasons and evidence that are not PASS. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/certify/cert_test_util.h"
#include "tools/certify/elf_facts.h"
#include "tools/certify/release_table.h"
#include "tools/certify/static_checks_test.h"

static const char* const kRuntimes[] = {CERT_REFERENCE_SO, CERT_UPSTREAM_SO};

/* What every one of our CPU kernels and fixtures is, statically: one
 * callable, runtime symbols bound by the host (KER-002, a warning by
 * design), nothing missing. */
#define CLEAN_CPU_KERNEL                                                    \
  "PASS static.exports\nWARN static.runtime-needed\nPASS static.releases\n" \
  "PASS static.runtime-imports\nPASS static.needed-found\nPASS static.undefined\n"

static void expect_clean_cpu(const char* lib) {
  for (size_t r = 0; r < 2; ++r) {
    Checked c;
    run_checks(lib, kRuntimes[r], &c);
    cr_expect_str_eq(c.summary, CLEAN_CPU_KERNEL, "%s on %s", lib, kRuntimes[r]);
    const CertFinding* w = finding(&c, "static.runtime-needed", CERT_WARN);
    EXPECT_HAS(w->reason, "without libtvm_ffi.so in DT_NEEDED");
    EXPECT_HAS(w->reason, "RTLD_GLOBAL");
    EXPECT_HAS(finding(&c, "static.releases", CERT_PASS)->reason,
               "imports are defined from 0.1.0 on (symbols only)");
    EXPECT_HAS(finding(&c, "static.releases", CERT_PASS)->reason,
               "cannot be told from its symbols");
    cert_findings_free(&c.f);
  }
}

Test(certify_static, CST_001_scale_cpu_exports_scale) {
  expect_clean_cpu("kernels/libscale_cpu.so");
  Checked c;
  run_checks("kernels/libscale_cpu.so", CERT_REFERENCE_SO, &c);
  cr_expect_str_eq(finding(&c, "static.exports", CERT_PASS)->evidence, "scale");
  cert_findings_free(&c.f);
}

Test(certify_static, CST_006_scale_cuda_is_clean_and_reads_the_env_stream) {
  for (size_t r = 0; r < 2; ++r) {
    Checked c;
    run_checks("kernels/libscale_cuda.so", kRuntimes[r], &c);
    cr_expect_str_eq(c.summary,
                     "PASS static.exports\nWARN static.runtime-needed\nPASS static.cuda-stream\n"
                     "PASS static.releases\nPASS static.runtime-imports\n"
                     "PASS static.needed-found\nPASS static.undefined\n",
                     "on %s", kRuntimes[r]);
    EXPECT_HAS(finding(&c, "static.needed-found", CERT_PASS)->evidence,
               "libcudart.so.13 => " CERT_CUDA_LIB "/libcudart.so.13");
    cert_findings_free(&c.f);
  }
}

Test(certify_static, dropin_kernel_is_clean) { expect_clean_cpu("kernels/libscale_dropin.so"); }

/* Every fixture's defect is dynamic except two that show in the file. */
Test(certify_static, fixtures_with_dynamic_defects_are_statically_clean) {
  static const char* const kDynamic[] = {"aborts",
                                         "leaks_reference",
                                         "no_raise",
                                         "null_data",
                                         "raise_returns_zero",
                                         "reads_past_args",
                                         "sets_result",
                                         "unnamed_argument",
                                         "writes_past_end",
                                         "wrong_kind",
                                         NULL};
  for (const char* const* name = kDynamic; *name != NULL; ++name) {
    char path[256];
    snprintf(path, sizeof path, "kernels/fixtures/libbad_%s.so", *name);
    expect_clean_cpu(path);
  }
}

Test(certify_static, CST_001_symbol_prefix_fixture_exports_nothing_callable) {
  for (size_t r = 0; r < 2; ++r) {
    Checked c;
    run_checks("kernels/fixtures/libbad_symbol_prefix.so", kRuntimes[r], &c);
    cr_expect_str_eq(c.summary,
                     "FAIL static.exports\nWARN static.runtime-needed\nPASS static.releases\n"
                     "PASS static.runtime-imports\nPASS static.needed-found\n"
                     "PASS static.undefined\n");
    const CertFinding* f = finding(&c, "static.exports", CERT_FAIL);
    EXPECT_HAS(f->reason, "'tvm_ffi_scale' looks like one without the exact prefix '__tvm_ffi_'");
    cr_expect_str_eq(f->clause, "CST-001");
    cert_findings_free(&c.f);
  }
}

Test(certify_static, ignores_stream_fixture_warns_about_the_stream) {
  for (size_t r = 0; r < 2; ++r) {
    Checked c;
    run_checks("kernels/fixtures/libbad_ignores_stream.so", kRuntimes[r], &c);
    cr_expect_str_eq(c.summary,
                     "PASS static.exports\nWARN static.runtime-needed\nWARN static.cuda-stream\n"
                     "PASS static.releases\nPASS static.runtime-imports\n"
                     "PASS static.needed-found\nPASS static.undefined\n");
    const CertFinding* f = finding(&c, "static.cuda-stream", CERT_WARN);
    EXPECT_HAS(f->reason, "does not import TVMFFIEnvGetStream");
    EXPECT_HAS(f->reason, "the file cannot show that");
    cr_expect_str_eq(f->clause, "DEV-005");
    cert_findings_free(&c.f);
  }
}

Test(certify_static, CST_002_a_data_export_fails) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_data_export.so", CERT_REFERENCE_SO, &c);
  cr_expect_str_eq(c.summary,
                   "PASS static.exports\nFAIL static.export-kind table\n"
                   "PASS static.releases\nPASS static.runtime-imports\n"
                   "PASS static.needed-found\nPASS static.undefined\n");
  const CertFinding* f = finding(&c, "static.export-kind", CERT_FAIL);
  EXPECT_HAS(f->reason, "__tvm_ffi_table is data (16 bytes), not a function");
  cr_expect_str_eq(f->clause, "CST-002");
  cert_findings_free(&c.f);
}

Test(certify_static, CST_003_reserved_names_of_the_wrong_kind) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_reserved.so", CERT_UPSTREAM_SO, &c);
  cr_expect_str_eq(c.summary,
                   "PASS static.exports\nNONSTRICT static.described-exists ghost\n"
                   "PASS static.metadata ghost\nWARN static.reserved-kind\n"
                   "FAIL static.doc add\nFAIL static.reserved-kind\nFAIL static.metadata add\n"
                   "PASS static.releases\nPASS static.runtime-imports\n"
                   "PASS static.needed-found\nPASS static.undefined\n");
  EXPECT_HAS(finding(&c, "static.reserved-kind", CERT_FAIL)->reason,
             "__tvm_ffi__library_ctx is a function, but runtimes read it as data");
  EXPECT_HAS(finding(&c, "static.reserved-kind", CERT_WARN)->reason,
             "__tvm_ffi__unknown uses the reserved prefix");
  /* Data metadata and doc are decoded: an array, and a pointer followed
   * through its RELATIVE relocation. */
  const CertFinding* meta = finding(&c, "static.metadata", CERT_FAIL);
  EXPECT_HAS(meta->reason, "a character array holding a JSON object with keys arg_names, bound");
  cr_expect_str_eq(meta->evidence, "{\"arg_names\": [\"x\"], \"bound\": 3}");
  cr_expect_str_eq(meta->clause, "SYM-009");
  const CertFinding* doc = finding(&c, "static.doc", CERT_FAIL);
  EXPECT_HAS(doc->reason, "a pointer to a string");
  cr_expect_str_eq(doc->evidence, "adds one");
  cert_findings_free(&c.f);
}

Test(certify_static, CST_005_a_getter_for_a_function_not_exported) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_reserved.so", CERT_REFERENCE_SO, &c);
  const CertFinding* f = finding(&c, "static.described-exists", CERT_NONSTRICT);
  EXPECT_HAS(f->reason, "describes __tvm_ffi_ghost, which the library does not export");
  cr_expect_str_eq(f->function, "ghost");
  cert_findings_free(&c.f);
}

Test(certify_static, CST_004_library_bin_validated_by_the_reference_parser) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_bad_bin.so", CERT_REFERENCE_SO, &c);
  cr_expect_str_eq(c.summary,
                   "PASS static.exports\nFAIL static.library-bin\n"
                   "PASS static.releases\nPASS static.runtime-imports\n"
                   "PASS static.needed-found\nPASS static.undefined\n");
  const CertFinding* f = finding(&c, "static.library-bin", CERT_FAIL);
  EXPECT_HAS(f->reason, "malformed at byte 0 (field nbytes)");
  EXPECT_HAS(f->evidence, "ValueError");
  cert_findings_free(&c.f);
  /* The libbin tool's example: a well-formed blob (and no functions). */
  run_checks("tools/libbin_example.so", CERT_REFERENCE_SO, &c);
  EXPECT_HAS(finding(&c, "static.library-bin", CERT_PASS)->evidence, "3 modules, 3 imports");
  cert_findings_free(&c.f);
}

/* A library that only registers at load is not failed for lacking exports. */
Test(certify_static, CST_001_a_library_that_registers_at_load) {
  Checked c;
  run_checks("tools/certify/testdata/libcert_registers.so", CERT_REFERENCE_SO, &c);
  const CertFinding* exports = finding(&c, "static.exports", CERT_SKIP);
  EXPECT_HAS(exports->reason, "it registers global functions or types when it loads");
  cr_expect_str_eq(exports->evidence, "TVMFFIFunctionSetGlobal");
  cert_findings_free(&c.f);
}

Test(certify_static, jax_tvm_ffi_on_both_runtimes) {
  cert_require_jax();
  for (size_t r = 0; r < 2; ++r) {
    Checked c;
    run_checks(CERT_JAX_SO, kRuntimes[r], &c);
    cr_expect_str_eq(c.summary,
                     "PASS static.exports\nPASS static.releases\nPASS static.runtime-imports\n"
                     "PASS static.needed-found\nWARN static.runtime-findable\n"
                     "PASS static.undefined\n",
                     "on %s", kRuntimes[r]);
    cr_expect_str_eq(finding(&c, "static.exports", CERT_PASS)->evidence,
                     "registered_count, get_last_workspace_peak, register_tvm_ffi_handler");
    const CertFinding* w = finding(&c, "static.runtime-findable", CERT_WARN);
    EXPECT_HAS(w->reason, "needs libtvm_ffi.so but has no DT_RUNPATH or DT_RPATH that finds one");
    EXPECT_HAS(w->reason, "(this runtime's soname: libtvm_ffi.so)");
    EXPECT_HAS(finding(&c, "static.needed-found", CERT_PASS)->evidence, "libtvm_ffi.so => ");
    cert_findings_free(&c.f);
  }
}

Test(certify_static, CST_006_tvm_ffi_testing_on_the_reference_names_missing_symbols) {
  Checked c;
  run_checks(CERT_TESTING_SO, CERT_REFERENCE_SO, &c);
  const CertFinding* f = NULL;
  for (size_t i = 0; i < c.f.n; ++i) {
    if (strcmp(c.f.items[i].check, "static.runtime-imports") == 0) f = &c.f.items[i];
  }
  cr_assert_not_null(f);
  /* The reference lacks the reflection registration functions until they
   * land (then this is a PASS); each one it lacks is named. */
  cr_expect(f->verdict == CERT_FAIL || f->verdict == CERT_PASS, "%s", c.summary);
  if (f->verdict == CERT_FAIL) {
    EXPECT_HAS(f->reason, "TVMFFI* symbol");
    EXPECT_HAS(f->reason, "does not define, so the library does not load on it");
    cr_expect(strstr(f->evidence, "TVMFFITypeRegister") != NULL ||
                  strstr(f->evidence, "TVMFFIGetTypeAttrColumn") != NULL,
              "evidence: %s", f->evidence);
  }
  cert_findings_free(&c.f);
}

Test(certify_static, tvm_ffi_testing_on_upstream_is_clean_with_function_getters) {
  Checked c;
  run_checks(CERT_TESTING_SO, CERT_UPSTREAM_SO, &c);
  cr_expect_str_eq(c.summary,
                   "PASS static.exports\n"
                   "PASS static.metadata testing_dll_test_add_with_docstring\n"
                   "PASS static.doc testing_dll_test_add_with_docstring\n"
                   "PASS static.metadata testing_dll_schema_id_int\n"
                   "PASS static.releases\nPASS static.runtime-imports\n"
                   "PASS static.needed-found\nPASS static.undefined\n");
  EXPECT_HAS(finding(&c, "static.metadata", CERT_PASS)->reason, "the dynamic stage");
  EXPECT_HAS(finding(&c, "static.needed-found", CERT_PASS)->evidence, "libtvm_ffi.so => ");
  cert_findings_free(&c.f);
}

Test(certify_static, an_unreadable_runtime_is_a_skip_with_the_reason) {
  CertElf elf;
  cert_read_ok("kernels/libscale_cpu.so", &elf);
  CertFindings f = {0};
  cr_assert_eq(cert_static_checks(&elf, "/nonexistent/libtvm_ffi.so", &f), 0);
  int skips = 0;
  for (size_t i = 0; i < f.n; ++i) {
    if (f.items[i].verdict != CERT_SKIP) continue;
    skips++;
    EXPECT_HAS(f.items[i].evidence, "/nonexistent/libtvm_ffi.so");
  }
  cr_expect_eq(skips, 2);
  /* The needed libraries are still searched. */
  int needed_pass = 0;
  for (size_t i = 0; i < f.n; ++i) {
    if (strcmp(f.items[i].check, "static.needed-found") == 0 && f.items[i].verdict == CERT_PASS)
      needed_pass = 1;
  }
  cr_expect_eq(needed_pass, 1);
  cert_findings_free(&f);
  cert_elf_free(&elf);
}

/* The shipped table agrees with the pinned wheel's library: the same
 * TVMFFI* functions in the newest column. */
Test(certify_static, release_table_matches_the_pinned_wheel) {
  size_t n = cert_release_count();
  cr_assert_eq(n, 21);
  cr_expect_str_eq(cert_release_name(0), "0.1.0");
  cr_expect_str_eq(cert_release_name(n - 1), "0.1.15.post2");
  CertElf up;
  cert_read_ok(CERT_UPSTREAM_SO, &up);
  uint32_t newest = (uint32_t)1 << (n - 1);
  size_t in_lib = 0;
  for (size_t i = 0; i < up.exports.n; ++i) {
    const CertSymbol* s = &up.exports.items[i];
    if (strncmp(s->name, "TVMFFI", 6) != 0 || !s->is_function) continue;
    in_lib++;
    cr_expect(cert_release_mask(s->name) & newest, "%s is not in the table's newest release",
              s->name);
  }
  size_t in_table = 0;
  for (size_t i = 0; cert_release_symbol(i) != NULL; ++i) {
    if (!(cert_release_symbol(i)->releases & newest)) continue;
    in_table++;
    const CertSymbol* s = cert_elf_find(&up, cert_release_symbol(i)->symbol, 0);
    cr_expect(s != NULL && s->is_function, "the table lists %s, the wheel does not export it",
              cert_release_symbol(i)->symbol);
  }
  cr_expect_eq(in_lib, 50);
  cr_expect_eq(in_table, in_lib);
  /* When symbols appeared (from the wheels). */
  cr_expect_eq(cert_release_mask("TVMFFIHandleInitOnce"), 0x1fffe0u, "since 0.1.5");
  cr_expect_eq(cert_release_mask("TVMFFITensorCreateUnsafeView"), 0x1fffc0u, "since 0.1.6");
  cr_expect_eq(cert_release_mask("TVMFFIBigIntFromByteArray"), 0x1e0000u, "since 0.1.14.post0");
  cr_expect_eq(cert_release_mask("TVMFFINoSuchFunction"), 0u);
  cert_elf_free(&up);
}

/* static.releases says what symbols show, and no more: from which release
 * on the imports are defined, and "built against >= A" only when an import
 * first appeared in A; never a range of releases it runs on. */
Test(certify_static, releases_say_what_symbols_show) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_new_glibc.so", CERT_REFERENCE_SO, &c);
  const CertFinding* x = finding(&c, "static.releases", CERT_PASS);
  cr_expect_str_eq(
      x->reason,
      "imports are defined from 0.1.8.post0 on (symbols only); built against >= 0.1.8.post0, "
      "since it imports TVMFFIErrorCreateWithCauseAndExtraContext; certify --releases all runs "
      "it under each release");
  cr_expect_str_eq(x->evidence, "TVMFFIErrorCreateWithCauseAndExtraContext (first in 0.1.8.post0)");
  cr_expect_null(strstr(x->reason, "needs apache-tvm-ffi"));
  cert_findings_free(&c.f);
}
