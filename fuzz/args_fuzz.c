/*
 * Fuzz harness: argument arrays across the calling convention.
 *
 * The input is decoded into up to eight TVMFFIAny arguments of every kind a
 * caller can pass: each inline kind with arbitrary payload, type indices no
 * runtime knows (13..63 and negative), raw C strings (with early NULs),
 * byte arrays without a terminator, small strings and bytes, DLTensor
 * views with hostile metadata, heap strings, bytes, tensors, functions and
 * errors (objects of the wrong type for whoever receives them), and rvalue
 * references. The array then goes
 *   1. element by element to TVMFFIAnyViewToOwnedAny,
 *   2. through TVMFFIFunctionCall to a C function that unpacks every kind,
 *   3. through TVMFFIFunctionCall to the CPU scale kernel
 *      (kernels/libscale_cpu.so, loaded after the runtime as any kernel
 *      library is, so it binds to the implementation under test).
 *
 * What the harness builds is honest where the ABI says the caller is
 * trusted: every pointer points to memory of the size the value claims (a
 * DLTensor's data buffer covers byte_offset + its byte size, or data is NULL
 * when the metadata is invalid or the tensor too large to back), and every
 * object is a real object of the type its index names. Everything else is
 * hostile.
 *
 * Invariants: every call returns 0 or -1; -1 comes with a raised error of a
 * documented kind and 0 with none; ViewToOwned copies inline values exactly,
 * turns strings and byte arrays into equal owned values, adds one
 * reference to an object, and moves an rvalue reference out of its slot;
 * the callee's borrowed arguments keep their reference counts; nothing
 * leaks (the harness releases what it owns and LeakSanitizer sees the rest).
 */
#include "fuzz/impl_api.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"

/* The CPU scale kernel's __tvm_ffi_scale. */
static TVMFFISafeCallType g_scale;

#define MAX_ARGS 8
#define MAX_HONEST_NDIM 4096
#define MAX_BACKED_BYTES (1 << 16)

static const char* const kCallKinds[] = {"TypeError",  "ValueError",  "RuntimeError",
                                         "IndexError", "MemoryError", NULL};

/* Everything one input allocated, released at the end. */
typedef struct {
  TVMFFIAny args[MAX_ARGS];
  int32_t num_args;
  void* heap[MAX_ARGS * 4]; /* plain buffers: free() */
  int num_heap;
  TVMFFIObjectHandle owned[MAX_ARGS]; /* references the harness holds */
  int num_owned;
  TVMFFIObjectHandle slots[MAX_ARGS]; /* rvalue reference slots */
  DLTensor views[MAX_ARGS];
  TVMFFIByteArray arrays[MAX_ARGS];
} Args;

static void* keep(Args* a, void* p) {
  a->heap[a->num_heap++] = p;
  return p;
}

static TVMFFIObjectHandle own(Args* a, TVMFFIObjectHandle obj) {
  a->owned[a->num_owned++] = obj;
  return obj;
}

/* ---- the C function that unpacks every kind ---- */

static int unpack_one(const TVMFFIAny* v, int32_t i, uint64_t* digest) {
  size_t n = 0;
  const char* s;
  switch (v->type_index) {
    case kTVMFFINone: return 0;
    case kTVMFFIInt:
    case kTVMFFIBool:
    case kTVMFFIOpaquePtr:
      *digest += (uint64_t)v->v_int64; /* opaque pointers are never followed */
      return 0;
    case kTVMFFIFloat: *digest += (uint64_t)(v->v_float64 == v->v_float64); return 0;
    case kTVMFFIDataType: *digest += v->v_dtype.code + v->v_dtype.bits + v->v_dtype.lanes; return 0;
    case kTVMFFIDevice:
      *digest += (uint64_t)v->v_device.device_type + (uint64_t)v->v_device.device_id;
      return 0;
    case kTVMFFIDLTensorPtr: {
      const DLTensor* t = v->v_ptr;
      if (t == NULL) {
        TVMFFIErrorSetRaisedFromCStr("ValueError", "unpack: a DLTensor* argument is NULL");
        return -1;
      }
      *digest += (uint64_t)t->ndim + t->byte_offset;
      return 0;
    }
    case kTVMFFIRawStr: *digest += strlen(v->v_c_str); return 0;
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* b = v->v_ptr;
      for (size_t k = 0; k < b->size; ++k) *digest += (uint8_t)b->data[k];
      return 0;
    }
    case kTVMFFIObjectRValueRef: {
      /* Taking an rvalue reference moves it: the caller's slot empties. */
      TVMFFIAny moved;
      if (TVMFFIAnyViewToOwnedAny(v, &moved) != 0) return -1;
      fuzz_release(&moved);
      return 0;
    }
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes:
    case kTVMFFIStr:
    case kTVMFFIBytes:
      s = fuzz_str_of(v, &n);
      for (size_t k = 0; k < n && k < 8; ++k) *digest += (uint8_t)s[k];
      return 0;
    case kTVMFFITensor: *digest += (uint64_t)TVMFFITensorGetDLTensorPtr(v->v_obj)->ndim; return 0;
    case kTVMFFIError: *digest += TVMFFIErrorGetCellPtr(v->v_obj)->message.size; return 0;
    case kTVMFFIFunction: {
      TVMFFIAny result = {0};
      /* Called with no arguments, so the recursion stops one level down. */
      if (TVMFFIFunctionCall(v->v_obj, NULL, 0, &result) != 0) return -1;
      fuzz_release(&result);
      return 0;
    }
    default: {
      char msg[96];
      snprintf(msg, sizeof msg, "unpack: argument %d has unsupported type index %d", (int)i,
               (int)v->type_index);
      TVMFFIErrorSetRaisedFromCStr("TypeError", msg);
      return -1;
    }
  }
}

static int unpack_all(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  FUZZ_CHECK(result->type_index == kTVMFFINone, "the result slot is not None on entry");
  uint64_t digest = 0;
  for (int32_t i = 0; i < num_args; ++i) {
    if (unpack_one(&args[i], i, &digest) != 0) return -1;
  }
  /* A string result exercises the owned-result path. */
  char text[32];
  int len = snprintf(text, sizeof text, "digest %llu", (unsigned long long)digest);
  TVMFFIByteArray bytes = {text, (size_t)len};
  return TVMFFIStringFromByteArray(&bytes, result);
}

/* ---- building arguments ---- */

static int64_t read_dim(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  if (how < 220) return how % 33;
  if (how < 240) return -(int64_t)(how % 3) - 1;
  return (int64_t)fuzz_u64(r);
}

/* Byte size the metadata claims, or -1 when invalid or too large to back. */
static int64_t backed_size(const DLTensor* t) {
  if (t->ndim < 0 || t->ndim > MAX_HONEST_NDIM || (t->ndim > 0 && t->shape == NULL)) return -1;
  int64_t numel = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0 || __builtin_mul_overflow(numel, t->shape[i], &numel)) return -1;
  }
  int64_t bits;
  if (__builtin_mul_overflow(numel, (int64_t)t->dtype.bits * t->dtype.lanes, &bits)) return -1;
  int64_t bytes = bits / 8 + (bits % 8 != 0);
  if (t->byte_offset > MAX_BACKED_BYTES || bytes > MAX_BACKED_BYTES) return -1;
  return bytes + (int64_t)t->byte_offset;
}

static DLDataType read_dtype(FuzzReader* r) {
  static const DLDataType common[] = {
      {kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
      {kDLInt, 32, 1},   {kDLFloat, 32, 4}, {kDLFloat, 0, 1},  {kDLUInt, 1, 1},
  };
  uint8_t how = fuzz_u8(r);
  if (how < 230) return common[how % (sizeof(common) / sizeof(common[0]))];
  /* One read per statement: the order of evaluation inside an initializer
   * list is unspecified, and an input must decode the same everywhere. */
  DLDataType d;
  d.code = fuzz_u8(r);
  d.bits = fuzz_u8(r);
  d.lanes = fuzz_u16(r);
  return d;
}

/* A DLTensor described by the input; mostly 1-D CPU so the kernel's
 * compute path is reached, sometimes anything at all. */
static void read_dltensor(FuzzReader* r, Args* a, DLTensor* t) {
  memset(t, 0, sizeof(*t));
  uint8_t shape_how = fuzz_u8(r);
  if (shape_how < 160) {
    t->ndim = 1;
  } else if (shape_how < 230) {
    t->ndim = shape_how % 5;
  } else {
    t->ndim = (int32_t)fuzz_u32(r);
  }
  int honest = t->ndim > 0 && t->ndim <= MAX_HONEST_NDIM;
  uint8_t layout = fuzz_u8(r);
  if (honest && layout != 0xff) {
    int64_t* shape = keep(a, malloc(sizeof(int64_t) * (size_t)t->ndim));
    for (int32_t i = 0; i < t->ndim; ++i) shape[i] = read_dim(r);
    t->shape = shape;
    if (layout >= 0xc0) {
      int64_t* strides = keep(a, malloc(sizeof(int64_t) * (size_t)t->ndim));
      for (int32_t i = 0; i < t->ndim; ++i) strides[i] = (int64_t)(int8_t)fuzz_u8(r);
      t->strides = strides;
    }
  }
  t->dtype = read_dtype(r);
  uint8_t dev = fuzz_u8(r);
  t->device.device_type = dev < 200 ? kDLCPU : dev < 230 ? kDLCUDA : (DLDeviceType)fuzz_u32(r);
  t->device.device_id = dev < 240 ? 0 : (int32_t)fuzz_u32(r);
  uint8_t off = fuzz_u8(r);
  t->byte_offset = off < 200 ? (uint64_t)(off % 4) * 8 : fuzz_u64(r);
  uint8_t data_how = fuzz_u8(r);
  int64_t need = backed_size(t);
  if (need >= 0 && data_how >= 16) {
    uint8_t* buf = keep(a, malloc((size_t)need + 1));
    size_t got;
    const uint8_t* fill = fuzz_bytes(r, (size_t)need, &got);
    memset(buf, 0x3c, (size_t)need + 1);
    memcpy(buf, fill, got);
    t->data = buf;
  }
}

/* A tensor object over an honest CPU buffer, made through DLPack import
 * as any producer would. */
static void tensor_deleter(DLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
}

static TVMFFIObjectHandle make_tensor(FuzzReader* r) {
  DLManagedTensorVersioned* m = calloc(1, sizeof(*m));
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->deleter = tensor_deleter;
  DLTensor* t = &m->dl_tensor;
  t->ndim = 1;
  t->shape = malloc(sizeof(int64_t));
  t->shape[0] = fuzz_u8(r) % 40;
  t->dtype = read_dtype(r);
  t->device.device_type = fuzz_u8(r) < 230 ? kDLCPU : kDLCUDA;
  int64_t need = backed_size(t);
  if (need < 0) need = 0;
  t->data = malloc((size_t)need + 1);
  memset(t->data, 0x41, (size_t)need + 1);
  TVMFFIObjectHandle obj = NULL;
  if (TVMFFITensorFromDLPackVersioned(m, 0, 0, &obj) != 0) {
    fuzz_expect_raised("TVMFFITensorFromDLPackVersioned", kCallKinds);
    tensor_deleter(m);
    return NULL;
  }
  return obj;
}

static TVMFFIObjectHandle make_string(FuzzReader* r, int bytes_kind) {
  size_t n = 0;
  const uint8_t* p = fuzz_bytes(r, 8 + fuzz_u8(r) % 24, &n);
  TVMFFIByteArray in = {(const char*)p, n};
  TVMFFIAny v = {0};
  int rc = bytes_kind ? TVMFFIBytesFromByteArray(&in, &v) : TVMFFIStringFromByteArray(&in, &v);
  if (rc != 0) {
    fuzz_expect_raised("TVMFFIStringFromByteArray", kCallKinds);
    return NULL;
  }
  if (v.type_index >= kTVMFFIStaticObjectBegin) return v.v_obj;
  return NULL; /* short enough to be inline: no object to pass */
}

static TVMFFIObjectHandle make_error(FuzzReader* r) {
  size_t n = 0;
  const uint8_t* p = fuzz_bytes(r, fuzz_u8(r) % 16, &n);
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {(const char*)p, n}, bt = {"", 0};
  TVMFFIObjectHandle err = NULL;
  if (TVMFFIErrorCreate(&kind, &msg, &bt, &err) != 0) {
    fuzz_expect_raised("TVMFFIErrorCreate", kCallKinds);
    return NULL;
  }
  return err;
}

static TVMFFIObjectHandle make_function(void) {
  TVMFFIObjectHandle fn = NULL;
  FUZZ_CHECK(TVMFFIFunctionCreate(NULL, unpack_all, NULL, &fn) == 0, "TVMFFIFunctionCreate");
  return fn;
}

/* An object of the kind the input picks, or NULL when none could be made. */
static TVMFFIObjectHandle make_object(FuzzReader* r) {
  switch (fuzz_u8(r) % 5) {
    case 0: return make_string(r, 0);
    case 1: return make_string(r, 1);
    case 2: return make_tensor(r);
    case 3: return make_error(r);
    default: return make_function();
  }
}

static void read_arg(FuzzReader* r, Args* a, int32_t i) {
  TVMFFIAny* v = &a->args[i];
  memset(v, 0, sizeof(*v));
  uint8_t kind = fuzz_u8(r);
  size_t n = 0;
  const uint8_t* p;
  switch (kind % 18) {
    case 0: return; /* None */
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:                      /* inline kinds, raw payload */
      v->type_index = kind % 18; /* Int, Bool, Float, OpaquePtr, DataType, Device */
      v->v_uint64 = fuzz_u64(r);
      return;
    case 7:
      read_dltensor(r, a, &a->views[i]);
      v->type_index = kTVMFFIDLTensorPtr;
      v->v_ptr = (fuzz_u8(r) == 0xff) ? NULL : &a->views[i];
      return;
    case 8: { /* raw C string: NUL-terminated, maybe with an earlier NUL */
      p = fuzz_bytes(r, fuzz_u8(r) % 40, &n);
      char* s = keep(a, malloc(n + 1));
      memcpy(s, p, n);
      s[n] = '\0';
      v->type_index = kTVMFFIRawStr;
      v->v_c_str = s;
      return;
    }
    case 9: { /* byte array: exact-size buffer, no terminator */
      p = fuzz_bytes(r, fuzz_u8(r) % 40, &n);
      char* s = keep(a, malloc(n ? n : 1));
      memcpy(s, p, n);
      a->arrays[i].data = s;
      a->arrays[i].size = n;
      v->type_index = kTVMFFIByteArrayPtr;
      v->v_ptr = &a->arrays[i];
      return;
    }
    case 10: { /* rvalue reference: the slot owns the object until moved */
      uint8_t how = fuzz_u8(r);
      v->type_index = kTVMFFIObjectRValueRef;
      if (how >= 0xf8) {
        /* No slot at all, or an empty one (already moved from). A
         * campaign may step around the first, a crash class a library is
         * known to have (FUZZ_AVOID=ANY-024; never in the replay). */
        const char* avoid = getenv("FUZZ_AVOID");
        if (how == 0xff && avoid != NULL && strstr(avoid, "ANY-024")) {
          memset(v, 0, sizeof(*v));
          return;
        }
        v->v_ptr = how == 0xff ? NULL : &a->slots[i];
        return;
      }
      a->slots[i] = make_object(r);
      v->v_ptr = &a->slots[i];
      if (a->slots[i] == NULL) memset(v, 0, sizeof(*v));
      return;
    }
    case 11:
    case 12: { /* small string / bytes, up to the 8 payload bytes */
      p = fuzz_bytes(r, fuzz_u8(r) % 9, &n);
      v->type_index = kind % 18 == 11 ? kTVMFFISmallStr : kTVMFFISmallBytes;
      v->small_str_len = (uint32_t)n;
      memcpy(v->v_bytes, p, n);
      return;
    }
    case 13: { /* a type index no runtime knows (or Unchanged) */
      uint8_t t = fuzz_u8(r);
      v->type_index = t < 128 ? 13 + t % 51 : -(int32_t)(t - 127);
      v->v_uint64 = fuzz_u64(r);
      return;
    }
    default: { /* heap objects */
      TVMFFIObjectHandle obj = make_object(r);
      if (obj == NULL) return;
      own(a, obj);
      v->type_index = TVMFFIObjectGetTypeIndex(obj);
      v->v_obj = obj;
      return;
    }
  }
}

static void release_args(Args* a) {
  for (int k = 0; k < a->num_owned; ++k) TVMFFIObjectDecRef(a->owned[k]);
  for (int32_t i = 0; i < MAX_ARGS; ++i) {
    if (a->slots[i] != NULL) TVMFFIObjectDecRef(a->slots[i]);
  }
  for (int k = 0; k < a->num_heap; ++k) free(a->heap[k]);
}

/* ---- checks ---- */

static uint32_t strong_count(TVMFFIObjectHandle obj) {
  return (uint32_t)(__atomic_load_n(&((TVMFFIObject*)obj)->combined_ref_count, __ATOMIC_RELAXED) &
                    0xffffffffu);
}

static void check_view_to_owned(Args* a, int32_t i) {
  const TVMFFIAny* v = &a->args[i];
  TVMFFIAny view = *v;
  TVMFFIObjectHandle moved_obj = view.type_index == kTVMFFIObjectRValueRef ? a->slots[i] : NULL;
  uint32_t before = view.type_index >= kTVMFFIStaticObjectBegin ? strong_count(view.v_obj) : 0;
  TVMFFIAny out;
  memset(&out, 0x5a, sizeof(out));
  int rc = TVMFFIAnyViewToOwnedAny(v, &out);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "TVMFFIAnyViewToOwnedAny returned %d", rc);
    fuzz_expect_raised("TVMFFIAnyViewToOwnedAny", kCallKinds);
    return;
  }
  fuzz_expect_nothing_raised("TVMFFIAnyViewToOwnedAny");
  size_t n = 0;
  const char* s;
  switch (view.type_index) {
    case kTVMFFIRawStr:
      s = fuzz_str_of(&out, &n);
      FUZZ_CHECK(out.type_index == kTVMFFISmallStr || out.type_index == kTVMFFIStr,
                 "a raw string became type index %d", out.type_index);
      FUZZ_CHECK(n == strlen(view.v_c_str) && memcmp(s, view.v_c_str, n) == 0,
                 "a raw string changed content");
      break;
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* b = view.v_ptr;
      s = fuzz_str_of(&out, &n);
      FUZZ_CHECK(out.type_index == kTVMFFISmallBytes || out.type_index == kTVMFFIBytes,
                 "a byte array became type index %d", out.type_index);
      FUZZ_CHECK(n == b->size && (n == 0 || memcmp(s, b->data, n) == 0),
                 "a byte array changed content");
      break;
    }
    case kTVMFFIObjectRValueRef:
      FUZZ_CHECK(moved_obj != NULL, "moved an object out of a missing or empty slot");
      FUZZ_CHECK(a->slots[i] == NULL, "moving an rvalue reference left its slot set");
      FUZZ_CHECK(out.v_obj == moved_obj && out.type_index == TVMFFIObjectGetTypeIndex(moved_obj),
                 "the moved object is not the one in the slot");
      break;
    default:
      if (view.type_index >= kTVMFFIStaticObjectBegin) {
        FUZZ_CHECK(out.type_index == view.type_index && out.v_obj == view.v_obj,
                   "an object view changed identity");
        FUZZ_CHECK(strong_count(view.v_obj) == before + 1,
                   "an owned copy did not add one "
                   "reference (%u -> %u)",
                   before, strong_count(view.v_obj));
      } else {
        FUZZ_CHECK(out.type_index == view.type_index && out.v_uint64 == view.v_uint64,
                   "an inline value (type index %d) changed", view.type_index);
      }
  }
  fuzz_release(&out);
}

/* Calls `fn` on the arguments; they are borrowed, so their counts hold. */
static void check_call(Args* a, TVMFFIObjectHandle fn, const char* what) {
  uint32_t before[MAX_ARGS];
  for (int32_t i = 0; i < a->num_args; ++i) {
    const TVMFFIAny* v = &a->args[i];
    before[i] = v->type_index >= kTVMFFIStaticObjectBegin ? strong_count(v->v_obj) : 0;
  }
  TVMFFIAny result = {0};
  int rc = TVMFFIFunctionCall(fn, a->args, a->num_args, &result);
  if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "%s(%d args) -> %d\n", what, (int)a->num_args, rc);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "%s returned %d", what, rc);
    if (getenv("FUZZ_VERBOSE")) {
      TVMFFIObjectHandle err = NULL;
      TVMFFIErrorMoveFromRaised(&err);
      if (err != NULL) {
        const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
        fprintf(stderr, "  %.*s: %.*s\n", (int)cell->kind.size, cell->kind.data,
                (int)cell->message.size, cell->message.data);
      }
      TVMFFIErrorSetRaised(err); /* put it back for the check below */
      if (err != NULL) TVMFFIObjectDecRef(err);
    }
    fuzz_expect_raised(what, kCallKinds);
  } else {
    fuzz_expect_nothing_raised(what);
  }
  for (int32_t i = 0; i < a->num_args; ++i) {
    const TVMFFIAny* v = &a->args[i];
    if (v->type_index >= kTVMFFIStaticObjectBegin) {
      FUZZ_CHECK(strong_count(v->v_obj) == before[i], "%s changed argument %d's count %u -> %u",
                 what, (int)i, before[i], strong_count(v->v_obj));
    }
  }
  fuzz_release(&result);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  static const char* const needed[] = {
      "TVMFFIAnyViewToOwnedAny",  "TVMFFIFunctionCall",
      "TVMFFIFunctionCreate",     "TVMFFIErrorMoveFromRaised",
      "TVMFFIErrorSetRaised",     "TVMFFIErrorSetRaisedFromCStr",
      "TVMFFIErrorCreate",        "TVMFFIStringFromByteArray",
      "TVMFFIBytesFromByteArray", "TVMFFITensorFromDLPackVersioned",
      "TVMFFIObjectDecRef",       NULL};
  fuzz_impl_init("args", needed);
  const char* kernel = conf_library_path("kernels/libscale_cpu.so");
  void* lib = dlopen(kernel, RTLD_NOW | RTLD_LOCAL);
  g_scale = lib ? (TVMFFISafeCallType)(uintptr_t)dlsym(lib, "__tvm_ffi_scale") : NULL;
  if (g_scale == NULL) {
    fprintf(stderr, "fuzz args: cannot load __tvm_ffi_scale from %s: %s\n", kernel, dlerror());
    exit(1);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzReader r = fuzz_reader(data, size);
  Args* a = calloc(1, sizeof(Args));
  uint8_t head = fuzz_u8(&r);
  a->num_args = (head & 0x0f) % (MAX_ARGS + 1); /* low nibble: count, high: target */
  for (int32_t i = 0; i < a->num_args; ++i) read_arg(&r, a, i);
  switch ((head >> 4) % 3) {
    case 0:
      for (int32_t i = 0; i < a->num_args; ++i) check_view_to_owned(a, i);
      break;
    case 1: {
      TVMFFIObjectHandle fn = make_function();
      check_call(a, fn, "unpack_all");
      TVMFFIObjectDecRef(fn);
      break;
    }
    default: {
      TVMFFIObjectHandle fn = NULL;
      FUZZ_CHECK(TVMFFIFunctionCreate(NULL, g_scale, NULL, &fn) == 0,
                 "TVMFFIFunctionCreate(scale)");
      check_call(a, fn, "scale");
      TVMFFIObjectDecRef(fn);
      break;
    }
  }
  release_args(a);
  free(a);
  return 0;
}
