/*
 * Fault injection over representative operations: every allocation each one
 * makes is failed in turn (fault_test_support.h). The count of failure
 * points each walk reached is printed, with the call sites that failed.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "tensor_test_support.h"
#include "tffi_error.h"
#include "fault_test_support.h"
#include "object.h"
#include "tensor.h"

/* ---- errors ---- */

static int op_raise_long(void* ctx) {
  (void)ctx;
  char msg[600];
  memset(msg, 'x', sizeof msg - 1);
  msg[sizeof msg - 1] = '\0';
  tffi_raise(TFFI_VALUE_ERROR, "long: %s", msg); /* past the on-stack buffer */
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err, "a raise always leaves an error");
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  if (strcmp(cell->kind.data, TFFI_MEMORY_ERROR) == 0) {
    tffi_set_raised(err); /* the documented outcome under OOM: MemoryError instead */
    return -1;
  }
  cr_assert_str_eq(cell->kind.data, "ValueError");
  /* When the long message cannot be allocated, the kind stays and the
   * message is cut to what fits on the stack (error.c). */
  cr_assert(cell->message.size == 6 + sizeof msg - 1 || cell->message.size == 255,
            "message size %zu", cell->message.size);
  tffi_decref(err);
  return 0;
}

static int op_raise_parts(void* ctx) {
  (void)ctx;
  const char* parts[] = {"a", NULL, "bc"};
  TVMFFIErrorSetRaisedFromCStrParts("TypeError", parts, 3);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  if (strcmp(cell->kind.data, TFFI_MEMORY_ERROR) == 0) {
    tffi_set_raised(err);
    return -1;
  }
  cr_assert_str_eq(cell->message.data, "abc");
  tffi_decref(err);
  return 0;
}

/* TVMFFIErrorCreate reports running out of memory as -1 with nothing raised
 * (as upstream); this op restates that as MemoryError for the walk. */
static int op_error_create(void* ctx) {
  (void)ctx;
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {"m", 1}, bt = {"frame\n", 6};
  TVMFFIObjectHandle err = NULL;
  if (TVMFFIErrorCreate(&kind, &msg, &bt, &err) != 0) {
    TVMFFIObjectHandle raised = NULL;
    TVMFFIErrorMoveFromRaised(&raised);
    cr_assert_null(raised, "TVMFFIErrorCreate raises nothing on OOM");
    return tffi_raise_oom(0);
  }
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  TVMFFIByteArray more = {"more\n", 5};
  cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeAppend);
  /* An append that cannot allocate keeps the old backtrace. */
  cr_assert(cell->backtrace.size == 6 || cell->backtrace.size == 11);
  tffi_decref(err);
  return 0;
}

Test(fault, raise_error) {
  fault_walk_both("raise (long message)", op_raise_long, NULL);
  fault_walk_both("raise (message parts)", op_raise_parts, NULL);
  fault_walk_both("TVMFFIErrorCreate", op_error_create, NULL);
}

/* ---- strings and bytes ---- */

static int op_string_and_bytes(void* ctx) {
  (void)ctx;
  static const char text[] = "a string too long to be stored inline";
  TVMFFIByteArray in = {text, sizeof text - 1};
  TVMFFIAny s = {0}, b = {0}, owned = {0};
  if (TVMFFIStringFromByteArray(&in, &s) != 0) return -1;
  int rc = TVMFFIBytesFromByteArray(&in, &b);
  TVMFFIAny view = {.type_index = kTVMFFIRawStr, .v_c_str = text};
  if (rc == 0) rc = TVMFFIAnyViewToOwnedAny(&view, &owned);
  if (rc == 0) {
    cr_assert_eq(s.type_index, kTVMFFIStr);
    cr_assert_eq(b.type_index, kTVMFFIBytes);
    cr_assert_eq(owned.type_index, kTVMFFIStr);
    cr_assert_eq(TVMFFIBytesGetByteArrayPtr(owned.v_obj)->size, in.size);
  }
  if (s.type_index >= kTVMFFIStaticObjectBegin) tffi_decref(s.v_obj);
  if (b.type_index >= kTVMFFIStaticObjectBegin) tffi_decref(b.v_obj);
  if (owned.type_index >= kTVMFFIStaticObjectBegin) tffi_decref(owned.v_obj);
  return rc;
}

Test(fault, string_and_bytes) { fault_walk_both("string and bytes", op_string_and_bytes, NULL); }

/* ---- DLPack ---- */

static int64_t shape4[4] = {2, 3, 4, 5};
static float data4[120];
static int deleted;

static void count_delete(DLManagedTensorVersioned* self) { (void)self, ++deleted; }

static int op_dlpack_round_trip(void* ctx) {
  (void)ctx;
  DLManagedTensorVersioned m = {.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION},
                                .deleter = count_delete,
                                .dl_tensor = {.data = data4,
                                              .device = {kDLCPU, 0},
                                              .ndim = 4,
                                              .dtype = {kDLFloat, 32, 1},
                                              .shape = shape4}};
  deleted = 0;
  TVMFFIObjectHandle t = NULL;
  if (TVMFFITensorFromDLPackVersioned(&m, 0, 1, &t) != 0) {
    cr_assert_eq(deleted, 0, "a refused tensor stays the caller's");
    return -1;
  }
  DLManagedTensorVersioned* out = NULL;
  int rc = TVMFFITensorToDLPackVersioned(t, &out);
  tffi_decref(t);
  if (rc != 0) {
    cr_assert_eq(deleted, 1);
    return -1;
  }
  cr_assert_eq(deleted, 0, "the export still holds the tensor");
  cr_assert_eq(out->dl_tensor.shape[3], 5);
  out->deleter(out);
  cr_assert_eq(deleted, 1);
  return 0;
}

static int op_dlpack_legacy_export(void* ctx) {
  (void)ctx;
  TVMFFIObject* t = NULL;
  if (test_tensor_alloc_cpu(shape4, 4, (DLDataType){kDLFloat, 32, 1}, &t) != 0) return -1;
  DLManagedTensor* out = NULL;
  int rc = TVMFFITensorToDLPack(t, &out);
  tffi_decref(t);
  if (rc == 0) out->deleter(out);
  return rc;
}

static int op_env_tensor_alloc(void* ctx) {
  (void)ctx;
  TVMFFIObject* t = NULL;
  int64_t shape[2] = {3, 7};
  if (test_tensor_alloc_cpu(shape, 2, (DLDataType){kDLFloat, 32, 1}, &t) != 0) return -1;
  tffi_decref(t);
  return 0;
}

Test(fault, dlpack_import_export) {
  fault_walk_both("DLPack import + export", op_dlpack_round_trip, NULL);
  fault_walk_both("CPU tensor allocation", op_env_tensor_alloc, NULL);
  fault_walk_both("legacy DLPack export", op_dlpack_legacy_export, NULL);
}
