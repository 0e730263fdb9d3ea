/*
 * Argument checking shared by the CPU (scale_cpu.c) and CUDA (scale.cu)
 * builds of `scale(output, input, factor)`.
 *
 * Both kernels promise the same contract, so the checks live in one place and
 * run in one documented order (spec/kernels.md, KER-010 onwards):
 *
 *   1. arity                                   TypeError  names `scale`
 *   2. output, input: a tensor                 TypeError  names the argument
 *      (a DLTensor* view or a Tensor object; a NULL view is ValueError)
 *   3. factor: a float or an int               TypeError  names `factor`
 *   4. output, input: on the kernel's device   ValueError
 *   5. output, input: contiguous               ValueError
 *   6. output, input: one-dimensional          ValueError
 *   7. devices differ                          ValueError names both
 *   8. dtypes differ                           ValueError names both
 *   9. element counts differ                   ValueError names both
 *  10. dtype not supported by this kernel      TypeError  names `input`
 *  11. no data pointer for a non-empty tensor  ValueError names the argument
 *
 * Within a step `output` is checked before `input` (argument order).
 * Everything here only reads the caller's structures; it never allocates.
 * The header is included by C and by CUDA C++, so it stays in the common
 * subset of both languages.
 */
#ifndef KERNELS_SCALE_CHECK_H_
#define KERNELS_SCALE_CHECK_H_

#include <stdint.h>
#include <stdio.h>
#include <tvm/ffi/c_api.h>

/* What a successful check hands to the kernel body. */
typedef struct {
  DLTensor* output;
  DLTensor* input;
  double factor;
  int64_t n; /* element count, the same for both tensors */
} KernScaleArgs;

/* The dtypes a kernel can be asked about (bit set of these). */
enum {
  KERN_SCALE_F16 = 1 << 0,
  KERN_SCALE_BF16 = 1 << 1,
  KERN_SCALE_F32 = 1 << 2,
  KERN_SCALE_F64 = 1 << 3,
};

/* Error messages are short; the longest names two devices and two dtypes. */
#define KERN_SCALE_MSG_MAX 256

/* Raises `kind` with a formatted message and returns -1. The message is
 * formatted on the stack: only error paths come here. */
static inline int kern_scale_raise(const char* kind, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

#include <stdarg.h>

static inline int kern_scale_raise(const char* kind, const char* fmt, ...) {
  char msg[KERN_SCALE_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  TVMFFIErrorSetRaisedFromCStr(kind, msg);
  return -1;
}

/* A readable name for the type of a value that was not what we wanted. */
static inline const char* kern_scale_type_name(int32_t type_index) {
  switch (type_index) {
    case kTVMFFINone: return "None";
    case kTVMFFIInt: return "int";
    case kTVMFFIBool: return "bool";
    case kTVMFFIFloat: return "float";
    case kTVMFFIOpaquePtr: return "void*";
    case kTVMFFIDataType: return "DataType";
    case kTVMFFIDevice: return "Device";
    case kTVMFFIDLTensorPtr: return "DLTensor*";
    case kTVMFFIRawStr: return "const char*";
    case kTVMFFIByteArrayPtr: return "TVMFFIByteArray*";
    case kTVMFFIObjectRValueRef: return "ObjectRValueRef";
    case kTVMFFISmallStr:
    case kTVMFFIStr: return "str";
    case kTVMFFISmallBytes:
    case kTVMFFIBytes: return "bytes";
    case kTVMFFIError: return "Error";
    case kTVMFFIFunction: return "Function";
    case kTVMFFIShape: return "Shape";
    case kTVMFFITensor: return "Tensor";
    case kTVMFFIArray: return "Array";
    case kTVMFFIMap: return "Map";
    case kTVMFFIModule: return "Module";
    default: return "object";
  }
}

/* Writes a dtype as "float32", "bfloat16", "int8x4", ... into buf. */
static inline const char* kern_scale_dtype_str(DLDataType t, char* buf, size_t size) {
  const char* base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = t.bits == 1 ? "bool" : "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLOpaqueHandle: base = "handle"; break;
    case kDLComplex: base = "complex"; break;
    default: base = "code"; break;
  }
  if (t.code == kDLUInt && t.bits == 1) {
    snprintf(buf, size, "bool");
  } else if (t.lanes == 1) {
    snprintf(buf, size, "%s%u", base, (unsigned)t.bits);
  } else {
    snprintf(buf, size, "%s%ux%u", base, (unsigned)t.bits, (unsigned)t.lanes);
  }
  return buf;
}

/* Writes a device as "cpu:0", "cuda:1", ... into buf. */
static inline const char* kern_scale_device_str(DLDevice d, char* buf, size_t size) {
  const char* name = NULL;
  switch ((int)d.device_type) {
    case kDLCPU: name = "cpu"; break;
    case kDLCUDA: name = "cuda"; break;
    case kDLCUDAHost: name = "cuda_host"; break;
    case kDLCUDAManaged: name = "cuda_managed"; break;
    case kDLROCM: name = "rocm"; break;
    case kDLMetal: name = "metal"; break;
    case kDLVulkan: name = "vulkan"; break;
    case kDLOpenCL: name = "opencl"; break;
    default: break;
  }
  if (name == NULL) {
    snprintf(buf, size, "device_type_%d:%d", (int)d.device_type, (int)d.device_id);
  } else {
    snprintf(buf, size, "%s:%d", name, (int)d.device_id);
  }
  return buf;
}

/* Step 2: the DLTensor behind a tensor argument (view or object). */
static inline int kern_scale_tensor_arg(const TVMFFIAny* arg, const char* name, DLTensor** out) {
  if (arg->type_index == kTVMFFIDLTensorPtr) {
    if (arg->v_ptr == NULL) {
      return kern_scale_raise("ValueError", "%s: the DLTensor* is NULL", name);
    }
    *out = (DLTensor*)arg->v_ptr;
    return 0;
  }
  if (arg->type_index == kTVMFFITensor) {
    *out = TVMFFITensorGetDLTensorPtr(arg->v_obj);
    return 0;
  }
  return kern_scale_raise("TypeError", "%s: expected a tensor, got %s", name,
                          kern_scale_type_name(arg->type_index));
}

/* Step 3: factor as a double; ints convert exactly up to 2^53. */
static inline int kern_scale_factor_arg(const TVMFFIAny* arg, double* out) {
  if (arg->type_index == kTVMFFIFloat) {
    *out = arg->v_float64;
    return 0;
  }
  if (arg->type_index == kTVMFFIInt) {
    *out = (double)arg->v_int64;
    return 0;
  }
  return kern_scale_raise("TypeError", "factor: expected a float or an int, got %s",
                          kern_scale_type_name(arg->type_index));
}

/* Step 5: row-major contiguity, ignoring the strides of extent-1 axes (they
 * never move the address). NULL strides and empty tensors are contiguous. */
static inline int kern_scale_is_contiguous(const DLTensor* t) {
  if (t->strides == NULL) return 1;
  /* No elements means no layout: producers (NumPy among them) give empty
   * arrays arbitrary strides. */
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return 1;
  }
  int64_t expect = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] == 1) continue;
    if (t->strides[i] != expect) return 0;
    /* Shapes come from the caller: an overflowing product cannot describe
     * real memory, so it is reported as not contiguous. */
    if (__builtin_mul_overflow(expect, t->shape[i], &expect)) return 0;
  }
  return 1;
}

static inline int kern_scale_check_device(const DLTensor* t, const char* name, int32_t device_type,
                                          const char* device_word) {
  if ((int32_t)t->device.device_type == device_type) return 0;
  char dev[48];
  return kern_scale_raise("ValueError", "%s: expected a %s tensor, got one on %s", name,
                          device_word, kern_scale_device_str(t->device, dev, sizeof dev));
}

static inline int kern_scale_check_layout_contig(const DLTensor* t, const char* name) {
  if (t->ndim < 0 || (t->ndim > 0 && t->shape == NULL)) {
    return kern_scale_raise("ValueError", "%s: malformed shape (ndim %d)", name, (int)t->ndim);
  }
  if (kern_scale_is_contiguous(t)) return 0;
  return kern_scale_raise("ValueError", "%s: must be contiguous", name);
}

static inline int kern_scale_check_1d(const DLTensor* t, const char* name) {
  if (t->ndim != 1) {
    return kern_scale_raise("ValueError", "%s: must be 1-D, got %d dimensions", name, (int)t->ndim);
  }
  if (t->shape[0] < 0) {
    return kern_scale_raise("ValueError", "%s: negative extent %lld", name, (long long)t->shape[0]);
  }
  return 0;
}

static inline int kern_scale_dtype_bit(DLDataType t) {
  if (t.lanes != 1) return 0;
  if (t.code == kDLFloat && t.bits == 16) return KERN_SCALE_F16;
  if (t.code == kDLBfloat && t.bits == 16) return KERN_SCALE_BF16;
  if (t.code == kDLFloat && t.bits == 32) return KERN_SCALE_F32;
  if (t.code == kDLFloat && t.bits == 64) return KERN_SCALE_F64;
  return 0;
}

static inline int kern_scale_same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* Steps 7 to 11, once each tensor is known to be a 1-D contiguous tensor on
 * the kernel's device type. */
static inline int kern_scale_check_pair(const DLTensor* out, const DLTensor* in, int dtypes) {
  char a[48], b[48];
  if (out->device.device_type != in->device.device_type ||
      out->device.device_id != in->device.device_id) {
    kern_scale_device_str(out->device, a, sizeof a);
    kern_scale_device_str(in->device, b, sizeof b);
    return kern_scale_raise("ValueError", "output and input: devices differ (%s vs %s)", a, b);
  }
  if (!kern_scale_same_dtype(out->dtype, in->dtype)) {
    kern_scale_dtype_str(out->dtype, a, sizeof a);
    kern_scale_dtype_str(in->dtype, b, sizeof b);
    return kern_scale_raise("ValueError", "output and input: dtypes differ (%s vs %s)", a, b);
  }
  if (out->shape[0] != in->shape[0]) {
    return kern_scale_raise("ValueError", "output and input: element counts differ (%lld vs %lld)",
                            (long long)out->shape[0], (long long)in->shape[0]);
  }
  if ((kern_scale_dtype_bit(in->dtype) & dtypes) == 0) {
    return kern_scale_raise("TypeError", "input: unsupported dtype %s",
                            kern_scale_dtype_str(in->dtype, a, sizeof a));
  }
  if (in->shape[0] > 0 && out->data == NULL) {
    return kern_scale_raise("ValueError", "output: data pointer is NULL");
  }
  if (in->shape[0] > 0 && in->data == NULL) {
    return kern_scale_raise("ValueError", "input: data pointer is NULL");
  }
  return 0;
}

/*
 * Runs every check in the documented order. `device_type` is the kernel's
 * device (kDLCPU or kDLCUDA), `device_word` how messages name it ("CPU",
 * "CUDA"), `dtypes` the KERN_SCALE_* bits it computes. On success fills *out
 * and returns 0; otherwise returns -1 with the error raised.
 */
static inline int kern_scale_unpack(const TVMFFIAny* args, int32_t num_args, int32_t device_type,
                                    const char* device_word, int dtypes, KernScaleArgs* out) {
  if (num_args != 3) {
    return kern_scale_raise(
        "TypeError", "scale: expected 3 arguments (output, input, factor), got %d", (int)num_args);
  }
  if (kern_scale_tensor_arg(&args[0], "output", &out->output) != 0) return -1;
  if (kern_scale_tensor_arg(&args[1], "input", &out->input) != 0) return -1;
  if (kern_scale_factor_arg(&args[2], &out->factor) != 0) return -1;
  if (kern_scale_check_device(out->output, "output", device_type, device_word) != 0) return -1;
  if (kern_scale_check_device(out->input, "input", device_type, device_word) != 0) return -1;
  if (kern_scale_check_layout_contig(out->output, "output") != 0) return -1;
  if (kern_scale_check_layout_contig(out->input, "input") != 0) return -1;
  if (kern_scale_check_1d(out->output, "output") != 0) return -1;
  if (kern_scale_check_1d(out->input, "input") != 0) return -1;
  if (kern_scale_check_pair(out->output, out->input, dtypes) != 0) return -1;
  out->n = out->input->shape[0];
  return 0;
}

/* The element pointer of a validated tensor (data plus byte_offset). */
static inline void* kern_scale_data(const DLTensor* t) {
  /* Only an empty tensor gets here without data (check 11), and even
   * NULL + 0 is undefined behaviour in C: never offset a NULL pointer. */
  if (t->data == NULL) return NULL;
  return (char*)t->data + t->byte_offset;
}

#endif
