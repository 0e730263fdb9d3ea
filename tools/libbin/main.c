/*
 * libbin: inspect, check and produce `__tvm_ffi__library_bin` blobs.
 *
 *   libbin dump FILE          FILE is a shared library (the symbol is read
 *                             from its ELF symbol table) or a raw blob
 *   libbin validate FILE      exit 0 when the blob is well formed, else 1
 *                             with the byte offset, field and reason
 *   libbin pack DESC [-o BLOB] [-c SOURCE.c] [-q]
 *                             build a blob from a text description (see
 *                             desc.h) and/or a C file that exports it;
 *                             says what it wrote (-q: nothing, for builds)
 *
 * The blob is checked by the reference runtime's checker (library_bin.h),
 * then decoded into arrays (tree.h): the tool and the loader cannot
 * disagree about what is well formed.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "elf_symbol.h"
#include "desc.h"
#include "tools/libbin/pack.h"
#include "tools/libbin/tree.h"

#define LIBBIN_SYMBOL "__tvm_ffi__library_bin"
#define LIBBIN_MAX_INPUT ((size_t)1 << 30)
#define LIBBIN_PREVIEW 16

/* `bazel run` starts tools in their runfiles tree; relative paths given on
 * the command line mean the directory the user ran bazel from. */
static const char* libbin_user_path(const char* path, char* buf, size_t cap) {
  const char* wd = getenv("BUILD_WORKING_DIRECTORY");
  if (path[0] == '/' || wd == NULL) return path;
  int n = snprintf(buf, cap, "%s/%s", wd, path);
  return n > 0 && (size_t)n < cap ? buf : path;
}

/* The blob inside FILE: the symbol's bytes for a shared library (bounded by
 * its st_size), or the whole file otherwise (*raw set). */
static int libbin_load_blob(const char* path, unsigned char** file, const uint8_t** blob,
                            size_t* size, int* raw) {
  size_t file_size;
  if (libbin_read_file(path, LIBBIN_MAX_INPUT, file, &file_size) != 0) {
    fprintf(stderr, "libbin: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  *raw = !libbin_is_elf(*file, file_size);
  if (*raw) {
    *blob = *file;
    *size = file_size;
    return 0;
  }
  const char* why;
  if (libbin_elf_find_symbol(*file, file_size, LIBBIN_SYMBOL, blob, size, &why) != 0) {
    fprintf(stderr, "libbin: %s: %s: %s\n", path, LIBBIN_SYMBOL, why);
    return -1;
  }
  return 0;
}

/* Prints "libbin: WHERE: KIND: MESSAGE" of the raised error (the checker's
 * message says "offset N: field F: ..."). */
static void libbin_print_raised(const char* where) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) {
    fprintf(stderr, "libbin: %s: failed\n", where);
    return;
  }
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  fprintf(stderr, "libbin: %s: %s: %s\n", where, cell->kind.data, cell->message.data);
  TVMFFIObjectDecRef(err);
}

static void libbin_print_preview(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n && i < LIBBIN_PREVIEW; ++i) printf(" %02x", p[i]);
  if (n > LIBBIN_PREVIEW) printf(" ...");
}

static void libbin_dump(const LibbinTree* bin) {
  printf("nbytes: %llu\n", (unsigned long long)bin->nbytes);
  printf("modules: %zu\n", bin->num_modules);
  for (size_t i = 0; i < bin->num_modules; ++i) {
    const TffiLibraryBinEntry* e = &bin->entries[i];
    printf("[%zu] kind=%.*s imports=", i, (int)e->kind_size, e->kind);
    if (bin->indptr[i] == bin->indptr[i + 1]) printf("none");
    for (uint64_t j = bin->indptr[i]; j < bin->indptr[i + 1]; ++j) {
      printf("%s%llu", j == bin->indptr[i] ? "" : ",", (unsigned long long)bin->child_indices[j]);
    }
    printf(" offset=%zu", e->offset);
    if (!e->is_lib) {
      printf(" size=%zu hex=", e->payload_size);
      libbin_print_preview(e->payload, e->payload_size);
    }
    printf("\n");
  }
}

/* dump and validate share everything but what they print. */
static int libbin_cmd_read(const char* arg, int dump) {
  char buf[4096];
  const char* path = libbin_user_path(arg, buf, sizeof buf);
  unsigned char* file = NULL;
  const uint8_t* blob;
  size_t size;
  int raw;
  if (libbin_load_blob(path, &file, &blob, &size, &raw) != 0) return 2;
  LibbinTree bin;
  int rc = libbin_decode(blob, size, &bin);
  if (rc != 0) {
    /* A file that is not ELF is read as a blob; say so, since most such
     * files were never meant to be one. */
    fprintf(stderr, "libbin: %s: %s: invalid: offset %zu: field %s\n", path,
            raw ? "not an ELF file; read as a raw blob" : "its " LIBBIN_SYMBOL, bin.error_offset,
            bin.error_field ? bin.error_field : "?");
    libbin_print_raised(path);
  } else if (dump) {
    libbin_dump(&bin);
  } else {
    printf("ok: %zu modules, %llu bytes\n", bin.num_modules, (unsigned long long)bin.nbytes);
  }
  libbin_tree_free(&bin);
  free(file);
  return rc == 0 ? 0 : 1;
}

static int libbin_write_blob(const char* path, const uint8_t* blob, size_t size) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return -1;
  int ok = fwrite(blob, 1, size, f) == size;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* A C file that defines the blob with external linkage in C and C++ (the
 * declaration first, because a const object defined in C++ is otherwise
 * internal), aligned so the u64 fields can be read in place. */
static int libbin_write_c(const char* path, const char* desc, const uint8_t* blob, size_t size) {
  FILE* f = fopen(path, "w");
  if (f == NULL) return -1;
  fprintf(f, "/* Generated by `libbin pack %s`: the module tree for the loader. */\n", desc);
  fprintf(f, "#ifdef __cplusplus\nextern \"C\" const unsigned char %s[%zu];\n#endif\n",
          LIBBIN_SYMBOL, size);
  fprintf(f, "__attribute__((visibility(\"default\"), aligned(8)))\n");
  fprintf(f, "const unsigned char %s[%zu] = {", LIBBIN_SYMBOL, size);
  for (size_t i = 0; i < size; ++i) fprintf(f, "%s0x%02x,", i % 12 ? " " : "\n    ", blob[i]);
  fprintf(f, "\n};\n");
  return fclose(f) == 0 ? 0 : -1;
}

static int libbin_pack_outputs(const char* desc_path, const uint8_t* blob, size_t size,
                               const char* out_bin, const char* out_c) {
  char b1[4096], b2[4096];
  if (out_bin && libbin_write_blob(libbin_user_path(out_bin, b1, sizeof b1), blob, size) != 0) {
    fprintf(stderr, "libbin: cannot write %s: %s\n", out_bin, strerror(errno));
    return 2;
  }
  if (out_c && libbin_write_c(libbin_user_path(out_c, b2, sizeof b2), desc_path, blob, size) != 0) {
    fprintf(stderr, "libbin: cannot write %s: %s\n", out_c, strerror(errno));
    return 2;
  }
  return 0;
}

static void libbin_say_packed(const char* desc, size_t modules, size_t size, const char* out_bin,
                              const char* out_c) {
  printf("libbin: packed %zu module%s from %s (%zu bytes): wrote %s%s%s\n", modules,
         modules == 1 ? "" : "s", desc, size, out_bin ? out_bin : "", out_bin && out_c ? ", " : "",
         out_c ? out_c : "");
}

static int libbin_cmd_pack(int argc, char** argv) {
  const char *desc_arg = NULL, *out_bin = NULL, *out_c = NULL;
  int quiet = 0;
  for (int i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "-q") == 0) {
      quiet = 1;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out_bin = argv[++i];
    } else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
      out_c = argv[++i];
    } else if (desc_arg == NULL && argv[i][0] != '-') {
      desc_arg = argv[i];
    } else {
      fprintf(stderr, "libbin pack: unexpected argument %s\n", argv[i]);
      return 2;
    }
  }
  if (desc_arg == NULL || (out_bin == NULL && out_c == NULL)) {
    fprintf(stderr, "usage: libbin pack DESC [-o BLOB] [-c SOURCE.c] [-q]\n");
    return 2;
  }
  char buf[4096];
  const char* path = libbin_user_path(desc_arg, buf, sizeof buf);
  unsigned char* text;
  size_t text_size;
  if (libbin_read_file(path, 1 << 20, &text, &text_size) != 0) {
    fprintf(stderr, "libbin: cannot read %s: %s\n", path, strerror(errno));
    return 2;
  }
  char* terminated = realloc(text, text_size + 1);
  if (terminated == NULL) {
    free(text);
    return 2;
  }
  terminated[text_size] = '\0';
  char* dir_copy = strdup(path);
  LibbinLibbinDesc desc;
  char* why = NULL; /* the parser's "DESC:LINE: reason" */
  size_t why_size = 0;
  FILE* err = open_memstream(&why, &why_size);
  int rc = dir_copy && err
               ? libbin_libbin_desc_parse(terminated, path, dirname(dir_copy), &desc, err)
               : -1;
  if (err) fclose(err);
  if (rc != 0) fprintf(stderr, "libbin: %s", why && *why ? why : "out of memory\n");
  free(why);
  free(terminated);
  free(dir_copy);
  if (rc != 0) return 1;
  uint8_t* blob;
  size_t size;
  if (libbin_pack(&desc.bin, &blob, &size) != 0) {
    libbin_print_raised(path);
    libbin_libbin_desc_free(&desc);
    return 1;
  }
  rc = libbin_pack_outputs(desc_arg, blob, size, out_bin, out_c);
  if (rc == 0 && !quiet) libbin_say_packed(desc_arg, desc.bin.num_modules, size, out_bin, out_c);
  free(blob);
  libbin_libbin_desc_free(&desc);
  return rc;
}

static int libbin_usage(void) {
  fprintf(stderr,
          "usage: libbin dump LIB.so|BLOB\n"
          "       libbin validate LIB.so|BLOB\n"
          "       libbin pack DESC [-o BLOB] [-c SOURCE.c] [-q]\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 2) return libbin_usage();
  if (strcmp(argv[1], "dump") == 0 && argc == 3) return libbin_cmd_read(argv[2], 1);
  if (strcmp(argv[1], "validate") == 0 && argc == 3) return libbin_cmd_read(argv[2], 0);
  if (strcmp(argv[1], "pack") == 0) return libbin_cmd_pack(argc - 2, argv + 2);
  return libbin_usage();
}
