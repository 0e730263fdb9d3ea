/* Object identity -> marks (ptr_table.h). */
#include "ptr_table.h"

#include "mem.h"
#include "object.h"
#include "tffi_error.h"

static size_t tffi_ptr_home(const TffiPtrTable* t, const TVMFFIObject* obj) {
  uint64_t h = (uint64_t)(uintptr_t)obj * 0x9e3779b97f4a7c15ull;
  return (size_t)(h ^ (h >> 29)) & (t->cap - 1);
}

TffiPtrSlot* tffi_ptr_find(const TffiPtrTable* t, const TVMFFIObject* obj) {
  if (t->cap == 0) return NULL;
  for (size_t i = tffi_ptr_home(t, obj);; i = (i + 1) & (t->cap - 1)) {
    if (t->slots[i].key == obj) return &t->slots[i];
    if (t->slots[i].key == NULL) return NULL;
  }
}

static int tffi_ptr_grow(TffiPtrTable* t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  TffiPtrSlot* slots = tffi_calloc(cap, sizeof *slots);
  if (slots == NULL) return tffi_raise_oom(cap * sizeof *slots);
  TffiPtrTable grown = {slots, t->n, cap};
  for (size_t i = 0; i < t->cap; ++i) {
    if (t->slots[i].key == NULL) continue;
    size_t j = tffi_ptr_home(&grown, t->slots[i].key);
    while (slots[j].key != NULL) j = (j + 1) & (cap - 1);
    slots[j] = t->slots[i];
  }
  tffi_free(t->slots);
  *t = grown;
  return 0;
}

TffiPtrSlot* tffi_ptr_slot(TffiPtrTable* t, TVMFFIObject* obj) {
  TffiPtrSlot* found = tffi_ptr_find(t, obj);
  if (found != NULL) return found;
  if (2 * (t->n + 1) > t->cap && tffi_ptr_grow(t) != 0) return NULL;
  size_t i = tffi_ptr_home(t, obj);
  while (t->slots[i].key != NULL) i = (i + 1) & (t->cap - 1);
  t->slots[i].key = obj;
  tffi_incref(obj);
  t->n += 1;
  return &t->slots[i];
}

void tffi_ptr_table_free(TffiPtrTable* t) {
  for (size_t i = 0; i < t->cap; ++i)
    if (t->slots[i].key != NULL) tffi_decref(t->slots[i].key);
  tffi_free(t->slots);
  t->slots = NULL;
  t->n = t->cap = 0;
}
