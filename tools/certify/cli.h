/* certify's command line (cli.c). */
#ifndef CERT_CLI_H_
#define CERT_CLI_H_

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#define CERT_MAX_RUNTIMES 64
#define CERT_MAX_FUNCTIONS 4096

typedef struct {
  const char* lib;      /* as typed */
  const char* manifest; /* as typed, or NULL */
  const char* runtime;  /* reference, upstream, a path, or NULL for both */
  const char* json;
  const char* junit;
  const char* html;
  const char* replay;
  const char* releases;  /* --releases: "all" or versions, or NULL */
  const char* manylinux; /* --manylinux: the policy hosts are promised, or NULL */
  int jobs;
  double timeout_s;
  int quiet;
} CertArgs;

typedef struct {
  char label[PATH_MAX];
  char path[PATH_MAX];
} CertRuntime;

/* The usage text. */
void cert_usage(FILE* out);

/* A path as typed on the command line, meaning the directory the user ran
 * bazel from ($BUILD_WORKING_DIRECTORY). */
const char* cert_user_path(const char* path, char* buf, size_t cap);

/* The runfiles tree: $RUNFILES_DIR, $TEST_SRCDIR, or <binary>.runfiles. */
int cert_runfiles_dir(const char* argv0, char* buf, size_t cap);

/* "reference" and "upstream" name the runtimes certify ships with; anything
 * else is a path to a libtvm_ffi.so. 0, or -1 with a one-line reason. */
int cert_find_runtime(const char* argv0, const char* which, CertRuntime* rt, char* err,
                      size_t errlen);

/* The CUDA toolkit's driver stubs in the runfiles; NULL where there are none. */
const char* cert_driver_stubs(const char* argv0, char* buf, size_t cap);

/* A report file that cannot be written is found before the run: 0 or -1. */
int cert_check_report_paths(const CertArgs* a, char* err, size_t errlen);

/* The command line into `a`; 0, or -1 with a one-line reason (a usage error). */
int cert_parse_args(int argc, char** argv, CertArgs* a, char* err, size_t errlen);

/* A regular file certify can open: 0, else -1 with a one-line reason. */
int cert_check_input(const char* path, char* err, size_t errlen);

/* 0 when the ELF header's tables lie inside the file (or it is no ELF at
 * all), else -1 saying it is truncated. */
int cert_check_truncated(const char* path, const char* shown, char* err, size_t errlen);

#endif
