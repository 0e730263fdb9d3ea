/* Clauses LST-001 to LST-009 of spec/host.md: lists made and changed in
 * place through the "ffi.List*" global functions, in the layout of
 * upstream's headers (a TVMFFISeqCell whose buffer C++ code built on those
 * headers grows itself), and ffi.ArrayContains. */
#include <stdint.h>
#include <string.h>

#include "alloc_fail.h"
#include "host_support.h"

static TVMFFIAny make_list(int64_t n) {
  TVMFFIAny args[64];
  cr_assert_leq(n, 64);
  for (int64_t i = 0; i < n; ++i) args[i] = core_int(i * 10);
  TVMFFIAny l = host_ok("ffi.List", args, (int32_t)n);
  cr_assert_eq(l.type_index, kTVMFFIList);
  return l;
}

/* The list's elements as ints, read through its cell. */
static int64_t ints_of(TVMFFIAny l, int64_t* out, int64_t max) {
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(l.v_obj);
  for (int64_t i = 0; i < cell->size && i < max; ++i) {
    const TVMFFIAny* v = (const TVMFFIAny*)cell->data + i;
    out[i] = v->type_index == kTVMFFIInt ? v->v_int64 : -999;
  }
  return cell->size;
}

static void expect_ints(TVMFFIAny l, const int64_t* want, int64_t n, const char* what) {
  int64_t got[64];
  int64_t size = ints_of(l, got, 64);
  cr_assert_eq(size, n, "%s: size %lld, expected %lld", what, (long long)size, (long long)n);
  for (int64_t i = 0; i < n; ++i)
    cr_expect_eq(got[i], want[i], "%s: [%lld] is %lld, expected %lld", what, (long long)i,
                 (long long)got[i], (long long)want[i]);
}

static void call3(const char* fn, TVMFFIAny a, TVMFFIAny b, TVMFFIAny c, int n) {
  TVMFFIAny args[3] = {a, b, c}, r = host_ok(fn, args, n);
  core_release(&r);
}

/* LST-001: ffi.List makes a list; its cell holds the elements in order,
 * capacity at least size; ListSize and ListGetItem read it. */
Test(list, LST_001_make_and_read) {
  TVMFFIAny l = make_list(3);
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(l.v_obj);
  cr_expect_geq(cell->capacity, cell->size);
  expect_ints(l, (int64_t[]){0, 10, 20}, 3, "ffi.List(0, 10, 20)");
  cr_expect_eq(host_int_of(host_ok("ffi.ListSize", &l, 1), "size"), 3);
  TVMFFIAny q[2] = {l, core_int(2)};
  cr_expect_eq(host_int_of(host_ok("ffi.ListGetItem", q, 2), "[2]"), 20);
  q[1] = core_int(3);
  host_refused("ffi.ListGetItem", q, 2, "IndexError", NULL);
  q[1] = core_int(-1);
  host_refused("ffi.ListGetItem", q, 2, "IndexError", NULL);
  core_release(&l);
}

/* LST-002: append, insert, set, pop, erase, erase a range, reverse, clear
 * change the list in place as Python's list does. */
Test(list, LST_002_mutations) {
  TVMFFIAny l = make_list(3);
  call3("ffi.ListAppend", l, core_int(30), core_none(), 2);
  call3("ffi.ListInsert", l, core_int(0), core_int(-10), 3);
  call3("ffi.ListInsert", l, core_int(5), core_int(40), 3);
  expect_ints(l, (int64_t[]){-10, 0, 10, 20, 30, 40}, 6, "after inserts");
  call3("ffi.ListSetItem", l, core_int(1), core_int(5), 3);
  TVMFFIAny q[2] = {l, core_int(2)};
  cr_expect_eq(host_int_of(host_ok("ffi.ListPop", q, 2), "pop"), 10);
  call3("ffi.ListErase", l, core_int(0), core_none(), 2);
  expect_ints(l, (int64_t[]){5, 20, 30, 40}, 4, "after pop and erase");
  call3("ffi.ListEraseRange", l, core_int(1), core_int(3), 3);
  expect_ints(l, (int64_t[]){5, 40}, 2, "after erasing [1, 3)");
  host_ok("ffi.ListReverse", &l, 1);
  expect_ints(l, (int64_t[]){40, 5}, 2, "reversed");
  host_ok("ffi.ListClear", &l, 1);
  expect_ints(l, NULL, 0, "cleared");
  TVMFFIAny bad[3] = {l, core_int(1), core_int(0)};
  host_refused("ffi.ListInsert", bad, 3, "IndexError", NULL);
  core_release(&l);
}

/* LST-002: ranges as Python slices take them: a long range erased whole
 * (the later elements moved down in order), an empty range anywhere a
 * no-op, a range reversed or past the end an IndexError; lists of odd and
 * even length reversed; a list grown by single appends past its
 * capacity keeps every element. */
Test(list, LST_002_ranges) {
  TVMFFIAny l = make_list(50);
  call3("ffi.ListEraseRange", l, core_int(3), core_int(45), 3);
  expect_ints(l, (int64_t[]){0, 10, 20, 450, 460, 470, 480, 490}, 8, "after erasing [3, 45)");
  call3("ffi.ListEraseRange", l, core_int(5), core_int(5), 3);
  expect_ints(l, (int64_t[]){0, 10, 20, 450, 460, 470, 480, 490}, 8, "after erasing [5, 5)");
  static const int64_t bad[][2] = {{2, 1}, {-1, 2}, {0, 9}, {8, 9}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    TVMFFIAny q[3] = {l, core_int(bad[i][0]), core_int(bad[i][1])};
    host_refused("ffi.ListEraseRange", q, 3, "IndexError", NULL);
  }
  call3("ffi.ListEraseRange", l, core_int(0), core_int(3), 3);
  host_ok("ffi.ListReverse", &l, 1);
  expect_ints(l, (int64_t[]){490, 480, 470, 460, 450}, 5, "odd length reversed");
  call3("ffi.ListErase", l, core_int(4), core_none(), 2);
  host_ok("ffi.ListReverse", &l, 1);
  expect_ints(l, (int64_t[]){460, 470, 480, 490}, 4, "even length reversed");
  TVMFFIAny q[2] = {l, core_int(3)};
  cr_expect_eq(host_int_of(host_ok("ffi.ListPop", q, 2), "pop of the last"), 490);
  expect_ints(l, (int64_t[]){460, 470, 480}, 3, "after popping the last");
  host_ok("ffi.ListClear", &l, 1);
  int64_t want[40];
  for (int64_t i = 0; i < 40; ++i) {
    call3("ffi.ListAppend", l, core_int(i), core_none(), 2);
    want[i] = i;
  }
  expect_ints(l, want, 40, "40 appends");
  call3("ffi.ListInsert", l, core_int(40), core_int(40), 3);
  TVMFFIAny at[2] = {l, core_int(39)};
  cr_expect_eq(host_int_of(host_ok("ffi.ListGetItem", at, 2), "[39]"), 39);
  at[1] = core_int(40);
  cr_expect_eq(host_int_of(host_ok("ffi.ListGetItem", at, 2), "[40]"), 40);
  core_release(&l);
}

/* LST-002: an index outside the list is an IndexError for ListSetItem,
 * ListPop and ListErase (the list unchanged), and for ListInsert below 0
 * or past the end; a reservation below the size changes nothing. */
Test(list, LST_002_index_refusals) {
  TVMFFIAny l = make_list(3), empty = make_list(0);
  static const char* const fns[] = {"ffi.ListSetItem", "ffi.ListPop", "ffi.ListErase",
                                    "ffi.ListInsert"};
  static const int32_t arity[] = {3, 2, 2, 3};
  static const int64_t bad[] = {3, -1, 100};
  for (int f = 0; f < 4; ++f)
    for (int b = 0; b < 3; ++b) {
      if (f == 3 && bad[b] == 3) continue; /* inserting at the end is fine */
      TVMFFIAny q[3] = {l, core_int(bad[b]), core_int(5)};
      host_refused(fns[f], q, arity[f], "IndexError", NULL);
      expect_ints(l, (int64_t[]){0, 10, 20}, 3, fns[f]);
    }
  TVMFFIAny q[2] = {empty, core_int(0)};
  host_refused("ffi.ListPop", q, 2, "IndexError", NULL);
  q[0] = l;
  q[1] = core_int(1);
  host_ok("ffi.ListReserve", q, 2);
  expect_ints(l, (int64_t[]){0, 10, 20}, 3, "after reserving 1");
  cr_expect_geq(TVMFFISeqGetCellPtr(l.v_obj)->capacity, 3);
  core_release(&l);
  core_release(&empty);
}

/* LST-003: ListReplaceSlice puts another list's elements in place of a
 * range, also when the other list is the list itself. */
Test(list, LST_003_replace_slice) {
  TVMFFIAny l = make_list(4), r = make_list(2);
  TVMFFIAny args[4] = {l, core_int(1), core_int(3), r};
  host_ok("ffi.ListReplaceSlice", args, 4);
  expect_ints(l, (int64_t[]){0, 0, 10, 30}, 4, "[1:3] = [0, 10]");
  args[1] = core_int(0);
  args[2] = core_int(1);
  args[3] = l;
  host_ok("ffi.ListReplaceSlice", args, 4);
  expect_ints(l, (int64_t[]){0, 0, 10, 30, 0, 10, 30}, 7, "[0:1] = itself");
  core_release(&r);
  core_release(&l);
}

/* LST-003: a replacement longer or shorter than the range grows or
 * shrinks the list; an empty one erases the range. */
Test(list, LST_003_replace_slice_lengths) {
  TVMFFIAny l = make_list(5), longer = make_list(3), empty = make_list(0);
  TVMFFIAny args[4] = {l, core_int(1), core_int(2), longer};
  host_ok("ffi.ListReplaceSlice", args, 4);
  expect_ints(l, (int64_t[]){0, 0, 10, 20, 20, 30, 40}, 7, "[1:2] = [0, 10, 20]");
  args[1] = core_int(2);
  args[2] = core_int(6);
  args[3] = empty;
  host_ok("ffi.ListReplaceSlice", args, 4);
  expect_ints(l, (int64_t[]){0, 0, 40}, 3, "[2:6] = []");
  args[1] = core_int(3);
  args[2] = core_int(3);
  args[3] = longer;
  host_ok("ffi.ListReplaceSlice", args, 4);
  expect_ints(l, (int64_t[]){0, 0, 40, 0, 10, 20}, 6, "[3:3] = [0, 10, 20]");
  args[1] = core_int(5);
  args[2] = core_int(7);
  host_refused("ffi.ListReplaceSlice", args, 4, "IndexError", NULL);
  expect_ints(l, (int64_t[]){0, 0, 40, 0, 10, 20}, 6, "after a refused replacement");
  for (TVMFFIAny *v = (TVMFFIAny[]){l, longer, empty}, *end = v + 3; v < end; ++v) core_release(v);
}

/* LST-004: ListContains and ArrayContains compare as map keys do (text by
 * content, an int never equal to a bool). */
Test(list, LST_004_contains) {
  TVMFFIAny s = host_str("a-long-enough-string"), args[2] = {core_int(1), s};
  TVMFFIAny l = host_ok("ffi.List", args, 2), a = host_ok("ffi.Array", args, 2);
  const char* fns[2] = {"ffi.ListContains", "ffi.ArrayContains"};
  TVMFFIAny seqs[2] = {l, a};
  for (int k = 0; k < 2; ++k) {
    TVMFFIAny q[2] = {seqs[k], core_c_str("a-long-enough-string")};
    TVMFFIAny r = host_ok(fns[k], q, 2);
    cr_expect(r.type_index == kTVMFFIBool && r.v_int64 == 1, "%s: a C string of the content",
              fns[k]);
    q[1] = core_bool(1);
    r = host_ok(fns[k], q, 2);
    cr_expect(r.type_index == kTVMFFIBool && r.v_int64 == 0, "%s: true found as 1", fns[k]);
    q[1] = core_int(1);
    r = host_ok(fns[k], q, 2);
    cr_expect(r.v_int64 == 1, "%s: 1 not found", fns[k]);
  }
  for (TVMFFIAny *v = (TVMFFIAny[]){s, l, a}, *end = v + 3; v < end; ++v) core_release(v);
}

/* LST-005: C++ code built on upstream's headers appends 100 elements to a
 * list the runtime made (growing its buffer in place), and the runtime
 * reads them; the runtime appends to a list C++ made. */
Test(list, LST_005_shared_with_cpp) {
  TVMFFIAny l = make_list(2), args[2] = {l, core_int(100)};
  host_interop("list_push_range", args, 2);
  cr_expect_eq(host_int_of(host_ok("ffi.ListSize", &l, 1), "size"), 102);
  TVMFFIAny q[2] = {l, core_int(101)};
  cr_expect_eq(host_int_of(host_ok("ffi.ListGetItem", q, 2), "[101]"), 990);
  core_release(&l);
  TVMFFIAny n = core_int(3), c = host_interop("list_make_range", &n, 1);
  for (int i = 0; i < 40; ++i) call3("ffi.ListAppend", c, core_int(i), core_none(), 2);
  cr_expect_eq(host_int_of(host_ok("ffi.ListSize", &c, 1), "size"), 43);
  q[0] = c;
  q[1] = core_int(42);
  cr_expect_eq(host_int_of(host_ok("ffi.ListGetItem", q, 2), "[42]"), 39);
  core_release(&c);
}

/* LST-006: a list holds a reference to each object element and gives it
 * back when the element leaves (set, erase, clear) or the list goes. */
Test(list, LST_006_owned_elements) {
  TVMFFIAny obj = host_ok("ffi.Array", NULL, 0);
  uint32_t base = core_strong(obj.v_obj);
  TVMFFIAny l = host_ok("ffi.List", &obj, 1);
  call3("ffi.ListAppend", l, obj, core_none(), 2);
  cr_expect_eq(core_strong(obj.v_obj), base + 2);
  call3("ffi.ListSetItem", l, core_int(0), core_int(1), 3);
  cr_expect_eq(core_strong(obj.v_obj), base + 1);
  host_ok("ffi.ListClear", &l, 1);
  cr_expect_eq(core_strong(obj.v_obj), base);
  call3("ffi.ListAppend", l, obj, core_none(), 2);
  core_release(&l);
  cr_expect_eq(core_strong(obj.v_obj), base);
  core_release(&obj);
}

/* LST-007: the list functions refuse what is not a list (TypeError). */
Test(list, LST_007_refusals) {
  TVMFFIAny a = host_ok("ffi.Array", NULL, 0), q[2] = {a, core_int(0)};
  host_refused("ffi.ListSize", &a, 1, "TypeError", NULL);
  host_refused("ffi.ListGetItem", q, 2, "TypeError", NULL);
  q[0] = core_int(3);
  host_refused("ffi.ListSize", q, 1, "TypeError", NULL);
  core_release(&a);
}

/* LST-007: the list functions that only read refuse an array in place
 * of the list (upstream turns an array into a new list for the functions
 * that change one, so those are not held to a refusal). */
Test(list, LST_007_readers_refuse_an_array) {
  static const struct {
    const char* name;
    int32_t arity;
  } fns[] = {{"ffi.ListSize", 1}, {"ffi.ListGetItem", 2}, {"ffi.ListContains", 2}};
  TVMFFIAny a = host_ok("ffi.Array", NULL, 0), l = make_list(2);
  for (size_t i = 0; i < sizeof fns / sizeof *fns; ++i) {
    TVMFFIAny args[2] = {a, core_int(0)};
    host_refused(fns[i].name, args, fns[i].arity, "TypeError", NULL);
  }
  core_release(&a);
  core_release(&l);
}

/* LST-008: ListReserve makes room without changing the content. */
Test(list, LST_008_reserve) {
  TVMFFIAny l = make_list(2), q[2] = {l, core_int(100)};
  host_ok("ffi.ListReserve", q, 2);
  cr_expect_geq(TVMFFISeqGetCellPtr(l.v_obj)->capacity, 100);
  expect_ints(l, (int64_t[]){0, 10}, 2, "reserved");
  core_release(&l);
}

/* LST-009: popping and erasing inside a full list (size equal to its
 * capacity) moves the later elements down without writing past the
 * buffer. */
Test(list, LST_009_removal_stays_in_the_buffer) {
  conf_alloc_guard(1);
  long before = conf_alloc_overruns();
  static const char* const fns[] = {"ffi.ListPop", "ffi.ListErase"};
  for (int k = 0; k < 2; ++k) {
    TVMFFIAny l = make_list(4);
    const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(l.v_obj);
    while (cell->size < cell->capacity) call3("ffi.ListAppend", l, core_int(cell->size), l, 2);
    int64_t want[64], n = ints_of(l, want, 64);
    cr_assert_eq(n, cell->size, "more than 64 elements");
    TVMFFIAny at[2] = {l, core_int(1)}, out = host_ok(fns[k], at, 2);
    core_release(&out);
    memmove(&want[1], &want[2], (size_t)(n - 2) * sizeof *want);
    expect_ints(l, want, n - 1, fns[k]);
    core_release(&l);
  }
  conf_alloc_guard(0);
  cr_expect_eq(conf_alloc_overruns(), before, "a removal wrote past the list's buffer");
}
