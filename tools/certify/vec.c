#include "vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cert_vec_reserve(void* items_addr, size_t* cap, size_t need, size_t elem_size) {
  if (need <= *cap) return 0;
  size_t grown = *cap ? *cap : 8;
  while (grown < need) {
    if (grown > SIZE_MAX / 2) return -1;
    grown *= 2;
  }
  if (grown > SIZE_MAX / elem_size) return -1;
  /* The array's pointer is read and written through memcpy: the caller's
   * field has its own pointer type, which void* may not alias. */
  void* old;
  memcpy(&old, items_addr, sizeof old);
  void* fresh = realloc(old, grown * elem_size);
  if (fresh == NULL) return -1;
  memcpy(items_addr, &fresh, sizeof fresh);
  *cap = grown;
  return 0;
}
