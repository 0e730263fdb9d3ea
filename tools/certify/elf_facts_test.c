/* The ELF facts of real files, compared with what readelf shows for them:
 * exports, imports, DT_NEEDED, RUNPATH and the derived flags. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/certify/cert_test_util.h"
#include "tools/certify/elf_facts.h"

#include "tools/certify/sanitized.h"

#define SCALE_CPU_IMPORTS                                                               \
  "TVMFFIErrorSetRaisedFromCStr,_ITM_deregisterTMCloneTable,_ITM_registerTMCloneTable," \
  "__cxa_finalize,__gmon_start__,__stack_chk_fail,getenv,snprintf,strcmp,strtoll,vsnprintf"

Test(elf_facts, scale_cpu_exports_imports_needed) {
  CertElf elf;
  cert_read_ok("kernels/libscale_cpu.so", &elf);
  cr_expect_eq(elf.is_shared_object, 1);
  cr_expect_eq(elf.machine, 62 /* EM_X86_64 */);
  CERT_EXPECT_SET(&elf.exports, "", "__bss_start,__tvm_ffi_scale,_edata,_end");
#if CERT_SANITIZED
  /* Instrumentation adds imports (memcpy, ...): only the ABI ones are fixed. */
  CERT_EXPECT_SET(&elf.imports, "TVMFFI", "TVMFFIErrorSetRaisedFromCStr");
#else
  CERT_EXPECT_SET(&elf.imports, "", SCALE_CPU_IMPORTS);
#endif
  char* needed = cert_joined_needed(&elf);
  cr_expect_str_eq(needed, "libstdc++.so.6,libm.so.6,libc.so.6");
  free(needed);
  cr_expect_null(elf.rpath);
  cr_expect_null(elf.runpath);
  cr_expect_null(elf.soname);
  const CertSymbol* scale = cert_elf_find(&elf, "__tvm_ffi_scale", 0);
  cr_assert_not_null(scale);
  cr_expect_eq(scale->is_function, 1);
  cr_expect_gt(scale->size, 0);
  cr_expect_eq(scale->file_bytes, scale->size, "a function's bytes are all in .text");
  const CertSymbol* weak = cert_elf_find(&elf, "__cxa_finalize", 1);
  cr_assert_not_null(weak);
  cr_expect_eq(weak->is_weak, 1);
  cr_expect_eq(elf.has_library_bin, 0);
  cr_expect_eq(elf.imports_env_get_stream, 0);
  cr_expect_eq(elf.uses_cuda, 0);
  const char* names[4] = {0};
  cr_expect_eq(cert_elf_callable(&elf, names, 4), 1);
  cr_expect_str_eq(names[0], "scale");
  cr_expect_eq(cert_elf_callable(&elf, NULL, 0), 1);
  cert_elf_free(&elf);
}

Test(elf_facts, scale_cuda_uses_cuda_and_the_env_stream) {
  CertElf elf;
  cert_read_ok("kernels/libscale_cuda.so", &elf);
  CERT_EXPECT_SET(&elf.exports, "__tvm_ffi", "__tvm_ffi_scale");
  CERT_EXPECT_SET(&elf.imports, "TVMFFI", "TVMFFIEnvGetStream,TVMFFIErrorSetRaisedFromCStr");
  CERT_EXPECT_SET(&elf.imports, "cuda",
                  "cudaGetDevice,cudaGetErrorName,cudaGetErrorString,"
                  "cudaLaunchKernel,cudaSetDevice");
  char* needed = cert_joined_needed(&elf);
  cr_expect_str_eq(needed, "libcudart.so.13,libstdc++.so.6,libgcc_s.so.1,libc.so.6");
  free(needed);
  cr_expect_null(elf.rpath);
  cr_assert_not_null(elf.runpath);
  cr_expect_str_eq(elf.runpath, CERT_CUDA_LIB);
  cr_expect_eq(elf.uses_cuda, 1);
  cr_expect_eq(elf.imports_env_get_stream, 1);
  cert_elf_free(&elf);
}

Test(elf_facts, ignores_stream_fixture_launches_without_the_env_stream) {
  CertElf elf;
  cert_read_ok("kernels/fixtures/libbad_ignores_stream.so", &elf);
  CERT_EXPECT_SET(&elf.imports, "TVMFFI", "TVMFFIErrorSetRaisedFromCStr");
  cr_expect_eq(elf.uses_cuda, 1);
  cr_expect_eq(elf.imports_env_get_stream, 0);
  cert_elf_free(&elf);
}

Test(elf_facts, symbol_prefix_fixture_exports_no_callable) {
  CertElf elf;
  cert_read_ok("kernels/fixtures/libbad_symbol_prefix.so", &elf);
  CERT_EXPECT_SET(&elf.exports, "", "__bss_start,_edata,_end,tvm_ffi_scale");
  cr_expect_eq(cert_elf_callable(&elf, NULL, 0), 0);
  cert_elf_free(&elf);
}

Test(elf_facts, reference_runtime_has_soname_and_exports_the_abi) {
  CertElf elf;
  cert_read_ok(CERT_REFERENCE_SO, &elf);
  cr_assert_not_null(elf.soname);
  cr_expect_str_eq(elf.soname, "libtvm_ffi.so");
  const CertSymbol* s = cert_elf_find(&elf, "TVMFFIFunctionCall", 0);
  cr_assert_not_null(s);
  cr_expect_eq(s->is_function, 1);
  cr_expect_null(cert_elf_find(&elf, "tffi_library_bin_check", 0), "tffi_ symbols are hidden");
  cert_elf_free(&elf);
}

Test(elf_facts, jax_tvm_ffi_exports_three_functions) {
  cert_require_jax();
  CertElf elf;
  cert_read_ok(CERT_JAX_SO, &elf);
  CERT_EXPECT_SET(&elf.exports, "__tvm_ffi",
                  "__tvm_ffi_get_last_workspace_peak,__tvm_ffi_register_tvm_ffi_handler,"
                  "__tvm_ffi_registered_count");
  CERT_EXPECT_SET(&elf.imports, "TVMFFI",
                  "TVMFFIBacktrace,TVMFFIEnvSetDLPackManagedTensorAllocator,TVMFFIEnvSetStream,"
                  "TVMFFIErrorMoveFromRaised,TVMFFIErrorSetRaised,TVMFFIGetTypeInfo");
  /* Counted with readelf --dyn-syms. */
  cr_expect_eq(elf.exports.n, 1102);
  cr_expect_eq(elf.imports.n, 80);
  char* needed = cert_joined_needed(&elf);
  cr_expect_str_eq(needed,
                   "libtvm_ffi.so,libstdc++.so.6,libm.so.6,libgcc_s.so.1,"
                   "libpthread.so.0,libc.so.6,ld-linux-x86-64.so.2");
  free(needed);
  cr_expect_null(elf.runpath);
  cr_expect_null(elf.rpath);
  cr_assert_not_null(elf.soname);
  cr_expect_str_eq(elf.soname, "jax_tvm_ffi.so");
  cr_expect_eq(cert_elf_callable(&elf, NULL, 0), 3);
  cr_expect_eq(elf.uses_cuda, 0);
  cert_elf_free(&elf);
}

Test(elf_facts, tvm_ffi_testing_metadata_are_functions) {
  CertElf elf;
  cert_read_ok(CERT_TESTING_SO, &elf);
  CERT_EXPECT_SET(&elf.exports, "__tvm_ffi",
                  "__tvm_ffi__doc_testing_dll_test_add_with_docstring,"
                  "__tvm_ffi__metadata_testing_dll_schema_id_int,"
                  "__tvm_ffi__metadata_testing_dll_test_add_with_docstring,"
                  "__tvm_ffi_testing_dll_schema_id_int,"
                  "__tvm_ffi_testing_dll_test_add_with_docstring");
  CERT_EXPECT_SET(&elf.imports, "TVMFFI",
                  "TVMFFIBacktrace,TVMFFIDataTypeFromString,TVMFFIEnvCheckSignals,"
                  "TVMFFIEnvModRegisterSystemLibSymbol,TVMFFIErrorMoveFromRaised,"
                  "TVMFFIErrorSetRaised,TVMFFIFunctionGetGlobal,"
                  "TVMFFIFunctionSetGlobalFromMethodInfo,TVMFFIGetTypeAttrColumn,"
                  "TVMFFIGetTypeInfo,TVMFFIStringFromByteArray,TVMFFITypeGetOrAllocIndex,"
                  "TVMFFITypeRegisterAttr,TVMFFITypeRegisterField,TVMFFITypeRegisterMetadata,"
                  "TVMFFITypeRegisterMethod");
  cr_expect_eq(elf.exports.n, 1517);
  cr_expect_eq(elf.imports.n, 114);
  char* needed = cert_joined_needed(&elf);
  cr_expect_str_eq(needed, "libtvm_ffi.so,libstdc++.so.6,libm.so.6,libgcc_s.so.1,libc.so.6");
  free(needed);
  cr_assert_not_null(elf.runpath);
  cr_expect_str_eq(elf.runpath, "$ORIGIN");
  const CertSymbol* meta = cert_elf_find(&elf, "__tvm_ffi__metadata_testing_dll_schema_id_int", 0);
  cr_assert_not_null(meta);
  cr_expect_eq(meta->is_function, 1);
  const char* names[8] = {0};
  cr_expect_eq(cert_elf_callable(&elf, names, 8), 2);
  cert_elf_free(&elf);
}

Test(elf_facts, refuses_what_is_not_elf) {
  CertElf elf;
  char err[256] = "";
  cr_expect_eq(cert_elf_read_memory("not an elf", 10, &elf, err, sizeof err), -1);
  cr_expect(strstr(err, "ELF") != NULL, "reason: %s", err);
  cr_expect_eq(cert_elf_read("/nonexistent/lib.so", &elf, err, sizeof err), -1);
  cr_expect(strstr(err, "/nonexistent/lib.so") != NULL, "reason: %s", err);
  cr_expect_eq(cert_elf_read("/", &elf, err, sizeof err), -1);
  cr_expect(strstr(err, "regular file") != NULL, "reason: %s", err);
}

/* Every prefix of a real library reads or is refused with a reason. */
Test(elf_facts, truncated_files_are_refused_or_read) {
  FILE* f = fopen(cert_runfile("kernels/libscale_cpu.so"), "rb");
  cr_assert_not_null(f);
  static unsigned char image[1 << 20];
  size_t size = fread(image, 1, sizeof image, f);
  fclose(f);
  for (size_t cut = 0; cut < size; cut += 97) {
    CertElf elf;
    char err[256] = "";
    if (cert_elf_read_memory(image, cut, &elf, err, sizeof err) == 0) {
      cert_elf_free(&elf);
    } else {
      cr_expect(err[0] != '\0', "a refusal at %zu bytes came without a reason", cut);
    }
  }
}

/* ld.so reads no section headers: a file without them (e_shoff, e_shnum
 * and e_shstrndx zeroed) gives the same facts through PT_DYNAMIC, the
 * symbol count coming from DT_GNU_HASH. */
Test(elf_facts, without_section_headers_reads_pt_dynamic) {
  FILE* f = fopen(cert_runfile("kernels/libscale_cuda.so"), "rb");
  cr_assert_not_null(f);
  static unsigned char image[4 << 20];
  size_t size = fread(image, 1, sizeof image, f);
  fclose(f);
  cr_assert_lt(size, sizeof image);
  memset(image + 0x28, 0, 8); /* e_shoff (ELF64) */
  memset(image + 0x3c, 0, 4); /* e_shnum, e_shstrndx */
  CertElf elf;
  char err[256] = "";
  cr_assert_eq(cert_elf_read_memory(image, size, &elf, err, sizeof err), 0, "%s", err);
  cr_expect_eq(elf.n_sections > 0, 1, "PT_LOAD segments map the addresses");
  CERT_EXPECT_SET(&elf.exports, "__tvm_ffi", "__tvm_ffi_scale");
  CERT_EXPECT_SET(&elf.imports, "TVMFFI", "TVMFFIEnvGetStream,TVMFFIErrorSetRaisedFromCStr");
  char* needed = cert_joined_needed(&elf);
  cr_expect_str_eq(needed, "libcudart.so.13,libstdc++.so.6,libgcc_s.so.1,libc.so.6");
  free(needed);
  cr_assert_not_null(elf.runpath);
  cr_expect_str_eq(elf.runpath, CERT_CUDA_LIB);
  cr_expect_eq(elf.uses_cuda, 1);
  cr_expect_eq(elf.imports_env_get_stream, 1);
  CertElf with;
  cert_read_ok("kernels/libscale_cuda.so", &with);
  cr_expect_eq(elf.exports.n, with.exports.n);
  cr_expect_eq(elf.imports.n, with.imports.n);
  cert_elf_free(&with);
  cert_elf_free(&elf);
}

/* A FIFO named as a library is refused at once, never waited on. */
Test(elf_facts, a_fifo_is_refused_without_blocking) {
  char dir[] = "/tmp/cert_fifo_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/lib.so", dir);
  cr_assert_eq(mkfifo(path, 0600), 0);
  CertElf elf;
  char err[256] = "";
  cr_expect_eq(cert_elf_read(path, &elf, err, sizeof err), -1);
  cr_expect(strstr(err, "not a regular file") != NULL, "reason: %s", err);
  unlink(path);
  rmdir(dir);
}
