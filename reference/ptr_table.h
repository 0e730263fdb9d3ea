/*
 * Marks the recursive walks keep per object (recursive_compare.c,
 * recursive_hash.c): a table from object identity to two integers, with
 * open addressing and linear probing, so that a walk over n objects costs
 * O(n) whatever the shape of the graph. The table holds a reference to
 * each object it has seen, so that a key never dangles nor comes back as
 * another object at the same address while the walk runs.
 */
#ifndef TFFI_PTR_TABLE_H_
#define TFFI_PTR_TABLE_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

typedef struct {
  TVMFFIObject* key; /* NULL: an empty slot */
  int64_t value;
  int32_t mark;
} TffiPtrSlot;

typedef struct {
  TffiPtrSlot* slots;
  size_t n, cap; /* cap: 0 or a power of two, at least twice n */
} TffiPtrTable;

/* The slot of obj, or NULL when the table has none. */
TffiPtrSlot* tffi_ptr_find(const TffiPtrTable* t, const TVMFFIObject* obj);

/* The slot of obj, made (value and mark 0, a reference to obj taken) when
 * absent; NULL with MemoryError raised when the table cannot grow. */
TffiPtrSlot* tffi_ptr_slot(TffiPtrTable* t, TVMFFIObject* obj);

/* Gives back the storage and the references to the keys. */
void tffi_ptr_table_free(TffiPtrTable* t);

#endif
