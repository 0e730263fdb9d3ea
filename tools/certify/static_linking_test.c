/* The static stage's loader model (static_linking.c) on real files:
 * needed libraries found or not the way ld.so searches (LD_LIBRARY_PATH,
 * LD_PRELOAD, a missing driver), lazy and immediate binding, upstream's
 * C++ API, and memory that does not grow with a needed library's size. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/certify/static_checks_test.h"

/* A needed library that cannot be found is one finding that says what
 * follows from it; the twelve symbols it would define are not judged (they
 * were once twelve false MUST failures). */
Test(certify_static, CST_007_a_missing_library_is_one_finding) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_needs_absent.so", CERT_REFERENCE_SO, &c);
  cr_expect_str_eq(c.summary,
                   "PASS static.exports\nWARN static.runtime-needed\n"
                   "WARN static.releases\nFAIL static.runtime-imports\n"
                   "FAIL static.needed-found\nSKIP static.undefined\n");
  const CertFinding* needed = finding(&c, "static.needed-found", CERT_FAIL);
  EXPECT_HAS(needed->evidence, "libcert_absent.so (needed by libcst_needs_absent.so; looked in");
  EXPECT_HAS(needed->evidence, "the ld.so cache");
  EXPECT_HAS(needed->reason, "1 needed library (libcert_absent.so) cannot be found");
  EXPECT_HAS(needed->reason, "none of its functions could be probed");
  EXPECT_HAS(needed->reason, "LD_LIBRARY_PATH or LD_PRELOAD");
  cr_expect_str_eq(needed->clause, "CST-007");
  const CertFinding* undefined = finding(&c, "static.undefined", CERT_SKIP);
  EXPECT_HAS(undefined->reason,
             "12 undefined symbols not judged: a needed library that is missing");
  for (int k = 0; k < 12; ++k) {
    char name[32];
    snprintf(name, sizeof name, "cert_absent_fn%d", k);
    EXPECT_HAS(undefined->evidence, name);
  }
  cr_expect_str_eq(finding(&c, "static.runtime-imports", CERT_FAIL)->evidence,
                   "TVMFFINoSuchFunction");
  EXPECT_HAS(finding(&c, "static.releases", CERT_WARN)->reason,
             "no upstream release from 0.1.0 to 0.1.15.post2 defines");
  cert_findings_free(&c.f);
}

/* The folder of libcert_absent.so, absolute. */
static const char* absent_dir(char* buf, size_t size) {
  char* path = realpath(cert_runfile("tools/certify/testdata/absent/libcert_absent.so"), NULL);
  cr_assert_not_null(path);
  snprintf(buf, size, "%s", path);
  free(path);
  *strrchr(buf, '/') = '\0';
  return buf;
}

Test(certify_static, CST_007_ld_library_path_finds_a_needed_library) {
  /* The loader honours LD_LIBRARY_PATH; so does the search (a directory
   * without the library changes nothing). */
  setenv("LD_LIBRARY_PATH", "/nonexistent-dir", 1);
  Checked c;
  run_checks("tools/certify/testdata/libcst_needs_absent.so", CERT_REFERENCE_SO, &c);
  EXPECT_HAS(finding(&c, "static.needed-found", CERT_FAIL)->evidence, "LD_LIBRARY_PATH");
  cert_findings_free(&c.f);
  char dir[4096];
  setenv("LD_LIBRARY_PATH", absent_dir(dir, sizeof dir), 1);
  run_checks("tools/certify/testdata/libcst_needs_absent.so", CERT_REFERENCE_SO, &c);
  EXPECT_HAS(finding(&c, "static.needed-found", CERT_PASS)->evidence, "libcert_absent.so => ");
  finding(&c, "static.undefined", CERT_PASS);
  cert_findings_free(&c.f);
  unsetenv("LD_LIBRARY_PATH");
}

/* What LD_PRELOAD loads answers DT_NEEDED by its soname and defines
 * symbols, for the static stage as for the loader the probes use. */
Test(certify_static, CST_007_ld_preload_answers_a_needed_library) {
  char dir[4096], lib[4200];
  snprintf(lib, sizeof lib, "%s/libcert_absent.so", absent_dir(dir, sizeof dir));
  setenv("LD_PRELOAD", lib, 1);
  Checked c;
  run_checks("tools/certify/testdata/libcst_needs_absent.so", CERT_REFERENCE_SO, &c);
  unsetenv("LD_PRELOAD");
  cr_expect_str_eq(c.summary,
                   "PASS static.exports\nWARN static.runtime-needed\n"
                   "WARN static.releases\nFAIL static.runtime-imports\n"
                   "PASS static.needed-found\nPASS static.undefined\n");
  cert_findings_free(&c.f);
}

/* Loaded lazily, as hosts load it, a function nothing defines stops only
 * the call that reaches it (a warning); with immediate binding the load
 * itself fails. */
Test(certify_static, CST_008_lazy_and_immediate_binding) {
  Checked c;
  run_checks("tools/certify/testdata/libcst_lazy_missing.so", CERT_REFERENCE_SO, &c);
  const CertFinding* lazy = finding(&c, "static.undefined", CERT_WARN);
  cr_expect_str_eq(lazy->evidence, "cert_missing_everywhere");
  EXPECT_HAS(lazy->reason, "RTLD_LAZY");
  EXPECT_HAS(lazy->reason, "symbol lookup error");
  cert_findings_free(&c.f);
  run_checks("tools/certify/testdata/libcst_now_missing.so", CERT_REFERENCE_SO, &c);
  const CertFinding* now = finding(&c, "static.undefined", CERT_FAIL);
  cr_expect_str_eq(now->evidence, "cert_missing_everywhere");
  EXPECT_HAS(now->reason, "it asks for immediate binding");
  cert_findings_free(&c.f);
}

/* No NVIDIA driver here: the machine's gap, not the library's. With the
 * toolkit's stub (from @cuda) it stands in; without one, nothing can load. */
Test(certify_static, CST_007_a_missing_driver_is_this_machines_gap) {
  if (access("/dev/nvidiactl", F_OK) == 0) cr_skip_test("this machine has an NVIDIA driver");
  char stubs[4096];
  char* found = realpath(cert_runfile("../cuda/stubs/libcuda.so"), NULL);
  CertElf elf;
  cert_read_ok("tools/certify/testdata/libcert_cuda_dsl.so", &elf);
  CertLoadEnv none = {NULL, NULL};
  CertFindings f = {0};
  cr_assert_eq(cert_static_checks_in(&elf, cert_runfile(CERT_REFERENCE_SO), &none, &f), 0);
  int driver = 0, failed = 0;
  for (size_t i = 0; i < f.n; ++i) {
    if (strcmp(f.items[i].check, "static.driver") == 0) {
      driver++;
      cr_expect_eq(f.items[i].verdict, CERT_SKIP);
      EXPECT_HAS(f.items[i].reason, "no driver stub of the CUDA toolkit was found");
    }
    failed += f.items[i].verdict == CERT_FAIL;
  }
  cr_expect_eq(driver, 1);
  cr_expect_eq(failed, 0, "no MUST failure for a driver this machine lacks");
  cert_findings_free(&f);
  if (found == NULL) {
    cert_elf_free(&elf);
    cr_skip_test("the CUDA toolkit here ships no lib64/stubs/libcuda.so");
  }
  snprintf(stubs, sizeof stubs, "%s", found);
  free(found);
  *strrchr(stubs, '/') = '\0';
  CertLoadEnv env = {NULL, stubs};
  cr_assert_eq(cert_static_checks_in(&elf, cert_runfile(CERT_REFERENCE_SO), &env, &f), 0);
  int stubbed = 0;
  for (size_t i = 0; i < f.n; ++i) {
    const CertFinding* x = &f.items[i];
    cr_expect_neq(x->verdict, CERT_FAIL, "%s: %s", x->check, x->reason);
    if (strcmp(x->check, "static.driver") == 0) {
      stubbed++;
      EXPECT_HAS(x->reason, "against the CUDA toolkit's driver stub instead");
    }
    if (strcmp(x->check, "static.needed-found") == 0) EXPECT_HAS(x->evidence, "libcuda.so.1 => ");
  }
  cr_expect_eq(stubbed, 1);
  cert_findings_free(&f);
  cert_elf_free(&elf);
}

/* A library built on upstream's C++ API is named as such: upstream defines
 * its tvm::ffi symbols, the reference does not (a SKIP, not a failure). */
Test(certify_static, CST_008_upstreams_cxx_api_is_named) {
  Checked c;
  run_checks("tools/certify/testdata/libcert_cxx_api.so", CERT_UPSTREAM_SO, &c);
  const CertFinding* up = finding(&c, "static.cxx-api", CERT_WARN);
  cr_expect_str_eq(up->evidence, "_ZN3tvm3ffi8DeepCopyERKNS0_3AnyE");
  EXPECT_HAS(up->reason, "built on upstream's C++ API");
  finding(&c, "static.undefined", CERT_PASS);
  cert_findings_free(&c.f);
  run_checks("tools/certify/testdata/libcert_cxx_api.so", CERT_REFERENCE_SO, &c);
  const CertFinding* ref = finding(&c, "static.cxx-api", CERT_SKIP);
  EXPECT_HAS(ref->reason, "this runtime defines 0 of the 1 C++ symbols");
  finding(&c, "static.undefined", CERT_PASS);
  cert_findings_free(&c.f);
}

/* The static stage costs memory for the headers and dynamic sections of
 * the libraries it models, not for their size: a needed library of 512 MB
 * (a copy of libcert_absent.so padded to that size, as libcublasLt is
 * large) adds a few MB, measured as a child process's peak. */
Test(certify_static, CST_007_memory_does_not_grow_with_needed_libraries, .timeout = 120) {
  const char* tmp = getenv("TEST_TMPDIR");
  cr_assert_not_null(tmp);
  char dir[4096], big[4200], src[4200], from[4096];
  snprintf(dir, sizeof dir, "%s/big", tmp);
  mkdir(dir, 0755);
  snprintf(big, sizeof big, "%s/libcert_absent.so", dir);
  snprintf(src, sizeof src, "%s/libcert_absent.so", absent_dir(from, sizeof from));
  FILE* in = fopen(src, "rb");
  FILE* out = fopen(big, "wb");
  cr_assert(in && out);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  cr_assert_eq(ftruncate(fileno(out), (off_t)512 << 20), 0, "a sparse file: no disk is used");
  fclose(out);
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("LD_LIBRARY_PATH", dir, 1);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    CertElf elf;
    char err[256];
    CertFindings f = {0};
    int ok = cert_elf_read(cert_runfile("tools/certify/testdata/libcst_needs_absent.so"), &elf, err,
                           sizeof err) == 0 &&
             cert_static_checks(&elf, cert_runfile(CERT_REFERENCE_SO), &f) == 0;
    getrusage(RUSAGE_SELF, &after);
    long grew = ok ? after.ru_maxrss - before.ru_maxrss : -1;
    for (size_t i = 0; ok && i < f.n; ++i) {
      if (strcmp(f.items[i].check, "static.needed-found") == 0 && f.items[i].verdict != CERT_PASS)
        grew = -2;
    }
    if (write(fds[1], &grew, sizeof grew) != sizeof grew) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  long grew = -3;
  cr_assert_eq(read(fds[0], &grew, sizeof grew), (ssize_t)sizeof grew);
  waitpid(pid, NULL, 0);
  cr_expect_geq(grew, 0, "the checks ran and found the padded library (%ld)", grew);
  cr_expect_lt(grew, 64 * 1024, "peak memory grew by %ld KiB for a 512 MiB needed library", grew);
}
