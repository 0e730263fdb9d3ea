#include "tools/libbin/tree.h"

#include <string.h>

#include "reference/tffi_error.h"
#include "reference/mem.h"

/* The checked view's tables and entries as arrays (no element is larger
 * than the 8 blob bytes it came from). */
static int libbin_tree_fill(const TffiLibraryBinView* view, LibbinTree* out) {
  size_t n = view->num_modules;
  out->num_modules = n;
  out->num_children = view->num_children;
  out->lib_index = view->lib_index;
  out->nbytes = tffi_library_bin_u64(view->data, 0);
  out->indptr = tffi_malloc((n + 1) * sizeof(uint64_t));
  out->child_indices = tffi_malloc(view->num_children ? view->num_children * sizeof(uint64_t) : 1);
  out->entries = tffi_malloc(n * sizeof(TffiLibraryBinEntry));
  if (out->indptr == NULL || out->child_indices == NULL || out->entries == NULL) {
    return tffi_raise_oom(n * sizeof(TffiLibraryBinEntry));
  }
  for (size_t i = 0; i <= n; ++i) out->indptr[i] = tffi_library_bin_indptr(view, i);
  for (size_t j = 0; j < view->num_children; ++j) {
    out->child_indices[j] = tffi_library_bin_child(view, j);
  }
  size_t at = view->entries_at;
  for (size_t i = 0; i < n; ++i) at = tffi_library_bin_entry(view, at, &out->entries[i]);
  return 0;
}

int libbin_decode(const uint8_t* data, size_t size, LibbinTree* out) {
  if (out == NULL) return tffi_raise(TFFI_VALUE_ERROR, "library_bin: out must not be NULL");
  memset(out, 0, sizeof(*out));
  out->lib_index = SIZE_MAX;
  TffiLibraryBinView view;
  int rc = tffi_library_bin_check(data, size, &view);
  if (rc == 0) rc = libbin_tree_fill(&view, out);
  if (rc == 0) return 0;
  libbin_tree_free(out);
  out->error_offset = view.error_offset;
  out->error_field = view.error_field;
  return -1;
}

void libbin_tree_free(LibbinTree* tree) {
  if (tree == NULL) return;
  tffi_free(tree->indptr);
  tffi_free(tree->child_indices);
  tffi_free(tree->entries);
  memset(tree, 0, sizeof(*tree));
  tree->lib_index = SIZE_MAX;
}
