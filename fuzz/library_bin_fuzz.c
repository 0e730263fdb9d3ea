/*
 * Fuzz harness: the reference's __tvm_ffi__library_bin checker (through libbin_decode) on arbitrary
 * bytes.
 *
 * The whole input is the blob and its size plays the symbol's size from the
 * ELF symbol table, so every nbytes larger than what is really there must be
 * refused. Beyond "no crash, no leak, no out-of-bounds read", an accepted
 * blob is held to the format exactly:
 *   - the decoded tree is well formed (CSR import tree, child indices in
 *     range, entries inside the blob, at most one _lib);
 *   - packing the decoded tree gives back the first 8 + nbytes input bytes
 *     (the encoding is canonical, so parse and pack are inverse);
 *   - the same blob cut one byte short of 8 + nbytes is refused.
 * A refused blob must come with a ValueError (or MemoryError) raised.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "tools/libbin/pack.h"
#include "tools/libbin/tree.h"

static const char* const kParseKinds[] = {"ValueError", "MemoryError", NULL};

static void check_tree(const LibbinTree* bin, const uint8_t* data, size_t size) {
  FUZZ_CHECK(bin->nbytes <= size - 8, "nbytes %llu exceeds the %zu bytes available",
             (unsigned long long)bin->nbytes, size);
  FUZZ_CHECK(bin->num_modules >= 1, "accepted a blob with no module");
  FUZZ_CHECK(bin->indptr[0] == 0, "indptr[0] is %llu", (unsigned long long)bin->indptr[0]);
  for (size_t i = 0; i < bin->num_modules; ++i) {
    FUZZ_CHECK(bin->indptr[i] <= bin->indptr[i + 1], "indptr decreases at %zu", i);
  }
  FUZZ_CHECK(bin->indptr[bin->num_modules] == bin->num_children,
             "indptr ends at %llu, not at the %zu children",
             (unsigned long long)bin->indptr[bin->num_modules], bin->num_children);
  for (size_t j = 0; j < bin->num_children; ++j) {
    FUZZ_CHECK(bin->child_indices[j] < bin->num_modules, "child %zu names module %llu of %zu", j,
               (unsigned long long)bin->child_indices[j], bin->num_modules);
    /* A module importing itself is the shortest cycle. */
  }
  size_t libs = 0;
  const uint8_t* end = data + 8 + bin->nbytes;
  for (size_t i = 0; i < bin->num_modules; ++i) {
    const TffiLibraryBinEntry* e = &bin->entries[i];
    FUZZ_CHECK(e->kind_size > 0, "module %zu has an empty kind", i);
    FUZZ_CHECK((const uint8_t*)e->kind >= data && (const uint8_t*)e->kind + e->kind_size <= end,
               "module %zu's kind lies outside the blob", i);
    int lib = e->kind_size == 4 && memcmp(e->kind, "_lib", 4) == 0;
    FUZZ_CHECK(lib == e->is_lib, "module %zu: is_lib %d for kind '%.*s'", i, e->is_lib,
               (int)e->kind_size, e->kind);
    if (lib) {
      libs++;
      FUZZ_CHECK(bin->lib_index == i, "lib_index %zu, but _lib is module %zu", bin->lib_index, i);
    } else {
      FUZZ_CHECK(e->payload >= data && e->payload + e->payload_size <= end,
                 "module %zu's payload lies outside the blob", i);
    }
  }
  FUZZ_CHECK(libs <= 1, "accepted %zu _lib entries", libs);
  if (libs == 0) FUZZ_CHECK(bin->lib_index == SIZE_MAX, "lib_index set without a _lib");
}

/* Parse and pack are inverse on accepted blobs. */
static void check_repack(const LibbinTree* bin, const uint8_t* data) {
  uint8_t* blob = NULL;
  size_t blob_size = 0;
  int rc = libbin_pack(bin, &blob, &blob_size);
  if (rc != 0) fuzz_expect_raised("libbin_pack", kParseKinds);
  FUZZ_CHECK(rc == 0, "packing an accepted blob failed");
  fuzz_expect_nothing_raised("libbin_pack");
  FUZZ_CHECK(blob_size == 8 + bin->nbytes, "repacked size %zu, parsed 8 + %llu", blob_size,
             (unsigned long long)bin->nbytes);
  FUZZ_CHECK(memcmp(blob, data, blob_size) == 0, "repacked bytes differ from the input");
  free(blob);
}

/* The nbytes bound: one byte fewer than nbytes says must be refused. */
static void check_truncation(const LibbinTree* bin, const uint8_t* data) {
  LibbinTree cut;
  size_t cut_size = (size_t)(8 + bin->nbytes - 1);
  int rc = libbin_decode(data, cut_size, &cut);
  FUZZ_CHECK(rc != 0, "accepted the blob cut to %zu bytes", cut_size);
  fuzz_expect_raised("libbin_decode (cut)", kParseKinds);
  libbin_tree_free(&cut);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  LibbinTree bin;
  int rc = libbin_decode(data, size, &bin);
  if (rc == 0) {
    fuzz_expect_nothing_raised("libbin_decode");
    check_tree(&bin, data, size);
    check_repack(&bin, data);
    check_truncation(&bin, data);
  } else {
    FUZZ_CHECK(rc == -1, "parse returned %d", rc);
    fuzz_expect_raised("libbin_decode", kParseKinds);
    FUZZ_CHECK(bin.num_modules == 0 && bin.indptr == NULL && bin.entries == NULL,
               "a failed parse left a partial tree");
    FUZZ_CHECK(bin.error_field != NULL, "a failed parse named no field");
    FUZZ_CHECK(bin.error_offset <= size, "error offset %zu past the %zu-byte blob",
               bin.error_offset, size);
  }
  libbin_tree_free(&bin);
  return 0;
}
