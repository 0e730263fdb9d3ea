/* Unit tests of object storage through the registered allocator. */
#include "allocator.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#include "tffi_error.h"
#include "object.h"

static int allocs, frees;

static void counted_free(void* body) {
  frees++;
  free((char*)body - 16);
}

static void* counted_alloc(size_t size, size_t align, int32_t type_index, void* ctx) {
  (void)align, (void)type_index, (void)ctx;
  char* block = malloc(16 + size);
  ((TVMFFIObjectAllocHeader*)(block + 16))[-1].delete_space = counted_free;
  allocs++;
  return block + 16;
}

static void* failing_alloc(size_t size, size_t align, int32_t type_index, void* ctx) {
  (void)size, (void)align, (void)type_index, (void)ctx;
  TVMFFIErrorSetRaisedFromCStr("MemoryError", "test allocator refuses");
  return NULL;
}

Test(allocator, object_alloc_goes_through_registered) {
  static TVMFFICustomAllocator mine = {counted_alloc, NULL};
  cr_assert_eq(TVMFFISetCustomAllocator(&mine), 0);
  void* obj = tffi_object_alloc(40, 1000, tffi_object_delete_plain);
  cr_assert_not_null(obj);
  cr_expect_eq(allocs, 1);
  tffi_decref(obj);
  cr_expect_eq(frees, 1);
  TVMFFISetCustomAllocator(NULL);
  cr_expect(tffi_allocator_is_default(tffi_allocator_current()));
}

Test(allocator, failing_allocator_error_reaches_caller) {
  static TVMFFICustomAllocator bad = {failing_alloc, NULL};
  cr_assert_eq(TVMFFISetCustomAllocator(&bad), 0);
  cr_expect_null(tffi_object_alloc(40, 1000, tffi_object_delete_plain));
  TVMFFISetCustomAllocator(NULL);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_expect_eq(cell->message.size, 22u);
  tffi_decref(err);
}

Test(allocator, default_refuses_huge_alignment_and_size) {
  TVMFFICustomAllocator* a = tffi_allocator_current();
  cr_expect_null(a->allocate(16, 4096, 1000, NULL));
  cr_expect_null(a->allocate(SIZE_MAX - 4, 8, 1000, NULL));
}

Test(allocator, handing_back_the_default_clears_registration) {
  static TVMFFICustomAllocator mine = {counted_alloc, NULL};
  TVMFFICustomAllocator* def = TVMFFIGetCustomAllocator();
  TVMFFISetCustomAllocator(&mine);
  TVMFFISetCustomAllocator(def);
  cr_expect_eq(TVMFFIGetCustomAllocator(), def);
}
