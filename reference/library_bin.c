#include "library_bin.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mem.h"

/* A read cursor over [0, end) of the blob. Every read checks the remaining
 * length first, so no read ever reaches `end`. */
typedef struct {
  const uint8_t* data;
  size_t pos;
  size_t end;
  TffiLibraryBin* out; /* where failures are recorded */
} TffiCursor;

/* Records the failure in `out` and raises the ValueError. `offset` is the
 * byte offset from the start of the blob (the nbytes header included). */
static int tffi_bin_fail(TffiCursor* c, size_t offset, const char* field, const char* why) {
  c->out->error_offset = offset;
  c->out->error_field = field;
  return tffi_raise(TFFI_VALUE_ERROR, "library_bin: offset %zu: field %s: %s", offset, field,
                    why);
}

/* Decodes little-endian bytes one at a time: correct on any host byte order
 * and on unaligned blobs. */
/* The blob is little-endian: one unaligned load, swapped on big-endian
 * hosts only (a byte-by-byte loop costs every u64 six times more). */
static uint64_t tffi_load_u64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

static int tffi_read_u64(TffiCursor* c, const char* field, uint64_t* v) {
  if (c->end - c->pos < 8) return tffi_bin_fail(c, c->pos, field, "truncated u64");
  *v = tffi_load_u64(c->data + c->pos);
  c->pos += 8;
  return 0;
}

/* Reads a <count><count * u64> vector into a fresh array. The count is
 * checked against the bytes left before allocating, so the array is never
 * larger than the part of the blob it was decoded from. */
static int tffi_read_vec(TffiCursor* c, const char* field, uint64_t** items, size_t* count) {
  size_t at = c->pos;
  uint64_t n = 0;
  if (tffi_read_u64(c, field, &n) != 0) return -1;
  if (n > (c->end - c->pos) / 8) {
    return tffi_bin_fail(c, at, field, "element count exceeds the bytes left");
  }
  uint64_t* arr = tffi_malloc(n ? (size_t)n * 8 : 1);
  if (arr == NULL) return tffi_raise_oom((size_t)n * 8);
  for (size_t i = 0; i < n; ++i) arr[i] = tffi_load_u64(c->data + c->pos + 8 * i);
  c->pos += (size_t)n * 8;
  *items = arr;
  *count = (size_t)n;
  return 0;
}

/* Reads a <size><bytes> span without copying it. */
static inline __attribute__((always_inline)) int tffi_read_span(TffiCursor* c, const char* field,
                                                                const uint8_t** ptr,
                                                                size_t* size) {
  size_t at = c->pos;
  uint64_t n = 0;
  if (tffi_read_u64(c, field, &n) != 0) return -1;
  if (n > c->end - c->pos) return tffi_bin_fail(c, at, field, "length exceeds the bytes left");
  *ptr = c->data + c->pos;
  *size = (size_t)n;
  c->pos += (size_t)n;
  return 0;
}

/* indptr must describe a CSR layout over child_indices: one or more
 * modules, starting at 0, never decreasing, ending at the child count. */
static int tffi_check_indptr(TffiCursor* c, size_t indptr_at, size_t children_at) {
  TffiLibraryBin* b = c->out;
  size_t n = b->num_modules + 1;
  const char* f = "import_tree.indptr";
  if (b->indptr[0] != 0) return tffi_bin_fail(c, indptr_at + 8, f, "first element is not 0");
  for (size_t i = 1; i < n; ++i) {
    if (b->indptr[i] < b->indptr[i - 1]) {
      return tffi_bin_fail(c, indptr_at + 8 + 8 * i, f, "elements decrease");
    }
  }
  if (b->indptr[n - 1] != b->num_children) {
    return tffi_bin_fail(c, indptr_at + 8 + 8 * (n - 1), f,
                         "last element differs from the number of child indices");
  }
  for (size_t j = 0; j < b->num_children; ++j) {
    if (b->child_indices[j] >= b->num_modules) {
      return tffi_bin_fail(c, children_at + 8 + 8 * j, "import_tree.child_indices",
                           "child index names no module");
    }
  }
  return 0;
}

/* Depth-first search with an explicit stack (no recursion: the depth is
 * attacker-controlled). state: 0 unseen, 1 on the current path, 2 done.
 * An edge to a module on the current path is a cycle. */
static int tffi_check_acyclic(TffiCursor* c, size_t children_at) {
  TffiLibraryBin* b = c->out;
  size_t n = b->num_modules;
  /* One block for the three arrays (n <= the blob's size / 8, so the
   * product cannot wrap): next_edge and stack, then the states. */
  size_t* next_edge = tffi_malloc(n ? n * (2 * sizeof(size_t) + 1) : 1);
  int rc = 0;
  if (next_edge == NULL) {
    rc = tffi_raise_oom(n * (2 * sizeof(size_t) + 1));
    goto done;
  }
  size_t* stack = next_edge + n;
  uint8_t* state = (uint8_t*)(stack + n);
  memset(state, 0, n);
  for (size_t root = 0; root < n && rc == 0; ++root) {
    if (state[root] != 0) continue;
    size_t depth = 0;
    stack[depth++] = root;
    state[root] = 1;
    next_edge[root] = b->indptr[root];
    while (depth > 0) {
      size_t m = stack[depth - 1];
      if (next_edge[m] == b->indptr[m + 1]) {
        state[m] = 2;
        --depth;
        continue;
      }
      size_t edge = next_edge[m]++;
      size_t child = b->child_indices[edge];
      if (state[child] == 1) {
        rc = tffi_bin_fail(c, children_at + 8 + 8 * edge, "import_tree.child_indices",
                           "import cycle");
        break;
      }
      if (state[child] == 0) {
        state[child] = 1;
        next_edge[child] = b->indptr[child];
        stack[depth++] = child;
      }
    }
  }
done:
  tffi_free(next_edge);
  return rc;
}

static int tffi_read_entry(TffiCursor* c, size_t i) {
  TffiLibraryBin* b = c->out;
  TffiLibraryBinEntry* e = &b->entries[i];
  e->offset = c->pos;
  const uint8_t* kind = NULL;
  if (tffi_read_span(c, "kind", &kind, &e->kind_size) != 0) return -1;
  e->kind = (const char*)kind;
  if (e->kind_size == 0) return tffi_bin_fail(c, e->offset, "kind", "empty module kind");
  e->is_lib = e->kind_size == 4 && memcmp(kind, TFFI_LIBRARY_BIN_LIB_KEY, 4) == 0;
  e->payload = NULL;
  e->payload_size = 0;
  if (e->is_lib) {
    if (b->lib_index != SIZE_MAX) return tffi_bin_fail(c, e->offset, "kind", "duplicate _lib");
    b->lib_index = i;
    return 0;
  }
  return tffi_read_span(c, "payload", &e->payload, &e->payload_size);
}

static int tffi_parse_body(TffiCursor* c) {
  TffiLibraryBin* b = c->out;
  size_t n_indptr;
  if (tffi_read_u64(c, "nbytes", &b->nbytes) != 0) return -1;
  if (b->nbytes > c->end - c->pos) {
    return tffi_bin_fail(c, 0, "nbytes", "larger than the bytes available");
  }
  c->end = c->pos + (size_t)b->nbytes; /* padding past nbytes is not ours */
  size_t indptr_at = c->pos;
  if (tffi_read_vec(c, "import_tree.indptr", &b->indptr, &n_indptr) != 0) return -1;
  if (n_indptr == 0) return tffi_bin_fail(c, indptr_at, "import_tree.indptr", "empty");
  if (n_indptr == 1) return tffi_bin_fail(c, indptr_at, "import_tree.indptr", "zero modules");
  b->num_modules = n_indptr - 1;
  size_t children_at = c->pos;
  if (tffi_read_vec(c, "import_tree.child_indices", &b->child_indices, &b->num_children) != 0) {
    return -1;
  }
  if (tffi_check_indptr(c, indptr_at, children_at) != 0) return -1;
  if (tffi_check_acyclic(c, children_at) != 0) return -1;
  /* num_modules <= nbytes / 8 here, so this allocation is bounded too (and
   * the product cannot wrap). Not zeroed: tffi_read_entry sets every field. */
  b->entries = tffi_malloc(b->num_modules * sizeof(TffiLibraryBinEntry));
  if (b->entries == NULL) return tffi_raise_oom(b->num_modules * sizeof(TffiLibraryBinEntry));
  for (size_t i = 0; i < b->num_modules; ++i) {
    if (tffi_read_entry(c, i) != 0) return -1;
  }
  if (c->pos != c->end) return tffi_bin_fail(c, c->pos, "entries", "trailing bytes");
  return 0;
}

int tffi_library_bin_parse(const uint8_t* data, size_t size, TffiLibraryBin* out) {
  if (out == NULL) return tffi_raise(TFFI_VALUE_ERROR, "library_bin: out must not be NULL");
  memset(out, 0, sizeof(*out));
  out->lib_index = SIZE_MAX;
  if (data == NULL && size != 0) {
    return tffi_raise(TFFI_VALUE_ERROR, "library_bin: data is NULL but size is %zu", size);
  }
  TffiCursor c = {data, 0, size, out};
  if (tffi_parse_body(&c) == 0) return 0;
  size_t offset = out->error_offset;
  const char* field = out->error_field;
  tffi_library_bin_free(out);
  out->error_offset = offset;
  out->error_field = field;
  return -1;
}

void tffi_library_bin_free(TffiLibraryBin* bin) {
  if (bin == NULL) return;
  tffi_free(bin->indptr);
  tffi_free(bin->child_indices);
  tffi_free(bin->entries);
  memset(bin, 0, sizeof(*bin));
  bin->lib_index = SIZE_MAX;
}
