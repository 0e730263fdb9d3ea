#include "probe_args.h"

#include <dlfcn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

CertRuntimeApi cert_api;

/* ---- guard regions: what a fault at an address blames ------------------- */

enum { MAX_REGIONS = 64 };
typedef struct {
  uintptr_t start, end;
  int32_t region, arg;
} Region;
static Region g_regions[MAX_REGIONS];
static volatile int g_nregions;

void cert_guard_add(void* start, size_t len, CertRegion region, int32_t arg) {
  if (g_nregions == MAX_REGIONS) return;
  g_regions[g_nregions] = (Region){(uintptr_t)start, (uintptr_t)start + len, region, arg};
  g_nregions = g_nregions + 1;
}

void cert_guards_reset(void) { g_nregions = 0; }

void cert_guard_find(uintptr_t addr, int32_t* region, int32_t* arg) {
  for (int k = 0; k < g_nregions; ++k) {
    if (addr >= g_regions[k].start && addr < g_regions[k].end) {
      *region = g_regions[k].region;
      *arg = g_regions[k].arg;
    }
  }
}

/* ---- memory with unreadable neighbours --------------------------------- */

size_t cert_page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* A mapping of `len` usable bytes that ends exactly at an unreadable page
 * (or, with `align`, as near it as a start at a multiple of `align`
 * allows). Returns the start of the usable bytes (or the guard page itself
 * when len is 0); *base and *total say what to unmap. */
void* cert_guarded_alloc(size_t len, size_t align, void** base, size_t* total, void** guard) {
  size_t ps = cert_page_size();
  if (align > 1) len = (len + align - 1) / align * align;
  size_t body = (len + ps - 1) / ps * ps;
  *total = body + ps;
  char* m = mmap(NULL, *total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (mprotect(m + body, ps, PROT_NONE) != 0) {
    munmap(m, *total);
    return NULL;
  }
  *base = m;
  *guard = m + body;
  return m + body - len;
}

/* ---- building arguments ------------------------------------------------- */

/* Where one built value goes: the value itself, what to release after the
 * call, the memory behind it, and which argument a fault there blames. */
typedef struct {
  TVMFFIAny* value;
  TVMFFIAny* owned;
  TensorBox** box;
  int32_t arg;
} Slot;

double cert_fill_value(int32_t arg, int64_t i) {
  /* Quarter steps in [-2.75, 2.75]: exact in every float type, and never
   * zero everywhere so a kernel that writes nothing is seen. */
  return (double)(((i * 7 + arg * 3) % 23) - 11) * 0.25;
}

/* The elements a layout spans (largest offset + 1), or -1. */
static int64_t span_elements(const TensorBox* b) {
  int64_t span = 1;
  for (int32_t k = 0; k < b->dl.ndim; ++k) {
    if (b->shape[k] == 0) return 0;
    int64_t st = b->strides[k] < 0 ? -b->strides[k] : b->strides[k];
    int64_t add;
    if (__builtin_mul_overflow(b->shape[k] - 1, st, &add) ||
        __builtin_add_overflow(span, add, &span))
      return -1;
  }
  return span;
}

static void compact_strides(const CertArg* a, int64_t* st) {
  int64_t s = 1;
  for (int32_t k = a->ndim - 1; k >= 0; --k) {
    st[k] = s;
    s *= a->shape[k] > 0 ? a->shape[k] : 1;
  }
}

/* Element i (row-major index) at its strided offset, for every element. */
static void fill_elements(const CertArg* a, const TensorBox* t, char* first, int32_t arg) {
  size_t esize = cert_dtype_bytes(a->dtype);
  int64_t n = cert_arg_elements(a);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (int32_t d = a->ndim - 1; d >= 0; --d) {
      off += (rem % t->shape[d]) * (t->strides[d] < 0 ? -t->strides[d] : t->strides[d]);
      rem /= t->shape[d];
    }
    if (cert_value_store(a->dtype, first + off * (int64_t)esize, cert_fill_value(arg, i)) != 0) {
      memset(first + off * (int64_t)esize, (int)(i & 0x7f), esize);
    }
  }
}

/* The data of a tensor or data pointer: host memory ending at a guard page
 * (CPU), the unreadable guard page itself (other devices), or NULL. */
static int build_data(const CertArg* a, TensorBox* t, const Built* b, int32_t arg, char* note,
                      size_t nn) {
  int64_t span = span_elements(t);
  size_t esize = cert_dtype_bytes(a->dtype);
  if (esize == 0 || span < 0 || (uint64_t)span > (1u << 26) / esize) {
    return snprintf(note, nn, "argument %d: layout too large to build", (int)arg), -1;
  }
  t->span_bytes = (size_t)span * esize;
  int is_cpu = a->device.device_type == kDLCPU;
  if (a->data == CERT_DATA_NULL || (!is_cpu && span == 0 && a->data == CERT_DATA_DEFAULT)) {
    t->dl.data = NULL;
    return 0;
  }
  if (a->data == CERT_DATA_GUARD || !is_cpu) {
    /* Never hand a pointer to readable host memory as device memory. */
    t->dl.data = b->guard_page;
    return 0;
  }
  void* guard = NULL;
  char* data = cert_guarded_alloc(t->span_bytes + a->byte_offset, a->align, &t->map_base,
                                  &t->map_len, &guard);
  if (data == NULL) return snprintf(note, nn, "argument %d: mmap failed", (int)arg), -1;
  cert_guard_add(guard, cert_page_size(), CERT_REGION_DATA_END, arg);
  t->dl.data = data;
  char* first = data + a->byte_offset;
  fill_elements(a, t, first, arg);
  t->before = malloc(t->span_bytes ? t->span_bytes : 1);
  if (t->before) memcpy(t->before, first, t->span_bytes);
  return 0;
}

static int make_tensor_object(TensorBox* t, const Slot* s, char* note, size_t nn) {
  if (cert_api.tensor_from == NULL)
    return snprintf(note, nn, "the runtime lacks TVMFFITensorFromDLPackVersioned"), -1;
  t->managed.version.major = DLPACK_MAJOR_VERSION;
  t->managed.version.minor = DLPACK_MINOR_VERSION;
  t->managed.dl_tensor = t->dl;
  TVMFFIObjectHandle h = NULL;
  if (cert_api.tensor_from(&t->managed, 0, 0, &h) != 0 || h == NULL) {
    TVMFFIObjectHandle err = NULL;
    cert_api.error_move(&err);
    if (err) {
      TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
      snprintf(note, nn, "the runtime refused to make this Tensor: %.*s: %.*s", (int)c->kind.size,
               c->kind.data, (int)c->message.size, c->message.data);
      cert_api.dec_ref(err);
    } else {
      snprintf(note, nn, "the runtime refused to make this Tensor");
    }
    return -1;
  }
  *s->owned = (TVMFFIAny){.type_index = kTVMFFITensor, .v_obj = h};
  *s->value = *s->owned;
  return 0;
}

static int build_tensor(const CertArg* a, const Slot* s, Built* b, char* note, size_t nn) {
  TensorBox* t = calloc(1, sizeof *t);
  if (t == NULL) return snprintf(note, nn, "out of memory"), -1;
  *s->box = t;
  memcpy(t->shape, a->shape, sizeof t->shape);
  if (a->strides_mode == CERT_STRIDES_EXPLICIT) {
    memcpy(t->strides, a->strides, sizeof t->strides);
  } else {
    compact_strides(a, t->strides);
  }
  t->dl.ndim = a->ndim;
  t->dl.dtype = a->dtype;
  t->dl.device = a->device;
  t->dl.shape = t->shape;
  t->dl.strides = a->strides_mode == CERT_STRIDES_NULL && a->ndim > 0 ? NULL : t->strides;
  t->dl.byte_offset = a->byte_offset;
  if (build_data(a, t, b, s->arg, note, nn) != 0) return -1;
  if (a->kind == CERT_ARG_DLTENSOR) {
    *s->value = (TVMFFIAny){.type_index = kTVMFFIDLTensorPtr, .v_ptr = &t->dl};
    return 0;
  }
  if (a->kind == CERT_ARG_DATAPTR) {
    char* p =
        t->dl.data ? (char*)t->dl.data + (t->dl.data == b->guard_page ? 0 : a->byte_offset) : NULL;
    *s->value = (TVMFFIAny){.type_index = kTVMFFIOpaquePtr, .v_ptr = p};
    return 0;
  }
  return make_tensor_object(t, s, note, nn);
}

static int dummy_callback(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h, (void)a, (void)n, (void)r;
  return 0;
}

static int build_text(const CertArg* a, const Slot* s, int bytes, char* note, size_t nn) {
  TVMFFIByteArray ba = {a->word, strlen(a->word)};
  int (*make)(const TVMFFIByteArray*, TVMFFIAny*) =
      bytes ? cert_api.bytes_from : cert_api.string_from;
  if (make == NULL)
    return snprintf(note, nn, "the runtime lacks TVMFFI%sFromByteArray",
                    bytes ? "Bytes" : "String"),
           -1;
  TVMFFIAny v = {.type_index = kTVMFFINone};
  if (make(&ba, &v) != 0)
    return snprintf(note, nn, "the runtime refused to make argument %d", (int)s->arg), -1;
  if (v.type_index >= kTVMFFIStaticObjectBegin) *s->owned = v;
  *s->value = v;
  return 0;
}

static int build_object(const CertArg* a, const Slot* s, char* note, size_t nn) {
  TVMFFIObjectHandle h = NULL;
  int rc = -1;
  if (a->kind == CERT_ARG_FUNCTION && cert_api.function_create) {
    rc = cert_api.function_create(NULL, dummy_callback, NULL, &h);
  } else if (a->kind == CERT_ARG_ERROR && cert_api.error_create) {
    TVMFFIByteArray kind = {"ValueError", 10}, msg = {"certify probe", 13}, bt = {"", 0};
    rc = cert_api.error_create(&kind, &msg, &bt, &h);
  }
  if (rc != 0 || h == NULL)
    return snprintf(note, nn, "the runtime could not make argument %d", (int)s->arg), -1;
  *s->owned = (TVMFFIAny){.type_index = TVMFFIObjectGetTypeIndex(h), .v_obj = h};
  *s->value = *s->owned;
  return 0;
}

/* Calls the runtime's global function `name` (ffi.Shape, ffi.Array) on
 * `args` and keeps the object it makes. */
static int build_by_global(const char* name, TVMFFIAny* args, int32_t n, const Slot* s, char* note,
                           size_t nn) {
  TVMFFIObjectHandle f = NULL;
  TVMFFIByteArray key = {name, strlen(name)};
  if (cert_api.get_global == NULL || cert_api.function_call == NULL ||
      cert_api.get_global(&key, &f) != 0 || f == NULL) {
    return snprintf(note, nn, "the runtime has no global function %s to make argument %d", name,
                    (int)s->arg),
           -1;
  }
  TVMFFIAny out = {.type_index = kTVMFFINone};
  int rc = cert_api.function_call(f, args, n, &out);
  cert_api.dec_ref(f);
  if (rc != 0 || out.type_index < kTVMFFIStaticObjectBegin) {
    TVMFFIObjectHandle err = NULL;
    cert_api.error_move(&err);
    if (err) cert_api.dec_ref(err);
    return snprintf(note, nn, "the runtime's %s could not make argument %d", name, (int)s->arg), -1;
  }
  *s->owned = out;
  *s->value = out;
  return 0;
}

static int build_shape(const CertArg* a, const Slot* s, char* note, size_t nn) {
  TVMFFIAny dims[CERT_MAX_NDIM];
  for (int32_t d = 0; d < a->ndim; ++d)
    dims[d] = (TVMFFIAny){.type_index = kTVMFFIInt, .v_int64 = a->shape[d]};
  return build_by_global("ffi.Shape", dims, a->ndim, s, note, nn);
}

static int build_item(const CertCall* call, const CertArg* a, const Slot* s, Built* b, char* note,
                      size_t nn);

static int build_array(const CertCall* call, const CertArg* a, const Slot* s, Built* b, char* note,
                       size_t nn) {
  for (int32_t k = 0; k < a->ndim; ++k) {
    int32_t at = (int32_t)a->i + k;
    if (at < 0 || at >= call->nitems || call->items[at].kind == CERT_ARG_ARRAY) {
      return snprintf(note, nn, "argument %d: bad array item %d", (int)s->arg, (int)k), -1;
    }
    Slot item = {&b->item_values[at], &b->item_owned[at], &b->item_boxes[at], s->arg};
    if (build_item(call, &call->items[at], &item, b, note, nn) != 0) return -1;
  }
  return build_by_global("ffi.Array", a->ndim ? &b->item_values[a->i] : NULL, a->ndim, s, note, nn);
}

static int build_item(const CertCall* call, const CertArg* a, const Slot* s, Built* b, char* note,
                      size_t nn) {
  TVMFFIAny* v = s->value;
  memset(v, 0, sizeof *v);
  switch (a->kind) {
    case CERT_ARG_NONE: v->type_index = kTVMFFINone; return 0;
    case CERT_ARG_BOOL:
      v->type_index = kTVMFFIBool;
      v->v_int64 = a->i != 0;
      return 0;
    case CERT_ARG_INT:
      v->type_index = kTVMFFIInt;
      v->v_int64 = a->i;
      return 0;
    case CERT_ARG_FLOAT:
      v->type_index = kTVMFFIFloat;
      v->v_float64 = a->f;
      return 0;
    case CERT_ARG_RAWSTR:
      v->type_index = kTVMFFIRawStr;
      v->v_c_str = a->word;
      return 0;
    case CERT_ARG_STR: return build_text(a, s, 0, note, nn);
    case CERT_ARG_BYTES: return build_text(a, s, 1, note, nn);
    case CERT_ARG_DTYPE:
      v->type_index = kTVMFFIDataType;
      v->v_dtype = a->dtype;
      return 0;
    case CERT_ARG_DEVICE:
      v->type_index = kTVMFFIDevice;
      v->v_device = a->device;
      return 0;
    case CERT_ARG_PTR:
      v->type_index = kTVMFFIOpaquePtr;
      v->v_ptr = a->i ? b->guard_page : NULL;
      return 0;
    case CERT_ARG_FUNCTION:
    case CERT_ARG_ERROR: return build_object(a, s, note, nn);
    case CERT_ARG_DLNULL:
      v->type_index = kTVMFFIDLTensorPtr;
      v->v_ptr = NULL;
      return 0;
    case CERT_ARG_DLTENSOR:
    case CERT_ARG_TENSOR:
    case CERT_ARG_DATAPTR: return build_tensor(a, s, b, note, nn);
    case CERT_ARG_SHAPE: return build_shape(a, s, note, nn);
    case CERT_ARG_ARRAY: return build_array(call, a, s, b, note, nn);
  }
  return snprintf(note, nn, "unknown argument kind"), -1;
}

static void release_box(TensorBox* t) {
  if (t == NULL) return;
  if (t->map_base) munmap(t->map_base, t->map_len);
  free(t->before);
  free(t);
}

void cert_args_release(Built* b, int32_t nargs) {
  for (int32_t k = 0; k < nargs; ++k) {
    if (b->owned[k].type_index >= kTVMFFIStaticObjectBegin && b->owned[k].v_obj)
      cert_api.dec_ref(b->owned[k].v_obj);
  }
  for (int32_t k = 0; k < CERT_MAX_ITEMS; ++k) {
    if (b->item_owned[k].type_index >= kTVMFFIStaticObjectBegin && b->item_owned[k].v_obj) {
      cert_api.dec_ref(b->item_owned[k].v_obj);
    }
  }
  /* Tensor objects above referred to these boxes: free them last. */
  for (int32_t k = 0; k < nargs; ++k) release_box(b->boxes[k]);
  for (int32_t k = 0; k < CERT_MAX_ITEMS; ++k) release_box(b->item_boxes[k]);
  if (b->args_base) munmap(b->args_base, b->args_len);
}

int cert_args_build(const CertCall* call, Built* b, void* guard_page, char* note, size_t nn) {
  memset(b, 0, sizeof *b);
  b->guard_page = guard_page;
  void* guard = NULL;
  b->args = cert_guarded_alloc((size_t)call->nargs * sizeof(TVMFFIAny), 0, &b->args_base,
                               &b->args_len, &guard);
  if (b->args == NULL) return snprintf(note, nn, "mmap failed"), -1;
  cert_guard_add(guard, cert_page_size(), CERT_REGION_ARGS_END, call->nargs);
  for (int32_t k = 0; k < call->nargs; ++k) {
    Slot s = {&b->args[k], &b->owned[k], &b->boxes[k], k};
    if (build_item(call, &call->args[k], &s, b, note, nn) != 0) return -1;
    if (b->owned[k].type_index >= kTVMFFIStaticObjectBegin && b->owned[k].v_obj) {
      b->refs_before[k] = (uint32_t)cert_strong_count(b->owned[k].v_obj);
    }
  }
  return 0;
}

/* Reads a str result (small or object) into buf; 0 on success. */
int cert_str_text(const TVMFFIAny* r, char** out) {
  const char* data = NULL;
  size_t size = 0;
  if (r->type_index == kTVMFFISmallStr) {
    data = r->v_bytes;
    size = r->small_str_len;
    if (size > 7) return -1;
  } else if (r->type_index == kTVMFFIStr && r->v_obj) {
    TVMFFIByteArray* ba = TVMFFIBytesGetByteArrayPtr(r->v_obj);
    data = ba->data;
    size = ba->size;
  } else {
    return -1;
  }
  if (size > CERT_TEXT_MAX) size = CERT_TEXT_MAX;
  *out = malloc(size + 1);
  if (*out == NULL) return -1;
  memcpy(*out, data, size);
  (*out)[size] = '\0';
  return 0;
}

int cert_api_resolve(void* rt, char* missing, size_t n) {
#define REQUIRE(field, name)                                                 \
  do {                                                                       \
    *(void**)&cert_api.field = dlsym(rt, name);                              \
    if (cert_api.field == NULL) return snprintf(missing, n, "%s", name), -1; \
  } while (0)
  REQUIRE(error_move, "TVMFFIErrorMoveFromRaised");
  REQUIRE(dec_ref, "TVMFFIObjectDecRef");
#undef REQUIRE
  *(void**)&cert_api.string_from = dlsym(rt, "TVMFFIStringFromByteArray");
  *(void**)&cert_api.bytes_from = dlsym(rt, "TVMFFIBytesFromByteArray");
  *(void**)&cert_api.tensor_from = dlsym(rt, "TVMFFITensorFromDLPackVersioned");
  *(void**)&cert_api.function_create = dlsym(rt, "TVMFFIFunctionCreate");
  *(void**)&cert_api.error_create = dlsym(rt, "TVMFFIErrorCreate");
  *(void**)&cert_api.get_global = dlsym(rt, "TVMFFIFunctionGetGlobal");
  *(void**)&cert_api.function_call = dlsym(rt, "TVMFFIFunctionCall");
  *(void**)&cert_api.type_info = dlsym(rt, "TVMFFIGetTypeInfo");
  return 0;
}

int cert_result_is_valid(const TVMFFIAny* r) {
  int32_t ti = r->type_index;
  if (ti == kTVMFFINone || ti == kTVMFFIInt || ti == kTVMFFIBool || ti == kTVMFFIFloat ||
      ti == kTVMFFIOpaquePtr || ti == kTVMFFIDataType || ti == kTVMFFIDevice ||
      ti == kTVMFFISmallStr || ti == kTVMFFISmallBytes) {
    return ti != kTVMFFISmallStr && ti != kTVMFFISmallBytes ? 1 : r->small_str_len <= 7;
  }
  if (ti < kTVMFFIStaticObjectBegin) return 0;
  return r->v_obj != NULL && r->v_obj->type_index == ti && cert_strong_count(r->v_obj) >= 1;
}
