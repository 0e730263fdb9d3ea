/* Parsing a call line (the grammar at the top of probe_call.h): what
 * --replay reads, so every count and length is bounded here. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_call.h"

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
  if (used >= 0 && (size_t)used < in->errlen)
    vsnprintf(in->err + used, in->errlen - (size_t)used, fmt, ap);
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
          if (a->strides[d] < 0 || a->strides[d] > (1 << 24))
            return fail(in, "strides must be 0..16777216");
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
      if (align < 1 || align > 4096 || (align & (align - 1)) != 0)
        return fail(in, "align must be a power of two up to 4096");
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
    if (accept(in, "true"))
      a->i = 1;
    else if (!accept(in, "false"))
      return fail(in, "bool takes true or false");
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
    return cert_dtype_parse(in->s + s0, token(in, ",) ]"), &a->dtype) == 0 ? 0
                                                                           : fail(in, "bad dtype");
  }
  if (accept(in, "device:")) {
    size_t s0 = in->pos;
    a->kind = CERT_ARG_DEVICE;
    return cert_device_parse(in->s + s0, token(in, ",) ]"), &a->device) == 0
               ? 0
               : fail(in, "bad device");
  }
  if (accept(in, "ptr:")) {
    a->kind = CERT_ARG_PTR;
    if (accept(in, "guard"))
      a->i = 1;
    else if (!accept(in, "null"))
      return a->kind = CERT_ARG_DATAPTR, parse_tensor(in, a);
    return 0;
  }
  if (accept(in, "shape:[")) return parse_shape(in, a);
  if (accept(in, "object:")) {
    if (accept(in, "function"))
      a->kind = CERT_ARG_FUNCTION;
    else if (accept(in, "error"))
      a->kind = CERT_ARG_ERROR;
    else
      return fail(in, "object takes function or error");
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
    if (call->nitems == CERT_MAX_ITEMS)
      return fail(in, "more than %d array items in a call", CERT_MAX_ITEMS);
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
