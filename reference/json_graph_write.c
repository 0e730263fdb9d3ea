/* "ffi.ToJSONGraphString"(value, metadata): a value as upstream's JSON
 * graph, what Python's pickle of an FFI container carries:
 *
 *   {"root_index":R,"nodes":[node, ...]}   (and "metadata" when given)
 *
 * Each node is {"type":<type key>,"data":<payload>} ({"type":"None"} for
 * None), written after the nodes it refers to by index; an equal value (a
 * str, an int) or the same object is written once. Payloads: bool, int,
 * float (NaN, Infinity, an integral value with ".0", else 17 digits), a
 * dtype string, a device [type, id], a str (JSON-escaped, "/" too), bytes
 * (base64, its "/" escaped too), a big int in decimal, a shape's extents, a
 * sequence's element indices, a map's key and value indices in turn.
 * Objects of other types (their fields) are refused with a TypeError: this
 * runtime serialises values and containers only. A list met again inside
 * itself is a ValueError. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "dtype.h"
#include "tffi_error.h"
#include "map.h"
#include "mem.h"
#include "object.h"
#include "recursive.h"
#include "repr_text.h"
#include "tffi_string.h"

typedef struct {
  TffiText nodes;  /* the nodes written so far, comma separated */
  int64_t count;   /* how many */
  TffiMap* index;  /* value -> node index (a dict: AnyEqual keys) */
  TffiMap* active; /* lists being written, for cycles */
  int depth;
} TffiGraph;

static int tffi_graph_node(TffiGraph* g, const TVMFFIAny* v, int64_t* out);

static void tffi_json_put_string(TffiText* t, const char* s, size_t n) {
  tffi_text_add(t, "\"", 1);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)s[i];
    const char* esc = c == '"'    ? "\\\""
                      : c == '\\' ? "\\\\"
                      : c == '/'  ? "\\/"
                      : c == '\n' ? "\\n"
                      : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t"
                      : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f"
                                  : NULL;
    if (esc)
      tffi_text_str(t, esc);
    else if (c < 0x20)
      tffi_text_printf(t, "\\u%04x", c);
    else
      tffi_text_add(t, (const char*)&c, 1);
  }
  tffi_text_add(t, "\"", 1);
}

static void tffi_json_base64(TffiText* t, const unsigned char* s, size_t n) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  tffi_text_add(t, "\"", 1);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t w = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                 (i + 2 < n ? s[i + 2] : 0);
    char out[4] = {digits[w >> 18], digits[(w >> 12) & 63], i + 1 < n ? digits[(w >> 6) & 63] : '=',
                   i + 2 < n ? digits[w & 63] : '='};
    /* Upstream escapes a slash in every string, base64 text included. */
    for (int k = 0; k < 4; ++k) tffi_text_str(t, out[k] == '/' ? "\\/" : (char[2]){out[k], 0});
  }
  tffi_text_add(t, "\"", 1);
}

static void tffi_json_float(TffiText* t, double v) {
  double whole;
  if (isnan(v))
    tffi_text_str(t, "NaN");
  else if (isinf(v))
    tffi_text_str(t, v < 0 ? "-Infinity" : "Infinity");
  else if (fabs(v) < 9007199254740992.0 && modf(v, &whole) == 0)
    tffi_text_printf(t, "%.1f", whole);
  else
    tffi_text_printf(t, "%.17g", v);
}

/* The payload of a container: the node indices of its children. */
static int tffi_graph_children(TffiGraph* g, const TVMFFIAny* v, TffiText* data) {
  int64_t at;
  tffi_text_add(data, "[", 1);
  if (v->type_index == kTVMFFIMap || v->type_index == kTVMFFIDict) {
    const TffiMap* m = (const TffiMap*)v->v_obj;
    int first = 1;
    for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p)) {
      for (int half = 0; half < 2; ++half) {
        const TffiKV* kv = tffi_map_at(m, p);
        if (tffi_graph_node(g, half ? &kv->value : &kv->key, &at) != 0) return -1;
        tffi_text_printf(data, first ? "%lld" : ",%lld", (long long)at);
        first = 0;
      }
    }
  } else {
    const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(v->v_obj);
    for (int64_t i = 0; i < cell->size; ++i) {
      if (tffi_graph_node(g, (const TVMFFIAny*)cell->data + i, &at) != 0) return -1;
      tffi_text_printf(data, i ? ",%lld" : "%lld", (long long)at);
    }
  }
  tffi_text_add(data, "]", 1);
  return 0;
}

/* The payload of v into data (its children written first). */
static int tffi_graph_payload(TffiGraph* g, const TVMFFIAny* v, TffiText* data) {
  int32_t t = v->type_index;
  size_t n;
  const char* text = tffi_any_str_data(v, &n);
  char dtype[TFFI_DTYPE_TEXT_MAX];
  int len;
  switch (t) {
    case kTVMFFIBool: tffi_text_str(data, v->v_int64 ? "true" : "false"); return 0;
    case kTVMFFIInt: tffi_text_printf(data, "%lld", (long long)v->v_int64); return 0;
    case kTVMFFIFloat: tffi_json_float(data, v->v_float64); return 0;
    case kTVMFFIDevice:
      tffi_text_printf(data, "[%d,%d]", (int)v->v_device.device_type, (int)v->v_device.device_id);
      return 0;
    case kTVMFFIDataType:
      if ((len = tffi_dtype_format(v->v_dtype, dtype)) < 0) return -1;
      tffi_json_put_string(data, dtype, (size_t)len);
      return 0;
    case kTVMFFISmallStr:
    case kTVMFFIStr: tffi_json_put_string(data, text, n); return 0;
    case kTVMFFISmallBytes:
    case kTVMFFIBytes: tffi_json_base64(data, (const unsigned char*)text, n); return 0;
    case kTVMFFIShape: {
      const TVMFFIShapeCell* s = TVMFFIShapeGetCellPtr(v->v_obj);
      tffi_text_add(data, "[", 1);
      for (size_t i = 0; i < s->size; ++i)
        tffi_text_printf(data, i ? ",%lld" : "%lld", (long long)s->data[i]);
      tffi_text_add(data, "]", 1);
      return 0;
    }
    case kTVMFFIBigInt: {
      TVMFFIByteArray w = TVMFFIBigIntGetContentByteArray(v);
      tffi_text_add(data, "\"", 1);
      tffi_text_bigint(data, w.data, w.size);
      tffi_text_add(data, "\"", 1);
      return 0;
    }
    case kTVMFFIArray:
    case kTVMFFIList:
    case kTVMFFIMap:
    case kTVMFFIDict: return tffi_graph_children(g, v, data);
    default: {
      const char* key = tffi_rec_type_key(t, &len);
      return tffi_raise(TFFI_TYPE_ERROR,
                        "ffi.ToJSONGraphString: values of type `%.*s` are not serialised by this "
                        "runtime, which serialises values and containers only",
                        len, key);
    }
  }
}

static int tffi_graph_node(TffiGraph* g, const TVMFFIAny* v, int64_t* out) {
  TffiKV* seen;
  int rc = tffi_map_find(g->index, v, &seen);
  if (rc != 0) return rc < 0 ? -1 : (*out = seen->value.v_int64, 0);
  if (v->type_index == kTVMFFIList && tffi_map_find(g->active, v, &seen) == 1)
    return tffi_raise(TFFI_VALUE_ERROR, "ffi.ToJSONGraphString: a list holds itself (a cycle)");
  if (g->depth >= TFFI_RECURSIVE_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "ffi.ToJSONGraphString: nesting deeper than %d",
                      TFFI_RECURSIVE_MAX_DEPTH);
  TVMFFIAny mark = tffi_any_none();
  if (v->type_index == kTVMFFIList && tffi_map_set(g->active, v, &mark) != 0) return -1;
  TffiText data = {NULL, 0, 0, 0};
  g->depth += 1;
  int none =
      v->type_index == kTVMFFINone || (v->type_index >= kTVMFFIStaticObjectBegin && !v->v_obj);
  rc = none ? 0 : tffi_graph_payload(g, v, &data);
  g->depth -= 1;
  if (v->type_index == kTVMFFIList) tffi_map_erase(g->active, v);
  if (rc == 0) {
    int len;
    const char* key = none ? "None"
                           : tffi_rec_type_key(v->type_index == kTVMFFISmallStr     ? kTVMFFIStr
                                               : v->type_index == kTVMFFISmallBytes ? kTVMFFIBytes
                                                                                    : v->type_index,
                                               &len);
    if (g->count) tffi_text_add(&g->nodes, ",", 1);
    tffi_text_str(&g->nodes, "{\"type\":");
    tffi_json_put_string(&g->nodes, key, none ? 4 : (size_t)len);
    if (!none) {
      tffi_text_str(&g->nodes, ",\"data\":");
      tffi_text_add(&g->nodes, data.items ? data.items : "", data.n);
    }
    tffi_text_add(&g->nodes, "}", 1);
    if (data.failed || g->nodes.failed)
      rc = tffi_raise(TFFI_MEMORY_ERROR, "ffi.ToJSONGraphString: out of memory");
  }
  tffi_free(data.items);
  if (rc != 0) return -1;
  TVMFFIAny index = tffi_any_none();
  index.type_index = kTVMFFIInt;
  index.v_int64 = *out = g->count++;
  return tffi_map_set(g->index, v, &index);
}

static int tffi_to_json_graph_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  TVMFFIAny v;
  if (tffi_args_count(self, num_args, 2)) return -1;
  if (args[1].type_index != kTVMFFINone)
    return tffi_args_error(TFFI_VALUE_ERROR, self, 1, "metadata",
                           "is not None: this runtime writes graphs without metadata");
  if (tffi_any_copy_owned(&args[0], &v) != 0) return -1;
  TffiGraph g = {{NULL, 0, 0, 0},
                 0,
                 (TffiMap*)tffi_map_new(kTVMFFIDict, 0),
                 (TffiMap*)tffi_map_new(kTVMFFIDict, 0),
                 0};
  int64_t root = 0;
  int rc = g.index && g.active ? tffi_graph_node(&g, &v, &root) : -1;
  TffiText out = {NULL, 0, 0, 0};
  if (rc == 0) {
    tffi_text_printf(&out, "{\"root_index\":%lld,\"nodes\":[", (long long)root);
    tffi_text_add(&out, g.nodes.items, g.nodes.n);
    tffi_text_str(&out, "]}");
    rc = out.failed ? tffi_raise(TFFI_MEMORY_ERROR, "ffi.ToJSONGraphString: out of memory")
                    : tffi_any_from_bytes(kTVMFFIStr, out.items, out.n, result);
  }
  tffi_free(out.items);
  tffi_free(g.nodes.items);
  if (g.index) tffi_decref(&g.index->header);
  if (g.active) tffi_decref(&g.active->header);
  tffi_any_release(&v);
  return rc;
}

__attribute__((constructor)) static void tffi_json_graph_write_register(void) {
  tffi_builtin_register("ffi.ToJSONGraphString", tffi_to_json_graph_call);
}
