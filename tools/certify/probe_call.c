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
    {"bfloat", kDLBfloat}, {"float", kDLFloat}, {"uint", kDLUInt},
    {"int", kDLInt},       {"complex", kDLComplex}, {"handle", kDLOpaqueHandle},
};

static const struct {
  const char* name;
  int type;
} kDevices[] = {
    {"cuda_host", kDLCUDAHost}, {"cuda_managed", kDLCUDAManaged}, {"cpu", kDLCPU},
    {"cuda", kDLCUDA},          {"rocm", kDLROCM},                {"metal", kDLMetal},
    {"vulkan", kDLVulkan},      {"opencl", kDLOpenCL},
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

int cert_arg_is_tensor(const CertArg* a) {
  return a->kind == CERT_ARG_DLTENSOR || a->kind == CERT_ARG_TENSOR;
}

int cert_arg_has_layout(const CertArg* a) { return cert_arg_is_tensor(a) || a->kind == CERT_ARG_DATAPTR; }

int64_t cert_arg_elements(const CertArg* a) {
  int64_t n = 1;
  for (int32_t k = 0; k < a->ndim; ++k) {
    if (a->shape[k] < 0 || __builtin_mul_overflow(n, a->shape[k], &n)) return -1;
  }
  return n;
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
  const char* prefix = a->kind == CERT_ARG_TENSOR ? "tensor" : a->kind == CERT_ARG_DATAPTR ? "ptr" : "dl";
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
        if (call->items[a->i + k].kind != CERT_ARG_ARRAY) format_arg(o, call, &call->items[a->i + k]);
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

/* ---- parsing --------------------------------------------------------- */

typedef struct {
  const char* s;
  size_t n, pos;
  char* err;
  size_t errlen;
} In;

static int fail(In* in, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(In* in, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int used = snprintf(in->err, in->errlen, "at column %zu: ", in->pos + 1);
  if (used >= 0 && (size_t)used < in->errlen) vsnprintf(in->err + used, in->errlen - (size_t)used, fmt, ap);
  va_end(ap);
  return -1;
}

static void skip_spaces(In* in) {
  while (in->pos < in->n && isspace((unsigned char)in->s[in->pos])) ++in->pos;
}

static int accept(In* in, const char* word) {
  size_t len = strlen(word);
  if (in->n - in->pos >= len && memcmp(in->s + in->pos, word, len) == 0) {
    in->pos += len;
    return 1;
  }
  return 0;
}

/* A token up to one of the stop characters (or the end). */
static size_t token(In* in, const char* stops) {
  size_t start = in->pos;
  while (in->pos < in->n && strchr(stops, in->s[in->pos]) == NULL) ++in->pos;
  return in->pos - start;
}

static int parse_int64(In* in, int64_t* out) {
  char tmp[32];
  size_t start = in->pos;
  size_t len = token(in, ",)x;]}@ ");
  if (len == 0 || len >= sizeof tmp) return fail(in, "expected an integer");
  memcpy(tmp, in->s + start, len);
  tmp[len] = '\0';
  char* end = NULL;
  long long v = strtoll(tmp, &end, 10);
  if (*end != '\0') return fail(in, "'%s' is not an integer", tmp);
  *out = v;
  return 0;
}

static int parse_dims(In* in, int64_t* dims, int32_t* ndim) {
  *ndim = 0;
  for (;;) {
    if (*ndim == CERT_MAX_NDIM) return fail(in, "more than %d dimensions", CERT_MAX_NDIM);
    if (parse_int64(in, &dims[*ndim]) != 0) return -1;
    ++*ndim;
    if (!accept(in, "x")) return 0;
  }
}

static int parse_word(In* in, char* out) {
  size_t start = in->pos;
  size_t len = token(in, ",) ]");
  if (len >= CERT_WORD_MAX) return fail(in, "word longer than %d bytes", CERT_WORD_MAX - 1);
  memcpy(out, in->s + start, len);
  out[len] = '\0';
  return 0;
}

static int parse_tensor_options(In* in, CertArg* a) {
  do {
    if (accept(in, "strides=")) {
      if (accept(in, "null")) {
        a->strides_mode = CERT_STRIDES_NULL;
      } else {
        int32_t nd = 0;
        if (parse_dims(in, a->strides, &nd) != 0) return -1;
        if (nd != a->ndim) return fail(in, "%d strides for %d dimensions", nd, a->ndim);
        for (int32_t d = 0; d < nd; ++d) {
          /* certify lays data out for non-negative strides only. */
          if (a->strides[d] < 0 || a->strides[d] > (1 << 24)) return fail(in, "strides must be 0..16777216");
        }
        a->strides_mode = CERT_STRIDES_EXPLICIT;
      }
    } else if (accept(in, "offset=")) {
      int64_t off = 0;
      if (parse_int64(in, &off) != 0) return -1;
      if (off < 0 || off > (1 << 20)) return fail(in, "offset must be 0..1048576");
      a->byte_offset = (uint64_t)off;
    } else if (accept(in, "align=")) {
      int64_t align = 0;
      if (parse_int64(in, &align) != 0) return -1;
      if (align < 1 || align > 4096 || (align & (align - 1)) != 0) return fail(in, "align must be a power of two up to 4096");
      a->align = (uint32_t)align;
    } else if (accept(in, "data=")) {
      if (accept(in, "null")) {
        a->data = CERT_DATA_NULL;
      } else if (accept(in, "guard")) {
        a->data = CERT_DATA_GUARD;
      } else {
        return fail(in, "data= takes null or guard");
      }
    } else {
      return fail(in, "unknown tensor option");
    }
  } while (accept(in, ";"));
  if (!accept(in, "}")) return fail(in, "expected '}'");
  return 0;
}

static int parse_tensor(In* in, CertArg* a) {
  size_t start = in->pos;
  size_t len = token(in, "[");
  if (cert_dtype_parse(in->s + start, len, &a->dtype) != 0 || !accept(in, "[")) {
    return fail(in, "expected a dtype and '['");
  }
  a->ndim = 0;
  if (!accept(in, "]")) {
    if (parse_dims(in, a->shape, &a->ndim) != 0) return -1;
    if (!accept(in, "]")) return fail(in, "expected ']'");
  }
  for (int32_t k = 0; k < a->ndim; ++k) {
    if (a->shape[k] < 0 || a->shape[k] > (1 << 24)) return fail(in, "extents must be 0..16777216");
  }
  if (cert_arg_elements(a) > (1 << 24)) return fail(in, "more than 16777216 elements");
  if (accept(in, "{") && parse_tensor_options(in, a) != 0) return -1;
  if (!accept(in, "@")) return fail(in, "expected '@device'");
  start = in->pos;
  len = token(in, ",) ]");
  if (cert_device_parse(in->s + start, len, &a->device) != 0) return fail(in, "bad device");
  return 0;
}

static int parse_shape(In* in, CertArg* a) {
  a->kind = CERT_ARG_SHAPE;
  a->ndim = 0;
  if (accept(in, "]")) return 0;
  if (parse_dims(in, a->shape, &a->ndim) != 0) return -1;
  for (int32_t k = 0; k < a->ndim; ++k) {
    if (a->shape[k] < 0) return fail(in, "extents must not be negative");
  }
  return accept(in, "]") ? 0 : fail(in, "expected ']'");
}

static int parse_item(In* in, CertArg* a) {
  *a = cert_arg_simple(CERT_ARG_NONE);
  size_t start = in->pos;
  if (accept(in, "none")) return 0;
  if (accept(in, "bool:")) {
    a->kind = CERT_ARG_BOOL;
    if (accept(in, "true")) a->i = 1;
    else if (!accept(in, "false")) return fail(in, "bool takes true or false");
    return 0;
  }
  if (accept(in, "int:")) {
    a->kind = CERT_ARG_INT;
    return parse_int64(in, &a->i);
  }
  if (accept(in, "float:")) {
    char tmp[40];
    size_t s0 = in->pos;
    size_t len = token(in, ",) ]");
    if (len == 0 || len >= sizeof tmp) return fail(in, "expected a number");
    memcpy(tmp, in->s + s0, len);
    tmp[len] = '\0';
    char* end = NULL;
    a->kind = CERT_ARG_FLOAT;
    a->f = strtod(tmp, &end);
    return *end == '\0' ? 0 : fail(in, "'%s' is not a number", tmp);
  }
  if (accept(in, "str:")) return a->kind = CERT_ARG_STR, parse_word(in, a->word);
  if (accept(in, "rawstr:")) return a->kind = CERT_ARG_RAWSTR, parse_word(in, a->word);
  if (accept(in, "bytes:")) return a->kind = CERT_ARG_BYTES, parse_word(in, a->word);
  if (accept(in, "dtype:")) {
    size_t s0 = in->pos;
    a->kind = CERT_ARG_DTYPE;
    return cert_dtype_parse(in->s + s0, token(in, ",) ]"), &a->dtype) == 0 ? 0 : fail(in, "bad dtype");
  }
  if (accept(in, "device:")) {
    size_t s0 = in->pos;
    a->kind = CERT_ARG_DEVICE;
    return cert_device_parse(in->s + s0, token(in, ",) ]"), &a->device) == 0 ? 0 : fail(in, "bad device");
  }
  if (accept(in, "ptr:")) {
    a->kind = CERT_ARG_PTR;
    if (accept(in, "guard")) a->i = 1;
    else if (!accept(in, "null")) return a->kind = CERT_ARG_DATAPTR, parse_tensor(in, a);
    return 0;
  }
  if (accept(in, "shape:[")) return parse_shape(in, a);
  if (accept(in, "object:")) {
    if (accept(in, "function")) a->kind = CERT_ARG_FUNCTION;
    else if (accept(in, "error")) a->kind = CERT_ARG_ERROR;
    else return fail(in, "object takes function or error");
    return 0;
  }
  if (accept(in, "dl:null")) return a->kind = CERT_ARG_DLNULL, 0;
  if (accept(in, "dl:")) return a->kind = CERT_ARG_DLTENSOR, parse_tensor(in, a);
  if (accept(in, "tensor:")) return a->kind = CERT_ARG_TENSOR, parse_tensor(in, a);
  in->pos = start;
  return fail(in, "unknown argument kind");
}

/* An argument: an item, or an array of items (kept in call->items). */
static int parse_arg(In* in, CertCall* call, CertArg* a) {
  if (!accept(in, "array:[")) return parse_item(in, a);
  *a = cert_arg_simple(CERT_ARG_ARRAY);
  a->i = call->nitems;
  skip_spaces(in);
  if (accept(in, "]")) return 0;
  for (;;) {
    if (call->nitems == CERT_MAX_ITEMS) return fail(in, "more than %d array items in a call", CERT_MAX_ITEMS);
    skip_spaces(in);
    if (parse_item(in, &call->items[call->nitems]) != 0) return -1;
    call->nitems++;
    a->ndim++;
    skip_spaces(in);
    if (accept(in, "]")) return 0;
    if (!accept(in, ",")) return fail(in, "expected ',' or ']'");
  }
}

static int parse_attr(In* in, CertCall* call) {
  size_t start;
  if (accept(in, "runtime=")) {
    start = in->pos;
    size_t len = token(in, " ");
    if (len >= sizeof call->runtime) return fail(in, "runtime too long");
    memcpy(call->runtime, in->s + start, len);
    call->runtime[len] = '\0';
    return 0;
  }
  if (accept(in, "threads=")) {
    int64_t t = 0;
    if (parse_int64(in, &t) != 0) return -1;
    if (t < 1 || t > 2) return fail(in, "threads must be 1 or 2");
    call->threads = (int)t;
    return 0;
  }
  if (accept(in, "expect=")) {
    start = in->pos;
    size_t len = token(in, ": ");
    if (len == 0 || len >= sizeof call->expect_kind) return fail(in, "bad error kind");
    memcpy(call->expect_kind, in->s + start, len);
    call->expect_kind[len] = '\0';
    if (accept(in, ":")) {
      start = in->pos;
      len = token(in, " ");
      if (len >= sizeof call->expect_name) return fail(in, "argument name too long");
      memcpy(call->expect_name, in->s + start, len);
      call->expect_name[len] = '\0';
    }
    return 0;
  }
  if (accept(in, "probe=")) {
    start = in->pos;
    size_t len = token(in, " ");
    if (len == 0 || len >= sizeof call->probe) return fail(in, "bad probe name");
    memcpy(call->probe, in->s + start, len);
    call->probe[len] = '\0';
    return 0;
  }
  if (accept(in, "check=reference")) return call->check_reference = 1, 0;
  if (accept(in, "returns=none")) return call->returns_none = 1, 0;
  return fail(in, "unknown attribute");
}

int cert_call_parse(const char* line, CertCall* call, char* err, size_t errlen) {
  In in = {line, strlen(line), 0, err, errlen};
  memset(call, 0, sizeof *call);
  call->threads = 1;
  skip_spaces(&in);
  size_t start = in.pos;
  size_t len = token(&in, "( ");
  if (len == 0 || len >= sizeof call->function) return fail(&in, "expected a function name");
  memcpy(call->function, line + start, len);
  if (!accept(&in, "(")) return fail(&in, "expected '('");
  skip_spaces(&in);
  if (!accept(&in, ")")) {
    for (;;) {
      if (call->nargs == CERT_MAX_ARGS) return fail(&in, "more than %d arguments", CERT_MAX_ARGS);
      skip_spaces(&in);
      if (parse_arg(&in, call, &call->args[call->nargs]) != 0) return -1;
      ++call->nargs;
      skip_spaces(&in);
      if (accept(&in, ")")) break;
      if (!accept(&in, ",")) return fail(&in, "expected ',' or ')'");
    }
  }
  for (;;) {
    skip_spaces(&in);
    if (in.pos == in.n) return 0;
    if (parse_attr(&in, call) != 0) return -1;
  }
}
