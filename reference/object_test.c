/* Unit tests of the reference-count helpers. */
#include <criterion/criterion.h>

#include "tffi_error.h"
#include "object.h"

static int deleted_flags[4];
static int deleted_calls;

static void counting_delete(void* self, int flags) {
  deleted_flags[deleted_calls++] = flags;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

Test(object, alloc_starts_with_one_strong_and_one_weak) {
  TVMFFIObject* obj = tffi_object_alloc(sizeof(TVMFFIObject) + 8, 1000, counting_delete);
  cr_assert_not_null(obj);
  cr_assert_eq(obj->combined_ref_count, TFFI_REF_BOTH_ONE);
  cr_assert_eq(obj->type_index, 1000);
  tffi_incref(obj);
  cr_assert_eq(tffi_strong_count(obj), 2);
  tffi_decref(obj);
  cr_assert_eq(deleted_calls, 0);
  tffi_decref(obj);
  cr_assert_eq(deleted_calls, 1);
  cr_assert_eq(deleted_flags[0], kTVMFFIObjectDeleterFlagBitMaskBoth);
}

Test(object, weak_reference_splits_the_deleter_call) {
  TVMFFIObject* obj = tffi_object_alloc(sizeof(TVMFFIObject), 1000, counting_delete);
  __atomic_fetch_add(&obj->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_RELAXED);
  tffi_decref(obj);
  cr_assert_eq(deleted_calls, 1);
  cr_assert_eq(deleted_flags[0], kTVMFFIObjectDeleterFlagBitMaskStrong);
  /* Dropping the extra weak reference by hand releases the storage. */
  uint64_t before =
      __atomic_fetch_sub(&obj->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_ACQ_REL);
  cr_assert_eq(before, TFFI_REF_WEAK_ONE);
  counting_delete(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
}

/* A chain of lists of the test's own: each holds the next. */
typedef struct {
  TVMFFIObject header;
  TVMFFIObject* next;
} Link;

static int link_depth, link_deepest;
static long links_freed;

static void link_delete(void* self, int flags) {
  link_depth += 1;
  if (link_depth > link_deepest) link_deepest = link_depth;
  Link* link = self;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && link->next) tffi_decref(link->next);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) {
    tffi_object_free(self);
    links_freed += 1;
  }
  link_depth -= 1;
}

static TVMFFIObject* chain(long n) {
  TVMFFIObject* next = NULL;
  for (long i = 0; i < n; ++i) {
    Link* link = (Link*)tffi_object_alloc(sizeof(Link), kTVMFFIList, link_delete);
    cr_assert_not_null(link);
    link->next = next;
    next = &link->header;
  }
  return next;
}

/* Releasing a container nested a million deep takes a bounded number of
 * nested deleter calls (not one per level, which would overflow the C
 * stack), and every link is freed. */
Test(object, nested_release_is_bounded) {
  enum { kLinks = 1000000 };
  TVMFFIObject* head = chain(kLinks);
  link_depth = link_deepest = 0;
  links_freed = 0;
  tffi_decref(head);
  cr_expect_eq(links_freed, kLinks);
  cr_expect_leq(link_deepest, 1000, "%d deleters ran inside one another", link_deepest);
  cr_expect_gt(link_deepest, 1, "the first links were not released inside one another");
}

/* A link set aside with a weak reference still held loses its contents
 * then (its next link is freed), its storage only when that reference
 * goes. */
Test(object, nested_release_keeps_weakly_held_storage) {
  enum { kLinks = 2000, kHeld = 1500 };
  TVMFFIObject* head = chain(kLinks);
  TVMFFIObject* held = head;
  for (int i = 0; i < kHeld; ++i) held = ((Link*)held)->next;
  __atomic_fetch_add(&held->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_RELAXED);
  links_freed = 0;
  tffi_decref(head);
  cr_expect_eq(links_freed, kLinks - 1, "%ld links freed", links_freed);
  uint64_t before =
      __atomic_fetch_sub(&held->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_ACQ_REL);
  cr_assert_eq(before, TFFI_REF_WEAK_ONE);
  link_delete(held, kTVMFFIObjectDeleterFlagBitMaskWeak);
  cr_expect_eq(links_freed, kLinks);
}
