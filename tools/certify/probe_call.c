#include "probe_call.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtype and device words ---------------------------------------- */

static const struct {
  const char* name;
  uint8_t code;
} kDtypeCodes[] = {
    {"bfloat", kDLBfloat}, {"float", kDLFloat},     {"uint", kDLUInt},
    {"int", kDLInt},       {"complex", kDLComplex}, {"handle", kDLOpaqueHandle},
};

static const struct {
  const char* name;
  int type;
} kDevices[] = {
    {"cuda_host", kDLCUDAHost},
    {"cuda_managed", kDLCUDAManaged},
    {"cpu", kDLCPU},
    {"cuda", kDLCUDA},
    {"rocm", kDLROCM},
    {"metal", kDLMetal},
    {"vulkan", kDLVulkan},
    {"opencl", kDLOpenCL},
};

/* Reads a decimal number of at most 9 digits from s[*pos..n). */
static int read_small_uint(const char* s, size_t n, size_t* pos, long* out) {
  size_t start = *pos;
  long v = 0;
  while (*pos < n && isdigit((unsigned char)s[*pos]) && *pos - start < 9) {
    v = v * 10 + (s[*pos] - '0');
    ++*pos;
  }
  if (*pos == start) return -1;
  *out = v;
  return 0;
}

int cert_dtype_parse(const char* s, size_t n, DLDataType* out) {
  if (n == 4 && memcmp(s, "bool", 4) == 0) {
    *out = (DLDataType){kDLBool, 8, 1};
    return 0;
  }
  for (size_t k = 0; k < sizeof kDtypeCodes / sizeof kDtypeCodes[0]; ++k) {
    size_t len = strlen(kDtypeCodes[k].name);
    if (n <= len || memcmp(s, kDtypeCodes[k].name, len) != 0) continue;
    size_t pos = len;
    long bits = 0, lanes = 1;
    if (read_small_uint(s, n, &pos, &bits) != 0 || bits <= 0 || bits > 255) return -1;
    if (pos < n && s[pos] == 'x') {
      ++pos;
      if (read_small_uint(s, n, &pos, &lanes) != 0 || lanes <= 0 || lanes > 65535) return -1;
    }
    if (pos != n) return -1;
    *out = (DLDataType){kDtypeCodes[k].code, (uint8_t)bits, (uint16_t)lanes};
    return 0;
  }
  return -1;
}

void cert_dtype_format(DLDataType t, char* buf, size_t size) {
  const char* base = NULL;
  if (t.code == kDLBool && t.bits == 8 && t.lanes == 1) {
    snprintf(buf, size, "bool");
    return;
  }
  for (size_t k = 0; k < sizeof kDtypeCodes / sizeof kDtypeCodes[0]; ++k) {
    if (kDtypeCodes[k].code == t.code) base = kDtypeCodes[k].name;
  }
  if (base == NULL) base = "code?";
  if (t.lanes == 1) {
    snprintf(buf, size, "%s%u", base, (unsigned)t.bits);
  } else {
    snprintf(buf, size, "%s%ux%u", base, (unsigned)t.bits, (unsigned)t.lanes);
  }
}

size_t cert_dtype_bytes(DLDataType t) {
  if (t.bits == 0 || t.lanes == 0) return 0;
  return ((size_t)t.bits * t.lanes + 7) / 8;
}

int cert_device_parse(const char* s, size_t n, DLDevice* out) {
  const char* colon = memchr(s, ':', n);
  if (colon == NULL) return -1;
  size_t name_len = (size_t)(colon - s);
  int type = -1;
  for (size_t k = 0; k < sizeof kDevices / sizeof kDevices[0]; ++k) {
    if (strlen(kDevices[k].name) == name_len && memcmp(s, kDevices[k].name, name_len) == 0) {
      type = kDevices[k].type;
    }
  }
  size_t pos = 0;
  long v = 0;
  if (type < 0 && name_len > 4 && memcmp(s, "type", 4) == 0) {
    pos = 4;
    if (read_small_uint(s, name_len, &pos, &v) != 0 || pos != name_len) return -1;
    type = (int)v;
  }
  if (type < 0) return -1;
  pos = name_len + 1;
  if (read_small_uint(s, n, &pos, &v) != 0 || pos != n) return -1;
  *out = (DLDevice){(DLDeviceType)type, (int32_t)v};
  return 0;
}

void cert_device_format(DLDevice d, char* buf, size_t size) {
  for (size_t k = 0; k < sizeof kDevices / sizeof kDevices[0]; ++k) {
    if (kDevices[k].type == (int)d.device_type) {
      snprintf(buf, size, "%s:%d", kDevices[k].name, (int)d.device_id);
      return;
    }
  }
  snprintf(buf, size, "type%d:%d", (int)d.device_type, (int)d.device_id);
}

/* ---- constructors ---------------------------------------------------- */

CertArg cert_arg_simple(CertArgKind kind) {
  CertArg a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  return a;
}

CertArg cert_arg_int(int64_t v) {
  CertArg a = cert_arg_simple(CERT_ARG_INT);
  a.i = v;
  return a;
}

CertArg cert_arg_float(double v) {
  CertArg a = cert_arg_simple(CERT_ARG_FLOAT);
  a.f = v;
  return a;
}

CertArg cert_arg_tensor(CertArgKind kind, DLDataType dtype, int32_t ndim, const int64_t* shape,
                        DLDevice device) {
  CertArg a = cert_arg_simple(kind);
  a.dtype = dtype;
  a.device = device;
  a.ndim = ndim;
  for (int32_t k = 0; k < ndim && k < CERT_MAX_NDIM; ++k) a.shape[k] = shape[k];
  return a;
}

CertArg cert_arg_tensor_1d(CertArgKind kind, DLDataType dtype, int64_t n, DLDevice device) {
  return cert_arg_tensor(kind, dtype, 1, &n, device);
}

/* Variant v of every kind a parameter may be given (v < CERT_ARG_KIND_VARIANTS):
 * phase 2 of the plan tries each in one position. */
CertArg cert_arg_kind_variant(int v, DLDevice dev) {
  const DLDataType f32 = {kDLFloat, 32, 1};
  CertArg a = cert_arg_simple(CERT_ARG_NONE);
  switch (v) {
    // clang-format off
    case 0: break;
    case 1: a.kind = CERT_ARG_BOOL, a.i = 1; break;
    case 2: a = cert_arg_int(3); break;
    case 3: a = cert_arg_float(0.5); break;
    case 4: a.kind = CERT_ARG_STR, strcpy(a.word, "abc"); break;
    case 5: a.kind = CERT_ARG_STR, strcpy(a.word, "a_heap_string"); break;
    case 6: a.kind = CERT_ARG_RAWSTR, strcpy(a.word, "abc"); break;
    case 7: a.kind = CERT_ARG_BYTES, strcpy(a.word, "xyz"); break;
    case 8: a.kind = CERT_ARG_BYTES, strcpy(a.word, "heap_bytes_value"); break;
    case 9: a.kind = CERT_ARG_DTYPE, a.dtype = f32; break;
    case 10: a.kind = CERT_ARG_DEVICE, a.device = dev; break;
    case 11: a.kind = CERT_ARG_PTR, a.i = 0; break;
    case 12: a.kind = CERT_ARG_PTR, a.i = 1; break;
    case 13: a.kind = CERT_ARG_FUNCTION; break;
    case 14: a.kind = CERT_ARG_ERROR; break;
    case 15: a.kind = CERT_ARG_DLNULL; break;
    case 16: a = cert_arg_tensor_1d(CERT_ARG_DLTENSOR, f32, 8, dev); break;
    case 17: a = cert_arg_tensor_1d(CERT_ARG_TENSOR, f32, 8, dev); break;
    default: return a;
      // clang-format on
  }
  return a;
}

int cert_arg_is_tensor(const CertArg* a) {
  return a->kind == CERT_ARG_DLTENSOR || a->kind == CERT_ARG_TENSOR;
}

int cert_arg_has_layout(const CertArg* a) {
  return cert_arg_is_tensor(a) || a->kind == CERT_ARG_DATAPTR;
}

int64_t cert_arg_elements(const CertArg* a) {
  int64_t n = 1;
  for (int32_t k = 0; k < a->ndim; ++k) {
    if (a->shape[k] < 0 || __builtin_mul_overflow(n, a->shape[k], &n)) return -1;
  }
  return n;
}

CertCall cert_call_new(const char* function) {
  CertCall c;
  memset(&c, 0, sizeof c);
  snprintf(c.function, sizeof c.function, "%s", function);
  c.threads = 1;
  return c;
}

int cert_call_next_tensor(const CertCall* c, int after) {
  for (int32_t k = after + 1; k < c->nargs; ++k) {
    if (cert_arg_is_tensor(&c->args[k])) return k;
  }
  return -1;
}

/* ---- formatting ------------------------------------------------------ */

typedef struct {
  char* buf;
  size_t size, len;
} Out;

static void out_printf(Out* o, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(Out* o, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = o->len < o->size ? o->size - o->len : 0;
  int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) o->len += (size_t)n;
}

static void format_dims(Out* o, const int64_t* v, int32_t n) {
  for (int32_t k = 0; k < n; ++k) out_printf(o, "%s%lld", k ? "x" : "", (long long)v[k]);
}

static void format_tensor(Out* o, const CertArg* a) {
  char dt[32], dev[32];
  cert_dtype_format(a->dtype, dt, sizeof dt);
  cert_device_format(a->device, dev, sizeof dev);
  const char* prefix = a->kind == CERT_ARG_TENSOR    ? "tensor"
                       : a->kind == CERT_ARG_DATAPTR ? "ptr"
                                                     : "dl";
  out_printf(o, "%s:%s[", prefix, dt);
  format_dims(o, a->shape, a->ndim);
  out_printf(o, "]");
  const char* sep = "{";
  if (a->strides_mode == CERT_STRIDES_NULL) {
    out_printf(o, "%sstrides=null", sep);
    sep = ";";
  } else if (a->strides_mode == CERT_STRIDES_EXPLICIT) {
    out_printf(o, "%sstrides=", sep);
    format_dims(o, a->strides, a->ndim);
    sep = ";";
  }
  if (a->byte_offset != 0) {
    out_printf(o, "%soffset=%llu", sep, (unsigned long long)a->byte_offset);
    sep = ";";
  }
  if (a->data != CERT_DATA_DEFAULT) {
    out_printf(o, "%sdata=%s", sep, a->data == CERT_DATA_NULL ? "null" : "guard");
    sep = ";";
  }
  if (a->align != 0) {
    out_printf(o, "%salign=%u", sep, (unsigned)a->align);
    sep = ";";
  }
  if (sep[0] == ';') out_printf(o, "}");
  out_printf(o, "@%s", dev);
}

static void format_arg(Out* o, const CertCall* call, const CertArg* a) {
  char w[32];
  switch (a->kind) {
    case CERT_ARG_NONE: out_printf(o, "none"); break;
    case CERT_ARG_BOOL: out_printf(o, "bool:%s", a->i ? "true" : "false"); break;
    case CERT_ARG_INT: out_printf(o, "int:%lld", (long long)a->i); break;
    case CERT_ARG_FLOAT: out_printf(o, "float:%.17g", a->f); break;
    case CERT_ARG_STR: out_printf(o, "str:%s", a->word); break;
    case CERT_ARG_RAWSTR: out_printf(o, "rawstr:%s", a->word); break;
    case CERT_ARG_BYTES: out_printf(o, "bytes:%s", a->word); break;
    case CERT_ARG_DTYPE:
      cert_dtype_format(a->dtype, w, sizeof w);
      out_printf(o, "dtype:%s", w);
      break;
    case CERT_ARG_DEVICE:
      cert_device_format(a->device, w, sizeof w);
      out_printf(o, "device:%s", w);
      break;
    case CERT_ARG_PTR: out_printf(o, "ptr:%s", a->i ? "guard" : "null"); break;
    case CERT_ARG_FUNCTION: out_printf(o, "object:function"); break;
    case CERT_ARG_ERROR: out_printf(o, "object:error"); break;
    case CERT_ARG_DLNULL: out_printf(o, "dl:null"); break;
    case CERT_ARG_DLTENSOR:
    case CERT_ARG_TENSOR:
    case CERT_ARG_DATAPTR: format_tensor(o, a); break;
    case CERT_ARG_SHAPE:
      out_printf(o, "shape:[");
      format_dims(o, a->shape, a->ndim);
      out_printf(o, "]");
      break;
    case CERT_ARG_ARRAY:
      out_printf(o, "array:[");
      for (int32_t k = 0; k < a->ndim && a->i + k < call->nitems; ++k) {
        if (k) out_printf(o, ", ");
        if (call->items[a->i + k].kind != CERT_ARG_ARRAY)
          format_arg(o, call, &call->items[a->i + k]);
      }
      out_printf(o, "]");
      break;
  }
}

int cert_call_format(const CertCall* call, char* buf, size_t size) {
  Out o = {buf, size, 0};
  if (size) buf[0] = '\0';
  out_printf(&o, "%s(", call->function);
  for (int32_t k = 0; k < call->nargs; ++k) {
    if (k) out_printf(&o, ", ");
    format_arg(&o, call, &call->args[k]);
  }
  out_printf(&o, ")");
  if (call->runtime[0]) out_printf(&o, " runtime=%s", call->runtime);
  if (call->threads > 1) out_printf(&o, " threads=%d", call->threads);
  if (call->expect_kind[0]) {
    out_printf(&o, " expect=%s%s%s", call->expect_kind, call->expect_name[0] ? ":" : "",
               call->expect_name);
  }
  if (call->check_reference) out_printf(&o, " check=reference");
  if (call->returns_none) out_printf(&o, " returns=none");
  if (call->probe[0]) out_printf(&o, " probe=%s", call->probe);
  return (int)o.len;
}
