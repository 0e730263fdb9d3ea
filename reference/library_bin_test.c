/* Unit tests of the library_bin parser and packer (the conformance suite
 * checks the loader end to end; these pin offsets, fields and bounds). */
#include "library_bin.h"
#include "tools/libbin/pack.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tffi_error.h"
#include "object.h"

/* A growable little-endian writer for hand-made blobs. */
typedef struct {
  uint8_t data[512];
  size_t size;
} Blob;

static void put_u64(Blob* b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b->data[b->size++] = (uint8_t)(v >> (8 * i));
}

static void put_str(Blob* b, const char* s) {
  size_t n = strlen(s);
  put_u64(b, n);
  memcpy(b->data + b->size, s, n);
  b->size += n;
}

static void put_vec(Blob* b, size_t n, const uint64_t* v) {
  put_u64(b, n);
  for (size_t i = 0; i < n; ++i) put_u64(b, v[i]);
}

/* Rewrites the nbytes header to cover everything written so far. */
static void seal(Blob* b) {
  uint64_t n = b->size - 8;
  for (int i = 0; i < 8; ++i) b->data[i] = (uint8_t)(n >> (8 * i));
}

static void begin(Blob* b, size_t ni, const uint64_t* indptr, size_t nc, const uint64_t* child) {
  b->size = 0;
  put_u64(b, 0);
  put_vec(b, ni, indptr);
  put_vec(b, nc, child);
}

/* Checks that parsing fails with a ValueError whose message names the
 * field and the offset, and that the struct reports the same. */
static void expect_fail(const Blob* b, size_t size, size_t offset, const char* field) {
  LibbinTree bin;
  cr_assert_eq(libbin_decode(b->data, size, &bin), -1);
  cr_expect_eq(bin.error_offset, offset, "offset: want %zu got %zu", offset, bin.error_offset);
  cr_expect_str_eq(bin.error_field, field);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_expect_str_eq(cell->kind.data, "ValueError");
  char want[128];
  snprintf(want, sizeof want, "offset %zu: field %s:", offset, field);
  cr_expect_not_null(strstr(cell->message.data, want), "message '%s' lacks '%s'",
                     cell->message.data, want);
  tffi_decref(err);
  libbin_tree_free(&bin);
}

Test(library_bin, parses_lib_with_one_import) {
  Blob b;
  const uint64_t indptr[] = {0, 1, 1}, child[] = {1};
  begin(&b, 3, indptr, 1, child);
  put_str(&b, "_lib");
  put_str(&b, "kind_x");
  put_str(&b, "\x01\x02\x03");
  seal(&b);
  LibbinTree bin;
  cr_assert_eq(libbin_decode(b.data, b.size, &bin), 0);
  cr_expect_eq(bin.nbytes, b.size - 8);
  cr_expect_eq(bin.num_modules, 2);
  cr_expect_eq(bin.num_children, 1);
  cr_expect_eq(bin.child_indices[0], 1);
  cr_expect_eq(bin.lib_index, 0);
  cr_expect(bin.entries[0].is_lib);
  cr_expect_null(bin.entries[0].payload);
  cr_expect_eq(bin.entries[1].kind_size, 6);
  cr_expect_eq(memcmp(bin.entries[1].kind, "kind_x", 6), 0);
  cr_expect_eq(bin.entries[1].payload_size, 3);
  cr_expect_eq(bin.entries[1].payload[2], 3);
  cr_expect_eq(bin.entries[0].offset, 8 + 32 + 16);
  libbin_tree_free(&bin);
}

Test(library_bin, padding_after_nbytes_is_ignored) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  put_str(&b, "_lib");
  seal(&b);
  memset(b.data + b.size, 0xee, 24);
  LibbinTree bin;
  cr_assert_eq(libbin_decode(b.data, b.size + 24, &bin), 0);
  libbin_tree_free(&bin);
}

Test(library_bin, empty_payload_is_accepted) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  put_str(&b, "k");
  put_u64(&b, 0);
  seal(&b);
  LibbinTree bin;
  cr_assert_eq(libbin_decode(b.data, b.size, &bin), 0);
  cr_expect_eq(bin.entries[0].payload_size, 0);
  cr_expect_eq(bin.lib_index, SIZE_MAX);
  libbin_tree_free(&bin);
}

Test(library_bin, short_header) {
  Blob b = {{1, 2, 3}, 3};
  expect_fail(&b, 3, 0, "nbytes");
}

Test(library_bin, nbytes_past_size) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  put_str(&b, "_lib");
  seal(&b);
  expect_fail(&b, b.size - 1, 0, "nbytes");
}

Test(library_bin, empty_indptr) {
  Blob b;
  begin(&b, 0, NULL, 0, NULL);
  seal(&b);
  expect_fail(&b, b.size, 8, "import_tree.indptr");
}

Test(library_bin, zero_modules) {
  Blob b;
  const uint64_t indptr[] = {0};
  begin(&b, 1, indptr, 0, NULL);
  seal(&b);
  expect_fail(&b, b.size, 8, "import_tree.indptr");
}

Test(library_bin, indptr_not_starting_at_zero) {
  Blob b;
  const uint64_t indptr[] = {1, 1}, child[] = {0};
  begin(&b, 2, indptr, 1, child);
  put_str(&b, "_lib");
  seal(&b);
  expect_fail(&b, b.size, 16, "import_tree.indptr");
}

Test(library_bin, indptr_decreasing) {
  Blob b;
  const uint64_t indptr[] = {0, 1, 0}, child[] = {1};
  begin(&b, 3, indptr, 1, child);
  put_str(&b, "_lib");
  put_str(&b, "k");
  put_str(&b, "");
  seal(&b);
  expect_fail(&b, b.size, 8 + 8 + 16, "import_tree.indptr");
}

Test(library_bin, indptr_past_children) {
  Blob b;
  const uint64_t indptr[] = {0, 5}, child[] = {0};
  begin(&b, 2, indptr, 1, child);
  put_str(&b, "_lib");
  seal(&b);
  expect_fail(&b, b.size, 24, "import_tree.indptr");
}

Test(library_bin, child_out_of_range) {
  Blob b;
  const uint64_t indptr[] = {0, 1}, child[] = {7};
  begin(&b, 2, indptr, 1, child);
  put_str(&b, "_lib");
  seal(&b);
  expect_fail(&b, b.size, 8 + 24 + 8, "import_tree.child_indices");
}

Test(library_bin, self_import_is_a_cycle) {
  Blob b;
  const uint64_t indptr[] = {0, 1}, child[] = {0};
  begin(&b, 2, indptr, 1, child);
  put_str(&b, "_lib");
  seal(&b);
  expect_fail(&b, b.size, 8 + 24 + 8, "import_tree.child_indices");
}

Test(library_bin, three_cycle) {
  Blob b;
  /* 0 -> 1 -> 2 -> 1 */
  const uint64_t indptr[] = {0, 1, 2, 3}, child[] = {1, 2, 1};
  begin(&b, 4, indptr, 3, child);
  put_str(&b, "_lib");
  for (int i = 0; i < 2; ++i) {
    put_str(&b, "k");
    put_str(&b, "");
  }
  seal(&b);
  expect_fail(&b, b.size, 8 + 40 + 8 + 16, "import_tree.child_indices");
}

Test(library_bin, diamond_is_not_a_cycle) {
  Blob b;
  /* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 */
  const uint64_t indptr[] = {0, 2, 3, 4, 4}, child[] = {1, 2, 3, 3};
  begin(&b, 5, indptr, 4, child);
  put_str(&b, "_lib");
  for (int i = 0; i < 3; ++i) {
    put_str(&b, "k");
    put_str(&b, "p");
  }
  seal(&b);
  LibbinTree bin;
  cr_assert_eq(libbin_decode(b.data, b.size, &bin), 0);
  cr_expect_eq(bin.num_modules, 4);
  libbin_tree_free(&bin);
}

Test(library_bin, huge_vector_count) {
  Blob b;
  b.size = 0;
  put_u64(&b, 0);
  put_u64(&b, (uint64_t)1 << 40);
  put_u64(&b, 0);
  seal(&b);
  expect_fail(&b, b.size, 8, "import_tree.indptr");
}

Test(library_bin, huge_string_length) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  size_t at = b.size;
  put_u64(&b, (uint64_t)1 << 40);
  put_str(&b, "xx");
  seal(&b);
  expect_fail(&b, b.size, at, "kind");
}

Test(library_bin, huge_payload_length) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  put_str(&b, "k");
  size_t at = b.size;
  put_u64(&b, UINT64_MAX);
  seal(&b);
  expect_fail(&b, b.size, at, "payload");
}

Test(library_bin, trailing_bytes) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  put_str(&b, "_lib");
  size_t at = b.size;
  put_u64(&b, 0);
  seal(&b);
  expect_fail(&b, b.size, at, "entries");
}

Test(library_bin, duplicate_lib) {
  Blob b;
  const uint64_t indptr[] = {0, 0, 0};
  begin(&b, 3, indptr, 0, NULL);
  put_str(&b, "_lib");
  size_t at = b.size;
  put_str(&b, "_lib");
  seal(&b);
  expect_fail(&b, b.size, at, "kind");
}

Test(library_bin, empty_kind) {
  Blob b;
  const uint64_t indptr[] = {0, 0};
  begin(&b, 2, indptr, 0, NULL);
  size_t at = b.size;
  put_str(&b, "");
  seal(&b);
  expect_fail(&b, b.size, at, "kind");
}

/* Every prefix of a valid blob is refused without reading past it (run
 * under ASan this also proves the bound). */
Test(library_bin, every_truncation_fails_cleanly) {
  Blob b;
  const uint64_t indptr[] = {0, 1, 1}, child[] = {1};
  begin(&b, 3, indptr, 1, child);
  put_str(&b, "_lib");
  put_str(&b, "kind");
  put_str(&b, "payload");
  seal(&b);
  for (size_t n = 0; n < b.size; ++n) {
    uint8_t* copy = malloc(n ? n : 1);
    memcpy(copy, b.data, n);
    LibbinTree bin;
    cr_assert_eq(libbin_decode(copy, n, &bin), -1, "prefix of %zu parsed", n);
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    cr_assert_not_null(err);
    tffi_decref(err);
    libbin_tree_free(&bin);
    free(copy);
  }
}

Test(library_bin, pack_round_trips) {
  uint64_t indptr[] = {0, 2, 2, 2}, child[] = {1, 2};
  TffiLibraryBinEntry entries[3] = {
      {.is_lib = 1},
      {.kind = "alpha", .kind_size = 5, .payload = (const uint8_t*)"\0\1", .payload_size = 2},
      {.kind = "beta", .kind_size = 4, .payload = NULL, .payload_size = 0},
  };
  LibbinTree in = {.num_modules = 3,
                   .indptr = indptr,
                   .child_indices = child,
                   .num_children = 2,
                   .entries = entries};
  uint8_t* blob;
  size_t size;
  if (libbin_pack(&in, &blob, &size) != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    cr_assert_fail("pack failed: %s", TVMFFIErrorGetCellPtr(err)->message.data);
  }
  LibbinTree out;
  cr_assert_eq(libbin_decode(blob, size, &out), 0);
  cr_expect_eq(out.nbytes, size - 8);
  cr_expect_eq(out.num_modules, 3);
  cr_expect_eq(out.lib_index, 0);
  cr_expect_eq(out.child_indices[1], 2);
  cr_expect_eq(out.entries[1].payload_size, 2);
  cr_expect_eq(out.entries[1].payload[1], 1);
  cr_expect_eq(memcmp(out.entries[2].kind, "beta", 4), 0);
  libbin_tree_free(&out);
  free(blob);
}

Test(library_bin, pack_refuses_a_cycle) {
  uint64_t indptr[] = {0, 1}, child[] = {0};
  TffiLibraryBinEntry entries[1] = {{.is_lib = 1}};
  LibbinTree in = {.num_modules = 1,
                   .indptr = indptr,
                   .child_indices = child,
                   .num_children = 1,
                   .entries = entries};
  uint8_t* blob = NULL;
  size_t size = 0;
  cr_assert_eq(libbin_pack(&in, &blob, &size), -1);
  cr_expect_null(blob);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  cr_expect_not_null(strstr(TVMFFIErrorGetCellPtr(err)->message.data, "import cycle"));
  tffi_decref(err);
}
