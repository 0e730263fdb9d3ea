/* The dense form of maps, changed: insertion (sparing a chain's head slot
 * and growing the table as upstream does), erasure, clearing. */
#include "map_dense.h"

#include "any.h"
#include "any_hash.h"
#include "tffi_error.h"
#include "mem.h"

int tffi_dense_make(TffiMap* m, uint64_t capacity) {
  uint32_t shift;
  uint64_t slots;
  tffi_table_size(capacity ? capacity : 1, &shift, &slots);
  TffiBlock* blocks = tffi_table_blocks(slots);
  if (blocks == NULL) return tffi_raise_oom(slots * sizeof(TffiItem));
  tffi_table_init(tffi_table_dense(m), blocks, slots, shift);
  return 0;
}

int tffi_dense_find(const TffiMap* m, const TVMFFIAny* key, TffiKV** out) {
  uint64_t slot;
  int rc = tffi_table_search(m, key, &slot);
  *out = rc == 1 ? &tffi_table_item(m, slot)->kv : NULL;
  return rc;
}

/* Outcomes of one insertion attempt. */
enum { TFFI_TRY_FULL = 0, TFFI_TRY_NEW = 1, TFFI_TRY_FOUND = 2, TFFI_TRY_SPARE = 3 };

/* Makes slot `target`, which holds a later element of another key's chain,
 * free for a new chain head: that element and the rest of its chain move
 * to empty slots, appended where the chain's earlier part ends. Returns 1,
 * 0 when no empty slot is in reach (the table must grow), -1 on error. */
static int tffi_spare_head(TffiMap* m, uint64_t target) {
  uint64_t w, r = target, empty;
  if (tffi_table_chain_prev(m, target, &w) != 0) return -1;
  int first = 1;
  for (;;) {
    uint8_t jump = tffi_table_next_empty(m, w, &empty);
    if (jump == 0) return 0;
    uint8_t r_meta = *tffi_table_meta(m, r);
    tffi_table_item(m, empty)->kv = tffi_table_item(m, r)->kv;
    *tffi_table_meta(m, empty) = TFFI_META_TAIL;
    tffi_table_replace(m, r, empty);
    /* The target stays unwritable until the new head fills it. */
    *tffi_table_meta(m, r) = first ? TFFI_META_PROTECTED : TFFI_META_EMPTY;
    first = 0;
    tffi_table_set_jump(m, w, jump);
    w = empty;
    uint64_t jump_r = tffi_table_jumps[r_meta & 0x7F];
    if (jump_r == 0) return 1;
    r = (r + jump_r) % m->slots;
  }
}

/* Makes slot i the head of a new chain holding key (its value None). */
static void tffi_new_head(TffiMap* m, uint64_t i, const TVMFFIAny* key) {
  *tffi_table_meta(m, i) = 0;
  tffi_table_item(m, i)->kv.key = *key;
  tffi_table_item(m, i)->kv.value = tffi_any_none();
  m->size += 1;
}

/* One attempt to place key: a new slot (*slot, its value None), the slot of
 * an equal key (unlinked from the insertion order), full, or SPARE: the
 * home slot *slot holds another chain's element and must be spared. */
static int tffi_try_insert(TffiMap* m, const TVMFFIAny* key, uint64_t* slot) {
  if (m->slots == 0) return TFFI_TRY_FULL;
  uint64_t h;
  if (tffi_any_hash(key, &h) != 0) return -1;
  uint64_t i = tffi_table_home(m, h);
  uint8_t meta = *tffi_table_meta(m, i);
  *slot = i;
  if (meta == TFFI_META_EMPTY) {
    tffi_new_head(m, i, key);
    return TFFI_TRY_NEW;
  }
  if (!tffi_table_is_head(meta)) return tffi_table_is_full(m) ? TFFI_TRY_FULL : TFFI_TRY_SPARE;
  for (uint64_t at = i; at != TFFI_DENSE_NONE; at = tffi_table_chain_next(m, at)) {
    int eq = tffi_any_equal(key, &tffi_table_item(m, at)->kv.key);
    if (eq < 0) return -1;
    if (eq) {
      tffi_table_unlink(m, at);
      *slot = at;
      return TFFI_TRY_FOUND;
    }
    i = at;
  }
  if (tffi_table_is_full(m)) return TFFI_TRY_FULL;
  uint64_t empty;
  uint8_t jump = tffi_table_next_empty(m, i, &empty);
  if (jump == 0) return TFFI_TRY_FULL;
  *tffi_table_meta(m, empty) = TFFI_META_TAIL;
  tffi_table_item(m, empty)->kv.key = *key;
  tffi_table_item(m, empty)->kv.value = tffi_any_none();
  tffi_table_set_jump(m, i, jump);
  m->size += 1;
  *slot = empty;
  return TFFI_TRY_NEW;
}

static int tffi_insert_owned(TffiMap* m, TffiKV* kv);

/* m takes the table of `fresh`, which holds every entry of m again (the
 * size stays; the header, which other threads may be counting references
 * in, is left alone). */
static void tffi_table_adopt(TffiMap* m, const TffiDenseMap* fresh) {
  TffiDenseMap* d = tffi_table_dense(m);
  m->data = fresh->base.data;
  m->data_deleter = fresh->base.data_deleter;
  m->slots = fresh->base.slots;
  d->fib_shift = fresh->fib_shift;
  d->iter_head = fresh->iter_head;
  d->iter_tail = fresh->iter_tail;
}

/* Storage for the table twice m's size (NULL with MemoryError raised). */
static TffiBlock* tffi_grown_blocks(const TffiMap* m, uint64_t* slots, uint32_t* shift) {
  *slots = m->slots * 2;
  *shift = tffi_table_dense((TffiMap*)m)->fib_shift - 1;
  if (m->slots == 0) tffi_table_size(1, shift, slots);
  if (*slots > TFFI_MAP_MAX_SIZE * 4) {
    tffi_raise(TFFI_MEMORY_ERROR, "map: more than %llu entries",
               (unsigned long long)TFFI_MAP_MAX_SIZE);
    return NULL;
  }
  TffiBlock* blocks = tffi_table_blocks(*slots);
  if (blocks == NULL) tffi_raise_oom(*slots * sizeof(TffiItem));
  return blocks;
}

/* Moves every entry, in insertion order, into a table of twice the slots
 * on `blocks` (which it takes), and gives the old storage back through its
 * own deleter (C++ code may have made it). On failure the old table is
 * kept and nothing is released. */
static int tffi_grow_into(TffiMap* m, TffiBlock* blocks, uint64_t slots, uint32_t shift) {
  TffiDenseMap fresh;
  tffi_table_init(&fresh, blocks, slots, shift);
  for (uint64_t i = tffi_table_dense(m)->iter_head; i != TFFI_DENSE_NONE;
       i = tffi_table_item(m, i)->next) {
    TffiKV kv = tffi_table_item(m, i)->kv;
    if (tffi_insert_owned(&fresh.base, &kv) != 0) {
      fresh.base.data_deleter(fresh.base.data);
      return -1;
    }
  }
  if (m->data_deleter) m->data_deleter(m->data);
  tffi_table_adopt(m, &fresh);
  return 0;
}

/* Spares the home slot i for key, or grows the table when that cannot be
 * done. The grown table's storage is taken first: a spare that stops half
 * way leaves entries moved, and the growth must then not fail for memory. */
static int tffi_spare_or_grow(TffiMap* m, uint64_t i, const TVMFFIAny* key, int* placed) {
  uint64_t slots;
  uint32_t shift;
  TffiBlock* reserve = tffi_grown_blocks(m, &slots, &shift);
  if (reserve == NULL) return -1;
  int spared = tffi_spare_head(m, i);
  if (spared == 1) {
    tffi_free(reserve);
    tffi_new_head(m, i, key);
    *placed = 1;
    return 0;
  }
  *placed = 0;
  if (spared < 0) {
    tffi_free(reserve);
    return -1;
  }
  return tffi_grow_into(m, reserve, slots, shift);
}

/* Places the owned pair, growing as needed; a found key's old value is
 * released and kv's key with it. */
static int tffi_insert_owned(TffiMap* m, TffiKV* kv) {
  for (;;) {
    uint64_t slot, slots;
    uint32_t shift;
    int placed = 0, rc = tffi_try_insert(m, &kv->key, &slot);
    if (rc < 0) return -1;
    if (rc == TFFI_TRY_FULL) {
      TffiBlock* blocks = tffi_grown_blocks(m, &slots, &shift);
      if (blocks == NULL || tffi_grow_into(m, blocks, slots, shift) != 0) return -1;
      continue;
    }
    if (rc == TFFI_TRY_SPARE) {
      if (tffi_spare_or_grow(m, slot, &kv->key, &placed) != 0) return -1;
      if (!placed) continue;
      rc = TFFI_TRY_NEW;
    }
    TffiKV* at = &tffi_table_item(m, slot)->kv;
    if (rc == TFFI_TRY_FOUND) {
      tffi_any_release(&at->value);
      tffi_any_release(&kv->key);
    }
    at->value = kv->value;
    tffi_table_push_back(m, slot);
    return 0;
  }
}

int tffi_dense_insert(TffiMap* m, TffiKV* kv) { return tffi_insert_owned(m, kv); }

int tffi_dense_erase(TffiMap* m, const TVMFFIAny* key) {
  uint64_t i, prev = TFFI_DENSE_NONE;
  int rc = tffi_table_search(m, key, &i);
  if (rc <= 0) return rc;
  /* The one look-up that hashes (and may fail) comes before any change. */
  if (tffi_table_chain_next(m, i) == TFFI_DENSE_NONE &&
      !tffi_table_is_head(*tffi_table_meta(m, i)) && tffi_table_chain_prev(m, i, &prev) != 0)
    return -1;
  TffiKV gone = tffi_table_item(m, i)->kv;
  m->size -= 1;
  tffi_table_unlink(m, i);
  if (tffi_table_chain_next(m, i) == TFFI_DENSE_NONE) {
    if (prev != TFFI_DENSE_NONE) tffi_table_set_jump(m, prev, 0);
    *tffi_table_meta(m, i) = TFFI_META_EMPTY;
  } else {
    /* The chain's last element moves into the freed slot. */
    uint64_t last = i, before = i;
    for (uint64_t next = tffi_table_chain_next(m, last); next != TFFI_DENSE_NONE;
         next = tffi_table_chain_next(m, last))
      before = last, last = next;
    tffi_table_item(m, i)->kv = tffi_table_item(m, last)->kv;
    tffi_table_replace(m, last, i);
    *tffi_table_meta(m, last) = TFFI_META_EMPTY;
    tffi_table_set_jump(m, before, 0);
  }
  tffi_any_release(&gone.key);
  tffi_any_release(&gone.value);
  return 1;
}

void tffi_dense_clear(TffiMap* m) {
  for (uint64_t i = 0; i < m->slots; ++i) {
    uint8_t* meta = tffi_table_meta(m, i);
    if (*meta == TFFI_META_EMPTY || *meta == TFFI_META_PROTECTED) continue;
    *meta = TFFI_META_EMPTY;
    tffi_any_release(&tffi_table_item(m, i)->kv.key);
    tffi_any_release(&tffi_table_item(m, i)->kv.value);
  }
  m->size = 0;
  tffi_table_dense(m)->iter_head = tffi_table_dense(m)->iter_tail = TFFI_DENSE_NONE;
}

void tffi_dense_release(TffiMap* m) {
  if (m->data == NULL) return;
  tffi_dense_clear(m);
  if (m->data_deleter) m->data_deleter(m->data);
  m->data = NULL;
  m->data_deleter = NULL;
  m->slots = 0;
}

TffiKV* tffi_dense_at(const TffiMap* m, uint64_t pos) { return &tffi_table_item(m, pos)->kv; }

uint64_t tffi_dense_next(const TffiMap* m, uint64_t pos) {
  return pos == TFFI_DENSE_NONE ? pos : tffi_table_item(m, pos)->next;
}
