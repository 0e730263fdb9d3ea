/* Growable arrays for certify, as reference/vec.h is for the runtime (that
 * one allocates through the runtime's own allocator): a pointer, a count
 * and a capacity, grown by doubling, so n appends cost O(n) copies. Any
 * struct with fields `items`, `n` and `cap` works with the macros:
 *
 *   struct { Foo* items; size_t n, cap; } v = {0};
 *   if (CERT_VEC_PUSH(&v, foo) != 0) return -1;
 *   ...
 *   free(v.items);
 *
 * Arrays named otherwise call cert_vec_reserve itself. */
#ifndef CERT_VEC_H_
#define CERT_VEC_H_

#include <stddef.h>

/* Makes room for at least `need` elements of `elem_size` bytes at
 * *items_addr (the address of the array's pointer), whose capacity is
 * *cap. Returns 0, or -1 with the array unchanged (out of memory, or a
 * size that would overflow). */
int cert_vec_reserve(void* items_addr, size_t* cap, size_t need, size_t elem_size);

#define CERT_VEC_RESERVE(v, need) \
  ((need) <= (v)->cap ? 0 : cert_vec_reserve(&(v)->items, &(v)->cap, (need), sizeof *(v)->items))

/* Appends `x`; 0, or -1 with the array unchanged. */
#define CERT_VEC_PUSH(v, x) (CERT_VEC_RESERVE((v), (v)->n + 1) != 0 ? -1 : ((v)->items[(v)->n++] = (x), 0))

#endif
