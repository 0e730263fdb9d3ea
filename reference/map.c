/* Map and Dict objects (map.h): the small form, and the choice between it
 * and the dense one (map_dense.c). */
#include "map.h"

#include <string.h>

#include "any.h"
#include "any_hash.h"
#include "tffi_error.h"
#include "map_dense.h"
#include "mem.h"
#include "object.h"

/* Upstream never makes a small map of fewer slots, so an object always has
 * room for the dense fields, which C++ code may switch a Dict to in place. */
#define TFFI_MAP_SMALL_MIN 2

static TffiKV* tffi_small_items(const TffiMap* m) { return m->data; }

static uint64_t tffi_small_slots(const TffiMap* m) { return m->slots & ~TFFI_MAP_SMALL_TAG; }

/* Releases every entry and whatever storage the map holds apart from the
 * object, in either form: the map may have been made by C++ code, which
 * also gives its data a deleter of its own. */
static void tffi_map_release(TffiMap* m) {
  if (!tffi_map_is_small(m)) {
    tffi_dense_release(m);
    return;
  }
  tffi_map_clear(m);
  if (m->data_deleter && m->data) m->data_deleter(m->data);
  m->data = NULL;
  m->data_deleter = NULL;
}

static void tffi_map_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) tffi_map_release(self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

TVMFFIObject* tffi_map_new(int32_t type_index, uint64_t capacity) {
  if (capacity > TFFI_MAP_MAX_SIZE) {
    tffi_raise(TFFI_MEMORY_ERROR, "map: %llu entries are more than the %llu a map may hold",
               (unsigned long long)capacity, (unsigned long long)TFFI_MAP_MAX_SIZE);
    return NULL;
  }
  int small = capacity <= TFFI_MAP_SMALL_MAX;
  uint64_t slots = capacity < TFFI_MAP_SMALL_MIN ? TFFI_MAP_SMALL_MIN : capacity;
  size_t inline_slots = small ? slots : TFFI_MAP_SMALL_MIN;
  TffiMap* m = tffi_object_alloc(sizeof(TffiMap) + inline_slots * sizeof(TffiKV), type_index,
                                 tffi_map_delete);
  if (m == NULL) return NULL;
  if (small) {
    /* The pairs live in the object itself, freed with it: no data deleter. */
    m->data = m + 1;
    m->slots = slots | TFFI_MAP_SMALL_TAG;
  } else if (tffi_dense_make(m, capacity) != 0) {
    tffi_object_free(m);
    return NULL;
  }
  return &m->header;
}

int tffi_map_find(const TffiMap* m, const TVMFFIAny* key, TffiKV** out) {
  if (!tffi_map_is_small(m)) return tffi_dense_find(m, key, out);
  *out = NULL;
  TffiKV* items = tffi_small_items(m);
  for (uint64_t i = 0; i < m->size; ++i) {
    int eq = tffi_any_equal(&items[i].key, key);
    if (eq) {
      *out = eq > 0 ? &items[i] : NULL;
      return eq;
    }
  }
  return 0;
}

/* A small map's storage grows to `slots` pairs, apart from the object. */
static int tffi_small_grow(TffiMap* m, uint64_t slots) {
  TffiKV* items = tffi_malloc(slots * sizeof(TffiKV));
  if (items == NULL) return tffi_raise_oom(slots * sizeof(TffiKV));
  if (m->size) memcpy(items, m->data, m->size * sizeof(TffiKV));
  if (m->data_deleter && m->data) m->data_deleter(m->data);
  m->data = items;
  m->data_deleter = tffi_free;
  m->slots = slots | TFFI_MAP_SMALL_TAG;
  return 0;
}

/* A full small map turns dense in place, its entries moved over in order
 * (then the new one added). On failure the small map is as it was. */
static int tffi_small_to_dense(TffiMap* m, TffiKV* kv) {
  TffiDenseMap dense;
  memset(&dense, 0, sizeof dense);
  if (tffi_dense_make(&dense.base, m->size) != 0) return -1;
  TffiKV* items = tffi_small_items(m);
  for (uint64_t i = 0; i <= m->size; ++i) {
    /* Bit copies: on failure the small map still owns its entries. */
    TffiKV moved = i < m->size ? items[i] : *kv;
    if (tffi_dense_insert(&dense.base, &moved) != 0) {
      dense.base.data_deleter(dense.base.data);
      return -1;
    }
  }
  if (m->data_deleter && m->data) m->data_deleter(m->data);
  TffiDenseMap* d = (TffiDenseMap*)m;
  m->data = dense.base.data;
  m->data_deleter = dense.base.data_deleter;
  m->size = dense.base.size;
  m->slots = dense.base.slots;
  d->fib_shift = dense.fib_shift;
  d->iter_head = dense.iter_head;
  d->iter_tail = dense.iter_tail;
  return 0;
}

/* Places the owned pair in a small map (kv's key is released when an equal
 * key was there already). */
static int tffi_small_set(TffiMap* m, TffiKV* kv) {
  TffiKV* found;
  int rc = tffi_map_find(m, &kv->key, &found);
  if (rc < 0) return -1;
  if (rc == 1) {
    tffi_any_release(&found->value);
    tffi_any_release(&kv->key);
    found->value = kv->value;
    return 0;
  }
  uint64_t slots = tffi_small_slots(m);
  if (m->size == slots) {
    if (slots >= TFFI_MAP_SMALL_MAX) return tffi_small_to_dense(m, kv);
    uint64_t grown = slots * 2 < TFFI_MAP_SMALL_MIN ? TFFI_MAP_SMALL_MIN : slots * 2;
    if (tffi_small_grow(m, grown > TFFI_MAP_SMALL_MAX ? TFFI_MAP_SMALL_MAX : grown) != 0) return -1;
  }
  tffi_small_items(m)[m->size++] = *kv;
  return 0;
}

int tffi_map_set(TffiMap* m, const TVMFFIAny* key, const TVMFFIAny* value) {
  TffiKV kv;
  if (tffi_any_copy_owned(key, &kv.key) != 0) return -1;
  if (tffi_any_copy_owned(value, &kv.value) != 0) {
    tffi_any_release(&kv.key);
    return -1;
  }
  int rc = tffi_map_is_small(m) ? tffi_small_set(m, &kv) : tffi_dense_insert(m, &kv);
  if (rc != 0) {
    tffi_any_release(&kv.key);
    tffi_any_release(&kv.value);
  }
  return rc;
}

int tffi_map_erase(TffiMap* m, const TVMFFIAny* key) {
  if (!tffi_map_is_small(m)) return tffi_dense_erase(m, key);
  TffiKV* found;
  int rc = tffi_map_find(m, key, &found);
  if (rc <= 0) return rc;
  TffiKV gone = *found;
  TffiKV* items = tffi_small_items(m);
  uint64_t i = (uint64_t)(found - items);
  memmove(&items[i], &items[i + 1], (m->size - i - 1) * sizeof(TffiKV));
  m->size -= 1;
  tffi_any_release(&gone.key);
  tffi_any_release(&gone.value);
  return 1;
}

void tffi_map_clear(TffiMap* m) {
  if (!tffi_map_is_small(m)) {
    tffi_dense_clear(m);
    return;
  }
  TffiKV* items = tffi_small_items(m);
  /* Emptied first: a released value's deleter may look at this map. */
  uint64_t n = m->size;
  m->size = 0;
  for (uint64_t i = 0; i < n; ++i) {
    tffi_any_release(&items[i].key);
    tffi_any_release(&items[i].value);
  }
}

uint64_t tffi_map_begin(const TffiMap* m) {
  return tffi_map_is_small(m) ? 0 : ((const TffiDenseMap*)m)->iter_head;
}

uint64_t tffi_map_end(const TffiMap* m) { return tffi_map_is_small(m) ? m->size : TFFI_DENSE_NONE; }

uint64_t tffi_map_next(const TffiMap* m, uint64_t pos) {
  if (!tffi_map_is_small(m)) return tffi_dense_next(m, pos);
  return pos + 1 < m->size ? pos + 1 : m->size;
}

TffiKV* tffi_map_at(const TffiMap* m, uint64_t pos) {
  return tffi_map_is_small(m) ? &tffi_small_items(m)[pos] : tffi_dense_at(m, pos);
}

int tffi_map_has_pos(const TffiMap* m, uint64_t pos) {
  if (tffi_map_is_small(m)) return pos < m->size;
  if (pos >= m->slots) return 0;
  uint8_t meta = *tffi_table_meta(m, pos);
  return meta != TFFI_META_EMPTY && meta != TFFI_META_PROTECTED;
}
