/* Values printed without looking inside them (repr_leaf.h). */
#include "repr_leaf.h"

#include "dtype.h"
#include "recursive.h"
#include "sentinel.h"
#include "tffi_error.h"

void tffi_repr_addr(TffiText* out, int with_addr, const void* obj) {
  if (with_addr) tffi_text_printf(out, "@%p", obj);
}

int tffi_repr_pod(TffiText* out, const TVMFFIAny* v) {
  char buf[TFFI_DTYPE_TEXT_MAX];
  int len;
  switch (v->type_index) {
    case kTVMFFINone: tffi_text_str(out, "None"); return 0;
    case kTVMFFIBool: tffi_text_str(out, v->v_int64 ? "True" : "False"); return 0;
    case kTVMFFIInt: tffi_text_printf(out, "%lld", (long long)v->v_int64); return 0;
    case kTVMFFIFloat: tffi_text_printf(out, "%g", v->v_float64); return 0;
    case kTVMFFIDevice: tffi_text_device(out, v->v_device); return 0;
    case kTVMFFIDataType:
      len = tffi_dtype_format(v->v_dtype, buf);
      if (len < 0) return -1;
      tffi_text_add(out, buf, (size_t)len);
      return 0;
    default: {
      const char* key = tffi_rec_type_key(v->type_index, &len);
      tffi_text_add(out, key, (size_t)len);
      return 0;
    }
  }
}

int tffi_repr_is_enum(int32_t type_index) {
  static int32_t enum_index = -1;
  if (enum_index < 0) {
    TVMFFIByteArray key = {"ffi.Enum", 8};
    if (TVMFFITypeKeyToIndex(&key, &enum_index) != 0) {
      tffi_set_raised(NULL);
      return 0;
    }
  }
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) return tffi_set_raised(NULL), 0;
  if (type_index == enum_index) return 1;
  for (int32_t d = 0; d < info->type_depth; ++d)
    if (info->type_ancestors[d]->type_index == enum_index) return 1;
  return 0;
}

static void tffi_repr_shape(TffiText* out, const TVMFFIAny* v) {
  const TVMFFIShapeCell* s = TVMFFIShapeGetCellPtr(v->v_obj);
  tffi_text_str(out, "Shape(");
  for (size_t i = 0; i < s->size; ++i)
    tffi_text_printf(out, i ? ", %lld" : "%lld", (long long)s->data[i]);
  tffi_text_add(out, ")", 1);
}

static int tffi_repr_tensor(TffiText* out, int with_addr, const TVMFFIAny* v) {
  const DLTensor* d = TVMFFITensorGetDLTensorPtr(v->v_obj);
  TVMFFIAny dtype = {0};
  dtype.type_index = kTVMFFIDataType;
  dtype.v_dtype = d->dtype;
  if (tffi_repr_pod(out, &dtype) != 0) return -1;
  tffi_text_add(out, "[", 1);
  for (int i = 0; i < d->ndim; ++i)
    tffi_text_printf(out, i ? ", %lld" : "%lld", (long long)d->shape[i]);
  tffi_text_str(out, "]@");
  tffi_text_device(out, d->device);
  tffi_repr_addr(out, with_addr, v->v_obj);
  return 1;
}

int tffi_repr_leaf(TffiText* out, int with_addr, const TVMFFIAny* v) {
  int32_t t = v->type_index;
  if (v->v_obj == tffi_missing_object()) {
    tffi_text_str(out, "<MISSING>");
  } else if (v->v_obj == tffi_kwargs_object()) {
    tffi_text_str(out, "<KWARGS>");
  } else if (t == kTVMFFIBigInt) {
    TVMFFIByteArray w = TVMFFIBigIntGetContentByteArray(v);
    tffi_text_bigint(out, w.data, w.size);
  } else if (t == kTVMFFIShape) {
    tffi_repr_shape(out, v);
  } else if (t == kTVMFFITensor) {
    return tffi_repr_tensor(out, with_addr, v);
  } else {
    return 0;
  }
  return 1;
}
