/* Force-included when a C kernel is compiled against a release's own
 * c_api.h: upstream defines its small inline accessors for C++ only, and the
 * kernels use this one. Its body is the ABI itself (the tensor's DLTensor
 * follows the object header), so it is the same for every release. */
#include <tvm/ffi/c_api.h>

static inline DLTensor* TVMFFITensorGetDLTensorPtr(TVMFFIObjectHandle obj) {
  return (DLTensor*)((char*)obj + sizeof(TVMFFIObject));
}
