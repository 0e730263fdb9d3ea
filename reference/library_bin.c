#include "library_bin.h"

#include <stdlib.h>
#include <string.h>

#include "tffi_error.h"
#include "mem.h"

/* A read cursor over [0, end) of the blob. Every read checks the remaining
 * length first, so no read ever reaches `end`. */
typedef struct {
  const uint8_t* data;
  size_t pos;
  size_t end;
  TffiLibraryBinView* out; /* where failures are recorded */
} TffiCursor;

/* Records the failure in `out` and raises the ValueError. `offset` is the
 * byte offset from the start of the blob (the nbytes header included). */
static int tffi_bin_fail(TffiCursor* c, size_t offset, const char* field, const char* why) {
  c->out->error_offset = offset;
  c->out->error_field = field;
  return tffi_raise(TFFI_VALUE_ERROR, "library_bin: offset %zu: field %s: %s", offset, field, why);
}

static int tffi_read_u64(TffiCursor* c, const char* field, uint64_t* v) {
  if (c->end - c->pos < 8) return tffi_bin_fail(c, c->pos, field, "truncated u64");
  *v = tffi_library_bin_u64(c->data, c->pos);
  c->pos += 8;
  return 0;
}

/* Steps over a <count><count * u64> vector, left in place. The count is
 * checked against the bytes left, so no element lies past them. */
static int tffi_skip_vec(TffiCursor* c, const char* field, size_t* count) {
  size_t at = c->pos;
  uint64_t n = 0;
  if (tffi_read_u64(c, field, &n) != 0) return -1;
  if (n > (c->end - c->pos) / 8) {
    return tffi_bin_fail(c, at, field, "element count exceeds the bytes left");
  }
  c->pos += (size_t)n * 8;
  *count = (size_t)n;
  return 0;
}

/* Steps over a <size><bytes> span; its size in *size. */
static inline __attribute__((always_inline)) int tffi_skip_span(TffiCursor* c, const char* field,
                                                                size_t* size) {
  size_t at = c->pos;
  uint64_t n = 0;
  if (tffi_read_u64(c, field, &n) != 0) return -1;
  if (n > c->end - c->pos) return tffi_bin_fail(c, at, field, "length exceeds the bytes left");
  *size = (size_t)n;
  c->pos += (size_t)n;
  return 0;
}

/* indptr must describe a CSR layout over child_indices: one or more
 * modules, starting at 0, never decreasing, ending at the child count. */
static int tffi_check_indptr(TffiCursor* c) {
  const TffiLibraryBinView* b = c->out;
  size_t n = b->num_modules + 1;
  const char* f = "import_tree.indptr";
  uint64_t prev = tffi_library_bin_indptr(b, 0);
  if (prev != 0) return tffi_bin_fail(c, b->indptr_at, f, "first element is not 0");
  for (size_t i = 1; i < n; ++i) {
    uint64_t next = tffi_library_bin_indptr(b, i);
    if (next < prev) return tffi_bin_fail(c, b->indptr_at + 8 * i, f, "elements decrease");
    prev = next;
  }
  if (prev != b->num_children) {
    return tffi_bin_fail(c, b->indptr_at + 8 * (n - 1), f,
                         "last element differs from the number of child indices");
  }
  for (size_t j = 0; j < b->num_children; ++j) {
    if (tffi_library_bin_child(b, j) >= b->num_modules) {
      return tffi_bin_fail(c, b->children_at + 8 * j, "import_tree.child_indices",
                           "child index names no module");
    }
  }
  return 0;
}

/* Depth-first search with an explicit stack (no recursion: the depth is
 * attacker-controlled). state: 0 unseen, 1 on the current path, 2 done.
 * An edge to a module on the current path is a cycle. Without a single
 * import there is no edge to follow, nor work space to take. */
static int tffi_check_acyclic(TffiCursor* c) {
  const TffiLibraryBinView* b = c->out;
  size_t n = b->num_modules;
  if (b->num_children == 0) return 0;
  /* One block for the three arrays (n <= the blob's size / 8, so the
   * product cannot wrap): next_edge and stack, then the states. */
  size_t* next_edge = tffi_malloc(n * (2 * sizeof(size_t) + 1));
  if (next_edge == NULL) return tffi_raise_oom(n * (2 * sizeof(size_t) + 1));
  size_t* stack = next_edge + n;
  uint8_t* state = (uint8_t*)(stack + n);
  memset(state, 0, n);
  int rc = 0;
  for (size_t root = 0; root < n && rc == 0; ++root) {
    if (state[root] != 0) continue;
    size_t depth = 0;
    stack[depth++] = root;
    state[root] = 1;
    next_edge[root] = (size_t)tffi_library_bin_indptr(b, root);
    while (depth > 0) {
      size_t m = stack[depth - 1];
      if (next_edge[m] == tffi_library_bin_indptr(b, m + 1)) {
        state[m] = 2;
        --depth;
        continue;
      }
      size_t edge = next_edge[m]++;
      size_t child = (size_t)tffi_library_bin_child(b, edge);
      if (state[child] == 1) {
        rc = tffi_bin_fail(c, b->children_at + 8 * edge, "import_tree.child_indices",
                           "import cycle");
        break;
      }
      if (state[child] == 0) {
        state[child] = 1;
        next_edge[child] = (size_t)tffi_library_bin_indptr(b, child);
        stack[depth++] = child;
      }
    }
  }
  tffi_free(next_edge);
  return rc;
}

static int tffi_is_lib_kind(const uint8_t* kind, size_t size) {
  return size == 4 && memcmp(kind, TFFI_LIBRARY_BIN_LIB_KEY, 4) == 0;
}

static int tffi_check_entry(TffiCursor* c, size_t i) {
  TffiLibraryBinView* b = c->out;
  size_t at = c->pos, kind_size = 0, payload_size = 0;
  if (tffi_skip_span(c, "kind", &kind_size) != 0) return -1;
  if (kind_size == 0) return tffi_bin_fail(c, at, "kind", "empty module kind");
  if (!tffi_is_lib_kind(c->data + at + 8, kind_size)) {
    return tffi_skip_span(c, "payload", &payload_size);
  }
  if (b->lib_index != SIZE_MAX) return tffi_bin_fail(c, at, "kind", "duplicate _lib");
  b->lib_index = i;
  return 0;
}

static int tffi_check_body(TffiCursor* c) {
  TffiLibraryBinView* b = c->out;
  uint64_t nbytes = 0;
  size_t n_indptr = 0;
  if (tffi_read_u64(c, "nbytes", &nbytes) != 0) return -1;
  if (nbytes > c->end - c->pos) {
    return tffi_bin_fail(c, 0, "nbytes", "larger than the bytes available");
  }
  c->end = c->pos + (size_t)nbytes; /* padding past nbytes is not ours */
  size_t indptr_vec = c->pos;
  if (tffi_skip_vec(c, "import_tree.indptr", &n_indptr) != 0) return -1;
  if (n_indptr == 0) return tffi_bin_fail(c, indptr_vec, "import_tree.indptr", "empty");
  if (n_indptr == 1) return tffi_bin_fail(c, indptr_vec, "import_tree.indptr", "zero modules");
  b->num_modules = n_indptr - 1;
  b->indptr_at = indptr_vec + 8;
  b->children_at = c->pos + 8;
  if (tffi_skip_vec(c, "import_tree.child_indices", &b->num_children) != 0) return -1;
  if (tffi_check_indptr(c) != 0 || tffi_check_acyclic(c) != 0) return -1;
  b->entries_at = c->pos;
  for (size_t i = 0; i < b->num_modules; ++i) {
    if (tffi_check_entry(c, i) != 0) return -1;
  }
  if (c->pos != c->end) return tffi_bin_fail(c, c->pos, "entries", "trailing bytes");
  return 0;
}

int tffi_library_bin_check(const uint8_t* data, size_t size, TffiLibraryBinView* out) {
  if (out == NULL) return tffi_raise(TFFI_VALUE_ERROR, "library_bin: out must not be NULL");
  memset(out, 0, sizeof(*out));
  out->data = data;
  out->lib_index = SIZE_MAX;
  if (data == NULL && size != 0) {
    return tffi_raise(TFFI_VALUE_ERROR, "library_bin: data is NULL but size is %zu", size);
  }
  TffiCursor c = {data, 0, size, out};
  return tffi_check_body(&c);
}

size_t tffi_library_bin_entry(const TffiLibraryBinView* bin, size_t at, TffiLibraryBinEntry* e) {
  e->offset = at;
  e->kind_size = (size_t)tffi_library_bin_u64(bin->data, at);
  e->kind = (const char*)bin->data + at + 8;
  at += 8 + e->kind_size;
  e->is_lib = tffi_is_lib_kind((const uint8_t*)e->kind, e->kind_size);
  e->payload = NULL;
  e->payload_size = 0;
  if (e->is_lib) return at;
  e->payload_size = (size_t)tffi_library_bin_u64(bin->data, at);
  e->payload = bin->data + at + 8;
  return at + 8 + e->payload_size;
}
