/* Unit tests of the tensor object and the DLTensor metadata checks. */
#include "tensor_test_support.h"
#include "tensor.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "unit_test_support.h"

static DLTensor meta(int64_t* shape, int32_t ndim) {
  return (DLTensor){
      .device = {kDLCPU, 0}, .ndim = ndim, .dtype = {kDLFloat, 32, 1}, .shape = shape};
}

Test(tensor_check, accepts_ordinary_metadata) {
  int64_t shape[3] = {2, 3, 4};
  DLTensor t = meta(shape, 3);
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), 0);
  cr_expect_eq(test_dltensor_numel(&t), 24);
  cr_expect_eq(test_dltensor_nbytes(&t), 96);
  t.ndim = 0;
  t.shape = NULL;
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), 0);
  cr_expect_eq(test_dltensor_numel(&t), 1);
}

Test(tensor_check, refusals_name_the_argument) {
  int64_t shape[2] = {2, -1};
  DLTensor t = meta(shape, 2);
  cr_expect_eq(tffi_dltensor_check_in("test", NULL, "arg0"), -1);
  expect_raised("ValueError", "arg0 is NULL");
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "arg1"), -1);
  expect_raised("ValueError", "arg1.shape[1] is negative (-1)");
  t.shape = NULL;
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "arg2"), -1);
  expect_raised("ValueError", "arg2.shape is NULL");
  t.ndim = -5;
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "arg3"), -1);
  expect_raised("ValueError", "arg3.ndim is -5");
}

Test(tensor_check, ndim_bound_is_64) {
  int64_t shape[TFFI_TENSOR_MAX_NDIM + 1];
  for (int i = 0; i <= TFFI_TENSOR_MAX_NDIM; ++i) shape[i] = 1;
  DLTensor t = meta(shape, TFFI_TENSOR_MAX_NDIM);
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), 0);
  t.ndim = TFFI_TENSOR_MAX_NDIM + 1;
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), -1);
  expect_raised("ValueError", "x.ndim is 65");
}

Test(tensor_check, overflow_of_count_and_bytes) {
  int64_t shape[2] = {(int64_t)1 << 32, (int64_t)1 << 31};
  DLTensor t = meta(shape, 2);
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), -1);
  expect_raised("ValueError", "element count overflows");
  /* 2^62 elements fit, but not 32 bits each. */
  shape[0] = (int64_t)1 << 31;
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), -1);
  expect_raised("ValueError", "size in bits overflows");
  /* An empty tensor never overflows, whatever its other sizes. */
  int64_t empty[3] = {INT64_MAX, 0, INT64_MAX};
  t = meta(empty, 3);
  cr_expect_eq(tffi_dltensor_check_in("test", &t, "x"), 0);
  cr_expect_eq(test_dltensor_nbytes(&t), 0);
}

Test(tensor_check, contiguity) {
  int64_t shape[3] = {2, 1, 3}, strides[3] = {3, 100, 1};
  DLTensor t = meta(shape, 3);
  cr_expect(tffi_dltensor_is_contiguous(&t));
  t.strides = strides;
  cr_expect(tffi_dltensor_is_contiguous(&t));
  strides[2] = 2;
  cr_expect_not(tffi_dltensor_is_contiguous(&t));
  shape[1] = 0;
  cr_expect(tffi_dltensor_is_contiguous(&t));
}

static int released;
static void count_release(void* ctx) { released += (int)(intptr_t)ctx; }

Test(tensor_object, layout_copies_and_release_once) {
  int64_t shape[2] = {2, 3};
  DLTensor t = meta(shape, 2);
  t.data = (void*)0x1000;
  t.byte_offset = 8;
  TVMFFIObject* obj = NULL;
  cr_assert_eq(tffi_tensor_new_checked(&t, count_release, (void*)(intptr_t)1, &obj), 0);
  cr_expect_eq(obj->type_index, kTVMFFITensor);
  cr_expect(tffi_is_tensor(obj));
  DLTensor* dl = TVMFFITensorGetDLTensorPtr(obj);
  cr_expect_eq(dl, tffi_tensor_dl(obj));
  cr_expect_neq(dl->shape, shape, "shape was not copied");
  cr_expect_eq(dl->shape[1], 3);
  cr_expect_eq(dl->strides[0], 3);
  cr_expect_eq(dl->strides[1], 1);
  cr_expect_eq(dl->data, (void*)0x1000);
  cr_expect_eq(dl->byte_offset, 8);
  tffi_incref(obj);
  tffi_decref(obj);
  cr_expect_eq(released, 0);
  tffi_decref(obj);
  cr_expect_eq(released, 1);
}

Test(tensor_object, alloc_cpu_is_aligned_and_zeroed) {
  int64_t shape[2] = {3, 5};
  TVMFFIObject* obj = NULL;
  cr_assert_eq(test_tensor_alloc_cpu(shape, 2, (DLDataType){kDLFloat, 64, 1}, &obj), 0);
  DLTensor* dl = tffi_tensor_dl(obj);
  cr_expect_eq((uintptr_t)dl->data % 64, 0);
  const double* d = dl->data;
  for (int i = 0; i < 15; ++i) cr_expect_eq(d[i], 0.0);
  cr_expect_eq(dl->strides[0], 5);
  tffi_decref(obj);
  cr_expect_eq(test_tensor_alloc_cpu(NULL, 1, (DLDataType){kDLFloat, 64, 1}, &obj), -1);
  expect_raised("ValueError", "shape");
}

/* The object asks for its shape and strides and nothing more: no call of
 * the ABI can see spare bytes, so only the size the allocator is asked for
 * can tell. */
static size_t asked;

static void sized_free(void* body) { free((char*)body - 16); }

static void* sized_alloc(size_t size, size_t align, int32_t type_index, void* ctx) {
  (void)align, (void)ctx;
  if (type_index == kTVMFFITensor) asked = size;
  char* block = malloc(16 + size);
  ((TVMFFIObjectAllocHeader*)(block + 16))[-1].delete_space = sized_free;
  return block + 16;
}

static size_t tensor_bytes(int32_t ndim) {
  int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  DLTensor t = meta(shape, ndim);
  TVMFFIObject* obj = NULL;
  asked = 0;
  cr_assert_eq(tffi_tensor_new_checked(&t, count_release, NULL, &obj), 0);
  tffi_decref(obj);
  return asked;
}

Test(tensor_object, storage_grows_by_shape_and_strides_only) {
  static TVMFFICustomAllocator mine = {sized_alloc, NULL};
  cr_assert_eq(TVMFFISetCustomAllocator(&mine), 0);
  size_t one = tensor_bytes(1), nine = tensor_bytes(9);
  TVMFFISetCustomAllocator(NULL);
  cr_expect_eq(nine - one, 8 * 2 * sizeof(int64_t), "9 dims take %zu bytes more than 1",
               nine - one);
}
