/*
 * Map and Dict objects (type indices kTVMFFIMap, kTVMFFIDict) in the layout
 * of upstream's headers, which C++ code built on them reads and changes in
 * place (container/map_base.h): after the object header, a data pointer,
 * the number of entries, the number of slots (top bit set: the small form)
 * and the deleter of separately allocated data.
 *
 *   small form: `slots` key-value pairs at `data`, the first `size` in use,
 *     in insertion order; upstream keeps at most 4 slots so.
 *   dense form: a hash table (map_dense.h) past 4 entries.
 *
 * Every map object is at least 56 + 2 * 32 bytes, as upstream makes them,
 * so that C++ code can turn a small Dict dense in place. A Map is immutable
 * once made; a Dict changes in place, so every holder sees the change.
 */
#ifndef TFFI_MAP_H_
#define TFFI_MAP_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "map_layout.h"

static inline int tffi_map_is_small(const TffiMap* m) {
  return (m->slots & TFFI_MAP_SMALL_TAG) != 0;
}

/* A new empty map or dict (type_index kTVMFFIMap or kTVMFFIDict) with room
 * for `capacity` entries. Returns a new reference, or NULL with MemoryError
 * raised. */
TVMFFIObject* tffi_map_new(int32_t type_index, uint64_t capacity);

/* Looks `key` up: 1 with *out the entry (owned by the map), 0 when absent,
 * -1 with the error a custom key equality raised. */
int tffi_map_find(const TffiMap* m, const TVMFFIAny* key, TffiKV** out);

/* Sets key to value (both views: the map keeps owned copies, as
 * TVMFFIAnyViewToOwnedAny makes them), growing the map in place. A key
 * already present keeps its place in a small map and moves last in a dense
 * one, as upstream does. Returns 0, or -1 with the error raised and the map
 * as it was. */
int tffi_map_set(TffiMap* m, const TVMFFIAny* key, const TVMFFIAny* value);

/* Removes key: 1 when it was there, 0 when not, -1 with an error raised. */
int tffi_map_erase(TffiMap* m, const TVMFFIAny* key);

/* Removes every entry, keeping the storage. */
void tffi_map_clear(TffiMap* m);

/* Walks the entries in insertion order: for (p = tffi_map_begin(m);
 * p != tffi_map_end(m); p = tffi_map_next(m, p)) use tffi_map_at(m, p). */
uint64_t tffi_map_begin(const TffiMap* m);
uint64_t tffi_map_end(const TffiMap* m);
uint64_t tffi_map_next(const TffiMap* m, uint64_t pos);
TffiKV* tffi_map_at(const TffiMap* m, uint64_t pos);

/* Whether pos names an entry of m now (a position kept across changes of
 * a dict may not). */
int tffi_map_has_pos(const TffiMap* m, uint64_t pos);

#endif
