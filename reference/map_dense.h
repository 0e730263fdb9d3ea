/* The dense form of maps (map_table.h has its layout): what map.c uses
 * once a map holds more than 4 entries. */
#ifndef TFFI_MAP_DENSE_H_
#define TFFI_MAP_DENSE_H_

#include <stdint.h>

#include "map_layout.h"
/* Gives `m` an empty table with room for `capacity` entries; whatever data
 * m had must already be released or moved out. Returns 0, or -1 with
 * MemoryError raised and m unchanged. */
int tffi_dense_make(TffiMap* m, uint64_t capacity);

/* Inserts the owned pair *kv (its values move into the table on success),
 * or replaces the value of an equal key (the old value is released, kv's
 * key too, and the entry moves last). Grows the table when needed. Returns
 * 0, or -1 with the error raised, the table as it was and *kv still the
 * caller's. */
int tffi_dense_insert(TffiMap* m, TffiKV* kv);

/* As tffi_map_find, tffi_map_erase and tffi_map_clear, for a dense map. */
int tffi_dense_find(const TffiMap* m, const TVMFFIAny* key, TffiKV** out);
int tffi_dense_erase(TffiMap* m, const TVMFFIAny* key);
void tffi_dense_clear(TffiMap* m);

/* Releases every entry and the table's storage (through data_deleter). */
void tffi_dense_release(TffiMap* m);

/* The entry in slot `pos`, and the slot after it in insertion order. */
TffiKV* tffi_dense_at(const TffiMap* m, uint64_t pos);
uint64_t tffi_dense_next(const TffiMap* m, uint64_t pos);

#endif
