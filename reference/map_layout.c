/* The dense table of maps, walked (map_layout.h). */
#include "map_layout.h"

#include <string.h>

#include "any_hash.h"
#include "mem.h"

/* The distances a chain may jump, indexed by a metadata byte's low 7 bits:
 * 0 (the end), 1 to 15, then triangular numbers (probing by them visits
 * every slot of a power-of-two table), sparse ones at the end. The table is
 * part of the layout: C++ code follows the same jumps. */
const uint64_t tffi_table_jumps[TFFI_NUM_JUMPS] = {
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
    21,
    28,
    36,
    45,
    55,
    66,
    78,
    91,
    105,
    120,
    136,
    153,
    171,
    190,
    210,
    231,
    253,
    276,
    300,
    325,
    351,
    378,
    406,
    435,
    465,
    496,
    528,
    561,
    595,
    630,
    666,
    703,
    741,
    780,
    820,
    861,
    903,
    946,
    990,
    1035,
    1081,
    1128,
    1176,
    1225,
    1275,
    1326,
    1378,
    1431,
    1485,
    1540,
    1596,
    1653,
    1711,
    1770,
    1830,
    1891,
    1953,
    2016,
    2080,
    2145,
    2211,
    2278,
    2346,
    2415,
    2485,
    2556,
    2628,
    8515ull,
    19110ull,
    42778ull,
    96141ull,
    216153ull,
    486591ull,
    1092981ull,
    2458653ull,
    5532801ull,
    12442566ull,
    27993903ull,
    62983476ull,
    141717030ull,
    318844378ull,
    717352503ull,
    1614057336ull,
    3631522476ull,
    8170957530ull,
    18384510628ull,
    41364789378ull,
    93070452520ull,
    209408356380ull,
    471168559170ull,
    1060128894105ull,
    2385289465695ull,
    5366898840628ull,
    12075518705635ull,
    27169915244790ull,
    61132312065111ull,
    137547689707000ull,
    309482283181501ull,
    696335127828753ull,
    1566753995631385ull,
    3525196511162271ull,
    7931691992677701ull,
    17846306936293605ull,
    40154190677507445ull,
    90346928918121501ull,
    203280589587557251ull,
    457381325854679626ull,
    1029107982097042876ull,
    2315492959180353330ull,
    5209859154120846435ull,
};

/* Upstream's table size for `cap` entries: the power of two above cap,
 * doubled when cap would fill more than half of it. */
void tffi_table_size(uint64_t cap, uint32_t* fib_shift, uint64_t* slots) {
  uint32_t shift = 64;
  uint64_t n = 1;
  for (uint64_t c = cap; c; c >>= 1) --shift, n <<= 1;
  if (n < cap * 2) --shift, n <<= 1;
  *fib_shift = shift;
  *slots = n;
}

void tffi_table_unlink(TffiMap* m, uint64_t i) {
  TffiDenseMap* d = tffi_table_dense(m);
  TffiItem* it = tffi_table_item(m, i);
  if (it->prev == TFFI_DENSE_NONE)
    d->iter_head = it->next;
  else
    tffi_table_item(m, it->prev)->next = it->next;
  if (it->next == TFFI_DENSE_NONE)
    d->iter_tail = it->prev;
  else
    tffi_table_item(m, it->next)->prev = it->prev;
}

void tffi_table_push_back(TffiMap* m, uint64_t i) {
  TffiDenseMap* d = tffi_table_dense(m);
  TffiItem* it = tffi_table_item(m, i);
  it->prev = d->iter_tail;
  it->next = TFFI_DENSE_NONE;
  if (d->iter_tail != TFFI_DENSE_NONE) tffi_table_item(m, d->iter_tail)->next = i;
  if (d->iter_head == TFFI_DENSE_NONE) d->iter_head = i;
  d->iter_tail = i;
}

/* Slot dst takes src's place in the insertion-order list. */
void tffi_table_replace(TffiMap* m, uint64_t src, uint64_t dst) {
  TffiDenseMap* d = tffi_table_dense(m);
  TffiItem *s = tffi_table_item(m, src), *t = tffi_table_item(m, dst);
  t->prev = s->prev;
  t->next = s->next;
  if (t->prev == TFFI_DENSE_NONE)
    d->iter_head = dst;
  else
    tffi_table_item(m, t->prev)->next = dst;
  if (t->next == TFFI_DENSE_NONE)
    d->iter_tail = dst;
  else
    tffi_table_item(m, t->next)->prev = dst;
}

/* The first empty slot one jump away from i: its jump index, or 0. */
uint8_t tffi_table_next_empty(const TffiMap* m, uint64_t i, uint64_t* out) {
  for (uint8_t j = 1; j < TFFI_NUM_JUMPS; ++j) {
    uint64_t c = (i + tffi_table_jumps[j]) % m->slots;
    if (*tffi_table_meta(m, c) == TFFI_META_EMPTY) {
      *out = c;
      return j;
    }
  }
  return 0;
}

/* Storage for a table of `slots` slots, every slot empty; NULL (nothing
 * raised) when memory runs out. */
TffiBlock* tffi_table_blocks(uint64_t slots) {
  uint64_t n = (slots + TFFI_BLOCK_SLOTS - 1) / TFFI_BLOCK_SLOTS;
  TffiBlock* blocks = tffi_malloc(n * sizeof(TffiBlock));
  for (uint64_t b = 0; blocks && b < n; ++b)
    memset(blocks[b].meta, TFFI_META_EMPTY, TFFI_BLOCK_SLOTS);
  return blocks;
}

void tffi_table_init(TffiDenseMap* d, TffiBlock* blocks, uint64_t slots, uint32_t shift) {
  d->base.data = blocks;
  d->base.data_deleter = tffi_free;
  d->base.size = 0;
  d->base.slots = slots;
  d->fib_shift = shift;
  d->iter_head = d->iter_tail = TFFI_DENSE_NONE;
}

/* The slot whose chain leads to slot i (i must not be a head). */
int tffi_table_chain_prev(const TffiMap* m, uint64_t i, uint64_t* out) {
  uint64_t h;
  if (tffi_any_hash(&tffi_table_item(m, i)->kv.key, &h) != 0) return -1;
  uint64_t prev = tffi_table_home(m, h);
  for (uint64_t next = tffi_table_chain_next(m, prev); next != i;
       next = tffi_table_chain_next(m, next))
    prev = next;
  *out = prev;
  return 0;
}

int tffi_table_search(const TffiMap* m, const TVMFFIAny* key, uint64_t* slot) {
  if (m->size == 0) return 0;
  uint64_t h;
  if (tffi_any_hash(key, &h) != 0) return -1;
  uint64_t i = tffi_table_home(m, h);
  if (!tffi_table_is_head(*tffi_table_meta(m, i))) return 0;
  for (; i != TFFI_DENSE_NONE; i = tffi_table_chain_next(m, i)) {
    int eq = tffi_any_equal(key, &tffi_table_item(m, i)->kv.key);
    if (eq) {
      *slot = i;
      return eq;
    }
  }
  return 0;
}
