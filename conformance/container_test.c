/* Clauses of spec/containers.md: Shape and Array objects made, passed and
 * read across the ABI through the global functions that build them. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc_fail.h"
#include "core_support.h"

/* Calls the global `name`; returns its status, the result in *result. */
static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObjectHandle fn = core_global(name, 1);
  memset(result, 0, sizeof *result);
  int rc = API(TVMFFIFunctionCall)(fn, args, n, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

static TVMFFISeqCell seq_cell(const TVMFFIAny* arr) {
  TVMFFISeqCell cell;
  memcpy(&cell, (const char*)arr->v_obj + sizeof(TVMFFIObject), sizeof cell);
  return cell;
}

/* SHP-001: "ffi.Shape" called with int arguments returns an ffi.Shape whose
 * TVMFFIShapeCell (right after the header) holds the extents in order; with
 * no arguments the shape is empty. */
TEST(container, SHP_001_shape_from_ints) {
  TVMFFIAny args[3] = {core_int(2), core_int(-3), core_int(1LL << 40)}, out;
  cr_assert_eq(call("ffi.Shape", args, 3, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIShape, "type_index %d", out.type_index);
  cr_expect_eq(out.v_obj->type_index, kTVMFFIShape);
  TVMFFIShapeCell cell;
  memcpy(&cell, (char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
  cr_assert_eq(cell.size, 3u);
  cr_expect_eq(cell.data[0], 2);
  cr_expect_eq(cell.data[1], -3);
  cr_expect_eq(cell.data[2], 1LL << 40);
  cr_expect_eq(core_strong(out.v_obj), 1u);
  core_release(&out);
  cr_assert_eq(call("ffi.Shape", args, 0, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIShape);
  memcpy(&cell, (char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
  cr_expect_eq(cell.size, 0u);
  core_release(&out);
}

/* SHP-002: a non-integer argument (float, string) is refused: -1 and a
 * ValueError that says the shape takes int arguments. */
TEST(container, SHP_002_non_int_refused) {
  TVMFFIAny args[2] = {core_int(1), core_int(0)}, out;
  args[1].type_index = kTVMFFIFloat;
  args[1].v_float64 = 2.0;
  cr_expect_eq(call("ffi.Shape", args, 2, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"int arguments"});
  args[1].type_index = kTVMFFIRawStr;
  args[1].v_c_str = "3";
  cr_expect_eq(call("ffi.Shape", args, 2, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"int arguments"});
  /* None has the type index below both int and bool: not an int either. */
  args[1].type_index = kTVMFFINone;
  args[1].v_int64 = 0;
  cr_expect_eq(call("ffi.Shape", args, 2, &out), -1, "a None extent accepted");
  EXPECT_RAISED(.kind = "ValueError", .says = {"int arguments"});
}

/* SHP-003: a shape passed as an argument keeps its identity: the array
 * built from it holds the same object, one reference more. */
TEST(container, SHP_003_shape_passes_by_reference) {
  TVMFFIAny dims[2] = {core_int(4), core_int(5)}, shape, arr;
  cr_assert_eq(call("ffi.Shape", dims, 2, &shape), 0);
  TVMFFIAny arg = core_obj(shape.v_obj);
  cr_assert_eq(call("ffi.Array", &arg, 1, &arr), 0);
  TVMFFISeqCell cell = seq_cell(&arr);
  const TVMFFIAny* elems = cell.data;
  cr_expect_eq(elems[0].type_index, kTVMFFIShape);
  cr_expect_eq(elems[0].v_obj, shape.v_obj);
  cr_expect_eq(core_strong(shape.v_obj), 2u);
  core_release(&arr);
  cr_expect_eq(core_strong(shape.v_obj), 1u);
  core_release(&shape);
}

/* SHP-004: a bool argument counts as an int: true is 1, false 0. */
TEST(container, SHP_004_bool_extent_is_int) {
  TVMFFIAny args[3] = {core_int(1), core_int(0), core_int(7)}, out;
  args[0].type_index = kTVMFFIBool;
  args[1].type_index = kTVMFFIBool;
  cr_assert_eq(call("ffi.Shape", args, 3, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIShape);
  TVMFFIShapeCell cell;
  memcpy(&cell, (char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
  cr_assert_eq(cell.size, 3u);
  cr_expect_eq(cell.data[0], 1);
  cr_expect_eq(cell.data[1], 0);
  cr_expect_eq(cell.data[2], 7);
  core_release(&out);
}

/* SHP-005: a negative argument count, or one past any bound (INT32_MAX
 * with one argument really there), is refused with ValueError, reading
 * no argument. */
TEST(container, SHP_005_argument_count_out_of_range) {
  HOSTILE_INPUT("an implementation may read INT32_MAX arguments");
  TVMFFIAny one = core_int(3), out;
  cr_expect_eq(call("ffi.Shape", &one, -1, &out), -1, "num_args -1 accepted");
  EXPECT_RAISED(.kind = "ValueError", .says = {"num_args"});
  cr_expect_eq(call("ffi.Shape", &one, INT32_MAX, &out), -1, "num_args INT32_MAX accepted");
  EXPECT_RAISED(.kind = "ValueError", .says = {"num_args"});
}

/* SHP-006: "ffi.Shape" with any one allocation failing, or every one from
 * some point on, returns 0 and the shape or -1 with MemoryError, and
 * works right after. */
TEST(container, SHP_006_shape_allocation_failure) {
  conf_alloc_require();
  TVMFFIObjectHandle fn = core_global("ffi.Shape", 1);
  TVMFFIAny args[3] = {core_int(2), core_int(3), core_int(4)};
  long points = 0;
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIAny out;
      memset(&out, 0, sizeof out);
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIFunctionCall(fn, args, 3, &out);
      conf_alloc_disarm(&w);
      if (rc == 0) {
        cr_assert_eq(out.type_index, kTVMFFIShape,
                     "allocation %ld failed: returned 0 with type "
                     "index %d",
                     w.n, out.type_index);
        TVMFFIShapeCell cell;
        memcpy(&cell, (char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
        cr_assert(cell.size == 3 && cell.data[2] == 4, "allocation %ld failed: a wrong shape", w.n);
        core_release(&out);
        core_take_raised();
      } else {
        cr_assert_eq(rc, -1, "allocation %ld failed: returned %d", w.n, rc);
        EXPECT_RAISED(.kind = "MemoryError");
      }
      cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 3, &out), 0,
                   "right after allocation %ld "
                   "failed: the call fails",
                   w.n);
      core_release(&out);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  conf_alloc_done(points, "ffi.Shape");
}

/* SHP-007: the ValueError of a non-int argument names its position. */
TEST(container, SHP_007_refusal_names_position) {
  TVMFFIAny args[3] = {core_int(1), core_int(2), core_int(3)}, out;
  args[2].type_index = kTVMFFIFloat;
  args[2].v_float64 = 2.5;
  cr_expect_eq(call("ffi.Shape", args, 3, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"argument #2"});
}

/* The first occurrence of `part` in [at, end); a part made of digits only
 * counts where no other digit touches it (a whole number). */
static const char* shp_find(const char* at, const char* end, const char* part) {
  size_t n = strlen(part);
  int number = strspn(part, "0123456789") == n;
  for (const char* hit = memmem(at, (size_t)(end - at), part, n); hit != NULL;
       hit = memmem(hit + 1, (size_t)(end - hit - 1), part, n)) {
    int glued = number && ((hit > at && hit[-1] >= '0' && hit[-1] <= '9') ||
                           (hit + n < end && hit[n] >= '0' && hit[n] <= '9'));
    if (!glued) return hit;
  }
  return NULL;
}

/* Moves the raised error out: a ValueError whose message holds each of
 * `parts` (up to a NULL) in that order. */
static void shp_expect_in_order(const char* const* parts) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1, "nothing raised");
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  TVMFFIByteArray m = cell->message;
  cr_expect(cell->kind.size == 10 && memcmp(cell->kind.data, "ValueError", 10) == 0,
            "error kind %.*s", (int)cell->kind.size, cell->kind.data);
  const char* at = m.data;
  for (size_t i = 0; parts[i] != NULL; ++i) {
    const char* hit = shp_find(at, m.data + m.size, parts[i]);
    cr_expect(hit != NULL, "message lacks \"%s\" after what came before: %.*s", parts[i],
              (int)m.size, m.data);
    if (hit == NULL) break;
    at = hit + strlen(parts[i]);
  }
  API(TVMFFIObjectDecRef)(err);
}

/* SHP-021: the refusal of SHP-005 names "ffi.Shape", then num_args, then
 * the count it was given. */
TEST(container, SHP_021_count_refusal_names_function_then_count) {
  HOSTILE_INPUT("an implementation may read INT32_MAX arguments");
  TVMFFIAny one = core_int(3), out;
  static const char* const negative[] = {"ffi.Shape", "num_args", "-7", NULL};
  static const char* const huge[] = {"ffi.Shape", "num_args", "2147483647", NULL};
  cr_expect_eq(call("ffi.Shape", &one, -7, &out), -1, "num_args -7 accepted");
  shp_expect_in_order(negative);
  cr_expect_eq(call("ffi.Shape", &one, INT32_MAX, &out), -1, "num_args INT32_MAX accepted");
  shp_expect_in_order(huge);
}

/* SHP-022: the refusal of SHP-002 names "ffi.Shape", then the refused
 * argument's position, then what it should have been (an int extent),
 * then the type index it had. */
TEST(container, SHP_022_extent_refusal_names_function_position_type) {
  TVMFFIAny args[4] = {core_int(1), core_int(2), core_int(3), core_int(4)}, out;
  args[3].type_index = kTVMFFIFloat;
  args[3].v_float64 = 2.5;
  static const char* const parts[] = {"ffi.Shape", "argument #3", "extent", "int", "3", NULL};
  cr_expect_eq(call("ffi.Shape", args, 4, &out), -1);
  shp_expect_in_order(parts);
  /* The first argument is checked like any other. */
  TVMFFIAny first[2] = {core_int(1), core_int(2)};
  first[0].type_index = kTVMFFIFloat;
  first[0].v_float64 = 0.5;
  static const char* const first_parts[] = {"ffi.Shape", "argument #0", "extent", "int", NULL};
  cr_expect_eq(call("ffi.Shape", first, 2, &out), -1, "a float first extent accepted");
  shp_expect_in_order(first_parts);
}

/* SHP-023: "ffi.Shape" reads its num_args arguments and nothing around
 * them: with the arguments right after, or right before, memory that
 * cannot be read, the call works and gives those extents. */
TEST(container, SHP_023_reads_only_its_arguments) {
  long page = sysconf(_SC_PAGESIZE);
  char* map = mmap(NULL, (size_t)page * 3, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(map, MAP_FAILED);
  cr_assert_eq(mprotect(map + page, (size_t)page, PROT_READ | PROT_WRITE), 0);
  enum { N = 5 };
  TVMFFIAny* at_start = (TVMFFIAny*)(map + page);
  TVMFFIAny* at_end = (TVMFFIAny*)(map + 2 * page) - N;
  TVMFFIAny* placements[2] = {at_start, at_end};
  for (int k = 0; k < 2; ++k) {
    TVMFFIAny* args = placements[k];
    for (int i = 0; i < N; ++i) args[i] = core_int(100 + i);
    TVMFFIAny out;
    cr_assert_eq(call("ffi.Shape", args, N, &out), 0, "placement %d: the call failed", k);
    TVMFFIShapeCell cell;
    memcpy(&cell, (char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
    cr_expect_eq(cell.size, (size_t)N, "placement %d", k);
    for (int i = 0; i < N && cell.size == (size_t)N; ++i)
      cr_expect_eq(cell.data[i], 100 + i, "placement %d: extent %d", k, i);
    core_release(&out);
  }
  munmap(map, (size_t)page * 3);
}

/* ARR-001: "ffi.Array" returns an ffi.Array whose TVMFFISeqCell (right after
 * the header) has size = number of arguments, capacity >= size, and data
 * pointing at that many TVMFFIAny elements; no arguments give size 0. */
TEST(container, ARR_001_array_layout) {
  TVMFFIAny args[3] = {core_int(10), core_int(20), core_int(30)}, out;
  cr_assert_eq(call("ffi.Array", args, 3, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIArray, "type_index %d", out.type_index);
  TVMFFISeqCell cell = seq_cell(&out);
  cr_assert_eq(cell.size, 3);
  cr_expect_geq(cell.capacity, 3);
  cr_assert_not_null(cell.data);
  const TVMFFIAny* elems = cell.data;
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(elems[i].type_index, kTVMFFIInt);
    cr_expect_eq(elems[i].v_int64, 10 * (i + 1));
  }
  core_release(&out);
  cr_assert_eq(call("ffi.Array", args, 0, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIArray);
  cr_expect_eq(seq_cell(&out).size, 0);
  core_release(&out);
}

/* ARR-002: elements are the owned forms of the argument views (as
 * TVMFFIAnyViewToOwnedAny makes them): inline values copied, a const char*
 * turned into a string, an object shared with one more reference. */
TEST(container, ARR_002_elements_are_owned) {
  TVMFFIByteArray in = {"shared heap string", 18};
  TVMFFIAny str, out;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &str), 0);
  TVMFFIAny args[4] = {core_int(7), core_int(0), core_obj(str.v_obj), core_int(0)};
  args[1].type_index = kTVMFFIRawStr;
  args[1].v_c_str = "a raw C string here";
  args[3].type_index = kTVMFFINone;
  cr_assert_eq(call("ffi.Array", args, 4, &out), 0);
  const TVMFFIAny* elems = seq_cell(&out).data;
  cr_expect_eq(elems[0].type_index, kTVMFFIInt);
  cr_expect_eq(elems[0].v_int64, 7);
  cr_expect_eq(elems[1].type_index, kTVMFFIStr, "const char* element: type_index %d",
               elems[1].type_index);
  TVMFFIByteArray b = core_str_bytes(&elems[1]);
  cr_expect(b.size == 19 && memcmp(b.data, "a raw C string here", 19) == 0);
  cr_expect_neq(b.data, args[1].v_c_str, "the element must own a copy");
  cr_expect_eq(elems[2].v_obj, str.v_obj);
  cr_expect_eq(core_strong(str.v_obj), 2u);
  cr_expect_eq(elems[3].type_index, kTVMFFINone);
  core_release(&out);
  cr_expect_eq(core_strong(str.v_obj), 1u, "releasing the array must release its elements");
  core_release(&str);
}

/* ARR-003: "ffi.ArraySize" returns the size as an int, and
 * "ffi.ArrayGetItem" the element at an index as an owned value. */
TEST(container, ARR_003_size_and_get_item) {
  TVMFFIAny args[3] = {core_int(5), core_int(6), core_int(0)}, arr, out;
  args[2].type_index = kTVMFFIRawStr;
  args[2].v_c_str = "third element!";
  cr_assert_eq(call("ffi.Array", args, 3, &arr), 0);
  TVMFFIAny q[2] = {arr, core_int(1)};
  cr_assert_eq(call("ffi.ArraySize", q, 1, &out), 0);
  cr_expect_eq(out.type_index, kTVMFFIInt);
  cr_expect_eq(out.v_int64, 3);
  cr_assert_eq(call("ffi.ArrayGetItem", q, 2, &out), 0);
  cr_expect_eq(out.type_index, kTVMFFIInt);
  cr_expect_eq(out.v_int64, 6);
  q[1].v_int64 = 2;
  cr_assert_eq(call("ffi.ArrayGetItem", q, 2, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIStr);
  const TVMFFIAny* elems = seq_cell(&arr).data;
  cr_expect_eq(out.v_obj, elems[2].v_obj, "the item is the element itself, shared");
  cr_expect_eq(core_strong(out.v_obj), 2u);
  core_release(&out);
  core_release(&arr);
}

/* ARR-004: an index outside [0, size) is refused: -1 and an IndexError
 * saying it is out of bounds. */
TEST(container, ARR_004_index_out_of_bounds) {
  TVMFFIAny args[2] = {core_int(1), core_int(2)}, arr, out;
  cr_assert_eq(call("ffi.Array", args, 2, &arr), 0);
  static const int64_t bad[] = {2, -1, 1LL << 40};
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny q[2] = {arr, core_int(bad[i])};
    cr_expect_eq(call("ffi.ArrayGetItem", q, 2, &out), -1, "index %lld accepted",
                 (long long)bad[i]);
    EXPECT_RAISED(.kind = "IndexError", .says = {"out of bounds"});
  }
  core_release(&arr);
}

/* ARR-005: a non-array argument or a wrong argument count is refused with
 * -1 and a TypeError. */
TEST(container, ARR_005_wrong_arguments_refused) {
  TVMFFIAny q[2] = {core_int(3), core_int(0)}, out;
  cr_expect_eq(call("ffi.ArraySize", q, 1, &out), -1);
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_eq(call("ffi.ArraySize", q, 0, &out), -1);
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_eq(call("ffi.ArrayGetItem", q, 2, &out), -1);
  EXPECT_RAISED(.kind = "TypeError");
}

/* ARR-006: an array whose making fails part way (an argument that cannot
 * be owned: a moved rvalue reference after an object argument) returns -1
 * with the conversion's error, and gives back the references it took for
 * the elements made so far. */
TEST(container, ARR_006_failed_array_releases_elements) {
  TVMFFIByteArray in = {"an element made before the failure", 34};
  TVMFFIAny str, out;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&in, &str), 0);
  TVMFFIObject* moved = NULL;
  TVMFFIAny args[3] = {core_int(1), core_obj(str.v_obj), core_int(0)};
  args[2].type_index = kTVMFFIObjectRValueRef;
  args[2].v_ptr = &moved;
  cr_expect_eq(call("ffi.Array", args, 3, &out), -1, "an array with a moved rvalue was made");
  EXPECT_RAISED(.says = {"already moved"});
  cr_expect_eq(core_strong(str.v_obj), 1u, "the string element kept %u references",
               core_strong(str.v_obj));
  core_release(&str);
}

/* ARR-007: arrays and their elements leave nothing allocated once the last
 * reference goes, and lie within the storage they were allocated with;
 * an item taken out keeps its element alive after the array goes. */
TEST(container, ARR_007_arrays_freed) {
  TVMFFIObjectHandle fn = core_global("ffi.Array", 1);
  TVMFFIObjectHandle get = core_global("ffi.ArrayGetItem", 1);
  core_count_begin();
  TVMFFIAny args[24];
  for (int n = 0; n <= 24; ++n) {
    for (int i = 0; i < n; ++i) {
      args[i] = core_int(i);
      if (i % 3 == 1) {
        args[i].type_index = kTVMFFIRawStr;
        args[i].v_c_str = "an element long enough for the heap";
      }
    }
    TVMFFIAny arr;
    memset(&arr, 0, sizeof arr);
    cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, n, &arr), 0, "%d elements", n);
    cr_assert_eq(arr.type_index, kTVMFFIArray);
    TVMFFISeqCell cell = seq_cell(&arr);
    cr_expect(cell.size == n && cell.capacity >= n, "%d elements: size %lld, capacity %lld", n,
              (long long)cell.size, (long long)cell.capacity);
    if (n == 24) {
      TVMFFIAny q[2] = {arr, core_int(22)}, item;
      memset(&item, 0, sizeof item);
      cr_assert_eq(API(TVMFFIFunctionCall)(get, q, 2, &item), 0);
      core_release(&arr);
      TVMFFIByteArray b = core_str_bytes(&item);
      cr_expect(b.size == 35 && memcmp(b.data, "an element long enough for the heap", 35) == 0,
                "the item outlived its array badly");
      core_release(&item);
    } else {
      core_release(&arr);
    }
  }
  core_count_end("arrays of 0 to 24 elements made and released");
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(get);
}

/* ARR-008: "ffi.Array" called with a negative num_args returns -1 with a
 * ValueError, reading no argument. */
TEST(container, ARR_008_negative_count_refused) {
  HOSTILE_INPUT("a negative argument count is used as a size");
  TVMFFIAny args[1] = {core_int(1)}, out;
  cr_expect_eq(call("ffi.Array", args, -1, &out), -1);
  EXPECT_RAISED(.kind = "ValueError");
  cr_expect_eq(call("ffi.Array", args, INT32_MIN, &out), -1);
  EXPECT_RAISED(.kind = "ValueError");
}

/* ARR-009: the globals that make and read shapes and arrays are
 * registered: "ffi.Shape", "ffi.Array", "ffi.ArraySize" and
 * "ffi.ArrayGetItem" are found by TVMFFIFunctionGetGlobal. */
TEST(container, ARR_009_container_globals_registered) {
  static const char* names[] = {"ffi.Shape", "ffi.Array", "ffi.ArraySize", "ffi.ArrayGetItem"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIByteArray n = {names[i], strlen(names[i])};
    TVMFFIObjectHandle fn = NULL;
    cr_expect_eq(API(TVMFFIFunctionGetGlobal)(&n, &fn), 0);
    cr_expect_not_null(fn, "the global function %s is not registered", names[i]);
    if (fn) {
      cr_expect_eq(TVMFFIObjectGetTypeIndex(fn), kTVMFFIFunction);
      API(TVMFFIObjectDecRef)(fn);
    }
  }
}

/* SHP-020: shapes of 0 to 24 extents hold exactly their arguments, lie
 * within the storage they were allocated with and leave nothing allocated
 * once released (counted through TVMFFISetCustomAllocator). */
TEST(container, SHP_020_shapes_freed_within_storage) {
  TVMFFIAny args[32];
  for (int i = 0; i < 32; ++i) args[i] = core_int(1000 + i);
  core_count_begin();
  for (int n = 0; n <= 24; ++n) {
    TVMFFIAny out;
    memset(&out, 0, sizeof out);
    cr_assert_eq(call("ffi.Shape", args, n, &out), 0, "%d extents", n);
    cr_assert_eq(out.type_index, kTVMFFIShape);
    TVMFFIShapeCell cell;
    memcpy(&cell, (char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
    cr_expect_eq(cell.size, (size_t)n);
    for (int i = 0; i < n && i < (int)cell.size; ++i)
      cr_expect_eq(cell.data[i], 1000 + i, "%d extents: extent %d", n, i);
    core_release(&out);
  }
  core_count_end("shapes of 0 to 24 extents made and released");
}
