/* Clauses of spec/tensors.md: tensor views and hostile tensor metadata. */
#include <stdlib.h>

#include "tensor_support.h"

/* ---- views ---- */

/* TEN-030: a view has the prototype's metadata. */
TEST(tensor, TEN_030_view_has_prototype_metadata) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle src = tensor_import_v(&p, 0, 0);
  int64_t shape[1] = {3}, strides[1] = {2};
  DLTensor proto = {.data = producer_buffer + 1,
                    .device = {kDLCPU, 0},
                    .ndim = 1,
                    .dtype = {kDLFloat, 32, 1},
                    .shape = shape,
                    .strides = strides,
                    .byte_offset = 4};
  TVMFFIObjectHandle view = NULL;
  cr_assert_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, &view), 0);
  cr_expect_eq(((TVMFFIObject*)view)->type_index, kTVMFFITensor);
  expect_same_tensor(tensor_dl(view), &proto);
  cr_assert_not_null(tensor_dl(view)->strides);
  cr_expect_eq(tensor_dl(view)->strides[0], 2);
  API(TVMFFIObjectDecRef)(view);
  API(TVMFFIObjectDecRef)(src);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-031: a view keeps its source alive. */
TEST(tensor, TEN_031_view_keeps_source_alive) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle src = tensor_import_v(&p, 0, 0);
  DLTensor proto = *tensor_dl(src);
  TVMFFIObjectHandle view = NULL;
  cr_assert_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, &view), 0);
  API(TVMFFIObjectDecRef)(src);
  cr_expect_eq(p.deleted, 0, "source freed while its view is alive");
  API(TVMFFIObjectDecRef)(view);
  cr_expect_eq(p.deleted, 1, "producer deleter ran %d times", p.deleted);
}

/* TEN-032: a view copies the prototype's shape and strides. */
TEST(tensor, TEN_032_view_copies_shape_and_strides) {
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle src = tensor_import_v(&p, 0, 0);
  int64_t* shape = malloc(2 * sizeof(int64_t));
  int64_t* strides = malloc(2 * sizeof(int64_t));
  shape[0] = 3;
  shape[1] = 2;
  strides[0] = 1;
  strides[1] = 3;
  DLTensor proto = *tensor_dl(src);
  proto.shape = shape;
  proto.strides = strides;
  TVMFFIObjectHandle view = NULL;
  cr_assert_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, &view), 0);
  shape[0] = shape[1] = strides[0] = strides[1] = -77;
  free(shape);
  free(strides);
  DLTensor* dl = tensor_dl(view);
  cr_expect_eq(dl->shape[0], 3);
  cr_expect_eq(dl->shape[1], 2);
  cr_expect_eq(dl->strides[0], 1);
  cr_expect_eq(dl->strides[1], 3);
  API(TVMFFIObjectDecRef)(view);
  API(TVMFFIObjectDecRef)(src);
}

/* TEN-033: a bad source is a TypeError, a hostile prototype a ValueError. */
TEST(tensor, TEN_033_view_bad_arguments) {
  HOSTILE_INPUT(
      "upstream 0.1.16 accepts a NULL source and segfaults on a NULL prototype "
      "shape; see spec/deviations.md TEN-033");
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle src = tensor_import_v(&p, 0, 0);
  DLTensor proto = *tensor_dl(src);
  TVMFFIObjectHandle view = NULL;
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(NULL, &proto, &view), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFITensorCreateUnsafeView", .arg = "source",
                .says = {"NULL"});
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {"x", 1};
  TVMFFIObjectHandle err = NULL;
  cr_assert_eq(API(TVMFFIErrorCreate)(&kind, &msg, NULL, &err), 0);
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(err, &proto, &view), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = "TVMFFITensorCreateUnsafeView", .arg = "source",
                .says = {"not a Tensor"});
  API(TVMFFIObjectDecRef)(err);
  int64_t neg[2] = {2, -3};
  proto.shape = neg;
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, &view), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"prototype"});
  proto.shape = NULL;
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, &view), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"prototype"});
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(src, NULL, &view), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"prototype"});
  proto = *tensor_dl(src);
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"out"});
  API(TVMFFIObjectDecRef)(src);
  cr_expect_eq(p.deleted, 1, "a failed view changed the source's references");
}

/* ---- hostile metadata ---- */

/* Versioned import that must be refused with ValueError mentioning `part`,
 * the deleter not run, whether or not contiguity is asked too (the
 * metadata's refusal cannot depend on it). An implementation that accepts
 * it is released again so that the failure is reported, not a leak. */
static void expect_hostile_refused(Producer* p, const char* part) {
  for (int32_t contiguous = 0; contiguous <= 1; ++contiguous) {
    TVMFFIObjectHandle out = NULL;
    int rc = API(TVMFFITensorFromDLPackVersioned)(&p->v, 0, contiguous, &out);
    if (rc == 0) {
      API(TVMFFIObjectDecRef)(out);
      cr_assert_fail("hostile metadata was accepted (%s, require_contiguous %d)", part, contiguous);
    }
    cr_assert_eq(rc, -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {part});
  }
  cr_expect_eq(p->deleted, 0, "deleter ran after a refused import");
}

/* As expect_hostile_refused, the message naming the versioned import,
 * after it the argument `from`, and after that `part`. */
static void expect_hostile_refused_in_order(Producer* p, const char* part) {
  const char* parts[] = {"TVMFFITensorFromDLPackVersioned", "from", part};
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p->v, 0, 0, &out);
  if (rc == 0) {
    API(TVMFFIObjectDecRef)(out);
    cr_assert_fail("hostile metadata was accepted (%s)", part);
  }
  cr_assert_eq(rc, -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "a refusal (%s) raised nothing", part);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  cr_expect(cell->kind.size == 10 && memcmp(cell->kind.data, "ValueError", 10) == 0, "raised %.*s",
            (int)cell->kind.size, cell->kind.data);
  const char* at = cell->message.data;
  const char* end = cell->message.data + cell->message.size;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    const char* found = memmem(at, (size_t)(end - at), parts[i], strlen(parts[i]));
    cr_expect_not_null(found, "\"%s\" missing, or not after \"%s\": %.*s", parts[i],
                       i > 0 ? parts[i - 1] : "", (int)cell->message.size, cell->message.data);
    if (found == NULL) break;
    at = found + strlen(parts[i]);
  }
  API(TVMFFIObjectDecRef)(err);
  cr_expect_eq(p->deleted, 0, "deleter ran after a refused import");
}

/* TEN-040: a negative dimension is refused. */
TEST(tensor, TEN_040_negative_dimension) {
  Producer p;
  producer_init(&p);
  p.shape[1] = -3;
  expect_hostile_refused(&p, "shape");
  /* A zero extent does not excuse it, on either side of the negative one
   * (the element count is 0 either way, as an empty tensor's is). */
  p.shape[0] = 0;
  expect_hostile_refused(&p, "shape");
  p.shape[0] = -3;
  p.shape[1] = 0;
  expect_hostile_refused(&p, "shape");
}

/* TEN-041: ndim 1000 is refused. */
TEST(tensor, TEN_041_ndim_1000) {
  Producer p;
  producer_init(&p);
  int64_t* shape = malloc(1000 * sizeof(int64_t));
  for (int i = 0; i < 1000; ++i) shape[i] = 1;
  p.v.dl_tensor.shape = shape;
  p.v.dl_tensor.ndim = 1000;
  expect_hostile_refused(&p, "ndim");
  p.v.dl_tensor.ndim = 64; /* the bound is at least 64: this one imports */
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  cr_expect_eq(tensor_dl(t)->ndim, 64);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
  free(shape);
}

/* TEN-042: an element count that overflows int64 is refused. */
TEST(tensor, TEN_042_element_count_overflow) {
  Producer p;
  producer_init(&p);
  p.shape[0] = (int64_t)1 << 40;
  p.shape[1] = (int64_t)1 << 40;
  expect_hostile_refused(&p, "shape");
  /* 2^63 one-bit elements: one element past int64, few bits each. */
  p.shape[0] = (int64_t)1 << 62;
  p.shape[1] = 2;
  p.v.dl_tensor.dtype = (DLDataType){kDLUInt, 1, 1};
  expect_hostile_refused(&p, "shape");
  /* Past 2^64 by a little: the count modulo 2^64 (4) would pass for a
   * small tensor. */
  p.shape[0] = ((int64_t)1 << 62) + 1;
  p.shape[1] = 4;
  expect_hostile_refused(&p, "shape");
  /* Only the ndim extents count: a 0 stored just before the shape array
   * does not make the tensor empty. */
  int64_t padded[3] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
  p.v.dl_tensor.shape = padded + 1;
  expect_hostile_refused(&p, "shape");
}

/* TEN-043: a NULL shape with ndim > 0 is refused without reading it. */
TEST(tensor, TEN_043_null_shape) {
  HOSTILE_INPUT(
      "upstream 0.1.16 dereferences the NULL shape (segfault); "
      "see spec/deviations.md TEN-043");
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.shape = NULL;
  expect_hostile_refused(&p, "shape");
  p.v.dl_tensor.ndim = 1; /* one dimension is a dimension too */
  expect_hostile_refused(&p, "shape");
}

/* TEN-044: a negative ndim is refused. */
TEST(tensor, TEN_044_negative_ndim) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.ndim = -1;
  expect_hostile_refused(&p, "ndim");
}

/* TEN-045: the pre-1.0 import refuses the same metadata. */
TEST(tensor, TEN_045_legacy_refuses_hostile) {
  Producer p;
  producer_init(&p);
  p.shape[0] = -1;
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &out);
  if (rc == 0) {
    API(TVMFFIObjectDecRef)(out);
    cr_assert_fail("negative dimension accepted by TVMFFITensorFromDLPack");
  }
  cr_assert_eq(rc, -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"from.shape"});
  int64_t* shape = calloc(1000, sizeof(int64_t));
  for (int i = 0; i < 1000; ++i) shape[i] = 1;
  p.legacy.dl_tensor.shape = shape;
  p.legacy.dl_tensor.ndim = 1000;
  rc = API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &out);
  free(shape);
  if (rc == 0) {
    API(TVMFFIObjectDecRef)(out);
    cr_assert_fail("ndim 1000 accepted by TVMFFITensorFromDLPack");
  }
  cr_assert_eq(rc, -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"from.ndim"});
  cr_expect_eq(p.deleted, 0);
}

/* TEN-046: a negative require_alignment (-1, -64, INT32_MIN) is refused,
 * by both imports, naming the function, then require_alignment, and saying
 * it is negative. */
TEST(tensor, TEN_046_negative_alignment) {
  HOSTILE_INPUT("an implementation may compute an address modulo -1");
  static const int32_t negative[] = {-1, -64, INT32_MIN};
  Producer p;
  producer_init(&p);
  for (size_t i = 0; i < sizeof negative / sizeof negative[0]; ++i) {
    TVMFFIObjectHandle out = NULL;
    int rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, negative[i], 0, &out);
    if (rc == 0) {
      API(TVMFFIObjectDecRef)(out);
      cr_assert_fail("require_alignment %d accepted by TVMFFITensorFromDLPackVersioned",
                     negative[i]);
    }
    cr_assert_eq(rc, -1);
    EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFITensorFromDLPackVersioned",
                  .arg = "require_alignment", .says = {"negative"});
    rc = API(TVMFFITensorFromDLPack)(&p.legacy, negative[i], 0, &out);
    if (rc == 0) {
      API(TVMFFIObjectDecRef)(out);
      cr_assert_fail("require_alignment %d accepted by TVMFFITensorFromDLPack", negative[i]);
    }
    cr_assert_eq(rc, -1);
    EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFITensorFromDLPack", .arg = "require_alignment",
                  .says = {"negative"});
  }
  cr_expect_eq(p.deleted, 0, "deleter ran after a refused import");
}

/* ---- sizes at the edges ---- */

/* TEN-053: a tensor with a dimension of size 0 is empty and imports
 * whatever its other dimensions are, even when their product overflows
 * int64; its shape is kept. */
TEST(tensor, TEN_053_zero_dimension_imports) {
  Producer p;
  producer_init(&p);
  p.shape[0] = (int64_t)1 << 40;
  p.shape[1] = 0;
  p.shape[2] = (int64_t)1 << 40;
  p.v.dl_tensor.ndim = 3;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 1);
  DLTensor* dl = tensor_dl(t);
  cr_expect_eq(dl->ndim, 3);
  cr_expect_eq(dl->shape[0], (int64_t)1 << 40);
  cr_expect_eq(dl->shape[1], 0);
  cr_expect_eq(dl->shape[2], (int64_t)1 << 40);
  cr_assert_not_null(dl->strides);
  cr_expect_eq(dl->strides[2], 1, "the last stride of a compact tensor is 1");
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
  /* The zero last: the product of the dimensions before it overflows. */
  p.shape[1] = (int64_t)1 << 40;
  p.shape[2] = 0;
  t = tensor_import_v(&p, 0, 1);
  dl = tensor_dl(t);
  cr_expect_eq(dl->shape[0], (int64_t)1 << 40);
  cr_expect_eq(dl->shape[1], (int64_t)1 << 40);
  cr_expect_eq(dl->shape[2], 0);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 2);
}

/* TEN-054: an import whose size in bits (elements x bits x lanes)
 * overflows int64, with an element count that does not, is refused with
 * ValueError naming the argument. */
TEST(tensor, TEN_054_bit_size_overflow) {
  Producer p;
  producer_init(&p);
  p.shape[0] = (int64_t)1 << 31;
  p.shape[1] = (int64_t)1 << 31; /* 2^62 elements of 32 bits */
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, 0, 0, &out);
  if (rc == 0) {
    API(TVMFFIObjectDecRef)(out);
    cr_assert_fail("2^62 float32 elements (2^67 bits) accepted");
  }
  cr_assert_eq(rc, -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"from"});
  p.shape[0] = (int64_t)1 << 29;
  p.shape[1] = (int64_t)1 << 29; /* 2^58 elements of 8 bits x 64 lanes */
  p.v.dl_tensor.dtype = (DLDataType){kDLInt, 8, 64};
  rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, 0, 0, &out);
  if (rc == 0) {
    API(TVMFFIObjectDecRef)(out);
    cr_assert_fail("2^58 int8x64 elements (2^67 bits) accepted");
  }
  cr_assert_eq(rc, -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"from"});
  p.v.dl_tensor.dtype = (DLDataType){kDLInt, 8, 1}; /* 2^61 bits: fine */
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 0));
  cr_expect_eq(p.deleted, 1);
}

/* TEN-055: require_contiguous judges every dimension: a padded row stride
 * (the first dimension) and a wrong middle stride are refused, compact
 * strides of three dimensions accepted. */
TEST(tensor, TEN_055_contiguity_every_dimension) {
  static const int64_t bad[][3] = {{7, 3, 1}, {13, 4, 1}, {12, 5, 1}, {12, 4, 2}};
  Producer p;
  producer_init(&p);
  p.shape[0] = 2;
  p.shape[1] = 3;
  p.shape[2] = 4;
  p.v.dl_tensor.ndim = 3;
  p.v.dl_tensor.strides = p.strides;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    memcpy(p.strides, bad[i], sizeof bad[i]);
    TVMFFIObjectHandle out = NULL;
    int rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, 0, 1, &out);
    if (rc == 0) API(TVMFFIObjectDecRef)(out);
    cr_expect_eq(rc, -1, "strides {%lld, %lld, %lld} of shape {2, 3, 4} accepted as contiguous",
                 (long long)bad[i][0], (long long)bad[i][1], (long long)bad[i][2]);
    if (rc == -1) EXPECT_RAISED(.kind = "RuntimeError", .says = {"contiguous"});
  }
  /* Only the ndim extents are judged: a 0 stored just before the shape
   * does not make the tensor empty. */
  int64_t padded_shape[4] = {0, 2, 3, 4};
  p.v.dl_tensor.shape = padded_shape + 1;
  memcpy(p.strides, bad[0], sizeof bad[0]);
  TVMFFIObjectHandle out = NULL;
  int rc = API(TVMFFITensorFromDLPackVersioned)(&p.v, 0, 1, &out);
  if (rc == 0) API(TVMFFIObjectDecRef)(out);
  cr_expect_eq(rc, -1, "strides {7, 3, 1} accepted when a 0 lies before the shape");
  if (rc == -1) EXPECT_RAISED(.kind = "RuntimeError", .says = {"contiguous"});
  p.v.dl_tensor.shape = p.shape;
  cr_expect_eq(p.deleted, 0);
  p.strides[0] = 12;
  p.strides[1] = 4;
  p.strides[2] = 1;
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 1));
  cr_expect_eq(p.deleted, 1);
  /* A 0 in the last extent makes the tensor empty: any strides. */
  p.shape[2] = 0;
  p.strides[0] = 7;
  p.strides[1] = 5;
  p.strides[2] = 3;
  API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 1));
  cr_expect_eq(p.deleted, 2);
}

/* TEN-056: of the producer's flags only DLPACK_FLAG_BITMASK_READ_ONLY is
 * passed on: exporting a tensor imported with DLPACK_FLAG_BITMASK_IS_COPIED
 * gives flags 0 (the export copies nothing). */
TEST(tensor, TEN_056_only_read_only_passed_on) {
  Producer p;
  producer_init(&p);
  p.v.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  cr_expect_eq(e->flags, 0u, "export of a tensor imported as copied has flags %llu",
               (unsigned long long)e->flags);
  e->deleter(e);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-057: a tensor with a weak reference outstanding (held the way
 * upstream's C++ weak references hold one: the high 32 bits of
 * combined_ref_count) runs the producer's deleter when its last strong
 * reference goes, and its own deleter called with only
 * kTVMFFIObjectDeleterFlagBitMaskWeak when that weak reference goes does
 * not run the producer's deleter again. */
TEST(tensor, TEN_057_weak_reference_outstanding) {
  for (int round = 0; round < 2; ++round) {
    Producer p;
    producer_init(&p);
    TVMFFIObjectHandle t = NULL;
    if (round == 0) {
      t = tensor_import_v(&p, 0, 0);
    } else {
      cr_assert_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &t), 0);
    }
    TVMFFIObject* obj = t;
    __atomic_fetch_add(&obj->combined_ref_count, (uint64_t)1 << 32, __ATOMIC_RELAXED);
    API(TVMFFIObjectDecRef)(t);
    cr_expect_eq(p.deleted, 1, "the last strong reference went: producer deleter ran %d times",
                 p.deleted);
    cr_expect_eq(obj->combined_ref_count, (uint64_t)1 << 32, "count %#llx",
                 (unsigned long long)obj->combined_ref_count);
    /* The weak holder lets go: the storage goes through the deleter. */
    if (__atomic_sub_fetch(&obj->combined_ref_count, (uint64_t)1 << 32, __ATOMIC_ACQ_REL) == 0) {
      obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
    }
    cr_expect_eq(p.deleted, 1, "the weak reference went: producer deleter ran %d times", p.deleted);
  }
}

/* ---- what a fresh tensor starts with ---- */

/* A pre-1.0 import, exported versioned, must say flags 0. */
static void expect_legacy_export_writable(Producer* p, const char* when) {
  TVMFFIObjectHandle t = NULL;
  cr_assert_eq(API(TVMFFITensorFromDLPack)(&p->legacy, 0, 0, &t), 0);
  DLManagedTensorVersioned* e = NULL;
  cr_assert_eq(API(TVMFFITensorToDLPackVersioned)(t, &e), 0);
  cr_expect_eq(e->flags, 0u, "%s: export of a pre-1.0 import has flags %#llx", when,
               (unsigned long long)e->flags);
  e->deleter(e);
  API(TVMFFIObjectDecRef)(t);
}

/* TEN-070: a pre-1.0 managed tensor carries no flags, so the tensor made
 * from it is writable: its versioned export has flags 0 whatever storage
 * the tensor got (storage a read-only tensor just gave back, or fresh
 * storage full of garbage from a registered custom allocator). */
TEST(tensor, TEN_070_legacy_import_exports_flags_0) {
  Producer p;
  producer_init(&p);
  expect_legacy_export_writable(&p, "first import");
  for (int round = 0; round < 4; ++round) {
    p.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    API(TVMFFIObjectDecRef)(tensor_import_v(&p, 0, 0));
    expect_legacy_export_writable(&p, "after a read-only tensor was released");
  }
  cr_expect_eq(p.deleted, 9);
  const char* why = "";
  if (!core_count_try_begin(&why)) {
    cr_log_info("TEN-070: fresh-storage round not run: %s", why);
    return;
  }
  expect_legacy_export_writable(&p, "storage from a custom allocator");
  core_count_end("a pre-1.0 import and its export");
  cr_expect_eq(p.deleted, 10);
}

/* TEN-071: the size in bits may be INT64_MAX itself: INT64_MAX one-bit
 * elements import, by both imports; in two lanes they are refused. */
TEST(tensor, TEN_071_bit_size_int64_max_imports) {
  Producer p;
  producer_init(&p);
  p.shape[0] = INT64_MAX;
  p.v.dl_tensor.ndim = 1;
  p.v.dl_tensor.dtype = (DLDataType){kDLUInt, 1, 1};
  p.legacy.dl_tensor = p.v.dl_tensor;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  cr_expect_eq(tensor_dl(t)->shape[0], INT64_MAX);
  API(TVMFFIObjectDecRef)(t);
  t = NULL;
  cr_expect_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &t), 0, "INT64_MAX bits refused");
  if (t != NULL) API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 2);
  p.v.dl_tensor.dtype.lanes = 2;
  p.deleted = 0;
  expect_hostile_refused_in_order(&p, "overflow");
}

/* TEN-072: DLPack lets a scalar (ndim 0) have a NULL shape: it imports,
 * by both imports, and serves as a view's prototype. */
TEST(tensor, TEN_072_scalar_null_shape_imports) {
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.ndim = 0;
  p.v.dl_tensor.shape = NULL;
  p.legacy.dl_tensor = p.v.dl_tensor;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  cr_expect_eq(tensor_dl(t)->ndim, 0);
  cr_expect_eq(tensor_dl(t)->data, (void*)producer_buffer);
  TVMFFIObjectHandle legacy = NULL;
  cr_expect_eq(API(TVMFFITensorFromDLPack)(&p.legacy, 0, 0, &legacy), 0,
               "a scalar with a NULL shape refused by TVMFFITensorFromDLPack");
  if (legacy != NULL) API(TVMFFIObjectDecRef)(legacy);
  DLTensor proto = p.v.dl_tensor;
  int64_t no_strides[1] = {0};
  proto.strides = no_strides; /* a view is not asked to fill strides in */
  TVMFFIObjectHandle view = NULL;
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(t, &proto, &view), 0,
               "a scalar prototype with a NULL shape refused");
  if (view != NULL) API(TVMFFIObjectDecRef)(view);
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 2);
}

/* A raised ValueError whose message has TVMFFITensorCreateUnsafeView,
 * then `arg`, then NULL. */
static void expect_value_error_in_order(const char* arg) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "a NULL %s raised nothing", arg);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  cr_expect(cell->kind.size == 10 && memcmp(cell->kind.data, "ValueError", 10) == 0, "raised %.*s",
            (int)cell->kind.size, cell->kind.data);
  const char* parts[] = {"TVMFFITensorCreateUnsafeView", arg, "NULL"};
  const char* at = cell->message.data;
  const char* end = cell->message.data + cell->message.size;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    const char* found = memmem(at, (size_t)(end - at), parts[i], strlen(parts[i]));
    cr_expect_not_null(found, "\"%s\" missing, or not after \"%s\": %.*s", parts[i],
                       i > 0 ? parts[i - 1] : "", (int)cell->message.size, cell->message.data);
    if (found == NULL) break;
    at = found + strlen(parts[i]);
  }
  API(TVMFFIObjectDecRef)(err);
}

/* TEN-073: a NULL prototype or out is a ValueError whose message names
 * the function, then the argument, then says NULL (in that order, so that
 * the message reads as a sentence about that argument). */
TEST(tensor, TEN_073_view_null_argument_message) {
  HOSTILE_INPUT("upstream 0.1.15.post2 reads the NULL prototype; see spec/deviations.md TEN-073");
  Producer p;
  producer_init(&p);
  TVMFFIObjectHandle src = tensor_import_v(&p, 0, 0);
  TVMFFIObjectHandle view = NULL;
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(src, NULL, &view), -1);
  expect_value_error_in_order("prototype");
  DLTensor proto = *tensor_dl(src);
  cr_expect_eq(API(TVMFFITensorCreateUnsafeView)(src, &proto, NULL), -1);
  expect_value_error_in_order("out");
  API(TVMFFIObjectDecRef)(src);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-074: each refusal names the function, after it the field and the
 * value it refuses. */
TEST(tensor, TEN_074_refusal_names_field_and_value) {
  HOSTILE_INPUT("upstream 0.1.15.post2 reads a NULL shape; see spec/deviations.md TEN-043");
  Producer p;
  producer_init(&p);
  p.shape[1] = -3;
  expect_hostile_refused_in_order(&p, "shape[1]");
  expect_hostile_refused_in_order(&p, "-3");
  p.shape[1] = 3;
  p.v.dl_tensor.ndim = -1;
  expect_hostile_refused_in_order(&p, "-1");
  int64_t* shape = calloc(1000, sizeof(int64_t));
  for (int i = 0; i < 1000; ++i) shape[i] = 1;
  p.v.dl_tensor.shape = shape;
  p.v.dl_tensor.ndim = 1000;
  expect_hostile_refused_in_order(&p, "1000");
  free(shape);
  p.v.dl_tensor.ndim = 2;
  p.v.dl_tensor.shape = p.shape;
  p.shape[0] = p.shape[1] = (int64_t)1 << 40;
  expect_hostile_refused_in_order(&p, "shape");
  p.v.dl_tensor.shape = NULL;
  expect_hostile_refused_in_order(&p, "shape");
}

/* Imports a tensor of `ndim` dimensions (shape i + 2, strides 100 + i
 * when `strided`, NULL otherwise: compact) from arrays followed by a
 * sentinel, and checks every extent and stride of the result. */
static void expect_kept_metadata(int32_t ndim, int strided) {
  int64_t shape[9], strides[9];
  for (int i = 0; i < 9; ++i) {
    shape[i] = i < ndim ? i + 2 : -77;
    strides[i] = i < ndim ? 100 + i : -77;
  }
  Producer p;
  producer_init(&p);
  p.v.dl_tensor.ndim = ndim;
  p.v.dl_tensor.shape = shape;
  p.v.dl_tensor.strides = strided ? strides : NULL;
  TVMFFIObjectHandle t = tensor_import_v(&p, 0, 0);
  DLTensor* dl = tensor_dl(t);
  cr_expect_eq(dl->ndim, ndim);
  int64_t compact = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    cr_expect_eq(dl->shape[i], i + 2, "ndim %d: shape[%d] is %lld", ndim, i,
                 (long long)dl->shape[i]);
    int64_t want = strided ? 100 + i : compact;
    cr_expect_eq(dl->strides[i], want, "ndim %d, %s: strides[%d] is %lld, not %lld", ndim,
                 strided ? "explicit strides" : "compact", i, (long long)dl->strides[i],
                 (long long)want);
    compact *= i + 2;
  }
  API(TVMFFIObjectDecRef)(t);
  cr_expect_eq(p.deleted, 1);
}

/* TEN-075: a tensor keeps every extent and stride for any ndim (0, 1, 2,
 * 3, 5, 8), explicit or compact, and its object stays within the storage
 * it was allocated with (checked with a counting custom allocator where
 * the implementation has one). */
TEST(tensor, TEN_075_metadata_kept_for_every_ndim) {
  static const int32_t ndims[] = {0, 1, 2, 3, 5, 8};
  const char* why = "";
  int counting = core_count_try_begin(&why);
  if (!counting) cr_log_info("TEN-075: storage bounds not checked: %s", why);
  for (size_t i = 0; i < sizeof ndims / sizeof ndims[0]; ++i) {
    expect_kept_metadata(ndims[i], 1);
    expect_kept_metadata(ndims[i], 0);
  }
  if (counting) core_count_end("imports of ndim 0 to 8");
}
