/*
 * The dense form of a map: upstream's open-addressing table
 * (container/map_base.h, DenseMapBaseObj), which C++ code searches and
 * changes in place, so a table made here must be one it can read and one
 * it can extend. Its state sits after the map's fields:
 *
 *   fib_shift            the key's hash times 2^64/phi, shifted right by
 *                        this, is the slot of the head of the key's chain
 *   iter_head/iter_tail  the ends of the insertion-order list of slots
 *
 * `data` holds blocks of 16 slots: 16 metadata bytes, then 16 items (key,
 * value, previous and next slot in insertion order: 48 bytes each).
 * A metadata byte is 0xFF for an empty slot; otherwise its top bit is 0 for
 * the head of a chain and 1 for a later element, and its low 7 bits pick
 * the distance to the next element of the chain from a fixed table (0: the
 * chain ends here). This file also has the map's own fields (TffiMap) and
 * walks the table; map_dense.c changes it.
 */
#ifndef TFFI_MAP_LAYOUT_H_
#define TFFI_MAP_LAYOUT_H_

#include <stdint.h>

#include <tvm/ffi/c_api.h>

typedef struct {
  TVMFFIAny key;
  TVMFFIAny value;
} TffiKV;

typedef struct {
  TVMFFIObject header;
  void* data;
  uint64_t size;
  uint64_t slots;
  void (*data_deleter)(void* data);
} TffiMap;

#define TFFI_MAP_SMALL_TAG ((uint64_t)1 << 63)
#define TFFI_MAP_SMALL_MAX 4

/* Most entries a map built from caller input may hold (bounds allocation). */
#define TFFI_MAP_MAX_SIZE ((uint64_t)1 << 26)

typedef struct {
  TffiMap base;
  uint32_t fib_shift;
  uint64_t iter_head;
  uint64_t iter_tail;
} TffiDenseMap;

_Static_assert(sizeof(TffiDenseMap) == 80, "the dense fields follow the map's 56 bytes");

/* No slot: the end of a chain or of the insertion-order list. */
#define TFFI_DENSE_NONE UINT64_MAX

#define TFFI_BLOCK_SLOTS 16
#define TFFI_META_EMPTY 0xFF
#define TFFI_META_PROTECTED 0xFE
#define TFFI_META_TAIL 0x80
#define TFFI_NUM_JUMPS 126
#define TFFI_MAX_LOAD 0.99

typedef struct {
  TffiKV kv;
  uint64_t prev, next;
} TffiItem;

typedef struct {
  uint8_t meta[TFFI_BLOCK_SLOTS];
  TffiItem items[TFFI_BLOCK_SLOTS];
} TffiBlock;

_Static_assert(sizeof(TffiItem) == 48, "an item is a key, a value and two links");
_Static_assert(sizeof(TffiBlock) == TFFI_BLOCK_SLOTS * 49, "a block is 16 bytes, 16 items");

/* The jump distances (see tffi_table_chain_next). */
extern const uint64_t tffi_table_jumps[TFFI_NUM_JUMPS];

static inline TffiDenseMap* tffi_table_dense(TffiMap* m) { return (TffiDenseMap*)m; }

static inline uint8_t* tffi_table_meta(const TffiMap* m, uint64_t i) {
  return &((TffiBlock*)m->data)[i / TFFI_BLOCK_SLOTS].meta[i % TFFI_BLOCK_SLOTS];
}

static inline TffiItem* tffi_table_item(const TffiMap* m, uint64_t i) {
  return &((TffiBlock*)m->data)[i / TFFI_BLOCK_SLOTS].items[i % TFFI_BLOCK_SLOTS];
}

static inline int tffi_table_is_head(uint8_t meta) { return (meta & TFFI_META_TAIL) == 0; }

/* The next slot of i's chain, or TFFI_DENSE_NONE at its end. */
static inline uint64_t tffi_table_chain_next(const TffiMap* m, uint64_t i) {
  uint64_t jump = tffi_table_jumps[*tffi_table_meta(m, i) & 0x7F];
  return jump == 0 ? TFFI_DENSE_NONE : (i + jump) % m->slots;
}

static inline void tffi_table_set_jump(TffiMap* m, uint64_t i, uint8_t jump) {
  uint8_t* meta = tffi_table_meta(m, i);
  *meta = (uint8_t)((*meta & TFFI_META_TAIL) | jump);
}

/* The slot whose chain a key with hash h belongs to. */
static inline uint64_t tffi_table_home(const TffiMap* m, uint64_t h) {
  return (11400714819323198485ull * h) >> ((const TffiDenseMap*)m)->fib_shift;
}

static inline int tffi_table_is_full(const TffiMap* m) {
  return (double)(m->size + 1) > (double)m->slots * TFFI_MAX_LOAD;
}

/* Upstream's table size for `cap` entries (fib_shift and slot count). */
void tffi_table_size(uint64_t cap, uint32_t* fib_shift, uint64_t* slots);

/* Storage for `slots` slots, all empty; NULL (nothing raised) when memory
 * runs out. tffi_table_init gives it to d, empty, with tffi_free to give it
 * back. */
TffiBlock* tffi_table_blocks(uint64_t slots);
void tffi_table_init(TffiDenseMap* d, TffiBlock* blocks, uint64_t slots, uint32_t shift);

/* The insertion-order list: unlink slot i; append slot i; slot dst takes
 * slot src's place. */
void tffi_table_unlink(TffiMap* m, uint64_t i);
void tffi_table_push_back(TffiMap* m, uint64_t i);
void tffi_table_replace(TffiMap* m, uint64_t src, uint64_t dst);

/* The first empty slot one jump from i: the jump's index (*out the slot),
 * or 0 when none is in reach. */
uint8_t tffi_table_next_empty(const TffiMap* m, uint64_t i, uint64_t* out);

/* The slot whose chain leads to slot i (a later element): 0, or -1 with the
 * error its key's hash raised. */
int tffi_table_chain_prev(const TffiMap* m, uint64_t i, uint64_t* out);

/* The slot of key: 1 with *slot, 0 when absent, -1 on error. */
int tffi_table_search(const TffiMap* m, const TVMFFIAny* key, uint64_t* slot);

#endif
