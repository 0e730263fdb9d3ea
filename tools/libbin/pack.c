#include "tools/libbin/pack.h"

#include <string.h>

#include "reference/tffi_error.h"
#include "reference/mem.h"

static void libbin_store_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* Adds `add` to *total, failing on overflow (sizes come from the caller). */
static int libbin_size_add(size_t* total, size_t add) {
  if (add > SIZE_MAX - *total) return -1;
  *total += add;
  return 0;
}

static int libbin_pack_size(const LibbinTree* bin, size_t* total) {
  *total = 8;
  if (bin->num_modules > SIZE_MAX / 8 - 1 || bin->num_children > SIZE_MAX / 8) return -1;
  if (libbin_size_add(total, 8 + 8 * (bin->num_modules + 1)) != 0) return -1;
  if (libbin_size_add(total, 8 + 8 * bin->num_children) != 0) return -1;
  for (size_t i = 0; i < bin->num_modules; ++i) {
    const TffiLibraryBinEntry* e = &bin->entries[i];
    if (e->is_lib) {
      if (libbin_size_add(total, 8 + 4) != 0) return -1;
      continue;
    }
    if (libbin_size_add(total, 8) != 0 || libbin_size_add(total, e->kind_size) != 0) return -1;
    if (libbin_size_add(total, 8) != 0 || libbin_size_add(total, e->payload_size) != 0) return -1;
  }
  return 0;
}

static uint8_t* libbin_put_span(uint8_t* p, const void* src, size_t n) {
  libbin_store_u64(p, n);
  if (n) memcpy(p + 8, src, n);
  return p + 8 + n;
}

static void libbin_pack_write(const LibbinTree* bin, uint8_t* p, size_t total) {
  libbin_store_u64(p, total - 8);
  p += 8;
  libbin_store_u64(p, bin->num_modules + 1);
  for (size_t i = 0; i <= bin->num_modules; ++i) libbin_store_u64(p + 8 + 8 * i, bin->indptr[i]);
  p += 8 + 8 * (bin->num_modules + 1);
  libbin_store_u64(p, bin->num_children);
  for (size_t j = 0; j < bin->num_children; ++j) {
    libbin_store_u64(p + 8 + 8 * j, bin->child_indices[j]);
  }
  p += 8 + 8 * bin->num_children;
  for (size_t i = 0; i < bin->num_modules; ++i) {
    const TffiLibraryBinEntry* e = &bin->entries[i];
    if (e->is_lib) {
      p = libbin_put_span(p, TFFI_LIBRARY_BIN_LIB_KEY, 4);
    } else {
      p = libbin_put_span(p, e->kind, e->kind_size);
      p = libbin_put_span(p, e->payload, e->payload_size);
    }
  }
}

int libbin_pack(const LibbinTree* bin, uint8_t** out, size_t* out_size) {
  if (bin == NULL || out == NULL || out_size == NULL) {
    return tffi_raise(TFFI_VALUE_ERROR, "library_bin pack: bin, out and out_size must not be NULL");
  }
  if (bin->num_modules == 0 || bin->indptr == NULL || bin->entries == NULL ||
      (bin->num_children != 0 && bin->child_indices == NULL)) {
    return tffi_raise(TFFI_VALUE_ERROR, "library_bin pack: bin needs modules, indptr and entries");
  }
  size_t total;
  if (libbin_pack_size(bin, &total) != 0) {
    return tffi_raise(TFFI_VALUE_ERROR, "library_bin pack: bin is too large to encode");
  }
  uint8_t* blob = tffi_malloc(total);
  if (blob == NULL) return tffi_raise_oom(total);
  libbin_pack_write(bin, blob, total);
  /* Only blobs the runtime's checker accepts leave the packer. */
  TffiLibraryBinView check;
  if (tffi_library_bin_check(blob, total, &check) != 0) {
    tffi_free(blob);
    return -1;
  }
  *out = blob;
  *out_size = total;
  return 0;
}
