/* Clauses of spec/errors.md and spec/object.md on how error objects are
 * allocated: sizes no allocation can hold, and a registered custom
 * allocator, failing or not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fail.h"
#include "core_support.h"

static int bytes_are(TVMFFIByteArray got, const char* want) {
  return got.size == strlen(want) && memcmp(got.data, want, got.size) == 0;
}

static const TVMFFIErrorCell* cell_of(TVMFFIObjectHandle err) { return conf_error_cell(err); }

/* ERR-058: TVMFFIErrorCreate given a kind or a message whose size no
 * allocation can hold (SIZE_MAX - 8, over a 16-byte buffer) returns -1,
 * reading none of it. */
TEST(err_alloc, ERR_058_create_refuses_impossible_sizes) {
  HOSTILE_INPUT("sizes near SIZE_MAX");
  static const char buf[16] = "0123456789abcde";
  TVMFFIByteArray small = {buf, 4}, huge = {buf, SIZE_MAX - 8}, empty = {"", 0};
  for (int which = 0; which < 2; ++which) {
    TVMFFIObjectHandle out = (TVMFFIObjectHandle)(uintptr_t)0x1;
    int rc = which == 0 ? API(TVMFFIErrorCreate)(&huge, &small, &empty, &out)
                        : API(TVMFFIErrorCreate)(&small, &huge, &empty, &out);
    cr_assert_eq(rc, -1, "TVMFFIErrorCreate with a %s of %zu bytes returned %d",
                 which == 0 ? "kind" : "message", huge.size, rc);
    core_take_raised();
  }
}

/* A custom allocator that counts, and fails with its own error when told. */
typedef struct {
  int fail;
  int allocs, frees, errors_made;
} Counting;

static Counting counting;

static void counting_delete(void* body) {
  counting.frees++;
  free((char*)body - 16);
}

static void* counting_allocate(size_t size, size_t alignment, int32_t type_index, void* context) {
  (void)alignment, (void)context;
  if (counting.fail) {
    conf_api.TVMFFIErrorSetRaisedFromCStr("RuntimeError", "the custom allocator says no");
    return NULL;
  }
  char* block = malloc(16 + size);
  if (block == NULL) return NULL;
  ((TVMFFIObjectAllocHeader*)(block + 16))[-1].delete_space = counting_delete;
  counting.allocs++;
  if (type_index == kTVMFFIError) counting.errors_made++;
  return block + 16;
}

static TVMFFICustomAllocator counting_allocator = {counting_allocate, &counting};

/* OBJ-024: when the registered custom allocator fails (returns NULL having
 * raised its own error), the call that needed an object returns -1 and the
 * error raised is the allocator's, not one of the library's. */
TEST(err_alloc, OBJ_024_custom_allocator_error_kept) {
  cr_assert_eq(API(TVMFFISetCustomAllocator)(&counting_allocator), 0);
  counting.fail = 1;
  static const char text[] = "a string long enough to live on the heap, not inline";
  TVMFFIByteArray in = {text, sizeof text - 1};
  TVMFFIAny s = {0};
  int rc = API(TVMFFIStringFromByteArray)(&in, &s);
  TVMFFIObjectHandle err1 = core_take_raised(), err2 = NULL, opaque = NULL;
  if (rc == 0) core_release(&s);
  int rc2 = API(TVMFFIObjectCreateOpaque)(NULL, kTVMFFIOpaquePyObject, NULL, &opaque);
  err2 = core_take_raised();
  counting.fail = 0;
  API(TVMFFISetCustomAllocator)(NULL);
  if (rc2 == 0) API(TVMFFIObjectDecRef)(opaque);
  cr_assert_eq(rc, -1, "TVMFFIStringFromByteArray returned %d with the allocator failing", rc);
  cr_assert_eq(rc2, -1, "TVMFFIObjectCreateOpaque returned %d with the allocator failing", rc2);
  TVMFFIObjectHandle errs[2] = {err1, err2};
  for (int i = 0; i < 2; ++i) {
    cr_assert_not_null(errs[i], "call %d: nothing raised", i);
    cr_assert(bytes_are(cell_of(errs[i])->kind, "RuntimeError") &&
                  bytes_are(cell_of(errs[i])->message, "the custom allocator says no"),
              "call %d raised %.*s: %.*s, not the allocator's error", i,
              (int)cell_of(errs[i])->kind.size, cell_of(errs[i])->kind.data,
              (int)cell_of(errs[i])->message.size, cell_of(errs[i])->message.data);
    API(TVMFFIObjectDecRef)(errs[i]);
  }
}

/* OBJ-025: while a custom allocator is registered, errors made by
 * TVMFFIErrorCreate and TVMFFIErrorSetRaisedFromCStr come from its allocate
 * with type index kTVMFFIError, and each goes back through its
 * delete_space once released. */
TEST(err_alloc, OBJ_025_errors_use_custom_allocator) {
  cr_assert_eq(API(TVMFFISetCustomAllocator)(&counting_allocator), 0);
  TVMFFIByteArray k = {"ValueError", 10}, m = {"made here", 9}, b = {"", 0};
  TVMFFIObjectHandle made = NULL;
  int rc = API(TVMFFIErrorCreate)(&k, &m, &b, &made);
  API(TVMFFIErrorSetRaisedFromCStr)("KeyError", "raised here");
  TVMFFIObjectHandle raised = core_take_raised();
  int errors_made = counting.errors_made;
  if (made) API(TVMFFIObjectDecRef)(made);
  if (raised) API(TVMFFIObjectDecRef)(raised);
  int allocs = counting.allocs, frees = counting.frees;
  API(TVMFFISetCustomAllocator)(NULL);
  cr_assert_eq(rc, 0);
  cr_assert_not_null(raised);
  cr_assert_eq(errors_made, 2, "errors allocated by the custom allocator: %d, expected 2",
               errors_made);
  cr_assert_eq(frees, allocs, "%d blocks allocated, %d given back", allocs, frees);
}

/* ERR-062: TVMFFIErrorCreate and TVMFFIErrorCreateWithCauseAndExtraContext
 * with out NULL return -1 and raise a ValueError naming `out`. */
TEST(err_input, ERR_062_create_out_null_refused) {
  HOSTILE_INPUT("upstream writes through the NULL out");
  TVMFFIByteArray k = {"TypeError", 9}, m = {"message", 7}, b = {"", 0};
  int rc = API(TVMFFIErrorCreate)(&k, &m, &b, NULL);
  cr_assert_eq(rc, -1, "TVMFFIErrorCreate(..., NULL) returned %d", rc);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  rc = API(TVMFFIErrorCreateWithCauseAndExtraContext)(&k, &m, &b, NULL, NULL, NULL);
  cr_assert_eq(rc, -1, "TVMFFIErrorCreateWithCauseAndExtraContext(..., NULL) returned %d", rc);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
}

/* ERR-063: update_backtrace given NULL bytes, or bytes whose size no
 * allocation can hold (SIZE_MAX - 8), leaves the backtrace as it was, in
 * either mode, reading none of them. */
TEST(err_input, ERR_063_update_backtrace_refuses_impossible_input) {
  HOSTILE_INPUT("NULL and SIZE_MAX - 8 byte arrays");
  static const char buf[16] = "0123456789abcde";
  TVMFFIByteArray k = {"TypeError", 9}, m = {"message", 7}, b = {"old\n", 4};
  TVMFFIByteArray huge = {buf, SIZE_MAX - 8};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  for (int mode = 0; mode < 2; ++mode) {
    int32_t update = mode ? kTVMFFIBacktraceUpdateModeAppend : kTVMFFIBacktraceUpdateModeReplace;
    conf_alloc_count_start();
    cell->update_backtrace(err, NULL, update);
    cr_assert(bytes_are(cell->backtrace, "old\n"), "mode %d, NULL bytes: backtrace '%.*s'", mode,
              (int)cell->backtrace.size, cell->backtrace.data);
    cell->update_backtrace(err, &huge, update);
    conf_alloc_count_stop();
    cr_assert(bytes_are(cell->backtrace, "old\n"), "mode %d, huge bytes: backtrace size %zu", mode,
              cell->backtrace.size);
    /* Not even asked for: a runtime sizes nothing from bytes it refuses.
     * (Where the interposer is off, nothing was counted: 0.) */
    cr_assert_lt(conf_alloc_largest(), (size_t)1 << 30,
                 "mode %d: an allocation of %zu bytes was "
                 "asked for",
                 mode, conf_alloc_largest());
  }
  core_take_raised();
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-073: update_backtrace with a mode other than
 * kTVMFFIBacktraceUpdateModeReplace (2, -1, 7) appends, as Append does. */
TEST(err_input, ERR_073_unknown_update_mode_appends) {
  static const int32_t modes[] = {2, -1, 7};
  for (int i = 0; i < 3; ++i) {
    TVMFFIByteArray k = {"TypeError", 9}, m = {"message", 7}, b = {"old\n", 4}, add = {"new\n", 4};
    TVMFFIObjectHandle err = NULL;
    cr_assert_eq(API(TVMFFIErrorCreate)(&k, &m, &b, &err), 0);
    TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    cell->update_backtrace(err, &add, modes[i]);
    cr_assert(bytes_are(cell->backtrace, "old\nnew\n"), "mode %d: backtrace '%.*s'", modes[i],
              (int)cell->backtrace.size, cell->backtrace.data);
    API(TVMFFIObjectDecRef)(err);
  }
}

/* Moves the raised error out and demands exactly this kind and message. */
static void expect_raised_exactly(const char* kind, const char* message, const char* call) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1, "%s raised nothing", call);
  cr_assert(bytes_are(cell_of(err)->kind, kind) && bytes_are(cell_of(err)->message, message),
            "%s raised '%.*s: %.*s', expected '%s: %s'", call, (int)cell_of(err)->kind.size,
            cell_of(err)->kind.data, (int)cell_of(err)->message.size, cell_of(err)->message.data,
            kind, message);
  API(TVMFFIObjectDecRef)(err);
}

/* ERR-077: the raising functions read a NULL kind, message or message_parts
 * as empty, and a negative part count as zero, instead of crashing. */
TEST(err_input, ERR_077_null_strings_read_as_empty) {
  HOSTILE_INPUT("NULL kind, message and message_parts; a negative part count");
  const char* parts[] = {"a", NULL, "bc"};
  API(TVMFFIErrorSetRaisedFromCStr)(NULL, "message");
  expect_raised_exactly("", "message", "TVMFFIErrorSetRaisedFromCStr(NULL, \"message\")");
  API(TVMFFIErrorSetRaisedFromCStr)("KeyError", NULL);
  expect_raised_exactly("KeyError", "", "TVMFFIErrorSetRaisedFromCStr(\"KeyError\", NULL)");
  API(TVMFFIErrorSetRaisedFromCStrParts)(NULL, parts, 3);
  expect_raised_exactly("", "abc", "TVMFFIErrorSetRaisedFromCStrParts(NULL, parts, 3)");
  API(TVMFFIErrorSetRaisedFromCStrParts)("KeyError", NULL, 2);
  expect_raised_exactly("KeyError", "", "TVMFFIErrorSetRaisedFromCStrParts(\"KeyError\", NULL, 2)");
  API(TVMFFIErrorSetRaisedFromCStrParts)("KeyError", parts, -1);
  expect_raised_exactly("KeyError", "",
                        "TVMFFIErrorSetRaisedFromCStrParts(\"KeyError\", parts, -1)");
}
