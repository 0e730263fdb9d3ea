/*
 * The argument vocabulary at the ABI boundary for tensors, DLPack and the
 * environment: every refusal names the API function first and the
 * offending argument second ("<api>: <argument>..."), so a caller finds the
 * mistake from the message alone. Upstream words its messages otherwise,
 * which is why these checks live here and not in conformance/.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "object.h"
#include "unit_test_support.h"

static int64_t shape4[4] = {2, 3, 4, 5};
static float data4[120];

static DLManagedTensorVersioned managed(int32_t ndim) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.dl_tensor = (DLTensor){data4, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, shape4, NULL, 0};
  return m;
}

Test(boundary_messages, dlpack_versioned_metadata) {
  DLManagedTensorVersioned m = managed(70);
  TVMFFIObjectHandle t = NULL;
  cr_expect_eq(TVMFFITensorFromDLPackVersioned(&m, 0, 0, &t), -1);
  expect_raised("ValueError", "TVMFFITensorFromDLPackVersioned: from.ndim is 70");
  m = managed(4);
  m.version.major = DLPACK_MAJOR_VERSION + 1;
  cr_expect_eq(TVMFFITensorFromDLPackVersioned(&m, 0, 0, &t), -1);
  expect_raised("ValueError", "TVMFFITensorFromDLPackVersioned: from.version.major");
  m = managed(4);
  m.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  cr_expect_eq(TVMFFITensorFromDLPackVersioned(&m, 0, 0, &t), -1);
  expect_raised("RuntimeError", "TVMFFITensorFromDLPackVersioned: from.flags");
  cr_expect_null(t);
}

Test(boundary_messages, dlpack_requirements) {
  DLManagedTensorVersioned m = managed(4);
  TVMFFIObjectHandle t = NULL;
  cr_expect_eq(TVMFFITensorFromDLPackVersioned(&m, -4, 0, &t), -1);
  expect_raised("ValueError", "TVMFFITensorFromDLPackVersioned: require_alignment is negative");
  m.dl_tensor.byte_offset = 1;
  cr_expect_eq(TVMFFITensorFromDLPackVersioned(&m, 4, 0, &t), -1);
  expect_raised("RuntimeError", "TVMFFITensorFromDLPackVersioned: from data is not aligned");
  int64_t strides[4] = {1, 2, 6, 24};
  DLManagedTensor legacy;
  memset(&legacy, 0, sizeof legacy);
  legacy.dl_tensor = (DLTensor){data4, {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, shape4, strides, 0};
  cr_expect_eq(TVMFFITensorFromDLPack(&legacy, 0, 1, &t), -1);
  expect_raised("RuntimeError", "TVMFFITensorFromDLPack: from is not contiguous");
  legacy.dl_tensor.shape = NULL;
  cr_expect_eq(TVMFFITensorFromDLPack(&legacy, 0, 0, &t), -1);
  expect_raised("ValueError", "TVMFFITensorFromDLPack: from.shape is NULL");
  cr_expect_null(t);
}

Test(boundary_messages, view_and_env_alloc_prototypes) {
  DLManagedTensorVersioned m = managed(4);
  TVMFFIObjectHandle source = NULL, view = NULL;
  cr_assert_eq(TVMFFITensorFromDLPackVersioned(&m, 0, 0, &source), 0);
  int64_t bad[1] = {-3};
  DLTensor proto = {data4, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, bad, NULL, 0};
  cr_expect_eq(TVMFFITensorCreateUnsafeView(source, &proto, &view), -1);
  expect_raised("ValueError", "TVMFFITensorCreateUnsafeView: prototype.shape[0] is negative");
  cr_expect_null(view);
  tffi_decref(source);
  cr_expect_eq(TVMFFIEnvTensorAlloc(NULL, &view), -1);
  expect_raised("ValueError", "TVMFFIEnvTensorAlloc: prototype is NULL");
}

Test(boundary_messages, env_streams_and_host_api) {
  cr_expect_eq(TVMFFIEnvSetStream(-1, 0, NULL, NULL), -1);
  expect_raised("ValueError", "TVMFFIEnvSetStream: device_type -1 is outside");
  cr_expect_eq(TVMFFIEnvSetStream(kDLCUDA, -2, NULL, NULL), -1);
  expect_raised("ValueError", "TVMFFIEnvSetStream: device_id -2 is outside");
  cr_expect_eq(TVMFFIEnvRegisterCAPI("NoSuchHostApi", NULL), -1);
  expect_raised("ValueError", "TVMFFIEnvRegisterCAPI: name 'NoSuchHostApi'");
}
