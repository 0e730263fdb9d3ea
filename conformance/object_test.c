/* Clauses of spec/object.md: reference counts and deleters, opaque objects,
 * and the custom allocator. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core_support.h"
#include "core_support.h"

#define ONE_STRONG ((uint64_t)1)
#define ONE_WEAK ((uint64_t)1 << 32)

/* An object made by the test itself, so its deleter can be watched. The
 * counting functions do not care who allocated the header. */
typedef struct {
  TVMFFIObject header;
  int calls;
  int flags[4];
} Watched;

static void watched_delete(void* self, int flags) {
  Watched* w = self;
  if (w->calls < 4) w->flags[w->calls] = flags;
  __atomic_fetch_add(&w->calls, 1, __ATOMIC_RELAXED);
}

static Watched watched_new(uint64_t count) {
  Watched w;
  memset(&w, 0, sizeof w);
  w.header.combined_ref_count = count;
  w.header.type_index = kTVMFFIObject;
  w.header.deleter = watched_delete;
  return w;
}

/* OBJ-003: an object fresh from the API holds one strong reference and the
 * one weak reference the strong ones share: combined_ref_count is
 * 1 | 1 << 32. */
TEST(object, OBJ_003_new_object_counts) {
  TVMFFIByteArray in = {"a heap string value", 19};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  cr_expect_eq(s.v_obj->combined_ref_count, ONE_STRONG | ONE_WEAK, "got %#llx",
               (unsigned long long)s.v_obj->combined_ref_count);
  TVMFFIObjectHandle opaque = NULL;
  cr_assert_eq(API(TVMFFIObjectCreateOpaque)(NULL, kTVMFFIOpaquePyObject, NULL, &opaque), 0);
  cr_expect_eq(((TVMFFIObject*)opaque)->combined_ref_count, ONE_STRONG | ONE_WEAK);
  API(TVMFFIObjectDecRef)(opaque);
  core_release(&s);
}

/* OBJ-004: TVMFFIObjectIncRef adds one to the low 32 bits (the strong
 * count) and TVMFFIObjectDecRef takes one away; both return 0 and leave the
 * high 32 bits (the weak count) alone. */
TEST(object, OBJ_004_incref_decref_strong_count) {
  Watched w = watched_new(ONE_STRONG | ONE_WEAK);
  for (int i = 0; i < 3; ++i) cr_assert_eq(API(TVMFFIObjectIncRef)(&w.header), 0);
  cr_expect_eq(w.header.combined_ref_count, 4u | ONE_WEAK);
  cr_assert_eq(API(TVMFFIObjectDecRef)(&w.header), 0);
  cr_assert_eq(API(TVMFFIObjectDecRef)(&w.header), 0);
  cr_expect_eq(w.header.combined_ref_count, 2u | ONE_WEAK);
  cr_expect_eq(w.calls, 0, "deleter ran with strong references left");
}

/* OBJ-005: when the last strong reference goes and no other weak reference
 * exists, the deleter runs exactly once, with kTVMFFIObjectDeleterFlagBitMaskBoth. */
TEST(object, OBJ_005_last_reference_deletes_both) {
  Watched w = watched_new(2u | ONE_WEAK);
  API(TVMFFIObjectDecRef)(&w.header);
  cr_expect_eq(w.calls, 0);
  API(TVMFFIObjectDecRef)(&w.header);
  cr_expect_eq(w.calls, 1, "deleter calls: expected 1, got %d", w.calls);
  cr_expect_eq(w.flags[0], kTVMFFIObjectDeleterFlagBitMaskBoth, "flags: got %d", w.flags[0]);
}

/* OBJ-006: with another weak reference held, the last strong reference
 * going runs the deleter once with kTVMFFIObjectDeleterFlagBitMaskStrong
 * only, and leaves the weak count one lower (the storage stays). */
TEST(object, OBJ_006_weak_reference_keeps_storage) {
  Watched w = watched_new(ONE_STRONG | 2 * ONE_WEAK);
  API(TVMFFIObjectDecRef)(&w.header);
  cr_expect_eq(w.calls, 1, "deleter calls: expected 1, got %d", w.calls);
  cr_expect_eq(w.flags[0], kTVMFFIObjectDeleterFlagBitMaskStrong, "flags: got %d", w.flags[0]);
  cr_expect_eq(w.header.combined_ref_count, ONE_WEAK, "count after: %#llx",
               (unsigned long long)w.header.combined_ref_count);
}

/* Drops the test's own weak reference from inside the strong deleter, the
 * way a weak handle's owner destroyed by those contents would. */
static void watched_delete_dropping_weak(void* self, int flags) {
  watched_delete(self, flags);
  Watched* w = self;
  if (flags == kTVMFFIObjectDeleterFlagBitMaskStrong &&
      __atomic_fetch_sub(&w->header.combined_ref_count, ONE_WEAK, __ATOMIC_ACQ_REL) == ONE_WEAK)
    watched_delete(self, kTVMFFIObjectDeleterFlagBitMaskWeak);
}

/* OBJ-050: the other weak reference released during the strong deleter
 * leaves the shared one last: the releasing call gives the storage back
 * with a weak-flag deleter call of its own, once. */
TEST(object, OBJ_050_weak_released_inside_strong_deleter) {
  Watched w = watched_new(ONE_STRONG | 2 * ONE_WEAK);
  w.header.deleter = watched_delete_dropping_weak;
  API(TVMFFIObjectDecRef)(&w.header);
  cr_expect_eq(w.calls, 2, "deleter calls: expected 2, got %d", w.calls);
  cr_expect_eq(w.flags[0], kTVMFFIObjectDeleterFlagBitMaskStrong, "first flags: got %d",
               w.flags[0]);
  cr_expect_eq(w.flags[1], kTVMFFIObjectDeleterFlagBitMaskWeak, "second flags: got %d", w.flags[1]);
  cr_expect_eq(w.header.combined_ref_count, 0, "count after: %#llx",
               (unsigned long long)w.header.combined_ref_count);
}

enum { kThreads = 8, kRounds = 100000 };

static void* churn(void* obj) {
  for (int i = 0; i < kRounds; ++i) {
    conf_api.TVMFFIObjectIncRef(obj);
    conf_api.TVMFFIObjectDecRef(obj);
  }
  return NULL;
}

static void* drop_one(void* obj) {
  conf_api.TVMFFIObjectDecRef(obj);
  return NULL;
}

static int opaque_deletes;
static void* opaque_last_handle;
static void count_opaque_delete(void* handle) {
  __atomic_fetch_add(&opaque_deletes, 1, __ATOMIC_RELAXED);
  opaque_last_handle = handle;
}

/* OBJ-007: reference counting is atomic: threads that increment and
 * decrement concurrently lose no update, and when they drop the last
 * references at once the deleter runs exactly once. */
TEST(object, OBJ_007_concurrent_counting) {
  conf_impl_need((const void*)conf_api.TVMFFIObjectIncRef, "TVMFFIObjectIncRef");
  conf_impl_need((const void*)conf_api.TVMFFIObjectDecRef, "TVMFFIObjectDecRef");
  TVMFFIObjectHandle obj = NULL;
  cr_assert_eq(
      API(TVMFFIObjectCreateOpaque)((void*)0x77, kTVMFFIOpaquePyObject, count_opaque_delete, &obj),
      0);
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, churn, obj);
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  cr_expect_eq(core_strong(obj), 1u, "strong count after churn: %u", core_strong(obj));
  cr_expect_eq(core_weak(obj), 1u);
  cr_expect_eq(opaque_deletes, 0);
  for (int i = 0; i < kThreads - 1; ++i) API(TVMFFIObjectIncRef)(obj);
  for (int i = 0; i < kThreads; ++i) pthread_create(&threads[i], NULL, drop_one, obj);
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  cr_expect_eq(opaque_deletes, 1, "handle deleter ran %d times", opaque_deletes);
}

/* OBJ-008: TVMFFIObjectDecRef(NULL) returns 0 and does nothing. */
TEST(object, OBJ_008_decref_null_is_noop) { cr_expect_eq(API(TVMFFIObjectDecRef)(NULL), 0); }

/* OBJ-008: TVMFFIObjectIncRef(NULL) returns 0 and does nothing. */
TEST(object, OBJ_008_incref_null_is_noop) {
  HOSTILE_INPUT("TVMFFIObjectIncRef(NULL) dereferences NULL");
  cr_expect_eq(API(TVMFFIObjectIncRef)(NULL), 0);
}

/* OBJ-010: TVMFFIObjectCreateOpaque with kTVMFFIOpaquePyObject returns 0
 * and an object of that type whose cell (right after the header) holds the
 * handle. */
TEST(object, OBJ_010_create_opaque) {
  TVMFFIObjectHandle obj = NULL;
  cr_assert_eq(API(TVMFFIObjectCreateOpaque)((void*)0x4242, kTVMFFIOpaquePyObject, NULL, &obj), 0);
  cr_assert_not_null(obj);
  cr_expect_eq(((TVMFFIObject*)obj)->type_index, kTVMFFIOpaquePyObject);
  TVMFFIOpaqueObjectCell cell;
  memcpy(&cell, (char*)obj + sizeof(TVMFFIObject), sizeof cell);
  cr_expect_eq(cell.handle, (void*)0x4242);
  API(TVMFFIObjectDecRef)(obj);
}

/* OBJ-011: the opaque object's deleter runs exactly once, with the handle,
 * when the last reference goes; a NULL deleter is allowed. */
TEST(object, OBJ_011_opaque_deleter_once) {
  TVMFFIObjectHandle obj = NULL;
  cr_assert_eq(
      API(TVMFFIObjectCreateOpaque)((void*)0x99, kTVMFFIOpaquePyObject, count_opaque_delete, &obj),
      0);
  API(TVMFFIObjectIncRef)(obj);
  API(TVMFFIObjectDecRef)(obj);
  cr_expect_eq(opaque_deletes, 0, "deleter ran with a reference left");
  API(TVMFFIObjectDecRef)(obj);
  cr_expect_eq(opaque_deletes, 1, "deleter calls: %d", opaque_deletes);
  cr_expect_eq(opaque_last_handle, (void*)0x99);
  cr_assert_eq(API(TVMFFIObjectCreateOpaque)((void*)0x98, kTVMFFIOpaquePyObject, NULL, &obj), 0);
  API(TVMFFIObjectDecRef)(obj);
  cr_expect_eq(opaque_deletes, 1);
}

/* OBJ-012: any other type index is refused: -1 with a RuntimeError that
 * names kTVMFFIOpaquePyObject, and the handle's deleter is not run. */
TEST(object, OBJ_012_opaque_other_type_refused) {
  static const int32_t bad[] = {kTVMFFIObject, kTVMFFIStr, kTVMFFIDynObjectBegin + 5, 3};
  for (size_t i = 0; i < 4; ++i) {
    TVMFFIObjectHandle obj = NULL;
    cr_expect_eq(API(TVMFFIObjectCreateOpaque)((void*)0x1, bad[i], count_opaque_delete, &obj), -1,
                 "type_index %d accepted", bad[i]);
    EXPECT_RAISED(.kind = "RuntimeError", .says = {"kTVMFFIOpaquePyObject"});
  }
  cr_expect_eq(opaque_deletes, 0);
}

/* OBJ-013: a NULL out is refused with ValueError naming `out`. */
TEST(object, OBJ_013_opaque_null_out_refused) {
  HOSTILE_INPUT("TVMFFIObjectCreateOpaque(..., NULL) writes through NULL");
  cr_expect_eq(API(TVMFFIObjectCreateOpaque)(NULL, kTVMFFIOpaquePyObject, NULL, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
}

/* OBJ-053: the refusals of TVMFFIObjectCreateOpaque name the function,
 * then the argument, then the refused value (and, for a type index, the
 * one it takes). */
TEST(object, OBJ_053_opaque_refusal_names_function_argument_value) {
  HOSTILE_INPUT("TVMFFIObjectCreateOpaque(..., NULL) writes through NULL");
  TVMFFIObjectHandle obj = NULL;
  cr_expect_eq(API(TVMFFIObjectCreateOpaque)((void*)0x1, kTVMFFIStr, count_opaque_delete, &obj),
               -1);
  EXPECT_RAISED(.kind = "RuntimeError", .api = "TVMFFIObjectCreateOpaque", .arg = "type_index",
                .says = {"65", "kTVMFFIOpaquePyObject"});
  cr_expect_eq(API(TVMFFIObjectCreateOpaque)((void*)0x1, 12345, count_opaque_delete, &obj), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .api = "TVMFFIObjectCreateOpaque", .arg = "type_index",
                .says = {"12345", "kTVMFFIOpaquePyObject"});
  cr_expect_eq(API(TVMFFIObjectCreateOpaque)(NULL, kTVMFFIOpaquePyObject, NULL, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIObjectCreateOpaque", .arg = "out",
                .says = {"NULL"});
  cr_expect_eq(opaque_deletes, 0);
}

/* OBJ-020: TVMFFIGetCustomAllocator never returns NULL; the default's
 * allocate gives a body aligned as asked, preceded by a
 * TVMFFIObjectAllocHeader whose delete_space gives the block back. */
TEST(object, OBJ_020_default_allocator) {
  TVMFFICustomAllocator* a = API(TVMFFIGetCustomAllocator)();
  conformance_layout_guard(CONF_LAYOUT_TVMFFIObjectAllocHeader, "delete_space");
  cr_assert_not_null(a);
  cr_assert_not_null(a->allocate);
  static const size_t aligns[] = {8, 16};
  for (size_t i = 0; i < 2; ++i) {
    char* body = a->allocate(64, aligns[i], kTVMFFIStr, a->context);
    cr_assert_not_null(body);
    cr_expect_eq((uintptr_t)body % aligns[i], 0u, "body %p not %zu-aligned", (void*)body,
                 aligns[i]);
    memset(body, 0x5a, 64);
    TVMFFIObjectAllocHeader* header = (TVMFFIObjectAllocHeader*)body - 1;
    cr_assert_not_null(header->delete_space);
    header->delete_space(body);
  }
}

typedef struct {
  int allocs, frees;
  size_t last_size;
  int32_t last_type;
  void* bodies[16];
  int32_t types[16];
} Tally;

static Tally tally;

static void tally_delete(void* body) {
  tally.frees++;
  free((char*)body - 16);
}

static void* tally_allocate(size_t size, size_t alignment, int32_t type_index, void* context) {
  (void)alignment;
  if (context != &tally) return NULL;
  char* block = malloc(16 + size);
  if (block == NULL) return NULL;
  char* body = block + 16;
  ((TVMFFIObjectAllocHeader*)body)[-1].delete_space = tally_delete;
  if (tally.allocs < 16) {
    tally.bodies[tally.allocs] = body;
    tally.types[tally.allocs] = type_index;
  }
  tally.allocs++;
  tally.last_size = size;
  tally.last_type = type_index;
  return body;
}

static TVMFFICustomAllocator tally_allocator = {tally_allocate, &tally};

/* OBJ-021: TVMFFISetCustomAllocator(a) returns 0 and makes
 * TVMFFIGetCustomAllocator return a; Set(NULL) brings the default back. */
TEST(object, OBJ_021_set_and_restore_allocator) {
  TVMFFICustomAllocator* def = API(TVMFFIGetCustomAllocator)();
  cr_assert_eq(API(TVMFFISetCustomAllocator)(&tally_allocator), 0);
  cr_expect_eq(API(TVMFFIGetCustomAllocator)(), &tally_allocator);
  cr_assert_eq(API(TVMFFISetCustomAllocator)(NULL), 0);
  cr_expect_eq(API(TVMFFIGetCustomAllocator)(), def);
  /* Wherever the table lives: on the stack (above the libraries on common
   * layouts) or on the heap (below them). */
  TVMFFICustomAllocator on_stack = {tally_allocate, &tally};
  TVMFFICustomAllocator* on_heap = malloc(sizeof *on_heap);
  cr_assert_not_null(on_heap);
  *on_heap = on_stack;
  TVMFFICustomAllocator* places[] = {&on_stack, on_heap};
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(API(TVMFFISetCustomAllocator)(places[i]), 0);
    cr_expect_eq(API(TVMFFIGetCustomAllocator)(), places[i], "the %s table was not kept",
                 i ? "heap" : "stack");
    cr_assert_eq(API(TVMFFISetCustomAllocator)(NULL), 0);
    cr_expect_eq(API(TVMFFIGetCustomAllocator)(), def);
  }
  free(on_heap);
}

/* OBJ-022: while a custom allocator is registered, objects the library
 * makes through the C API come from it, with their type index and a size
 * that covers their layout, and their storage goes back through the
 * header's delete_space exactly once. */
TEST(object, OBJ_022_objects_use_custom_allocator) {
  cr_assert_eq(API(TVMFFISetCustomAllocator)(&tally_allocator), 0);
  TVMFFIByteArray in = {"0123456789abcdef", 16};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  int after_string = tally.allocs;
  size_t string_size = tally.last_size;
  int32_t string_type = tally.last_type;
  void* string_body = tally.bodies[0];
  TVMFFIObjectHandle opaque = NULL;
  cr_assert_eq(API(TVMFFIObjectCreateOpaque)(NULL, kTVMFFIOpaquePyObject, NULL, &opaque), 0);
  int32_t opaque_type = tally.last_type;
  int after_opaque = tally.allocs;
  void* string_obj = s.v_obj;
  API(TVMFFIObjectDecRef)(opaque);
  core_release(&s);
  int frees = tally.frees;
  API(TVMFFISetCustomAllocator)(NULL);
  cr_assert_eq(after_string, 1, "heap string: allocator called %d times", after_string);
  cr_expect_eq(string_body, string_obj, "the string object is not the allocated body");
  cr_expect_eq(string_type, kTVMFFIStr);
  cr_expect_geq(string_size, sizeof(TVMFFIObject) + sizeof(TVMFFIByteArray) + 16);
  cr_expect_eq(after_opaque, 2, "opaque object: allocator called %d times in all", after_opaque);
  cr_expect_eq(opaque_type, kTVMFFIOpaquePyObject);
  cr_expect_eq(frees, 2, "delete_space calls: expected 2, got %d", frees);
}

/* OBJ-023: an allocator without an allocate function is refused with
 * ValueError naming `allocate`, and the registered one stays. */
TEST(object, OBJ_023_allocator_without_allocate_refused) {
  static TVMFFICustomAllocator broken = {NULL, NULL};
  TVMFFICustomAllocator* def = API(TVMFFIGetCustomAllocator)();
  int rc = API(TVMFFISetCustomAllocator)(&broken);
  TVMFFICustomAllocator* now = API(TVMFFIGetCustomAllocator)();
  API(TVMFFISetCustomAllocator)(NULL);
  cr_expect_eq(rc, -1, "an allocator with allocate == NULL was accepted");
  if (rc == -1) EXPECT_RAISED(.kind = "ValueError", .says = {"allocate"});
  cr_expect_eq(now, def, "the registered allocator changed");
}

static void noop_handle_delete(void* handle) { (void)handle; }

static int noop_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)self, (void)args, (void)n, (void)rv;
  return 0;
}

/* OBJ-040: every object made through a custom allocator stays within the
 * size it asked for (a string's NUL included): the guard bytes the
 * counting allocator puts after each block are intact when it comes back. */
TEST(object, OBJ_040_objects_within_their_allocation) {
  static const char text[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQR";
  core_count_begin();
  for (size_t n = 8; n <= 64; ++n) {
    TVMFFIByteArray in = {text, n};
    TVMFFIAny s, b;
    cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
    cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &b), 0);
    core_release(&s);
    core_release(&b);
  }
  TVMFFIObjectHandle opaque = NULL, fn = NULL;
  cr_assert_eq(
      API(TVMFFIObjectCreateOpaque)((void*)0x5, kTVMFFIOpaquePyObject, noop_handle_delete, &opaque),
      0);
  cr_assert_eq(API(TVMFFIFunctionCreate)((void*)0x6, noop_call, NULL, &fn), 0);
  API(TVMFFIObjectDecRef)(opaque);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIErrorSetRaisedFromCStr)("RuntimeError", "an error made while counting");
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"while counting"});
  core_count_end("strings, bytes, an opaque object, a function and an error");
}

/* OBJ-051: the header of an object the API makes has its 4 padding bytes
 * zero, even from an allocator that hands back dirty storage. */
TEST(object, OBJ_051_header_padding_zero) {
  /* Dirty storage where the implementation takes the counting allocator;
   * its own allocator's otherwise. */
  const char* why = NULL;
  int counted = core_count_try_begin(&why);
  if (!counted) {
    /* Dirty the heap: freed blocks of these sizes come back first. */
    void* blocks[16];
    for (int i = 0; i < 16; ++i) {
      blocks[i] = malloc(32 + 16 * (size_t)i);
      if (blocks[i]) memset(blocks[i], 0xCD, 32 + 16 * (size_t)i);
    }
    for (int i = 0; i < 16; ++i) free(blocks[i]);
  }
  TVMFFIByteArray in = {"a heap value long enough to need its own storage", 48};
  TVMFFIAny s, b;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &b), 0);
  TVMFFIObjectHandle opaque = NULL, fn = NULL, err = NULL;
  cr_assert_eq(
      API(TVMFFIObjectCreateOpaque)((void*)0x5, kTVMFFIOpaquePyObject, noop_handle_delete, &opaque),
      0);
  cr_assert_eq(API(TVMFFIFunctionCreate)((void*)0x6, noop_call, NULL, &fn), 0);
  API(TVMFFIErrorSetRaisedFromCStr)("RuntimeError", "an error with a clean header");
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err);
  const TVMFFIObject* made[] = {s.v_obj, b.v_obj, opaque, fn, err};
  static const char* const what[] = {"string", "bytes", "opaque object", "function", "error"};
  for (int i = 0; i < 5; ++i)
    cr_expect_eq(made[i]->__padding, 0u, "%s: padding %#x", what[i], made[i]->__padding);
  core_release(&s);
  core_release(&b);
  API(TVMFFIObjectDecRef)(opaque);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(err);
  if (counted)
    core_count_end("the objects whose headers were read");
  else
    cr_log_info("plain storage: %s", why);
}

static int weak_test_deletes;
static void weak_test_handle_delete(void* handle) {
  (void)handle;
  weak_test_deletes++;
}
static void weak_test_fn_delete(void* self) {
  (void)self;
  weak_test_deletes++;
}

/* Drops a weak reference the way a weak handle does: whoever takes the
 * weak count to zero calls the deleter with the weak flag. */
static void weak_release(TVMFFIObject* obj) {
  if (__atomic_fetch_sub(&obj->combined_ref_count, ONE_WEAK, __ATOMIC_ACQ_REL) == ONE_WEAK)
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
}

/* OBJ-041: for every kind of object the API makes, a weak reference held
 * past the last strong one keeps the storage (and only the storage): the
 * contents are destroyed once at the strong release, the storage given
 * back once at the weak release. */
TEST(object, OBJ_041_weak_reference_outlives_contents) {
  const char* why = "";
  int counting = core_count_try_begin(&why);
  if (!counting) cr_log_info("storage not counted: %s", why);
  TVMFFIByteArray in = {"a heap value for weak references", 32};
  TVMFFIObject* objs[5] = {NULL};
  TVMFFIAny s, b;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &s), 0);
  cr_assert_eq(API(TVMFFIBytesFromByteArray)(&in, &b), 0);
  objs[0] = s.v_obj;
  objs[1] = b.v_obj;
  cr_assert_eq(
      API(TVMFFIObjectCreateOpaque)((void*)0x7, kTVMFFIOpaquePyObject, weak_test_handle_delete,
                                    (TVMFFIObjectHandle*)&objs[2]),
      0);
  cr_assert_eq(API(TVMFFIFunctionCreate)((void*)0x8, noop_call, weak_test_fn_delete,
                                         (TVMFFIObjectHandle*)&objs[3]),
               0);
  API(TVMFFIErrorSetRaisedFromCStr)("KeyError", "an error held weakly");
  API(TVMFFIErrorMoveFromRaised)((TVMFFIObjectHandle*)&objs[4]);
  cr_assert_not_null(objs[4]);
  long live_before = counting ? core_count_live() : 0;
  for (int i = 0; i < 5; ++i) {
    __atomic_fetch_add(&objs[i]->combined_ref_count, ONE_WEAK, __ATOMIC_RELAXED);
    API(TVMFFIObjectDecRef)(objs[i]);
    cr_expect_eq(objs[i]->combined_ref_count, ONE_WEAK,
                 "object %d: count %#llx after the strong release", i,
                 (unsigned long long)objs[i]->combined_ref_count);
  }
  int deletes_at_strong = weak_test_deletes;
  long live_at_strong = counting ? core_count_live() : 0;
  for (int i = 0; i < 5; ++i) weak_release(objs[i]);
  cr_expect_eq(deletes_at_strong, 2, "opaque and function deleters at the strong release: %d",
               deletes_at_strong);
  cr_expect_eq(weak_test_deletes, 2, "deleters after the weak release: %d", weak_test_deletes);
  if (counting) {
    cr_expect_eq(live_at_strong, live_before,
                 "storage given back with a weak reference left: "
                 "%ld objects live, %ld before",
                 live_at_strong, live_before);
    core_count_end("string, bytes, opaque, function and error released through a weak reference");
  }
}

static int refusing_calls;
/* A custom allocator out of memory: it raises, as a failing allocator must,
 * and returns NULL. Raising makes an error object, which must not come
 * back here. */
static void* refusing_allocate(size_t size, size_t alignment, int32_t type_index, void* context) {
  (void)size, (void)alignment, (void)type_index, (void)context;
  if (++refusing_calls > 1) return NULL; /* a nested call: already failing the test */
  conf_api.TVMFFIErrorSetRaisedFromCStr("MemoryError", "the custom allocator is out of memory");
  return NULL;
}
static TVMFFICustomAllocator refusing_allocator = {refusing_allocate, NULL};

/* OBJ-042: when the registered allocator fails (raises an error and
 * returns NULL), the call that needed the object returns -1 with the
 * allocator's own error raised, and the error object that raising makes
 * is not asked of the failing allocator. */
TEST(object, OBJ_042_failing_custom_allocator) {
  const char* why = "";
  if (!core_count_try_begin(&why)) cr_skip_test("%s", why);
  API(TVMFFISetCustomAllocator)(&refusing_allocator);
  TVMFFIByteArray in = {"a heap string the allocator refuses", 35};
  TVMFFIAny out;
  memset(&out, 0xab, sizeof out);
  int rc = API(TVMFFIStringFromByteArray)(&in, &out);
  int calls = refusing_calls;
  API(TVMFFISetCustomAllocator)(NULL);
  cr_expect_eq(rc, -1, "a string the allocator refused: returned %d", rc);
  cr_expect_eq(calls, 1, "allocate called %d times: the raise inside it came back", calls);
  EXPECT_RAISED(.kind = "MemoryError", .says = {"custom allocator is out of memory"});
  cr_expect_eq(out.type_index, kTVMFFINone, "out after the failure: type_index %d", out.type_index);
}

/* OBJ-043: a refused TVMFFIObjectCreateOpaque writes NULL to out. */
TEST(object, OBJ_043_refused_opaque_clears_out) {
  static const int32_t bad[] = {kTVMFFIObject, kTVMFFIStr, 3};
  for (size_t i = 0; i < 3; ++i) {
    TVMFFIObjectHandle obj = (TVMFFIObjectHandle)(uintptr_t)0x1;
    cr_expect_eq(API(TVMFFIObjectCreateOpaque)((void*)0x1, bad[i], NULL, &obj), -1);
    {
      TVMFFIObjectHandle e = core_take_raised();
      if (e) API(TVMFFIObjectDecRef)(e);
    }
    cr_expect_null(obj, "type_index %d: out is %p after the refusal, not NULL", bad[i], obj);
  }
}

/* OBJ-044: the built-in allocate, asked for an alignment above 16, returns
 * NULL or storage aligned as asked; asked for a size no storage can hold
 * (within 16 bytes of SIZE_MAX, or SIZE_MAX / 2), it returns NULL. */
TEST(object, OBJ_044_default_allocator_limits) {
  TVMFFICustomAllocator* a = API(TVMFFIGetCustomAllocator)();
  cr_assert_not_null(a);
  static const size_t aligns[] = {32, 64, 256, 4096};
  for (size_t i = 0; i < 4; ++i) {
    for (int k = 0; k < 8; ++k) {
      char* body = a->allocate(48 + (size_t)k * 8, aligns[i], kTVMFFIStr, a->context);
      if (body == NULL) continue;
      cr_expect_eq((uintptr_t)body % aligns[i], 0u, "body %p not %zu-aligned", (void*)body,
                   aligns[i]);
      memset(body, 0x5a, 48);
      ((TVMFFIObjectAllocHeader*)body)[-1].delete_space(body);
    }
  }
  static const size_t impossible[] = {SIZE_MAX, SIZE_MAX - 8, SIZE_MAX - 16, SIZE_MAX / 2};
  for (size_t i = 0; i < 4; ++i) {
    char* body = a->allocate(impossible[i], 8, kTVMFFIStr, a->context);
    cr_expect_null(body, "a block of %zu bytes was handed out", impossible[i]);
    if (body) ((TVMFFIObjectAllocHeader*)body)[-1].delete_space(body);
  }
}
