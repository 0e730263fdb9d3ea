/* Clauses of spec/tensors.md: DLPack import and export. */
#include <malloc.h>
#include <stdlib.h>

#include "alloc_fail.h"
#include "tensor_support.h"

/* An import that must fail: checks -1, the error, and that the deleter did
 * not run (the caller keeps ownership, TEN-012). */
static void expect_import_v_fails(Producer* p, int32_t align, int32_t contig, const char* kind,
                                  const char* part) {
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p->v, align, contig, &out);
  if (rc == 0) API(TVMFFIObjectDecRef)(out);
  cr_assert_eq(rc, -1, "import should fail with -1, got %d", rc);
  EXPECT_RAISED(.kind = kind, .says = {part});
  cr_expect_eq(p->deleted, 0, "deleter ran %d times after a failed import", p->deleted);
}

/* ---- import ---- */

/* TEN-001: the versioned import is zero-copy and makes a Tensor object. */
TEST(dlpack, TEN_001_versioned_import_zero_copy) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.device.device_id = 0;
  p.v.dl_tensor.byte_offset = 8;
  p.v.dl_tensor.dtype = (DLDataType){kDLInt, 16, 1};
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  cr_expect_eq(((TVMFFIObject*)t)->type_index, kTVMFFITensor, "type index %d",
               ((TVMFFIObject*)t)->type_index);
  expect_same_tensor(tensor_dl(t), &p.v.dl_tensor);
  API(TVMFFIObjectDecRef)(t);
}

/* TEN-002: the pre-1.0 import is zero-copy too. */
TEST(dlpack, TEN_002_legacy_import_zero_copy) {
  Producer p;
  producer_init(&p);
  p.legacy.dl_tensor.byte_offset = 4;
  TVMFFIObjectHandle t = NULL;
  cr_assert_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &t), 0);
  cr_expect_eq(((TVMFFIObject*)t)->type_index, kTVMFFITensor);
  expect_same_tensor(tensor_dl(t), &p.legacy.dl_tensor);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-003: the versioned deleter runs once, when the last reference goes. */
TEST(dlpack, TEN_003_versioned_deleter_once_at_last_ref) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  API(TVMFFIObjectIncRef)(t);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0, "deleter ran while a reference remained");
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1, "deleter ran %d times", p.deleted);
  cr_expect_eq(p.deleted_arg, &p.v, "deleter got a different pointer");
}

/* TEN-004: the legacy deleter runs once, when the last reference goes. */
TEST(dlpack, TEN_004_legacy_deleter_once_at_last_ref) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle t = NULL;
  cr_assert_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &t), 0);
  API(TVMFFIObjectIncRef)(t);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1, "deleter ran %d times", p.deleted);
  cr_expect_eq(p.deleted_arg, &p.legacy);
}

/* TEN-005: explicit strides are kept. */
TEST(dlpack, TEN_005_explicit_strides_kept) {
  Producer p;
  producer_init(&p);
  p.strides[0] = 1;
  p.strides[1] = 2; /* column-major */
  p.v.dl_tensor.strides = p.strides;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLTensor* dl = tensor_dl(t);
  cr_assert_not_null(dl->strides);
  cr_expect_eq(dl->strides[0], 1);
  cr_expect_eq(dl->strides[1], 2);
  API(TVMFFIObjectDecRef)(t);
}

/* TEN-006: NULL strides mean compact row-major, and the tensor says so. */
TEST(dlpack, TEN_006_null_strides_are_compact) {
  Producer p;
  producer_init(&p);
  p.shape[0] = 4;
  p.shape[1] = 5;
  p.shape[2] = 6;
  p.v.dl_tensor.ndim = 3;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLTensor* dl = tensor_dl(t);
  cr_assert_not_null(dl->strides, "strides left NULL");
  cr_expect_eq(dl->strides[0], 30);
  cr_expect_eq(dl->strides[1], 6);
  cr_expect_eq(dl->strides[2], 1);
  API(TVMFFIObjectDecRef)(t);
}

/* TEN-007: a scalar (ndim 0) imports. */
TEST(dlpack, TEN_007_scalar_import) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.ndim = 0;
  p.v.dl_tensor.shape = NULL;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 1);
  cr_expect_eq(tensor_dl(t)->ndim, 0);
  cr_expect_eq(tensor_dl(t)->data, (void*)producer_buffer);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-008: a misaligned import under require_alignment is a RuntimeError. */
TEST(dlpack, TEN_008_misaligned_is_runtime_error) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.data = (char*)producer_buffer + 4;
  expect_import_v_fails(&p, 64, 0, "RuntimeError", "aligned");
  p.v.deleter(&p.v);
}

/* TEN-009: the alignment check counts byte_offset. */
TEST(dlpack, TEN_009_alignment_counts_byte_offset) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.byte_offset = 4;
  expect_import_v_fails(&p, 64, 0, "RuntimeError", "aligned");
  p.v.dl_tensor.data = (char*)producer_buffer + 60;
  p.v.dl_tensor.byte_offset = 4;
  TVMFFIObjectHandle t = tensor_import_v(&p, 64, 0);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-010: non-contiguous strides under require_contiguous: RuntimeError.
 * Any nonzero value asks for it (-1 and INT32_MIN too), in both imports. */
TEST(dlpack, TEN_010_noncontiguous_is_runtime_error) {
  static const int32_t asks[] = {1, -1, INT32_MIN};
  Producer p;
  producer_init(&p);
  p.strides[0] = 1;
  p.strides[1] = 2;
  p.v.dl_tensor.strides = p.strides;
  p.legacy.dl_tensor.strides = p.strides;
  for (size_t i = 0; i < sizeof asks / sizeof asks[0]; ++i) {
    expect_import_v_fails(&p, 0, asks[i], "RuntimeError", "contiguous");
    TVMFFIObjectHandle out = NULL;
    int rc = API(TVMFFITensorFromDLPack)(&p.legacy, 0, asks[i], &out);
    if (rc == 0) API(TVMFFIObjectDecRef)(out);
    cr_assert_eq(rc, -1, "legacy import with require_contiguous %d returned %d", asks[i], rc);
    EXPECT_RAISED(.kind = "RuntimeError", .says = {"contiguous"});
  }
  cr_expect_eq(p.deleted, 0, "deleter ran %d times after refused imports", p.deleted);
  p.v.deleter(&p.v);
}

/* TEN-011: what require_contiguous accepts. */
TEST(dlpack, TEN_011_contiguous_accepts) {
  Producer p;
  producer_init(&p);
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 1)); /* NULL strides */
  p.shape[0] = 1;
  p.shape[1] = 3;
  p.strides[0] = 999; /* size-1 dimension: any stride */
  p.strides[1] = 1;
  p.v.dl_tensor.strides = p.strides;
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 1));
  p.shape[0] = 0; /* empty: any strides */
  p.strides[0] = 7;
  p.strides[1] = 5;
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 1));
  cr_expect_eq(p.deleted, 3);
}

/* TEN-058: require_contiguous 0 asks nothing of the strides, also when an
 * alignment is required (and met): column-major strides import, and are
 * kept, in both imports. */
TEST(dlpack, TEN_058_no_contiguity_asked) {
  static const int32_t aligns[] = {0, 1, 64};
  Producer p;
  producer_init(&p);
  p.strides[0] = 1;
  p.strides[1] = 2;
  p.v.dl_tensor.strides = p.strides;
  p.legacy.dl_tensor.strides = p.strides;
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; ++i) {
    TVMFFIObjectHandle t = NULL;
    int rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, aligns[i], 0, &t);
    cr_assert_eq(rc, 0,
                 "versioned import, require_alignment %d, require_contiguous 0: "
                 "returned %d",
                 aligns[i], rc);
    cr_expect_eq(tensor_dl(t)->strides[0], 1);
    cr_expect_eq(tensor_dl(t)->strides[1], 2);
    API(TVMFFIObjectDecRef)(t);
    rc = API(TVMFFITensorFromDLPack)(&p.legacy, aligns[i], 0, &t);
    cr_assert_eq(rc, 0, "legacy import, require_alignment %d, require_contiguous 0: returned %d",
                 aligns[i], rc);
    cr_expect_eq(tensor_dl(t)->strides[0], 1);
    cr_expect_eq(tensor_dl(t)->strides[1], 2);
    API(TVMFFIObjectDecRef)(t);
  }
  cr_expect_eq(p.deleted, 6, "deleters ran %d times for 6 imports", p.deleted);
}

/* TEN-012: after a failed import the caller still owns the managed tensor:
 * the deleter has not run, and the caller runs it exactly once itself. */
TEST(dlpack, TEN_012_failed_import_leaves_ownership) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.data = (char*)producer_buffer + 1;
  expect_import_v_fails(&p, 16, 0, "RuntimeError", NULL);
  p.legacy.dl_tensor.data = (char*)producer_buffer + 1;
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPack)(&p.legacy, 16, 0, &out);
  cr_assert_eq(rc, -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  cr_expect_eq(p.deleted, 0, "legacy deleter ran after a failed import");
  p.v.deleter(&p.v);
  p.legacy.deleter(&p.legacy);
  cr_expect_eq(p.deleted, 2);
}

/* TEN-013: an unknown DLPack major version is refused with ValueError. */
TEST(dlpack, TEN_013_unknown_major_refused) {
  Producer p;
  producer_init(&p);
  p.v.version.major = 7;
  expect_import_v_fails(&p, 0, 0, "ValueError", "major is 7");
  p.v.version.major = 0; /* pre-1.0 layouts are a different major too */
  expect_import_v_fails(&p, 0, 0, "ValueError", "major is 0");
  p.v.deleter(&p.v);
}

/* TEN-014: the read-only flag does not stop a zero-copy import. */
TEST(dlpack, TEN_014_read_only_imports) {
  Producer p;
  producer_init(&p);
  p.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  expect_same_tensor(tensor_dl(t), &p.v.dl_tensor);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-015: padded sub-byte layouts are refused with RuntimeError. */
TEST(dlpack, TEN_015_subbyte_padded_refused) {
  Producer p;
  producer_init(&p);
  p.v.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  p.v.dl_tensor.dtype = (DLDataType){kDLInt, 4, 1};
  expect_import_v_fails(&p, 0, 0, "RuntimeError", "padded");
  p.v.deleter(&p.v);
}

/* TEN-016: a NULL deleter is allowed and nothing is called on release. */
TEST(dlpack, TEN_016_null_deleter) {
  Producer p;
  producer_init(&p);
  p.v.deleter = NULL;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  cr_expect_eq(tensor_dl(t)->data, (void*)producer_buffer);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0);
  p.legacy.deleter = NULL; /* the pre-1.0 form too */
  cr_assert_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &t), 0);
  cr_expect_eq(tensor_dl(t)->data, (void*)producer_buffer);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0);
}

/* TEN-017: read-only survives import and re-export (also through a view),
 * whichever way the import went: asking nothing, asking contiguity, or with
 * a custom allocator installed (each its own path in the reference). */
static void expect_read_only_kept(int32_t contig, const char* how) {
  Producer p;
  producer_init(&p);
  p.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, contig);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  cr_expect(e->flags & DLPACK_FLAG_BITMASK_READ_ONLY,
            "export of a read-only tensor imported %s has flags %llu", how,
            (unsigned long long)e->flags);
  e->deleter(e);
  int64_t strides[2] = {3, 1};
  DLTensor proto = *tensor_dl(t);
  proto.strides = strides;
  TVMFFIObjectHandle view = NULL;
  cr_assert_eq(API(TVMFFITensorCreateUnsafeView)(t, &proto, &view), 0);
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(view, &e), 0);
  cr_expect(e->flags & DLPACK_FLAG_BITMASK_READ_ONLY,
            "export of a view of a read-only tensor imported %s has flags %llu", how,
            (unsigned long long)e->flags);
  e->deleter(e);
  API(TVMFFIObjectDecRef)(view);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1, "imported %s: the producer's deleter ran %d times", how, p.deleted);
}

TEST(dlpack, TEN_017_read_only_survives_export) {
  expect_read_only_kept(0, "asking nothing");
  expect_read_only_kept(1, "asking contiguity");
  const char* why = NULL;
  if (core_count_try_begin(&why)) {
    expect_read_only_kept(0, "with a custom allocator installed");
    core_count_end("TEN-017 with a custom allocator");
  } else {
    cr_log_info("TEN-017 with a custom allocator not checked: %s", why);
  }
}

/* ---- export ---- */

/* TEN-020: the versioned export carries version 1.x, flags 0 and the same
 * DLTensor. */
TEST(dlpack, TEN_020_versioned_export_fields) {
  Producer p;
  producer_init(&p);
  p.strides[0] = 1;
  p.strides[1] = 2;
  p.v.dl_tensor.strides = p.strides;
  p.v.dl_tensor.byte_offset = 12;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  cr_assert_not_null(e);
  cr_expect_eq(e->version.major, 1u, "major %u", e->version.major);
  cr_expect_eq(e->flags, 0u, "flags %llu", (unsigned long long)e->flags);
  cr_assert_not_null(e->deleter);
  expect_same_tensor(&e->dl_tensor, &p.v.dl_tensor);
  cr_assert_not_null(e->dl_tensor.strides);
  cr_expect_eq(e->dl_tensor.strides[0], 1);
  cr_expect_eq(e->dl_tensor.strides[1], 2);
  e->deleter(e);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-060: the versioned export declares the DLPack version of the ABI's
 * dlpack.h: major 1 and its minor (3 since 0.1.9). */
TEST(dlpack, TEN_060_versioned_export_minor) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  cr_expect_eq(e->version.major, DLPACK_MAJOR_VERSION, "major %u", e->version.major);
  cr_expect_eq(e->version.minor, DLPACK_MINOR_VERSION, "minor %u, the ABI's dlpack.h has %d",
               e->version.minor, DLPACK_MINOR_VERSION);
  e->deleter(e);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-021: the versioned export keeps the tensor alive until its deleter. */
TEST(dlpack, TEN_021_versioned_export_lifetime) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0, "tensor freed while its export is alive");
  cr_expect_eq(e->dl_tensor.shape[1], 3, "exported shape no longer readable");
  e->deleter(e);
  cr_expect_eq(p.deleted, 1, "producer deleter ran %d times", p.deleted);
}

/* TEN-022: the legacy export carries the same DLTensor. */
TEST(dlpack, TEN_022_legacy_export_fields) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.byte_offset = 16;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensor* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPack)(t, &e), 0);
  cr_assert_not_null(e);
  cr_assert_not_null(e->deleter);
  expect_same_tensor(&e->dl_tensor, &p.v.dl_tensor);
  e->deleter(e);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-023: the legacy export keeps the tensor alive until its deleter. */
TEST(dlpack, TEN_023_legacy_export_lifetime) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensor* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPack)(t, &e), 0);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0);
  e->deleter(e);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-024: import(export(t)) round trips, and the producer's deleter runs
 * once when everything is released. */
TEST(dlpack, TEN_024_round_trip) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.byte_offset = 8;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  TVMFFIObjectHandle t2 = NULL;
  cr_assert_eq(API(TVMFFITensorFromDLPackVersioned)(e, 0, 0, &t2), 0);
  expect_same_tensor(tensor_dl(t2), &p.v.dl_tensor);
  DLManagedTensor* l = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPack)(t2, &l), 0);
  TVMFFIObjectHandle t3 = NULL;
  cr_assert_eq(API(TVMFFITensorFromDLPack)(l, 0, 0, &t3), 0);
  expect_same_tensor(tensor_dl(t3), &p.v.dl_tensor);
  API(TVMFFIObjectDecRef)(t);
  API(TVMFFIObjectDecRef)(t2);
  cr_expect_eq(p.deleted, 0, "freed while a round-tripped tensor is alive");
  API(TVMFFIObjectDecRef)(t3);
  cr_expect_eq(p.deleted, 1, "producer deleter ran %d times", p.deleted);
}

/* TEN-025: two exports are independent. */
TEST(dlpack, TEN_025_exports_independent) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensorVersioned *a = NULL, *b = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &a), 0);
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &b), 0);
  cr_expect_neq(a, b, "two exports returned the same managed tensor");
  a->deleter(a);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 0, "freed while the second export is alive");
  b->deleter(b);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-026: exporting NULL or a non-Tensor is a TypeError naming the
 * function and, after it, `from`, saying it is NULL or not a Tensor. */
TEST(dlpack, TEN_026_export_non_tensor) {
  HOSTILE_INPUT(
      "upstream 0.1.16 dereferences the handle unchecked (crash); "
      "see spec/deviations.md TEN-026");
  DLManagedTensorVersioned* e = NULL;
  cr_expect_eq(API(TVMFFITensorToDLPackVersioned)(NULL, &e), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFITensorToDLPackVersioned", .arg = "from",
                .says = {"NULL"});
  DLManagedTensor* l = NULL;
  cr_expect_eq(API(TVMFFITensorToDLPack)(NULL, &l), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFITensorToDLPack", .arg = "from",
                .says = {"NULL"});
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {"x", 1};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&kind, &msg, NULL, &err), 0);
  cr_expect_eq(API(TVMFFITensorToDLPackVersioned)(err, &e), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFITensorToDLPackVersioned", .arg = "from",
                .says = {"not a Tensor"});
  cr_expect_eq(API(TVMFFITensorToDLPack)(err, &l), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFITensorToDLPack", .arg = "from",
                .says = {"not a Tensor"});
  API(TVMFFIObjectDecRef)(err);
}

/* ---- arguments, devices ---- */

/* The call returned -1 and raised ValueError naming the function, then the
 * argument. */
static void expect_null_refused(int rc, const char* api, const char* arg) {
  cr_expect_eq(rc, -1, "%s with %s NULL returned %d", api, arg, rc);
  EXPECT_RAISED(.kind = "ValueError", .api = api, .arg = arg);
}

/* TEN-047: NULL `from` or `out` of an import or an export is refused with
 * ValueError naming the function and the argument. */
TEST(dlpack, TEN_047_null_arguments_refused) {
  HOSTILE_INPUT("an implementation may dereference the NULL pointer");
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle out = NULL;
  expect_null_refused(API(TVMFFITensorFromDLPackVersioned)(NULL, 0, 0, &out),
                      "TVMFFITensorFromDLPackVersioned", "from");
  expect_null_refused(API(TVMFFITensorFromDLPackVersioned)(&p.v, 0, 0, NULL),
                      "TVMFFITensorFromDLPackVersioned", "out");
  expect_null_refused(API(TVMFFITensorFromDLPack)(NULL, 0, 0, &out), "TVMFFITensorFromDLPack",
                      "from");
  expect_null_refused(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, NULL), "TVMFFITensorFromDLPack",
                      "out");
  cr_expect_eq(p.deleted, 0, "a refused import ran the deleter");
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  expect_null_refused(API(TVMFFITensorToDLPackVersioned)(t, NULL), "TVMFFITensorToDLPackVersioned",
                      "out");
  expect_null_refused(API(TVMFFITensorToDLPack)(t, NULL), "TVMFFITensorToDLPack", "out");
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1, "a refused export changed the tensor's references");
}

/* One refused import of p (versioned or legacy) whose error must name the
 * function, then `from`, and say `what`. */
static void expect_refusal_named(Producer* p, int legacy, int32_t align, int32_t contig,
                                 const char* kind, const char* what) {
  TVMFFIObjectHandle out = NULL;
  const char* api = legacy ? "TVMFFITensorFromDLPack" : "TVMFFITensorFromDLPackVersioned";
  int rc = legacy ? API(TVMFFITensorFromDLPack)(&p->legacy, align, contig, &out)
                  : API(TVMFFITensorFromDLPackVersioned)(&p->v, align, contig, &out);
  if (rc == 0) API(TVMFFIObjectDecRef)(out);
  cr_expect_eq(rc, -1, "%s: input to refuse (%s) returned %d", api, what, rc);
  if (rc == -1) EXPECT_RAISED(.kind = kind, .api = api, .arg = "from", .says = {what});
}

/* TEN-059: every refusal of a managed tensor by either import names the
 * function and, after it, `from`: an unknown major, a padded sub-byte
 * layout, a negative dimension, misaligned data, non-contiguous strides. */
TEST(dlpack, TEN_059_import_errors_name_function_and_from) {
  for (int legacy = 0; legacy <= 1; ++legacy) {
    Producer p;
    producer_init(&p);
    p.v.dl_tensor.data = p.legacy.dl_tensor.data = (char*)producer_buffer + 4;
    expect_refusal_named(&p, legacy, 64, 0, "RuntimeError", "aligned");
    producer_init(&p);
    p.strides[0] = 1;
    p.strides[1] = 2;
    p.v.dl_tensor.strides = p.legacy.dl_tensor.strides = p.strides;
    expect_refusal_named(&p, legacy, 0, 1, "RuntimeError", "contiguous");
    producer_init(&p);
    p.shape[1] = -3;
    expect_refusal_named(&p, legacy, 0, 0, "ValueError", "shape");
    if (!legacy) {
      producer_init(&p);
      p.v.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
      p.v.dl_tensor.dtype = (DLDataType){kDLInt, 4, 1};
      expect_refusal_named(&p, 0, 0, 0, "RuntimeError", "padded");
      producer_init(&p);
      p.v.version.major = 7;
      expect_refusal_named(&p, 0, 0, 0, "ValueError", "major");
    }
    cr_expect_eq(p.deleted, 0, "a refused import ran the deleter");
  }
}

/* Devices whose data pointer is an address (alignment counts data +
 * byte_offset) and devices whose data pointer is an opaque handle
 * (alignment counts byte_offset alone). */
static const int32_t direct_devices[] = {kDLCPU,  kDLCUDA,     kDLCUDAHost,
                                         kDLROCM, kDLROCMHost, kDLCUDAManaged};
static const int32_t handle_devices[] = {kDLOpenCL, kDLVulkan, kDLMetal,   kDLVPI,  kDLExtDev,
                                         kDLOneAPI, kDLWebGPU, kDLHexagon, kDLMAIA, kDLTrn};

/* One import of p on `device` with data at producer_buffer + data_off and
 * the given byte_offset under require_alignment 64: 0 or -1 (error taken). */
static int import_aligned(Producer* p, int32_t device, size_t data_off, uint64_t byte_offset) {
  p->v.dl_tensor.device = (DLDevice){(DLDeviceType)device, 0};
  p->v.dl_tensor.data = (char*)producer_buffer + data_off;
  p->v.dl_tensor.byte_offset = byte_offset;
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p->v, 64, 0, &out);
  if (rc == 0) {
    cr_expect_eq(tensor_dl(out)->device.device_type, device);
    API(TVMFFIObjectDecRef)(out);
  } else {
    EXPECT_RAISED(.kind = "RuntimeError", .says = {"aligned"});
  }
  return rc;
}

/* TEN-048: the alignment check judges data + byte_offset on the devices
 * whose data pointer is an address (CPU, CUDA, CUDAHost, ROCM, ROCMHost,
 * CUDAManaged) and byte_offset alone on the others. */
TEST(dlpack, TEN_048_alignment_by_device_kind) {
  Producer p;
  producer_init(&p);
  for (size_t i = 0; i < sizeof direct_devices / sizeof direct_devices[0]; ++i) {
    int32_t d = direct_devices[i];
    cr_expect_eq(import_aligned(&p, d, 4, 0), -1, "device %d: misaligned data accepted", d);
    cr_expect_eq(import_aligned(&p, d, 60, 4), 0, "device %d: data + byte_offset aligned refused",
                 d);
    cr_expect_eq(import_aligned(&p, d, 0, 64), 0, "device %d: aligned refused", d);
    cr_expect_eq(import_aligned(&p, d, 0, 8), -1, "device %d: byte_offset 8 accepted", d);
  }
  for (size_t i = 0; i < sizeof handle_devices / sizeof handle_devices[0]; ++i) {
    int32_t d = handle_devices[i];
    cr_expect_eq(import_aligned(&p, d, 4, 0), 0, "device %d: the handle was judged as an address",
                 d);
    cr_expect_eq(import_aligned(&p, d, 4, 128), 0, "device %d: byte_offset 128 refused", d);
    cr_expect_eq(import_aligned(&p, d, 0, 4), -1, "device %d: byte_offset 4 accepted", d);
    cr_expect_eq(import_aligned(&p, d, 60, 4), -1, "device %d: byte_offset 4 accepted", d);
  }
  int successes = 2 * (int)(sizeof direct_devices / sizeof direct_devices[0]) +
                  2 * (int)(sizeof handle_devices / sizeof handle_devices[0]);
  cr_expect_eq(p.deleted, successes, "deleter ran %d times for %d imports", p.deleted, successes);
}

/* ---- the Tensor object cannot be allocated ---- */

/* A custom allocator that refuses Tensor objects, raising MemoryError as
 * c_api.h asks of a failing allocate, and hands every other object to the
 * allocator that was registered before it. */
static struct {
  TVMFFICustomAllocator* before;
  int tensor_calls;
} refuse;

static void* refuse_tensor_allocate(size_t size, size_t alignment, int32_t type_index,
                                    void* context) {
  (void)context;
  if (type_index != kTVMFFITensor) {
    return refuse.before->allocate(size, alignment, type_index, refuse.before->context);
  }
  refuse.tensor_calls++;
  conf_api.TVMFFIErrorSetRaisedFromCStr("MemoryError", "test allocator refuses tensors");
  return NULL;
}

static TVMFFICustomAllocator refuse_tensors = {refuse_tensor_allocate, NULL};

static void refuse_install(void) {
  refuse.before = API(TVMFFIGetCustomAllocator)();
  refuse.tensor_calls = 0;
  cr_assert_eq(API(TVMFFISetCustomAllocator)(&refuse_tensors), 0);
}

/* Restores the allocator. When the tensor never reached it, releases what
 * the call made (and `also`) and skips: nothing was injected. */
static void refuse_remove(int rc, TVMFFIObjectHandle out, TVMFFIObjectHandle also) {
  API(TVMFFISetCustomAllocator)(NULL);
  if (rc == 0 && refuse.tensor_calls == 0) {
    if (out != NULL) API(TVMFFIObjectDecRef)(out);
    if (also != NULL) API(TVMFFIObjectDecRef)(also);
    cr_skip_test(
        "Tensor objects are not allocated through TVMFFISetCustomAllocator's allocator "
        "here (spec/object.md OBJ-022), so its failure cannot be injected");
  }
}

/* The call failed with the allocator's error. */
static void expect_allocator_error(int rc, TVMFFIObjectHandle out, const char* call) {
  if (rc == 0 && out != NULL) API(TVMFFIObjectDecRef)(out);
  cr_assert_eq(rc, -1, "%s returned %d after the tensor's allocation failed", call, rc);
  EXPECT_RAISED(.kind = "MemoryError", .says = {"test allocator refuses tensors"});
}

/* TEN-049: when the Tensor object cannot be allocated (the custom
 * allocator fails), an import returns -1 with the allocator's error and
 * the caller still owns the managed tensor (its deleter not called). */
TEST(dlpack, TEN_049_import_allocation_failure) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle out = NULL;
  refuse_install();
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, 0, 0, &out);
  refuse_remove(rc, out, NULL);
  expect_allocator_error(rc, out, "TVMFFITensorFromDLPackVersioned");
  cr_expect_eq(p.deleted, 0, "the deleter ran after a failed import");
  out = NULL;
  refuse_install();
  rc = API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &out);
  refuse_remove(rc, out, NULL);
  expect_allocator_error(rc, out, "TVMFFITensorFromDLPack");
  cr_expect_eq(p.deleted, 0, "the legacy deleter ran after a failed import");
  /* Nothing was kept: both still import and release as usual. */
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 0));
  cr_assert_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &out), 0);
  API(TVMFFIObjectDecRef)(out);
  cr_expect_eq(p.deleted, 2);
}

/* TEN-050: when a view's Tensor object cannot be allocated,
 * TVMFFITensorCreateUnsafeView returns -1 with the allocator's error and
 * the source's references are as before the call. */
TEST(dlpack, TEN_050_view_allocation_failure) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle src = tensor_import_v(&p, 0, 0);
  DLTensor proto = *tensor_dl(src);
  TVMFFIObjectHandle view = NULL;
  uint32_t strong = core_strong(src);
  refuse_install();
  int rc = API(TVMFFITensorCreateUnsafeView)(src, &proto, &view);
  refuse_remove(rc, view, src);
  expect_allocator_error(rc, view, "TVMFFITensorCreateUnsafeView");
  cr_expect_eq(core_strong(src), strong, "the source's strong count went from %u to %u", strong,
               core_strong(src));
  API(TVMFFIObjectDecRef)(src);
  cr_expect_eq(p.deleted, 1, "producer deleter ran %d times after the source's release", p.deleted);
}

/* ---- memory runs out inside the call ---- */

enum { OOM_IMPORT_V, OOM_IMPORT_LEGACY, OOM_EXPORT_V, OOM_EXPORT_LEGACY, OOM_VIEW };

static const char* const oom_calls[] = {"TVMFFITensorFromDLPackVersioned", "TVMFFITensorFromDLPack",
                                        "TVMFFITensorToDLPackVersioned", "TVMFFITensorToDLPack",
                                        "TVMFFITensorCreateUnsafeView"};

/* Runs `op` once under the walk's step; 0 or -1. On success checks and
 * releases what it made. `src` is the tensor exported or viewed. */
static int oom_step(int op, ConfAllocWalk* w, Producer* p, TVMFFIObjectHandle src) {
  TVMFFIObjectHandle made = NULL;
  DLManagedTensorVersioned* ev = NULL;
  DLManagedTensor* el = NULL;
  DLTensor proto = src ? *tensor_dl(src) : p->v.dl_tensor;
  int rc = -2;
  if (w) conf_alloc_arm(w);
  switch (op) {
    case OOM_IMPORT_V: rc = conf_api.TVMFFITensorFromDLPackVersioned(&p->v, 0, 0, &made); break;
    case OOM_IMPORT_LEGACY: rc = conf_api.TVMFFITensorFromDLPack(&p->legacy, 0, 0, &made); break;
    case OOM_EXPORT_V: rc = conf_api.TVMFFITensorToDLPackVersioned(src, &ev); break;
    case OOM_EXPORT_LEGACY: rc = conf_api.TVMFFITensorToDLPack(src, &el); break;
    default: rc = conf_api.TVMFFITensorCreateUnsafeView(src, &proto, &made); break;
  }
  if (w) conf_alloc_disarm(w);
  long n = w ? w->n : -1;
  if (rc != 0) return rc;
  const DLTensor* got = made ? tensor_dl(made) : ev ? &ev->dl_tensor : el ? &el->dl_tensor : NULL;
  cr_assert_not_null(got, "%s, allocation %ld failed: returned 0 and nothing", oom_calls[op], n);
  cr_assert_eq(got->data, (void*)producer_buffer,
               "%s, allocation %ld failed: returned 0 with "
               "data %p",
               oom_calls[op], n, got->data);
  cr_assert_eq(got->ndim, 2);
  cr_assert_eq(got->shape[1], 3);
  if (made) API(TVMFFIObjectDecRef)(made);
  if (ev) ev->deleter(ev);
  if (el) el->deleter(el);
  return 0;
}

/* Walks every allocation of `op` (once, or from there on) on a fresh
 * producer each step. A step ends in 0 and a usable result, or -1 with
 * MemoryError, the managed tensor still the caller's (imports) or the
 * source's references as before (exports, views); the call works right
 * after. Returns the walk's points. */
static long oom_walk(int op, int sticky) {
  ConfAllocWalk w = conf_alloc_walk(sticky);
  while (conf_alloc_next(&w)) {
    Producer p;
    producer_init(&p);
    TVMFFIObjectHandle src = op >= OOM_EXPORT_V ? tensor_import_v(&p, 0, 0) : NULL;
    uint32_t strong = src ? core_strong(src) : 0;
    int rc = oom_step(op, &w, &p, src);
    if (rc != 0) {
      cr_assert_eq(rc, -1, "%s, allocation %ld failed: returned %d", oom_calls[op], w.n, rc);
      EXPECT_RAISED(.kind = "MemoryError");
    } else {
      core_take_raised(); /* whatever the call left, nothing a test may rely on */
    }
    if (src) {
      cr_assert_eq(core_strong(src), strong,
                   "%s, allocation %ld failed: the source's strong "
                   "count went from %u to %u",
                   oom_calls[op], w.n, strong, core_strong(src));
    }
    int imported = op < OOM_EXPORT_V && rc == 0;
    cr_assert_eq(p.deleted, imported,
                 "%s, allocation %ld failed (returned %d): the producer's "
                 "deleter ran %d times",
                 oom_calls[op], w.n, rc, p.deleted);
    cr_assert_eq(oom_step(op, NULL, &p, src), 0,
                 "%s right after allocation %ld failed: the "
                 "call fails",
                 oom_calls[op], w.n);
    if (src) API(TVMFFIObjectDecRef)(src);
    cr_assert_eq(p.deleted, imported + 1,
                 "%s, allocation %ld failed: the producer's deleter "
                 "ran %d times in all",
                 oom_calls[op], w.n, p.deleted);
  }
  return w.points;
}

/* TEN-051: an import, export or view whose allocations fail (any one of
 * them, or every one from some point on) returns 0 with a usable result,
 * or -1 with MemoryError raised: a failed import leaves the managed tensor
 * to the caller, a failed export or view leaves the source's references as
 * they were, and the call works right after. */
TEST(dlpack, TEN_051_allocation_failure_walk) {
  conf_alloc_require();
  long points = 0;
  for (int op = OOM_IMPORT_V; op <= OOM_VIEW; ++op) {
    (void)API(TVMFFITensorFromDLPackVersioned), (void)API(TVMFFITensorFromDLPack);
    (void)API(TVMFFITensorToDLPackVersioned), (void)API(TVMFFITensorToDLPack);
    (void)API(TVMFFITensorCreateUnsafeView);
    points += oom_walk(op, 0);
    points += oom_walk(op, 1);
  }
  conf_alloc_done(points, "the DLPack imports and exports");
}

/* ---- memory given back ---- */

static size_t heap_in_use(void) { return mallinfo2().uordblks; }

/* One round of every exchange, each result released: imports, exports,
 * a view, and a refused import. Returns 0 when every call did as asked
 * (no cr_ calls here: they allocate). */
static int exchange_round(Producer* p) {
  int bad = 0;
  TVMFFIObjectHandle t = NULL, l = NULL, view = NULL;
  bad |= conf_api.TVMFFITensorFromDLPackVersioned(&p->v, 0, 0, &t) != 0;
  bad |= conf_api.TVMFFITensorFromDLPack(&p->legacy, 0, 0, &l) != 0;
  if (bad) return -1;
  DLManagedTensorVersioned* ev = NULL;
  DLManagedTensor* el = NULL;
  bad |= conf_api.TVMFFITensorToDLPackVersioned(t, &ev) != 0;
  bad |= conf_api.TVMFFITensorToDLPack(l, &el) != 0;
  DLTensor proto = *tensor_dl(t);
  bad |= conf_api.TVMFFITensorCreateUnsafeView(t, &proto, &view) != 0;
  if (ev) ev->deleter(ev);
  if (el) el->deleter(el);
  if (view) conf_api.TVMFFIObjectDecRef(view);
  conf_api.TVMFFIObjectDecRef(t);
  conf_api.TVMFFIObjectDecRef(l);
  /* A weak reference outliving the strong one: the producer's deleter runs
   * with the last strong release, the storage goes with the weak one. */
  TVMFFIObjectHandle w = NULL;
  bad |= conf_api.TVMFFITensorFromDLPackVersioned(&p->v, 0, 0, &w) != 0;
  if (w) {
    core_weak_acquire(w);
    conf_api.TVMFFIObjectDecRef(w);
    core_weak_release(w);
  }
  /* Refused: misaligned under require_alignment 64. */
  p->v.dl_tensor.data = (char*)producer_buffer + 4;
  TVMFFIObjectHandle refused = NULL;
  bad |= conf_api.TVMFFITensorFromDLPackVersioned(&p->v, 64, 0, &refused) != -1;
  p->v.dl_tensor.data = producer_buffer;
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  bad |= err == NULL;
  if (err) conf_api.TVMFFIObjectDecRef(err);
  return bad ? -1 : 0;
}

/* TEN-052: every import, export and view gives its memory back once
 * released, a tensor outlived by a weak reference included: 200 rounds of
 * them (a refused import too) leave the
 * process's heap in use (glibc's mallinfo2) where one round left it, give
 * or take 8 bytes a round (a leak of the smallest block is 32). */
TEST(dlpack, TEN_052_exchanges_give_memory_back) {
  conf_alloc_require(); /* glibc owns the heap: no sanitizer, no valgrind */
  (void)API(TVMFFITensorFromDLPackVersioned), (void)API(TVMFFITensorFromDLPack);
  (void)API(TVMFFITensorToDLPackVersioned), (void)API(TVMFFITensorToDLPack);
  (void)API(TVMFFITensorCreateUnsafeView);
  enum { ROUNDS = 200 };
  Producer p;
  producer_init(&p);
  cr_assert_eq(exchange_round(&p), 0, "an exchange failed");
  size_t before = heap_in_use();
  int failed = 0;
  for (int i = 0; i < ROUNDS; ++i) failed |= exchange_round(&p);
  size_t after = heap_in_use();
  cr_assert_eq(failed, 0, "an exchange failed");
  cr_expect_eq(p.deleted, 3 * (ROUNDS + 1), "producer deleters ran %d times for %d imports",
               p.deleted, 3 * (ROUNDS + 1));
  cr_expect(after <= before + 8 * ROUNDS, "heap in use grew by %zu bytes over %d rounds",
            after - before, ROUNDS);
}
