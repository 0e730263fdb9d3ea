/* "ffi.FromJSONGraphString"(text): the value a JSON graph of
 * json_graph_write.c's form describes (what Python's unpickling of an FFI
 * container passes), from this runtime or from upstream's, as far as it
 * holds values and containers. The JSON is read by a strict small parser
 * bounded in depth; every node may refer only to nodes before it, so the
 * graph is built in one pass. Malformed text, a bad index and an unknown
 * type are ValueErrors naming the problem. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "dtype.h"
#include "tffi_error.h"
#include "json_scan.h"
#include "mem.h"
#include "object.h"
#include "recursive.h"
#include "tffi_string.h"
#include "vec.h"

#define TFFI_FN "ffi.FromJSONGraphString"

/* The graph's nodes so far (owned values). */
typedef struct {
  TVMFFIAny* items;
  size_t n, cap;
} TffiNodes;

/* Calls the constructor global `name` with the nodes the JSON array of
 * indices names (each before the node being made). */
static int tffi_json_build(TffiJson* j, const TffiNodes* nodes, const char* name, int raw_ints,
                           TVMFFIAny* out) {
  struct {
    TVMFFIAny* items;
    size_t n, cap;
  } args = {NULL, 0, 0};
  int rc = tffi_json_expect(j, '[');
  if (rc == 0 && !tffi_json_eat(j, ']')) {
    do {
      int64_t i;
      if ((rc = tffi_json_int(j, &i)) != 0) break;
      TVMFFIAny v = tffi_any_none();
      v.type_index = kTVMFFIInt;
      v.v_int64 = i;
      if (!raw_ints && (i < 0 || (uint64_t)i >= nodes->n)) {
        rc = tffi_json_fail(j, "a node refers to one not before it");
        break;
      }
      if (TFFI_VEC_PUSH(&args, raw_ints ? v : nodes->items[i]) != 0) {
        rc = tffi_raise_oom(args.cap * sizeof(TVMFFIAny));
        break;
      }
    } while (tffi_json_eat(j, ','));
    if (rc == 0) rc = tffi_json_expect(j, ']');
  }
  if (rc == 0) rc = tffi_builtin_call(j->fn, name, args.items, (int32_t)args.n, out);
  tffi_free(args.items);
  return rc;
}

static int tffi_base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes base64 text in place; -1 on a bad character. */
static long tffi_base64(char* s, size_t n) {
  size_t out = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n && s[i] != '='; ++i) {
    int v = tffi_base64_value(s[i]);
    if (v < 0) return -1;
    acc = acc << 6 | (uint32_t)v;
    if ((bits += 6) >= 8) s[out++] = (char)(acc >> (bits -= 8));
  }
  return (long)out;
}

/* A decimal big int into a value (an int when it fits). */
static int tffi_decimal(TffiJson* j, const char* text, size_t n, TVMFFIAny* out) {
  int neg = n && text[0] == '-';
  size_t words = n / 18 + 2, used = 1;
  uint64_t* w = tffi_calloc(words, sizeof *w);
  if (w == NULL) return tffi_raise_oom(words * 8);
  for (size_t i = (size_t)neg; i < n; ++i) {
    if (text[i] < '0' || text[i] > '9') {
      tffi_free(w);
      return tffi_json_fail(j, "a big int is not decimal");
    }
    unsigned __int128 carry = (unsigned)(text[i] - '0');
    for (size_t k = 0; k < used; ++k) {
      carry += (unsigned __int128)w[k] * 10;
      w[k] = (uint64_t)carry;
      carry >>= 64;
    }
    if (carry && used < words) w[used++] = (uint64_t)carry;
  }
  if (used < words) ++used; /* room for the sign */
  if (neg) {
    uint64_t c = 1;
    for (size_t k = 0; k < used; ++k) w[k] = ~w[k] + c, c = c && w[k] == 0;
  }
  TVMFFIByteArray bytes = {(const char*)w, used * 8};
  int rc = TVMFFIBigIntFromByteArray(&bytes, out);
  tffi_free(w);
  return rc;
}

/* The value of a node whose type is `type`, its data at the parser. */
static int tffi_json_value(TffiJson* j, const TffiNodes* nodes, const char* type, TVMFFIAny* out) {
  char buf[64];
  *out = tffi_any_none();
  if (strcmp(type, "bool") == 0 || strcmp(type, "float") == 0) {
    if (tffi_json_token(j, buf, sizeof buf)) return -1;
    char* end;
    out->type_index = type[0] == 'b' ? kTVMFFIBool : kTVMFFIFloat;
    if (type[0] == 'b' && (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0))
      return out->v_int64 = buf[0] == 't', 0;
    out->v_float64 = strcmp(buf, "NaN") == 0         ? NAN
                     : strcmp(buf, "Infinity") == 0  ? INFINITY
                     : strcmp(buf, "-Infinity") == 0 ? -INFINITY
                                                     : strtod(buf, &end);
    if (type[0] == 'f' && (isnan(out->v_float64) || isinf(out->v_float64) || *end == '\0'))
      return 0;
    return tffi_json_fail(j, "a bool or float node holds something else");
  }
  if (strcmp(type, "int") == 0) {
    out->type_index = kTVMFFIInt;
    return tffi_json_int(j, &out->v_int64);
  }
  if (strcmp(type, "Device") == 0) {
    int64_t t, id;
    if (tffi_json_expect(j, '[') || tffi_json_int(j, &t) || tffi_json_expect(j, ',') ||
        tffi_json_int(j, &id) || tffi_json_expect(j, ']'))
      return -1;
    out->type_index = kTVMFFIDevice;
    out->v_device.device_type = (DLDeviceType)t;
    out->v_device.device_id = (int32_t)id;
    return 0;
  }
  static const char* const seqs[] = {"ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict", "ffi.Shape"};
  for (size_t i = 0; i < sizeof seqs / sizeof *seqs; ++i)
    if (strcmp(type, seqs[i]) == 0) return tffi_json_build(j, nodes, seqs[i], i == 4, out);
  int text_kind = strcmp(type, "ffi.String") == 0   ? 1
                  : strcmp(type, "ffi.Bytes") == 0  ? 2
                  : strcmp(type, "DataType") == 0   ? 3
                  : strcmp(type, "ffi.BigInt") == 0 ? 4
                                                    : 0;
  if (text_kind == 0)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "%s: nodes of type `%s` are not read by this runtime, "
                      "which reads values and containers only",
                      TFFI_FN, type);
  char* text;
  size_t n;
  if (tffi_json_string(j, &text, &n)) return -1;
  int rc;
  long decoded;
  if (text_kind == 1) {
    rc = tffi_any_from_bytes(kTVMFFIStr, text, n, out);
  } else if (text_kind == 2) {
    rc = (decoded = tffi_base64(text, n)) < 0
             ? tffi_json_fail(j, "bad base64")
             : tffi_any_from_bytes(kTVMFFIBytes, text, (size_t)decoded, out);
  } else if (text_kind == 3) {
    out->type_index = kTVMFFIDataType;
    rc = tffi_dtype_parse(text, n, &out->v_dtype);
  } else {
    rc = tffi_decimal(j, text, n, out);
  }
  tffi_free(text);
  return rc;
}

/* One node object: its type, and its data read after the type is known. */
static int tffi_json_node(TffiJson* j, const TffiNodes* nodes, TVMFFIAny* out) {
  char* type = NULL;
  size_t len, data_at = 0;
  int rc = tffi_json_expect(j, '{');
  while (rc == 0 && !tffi_json_eat(j, '}')) {
    char* key;
    if ((rc = tffi_json_string(j, &key, &len)) != 0 || (rc = tffi_json_expect(j, ':')) != 0) break;
    tffi_json_space(j);
    if (strcmp(key, "type") == 0 && type == NULL)
      rc = tffi_json_string(j, &type, &len);
    else if (strcmp(key, "data") == 0)
      data_at = j->at, rc = tffi_json_skip(j);
    else
      rc = tffi_json_skip(j);
    tffi_free(key);
    if (rc == 0 && !tffi_json_eat(j, ',') && (rc = tffi_json_expect(j, '}')) == 0) break;
  }
  if (rc == 0 && type == NULL) rc = tffi_json_fail(j, "a node has no type");
  if (rc == 0 && strcmp(type, "None") == 0) {
    *out = tffi_any_none();
  } else if (rc == 0) {
    if (data_at == 0) rc = tffi_json_fail(j, "a node has no data");
    TffiJson at = {j->fn, j->s, j->n, data_at, j->depth};
    if (rc == 0) rc = tffi_json_value(&at, nodes, type, out);
  }
  tffi_free(type);
  return rc;
}

static int tffi_from_json_graph(TffiJson* j, TVMFFIAny* result) {
  TffiNodes nodes = {NULL, 0, 0};
  int64_t root = -1;
  int rc = tffi_json_expect(j, '{');
  while (rc == 0 && !tffi_json_eat(j, '}')) {
    char* key;
    size_t len;
    if ((rc = tffi_json_string(j, &key, &len)) != 0 || (rc = tffi_json_expect(j, ':')) != 0) break;
    if (strcmp(key, "root_index") == 0) {
      rc = tffi_json_int(j, &root);
    } else if (strcmp(key, "nodes") == 0) {
      rc = tffi_json_expect(j, '[');
      if (rc == 0 && !tffi_json_eat(j, ']')) {
        do {
          TVMFFIAny v;
          if ((rc = tffi_json_node(j, &nodes, &v)) != 0) break;
          if (TFFI_VEC_PUSH(&nodes, v) != 0) {
            tffi_any_release(&v);
            rc = tffi_raise_oom(nodes.cap * sizeof v);
          }
        } while (rc == 0 && tffi_json_eat(j, ','));
        if (rc == 0) rc = tffi_json_expect(j, ']');
      }
    } else {
      rc = tffi_json_skip(j);
    }
    tffi_free(key);
    if (rc == 0 && !tffi_json_eat(j, ',') && (rc = tffi_json_expect(j, '}')) == 0) break;
  }
  if (rc == 0 && (root < 0 || (uint64_t)root >= nodes.n))
    rc = tffi_json_fail(j, "root_index names no node");
  if (rc == 0) rc = tffi_any_copy_owned(&nodes.items[root], result);
  for (size_t i = 0; i < nodes.n; ++i) tffi_any_release(&nodes.items[i]);
  tffi_free(nodes.items);
  return rc;
}

static int tffi_from_json_graph_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  const char* text;
  size_t n;
  if (tffi_args_count(self, num_args, 1) || tffi_args_str(self, args, 0, "text", &text, &n))
    return -1;
  TffiJson j = {TFFI_FN, text, n, 0, 0};
  return tffi_from_json_graph(&j, result);
}

__attribute__((constructor)) static void tffi_json_graph_read_register(void) {
  tffi_builtin_register(TFFI_FN, tffi_from_json_graph_call);
}
