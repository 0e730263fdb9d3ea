/*
 * Growable arrays: a pointer, a count and a capacity, grown by doubling so
 * that n appends cost O(n) copies in all. Any struct with fields `items`,
 * `n` and `cap` works:
 *
 *   struct { Foo* items; size_t n, cap; } v = {0};
 *   if (TFFI_VEC_PUSH(&v, foo) != 0) return tffi_raise_oom(...);
 *   ...
 *   tffi_free(v.items);
 */
#ifndef TFFI_VEC_H_
#define TFFI_VEC_H_

#include <stddef.h>

/* Makes room for at least `need` elements of `elem_size` bytes at
 * *items_addr (a pointer to the array's pointer) with capacity *cap.
 * Returns 0, or -1 with the array unchanged and nothing raised. */
int tffi_vec_reserve(void* items_addr, size_t* cap, size_t need, size_t elem_size);

#define TFFI_VEC_RESERVE(v, need) \
  ((need) <= (v)->cap ? 0 : tffi_vec_reserve(&(v)->items, &(v)->cap, (need), sizeof *(v)->items))

/* Appends `x`; 0, or -1 (nothing raised) with the array unchanged. */
#define TFFI_VEC_PUSH(v, x) \
  (TFFI_VEC_RESERVE((v), (v)->n + 1) != 0 ? -1 : ((v)->items[(v)->n++] = (x), 0))

#endif
