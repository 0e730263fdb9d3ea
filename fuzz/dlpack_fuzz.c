/*
 * Fuzz harness: TVMFFITensorFromDLPackVersioned (and the unversioned
 * TVMFFITensorFromDLPack) on hostile managed tensors.
 *
 * The input decides every field of the DLPack struct: version, flags, ndim
 * (small, or any int32), shape (NULL, small dims, negative or overflowing
 * dims), strides, dtype, device, data pointer (NULL, misaligned, or a bogus
 * address that must never be dereferenced), byte_offset, a NULL deleter,
 * and the require_alignment / require_contiguous arguments.
 *
 * The harness allocates shape and strides with exactly ndim entries when
 * 0 < ndim <= 4096 (more than any runtime may accept: the reference stops at
 * 64), so every read the runtime makes of them is in bounds unless it trusts
 * an ndim it should have refused.
 *
 * Invariants:
 *   - success: the tensor is a Tensor object whose DLTensor matches the
 *     input field by field (zero copy); exporting it again shares the data;
 *     the producer's deleter has not run until the last reference goes,
 *     and then it runs exactly once;
 *   - failure: rc -1 and a raised error of a documented kind; the deleter
 *     runs at most once, and the harness runs it when the runtime left the
 *     tensor with the caller, so in every case it runs exactly once and
 *     every buffer of the producer is freed (ASan then sees any later use).
 */
#include "fuzz/impl_api.h"

#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"

#define MAX_HONEST_NDIM 4096

static const char* const kImportKinds[] = {"ValueError", "RuntimeError", "TypeError", "MemoryError",
                                           NULL};

/* Everything the producer allocated, freed by its deleter. */
typedef struct {
  int64_t* shape;
  int64_t* strides;
  uint8_t* buffer;
  int versioned;
  void* managed;
} Producer;

static int g_deleted;

static void free_producer(Producer* p) {
  free(p->shape);
  free(p->strides);
  free(p->buffer);
  free(p->managed);
  free(p);
}

static void deleter_versioned(DLManagedTensorVersioned* self) {
  g_deleted++;
  FUZZ_CHECK(g_deleted == 1, "the versioned deleter ran %d times", g_deleted);
  free_producer(self->manager_ctx);
}

static void deleter_legacy(DLManagedTensor* self) {
  g_deleted++;
  FUZZ_CHECK(g_deleted == 1, "the deleter ran %d times", g_deleted);
  free_producer(self->manager_ctx);
}

static int64_t read_dim(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  if (how < 200) return how % 17; /* ordinary sizes, zero included */
  if (how < 230) return (int64_t)fuzz_u64(r);
  if (how < 245) return -(int64_t)(how % 4) - 1;
  return INT64_MAX / (1 + (how % 3));
}

static int64_t* read_dims(FuzzReader* r, int32_t ndim) {
  int64_t* v = malloc(sizeof(int64_t) * (size_t)ndim);
  for (int32_t i = 0; i < ndim; ++i) v[i] = read_dim(r);
  return v;
}

static int32_t read_ndim(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  if (how < 220) return how % 6;
  if (how < 240) return 60 + how % 10; /* around the 64-dimension limit */
  return (int32_t)fuzz_u32(r);
}

static DLDataType read_dtype(FuzzReader* r) {
  static const DLDataType common[] = {
      {kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLInt, 8, 4},
      {kDLUInt, 1, 1},   {kDLBool, 8, 1},   {kDLFloat, 4, 1},   {kDLFloat, 64, 2},
  };
  uint8_t how = fuzz_u8(r);
  if (how < 200) return common[how % (sizeof(common) / sizeof(common[0]))];
  DLDataType d;
  d.code = fuzz_u8(r);
  d.bits = fuzz_u8(r);
  d.lanes = fuzz_u16(r);
  return d;
}

static void* read_data(FuzzReader* r, Producer* p) {
  uint8_t how = fuzz_u8(r);
  if (how < 40) return NULL;
  if (how < 60) return (void*)(uintptr_t)fuzz_u64(r); /* never to be dereferenced */
  p->buffer = malloc(256);
  return p->buffer + (how % 64);
}

/* Fills `t` from the input; the arrays belong to `p`. */
static void read_tensor(FuzzReader* r, Producer* p, DLTensor* t) {
  t->ndim = read_ndim(r);
  uint8_t layout = fuzz_u8(r);
  int honest = t->ndim > 0 && t->ndim <= MAX_HONEST_NDIM;
  if (honest && (layout & 0x0f) != 0) p->shape = read_dims(r, t->ndim);
  if (honest && (layout & 0x30) == 0x10) {
    p->strides = malloc(sizeof(int64_t) * (size_t)t->ndim);
    int64_t step = 1;
    for (int32_t i = t->ndim - 1; i >= 0; --i) { /* compact, unless the shape lies */
      p->strides[i] = step;
      int64_t dim = (p->shape && p->shape[i] > 0) ? p->shape[i] : 1;
      if (__builtin_mul_overflow(step, dim, &step)) step = 1;
    }
  } else if (honest && (layout & 0x30) == 0x20) {
    p->strides = read_dims(r, t->ndim);
  }
  t->shape = p->shape;
  t->strides = p->strides;
  t->dtype = read_dtype(r);
  uint8_t dev = fuzz_u8(r);
  t->device.device_type = dev < 220 ? kDLCPU : (DLDeviceType)fuzz_u32(r);
  t->device.device_id = dev < 240 ? 0 : (int32_t)fuzz_u32(r);
  t->data = read_data(r, p);
  uint8_t off = fuzz_u8(r);
  t->byte_offset = off < 200 ? (uint64_t)(off % 8) * 4 : fuzz_u64(r);
}

/* FUZZ_AVOID (a campaign's choice, never the replay's) skips the tensors
 * of crash classes a library is known to have, so a campaign finds the
 * next: TEN-043, ndim > 0 with a NULL shape; TEN-044, a negative ndim. */
static int avoided(const DLTensor* t) {
  const char* list = getenv("FUZZ_AVOID");
  return list != NULL && ((strstr(list, "TEN-043") && t->ndim > 0 && t->shape == NULL) ||
                          (strstr(list, "TEN-044") && t->ndim < 0));
}

static int32_t read_alignment(FuzzReader* r) {
  static const int32_t common[] = {0, 0, 0, 1, 2, 3, 16, 64, 256, -1, 1 << 30};
  uint8_t how = fuzz_u8(r);
  if (how < 240) return common[how % (sizeof(common) / sizeof(common[0]))];
  return (int32_t)fuzz_u32(r);
}

/* The imported tensor is a zero-copy view of what the producer described.
 * Returns 0 when it breaks a (tolerated) clause: such a tensor is not
 * handed to further calls, whose failures would only follow from it. */
static int check_tensor(TVMFFIObjectHandle obj, const DLTensor* in) {
  FUZZ_CHECK(TVMFFIObjectGetTypeIndex(obj) == kTVMFFITensor, "import gave type index %d",
             TVMFFIObjectGetTypeIndex(obj));
  const DLTensor* t = TVMFFITensorGetDLTensorPtr(obj);
  FUZZ_CHECK(t->data == in->data, "data pointer changed");
  FUZZ_CHECK(t->ndim == in->ndim, "ndim %d became %d", in->ndim, t->ndim);
  FUZZ_CHECK(t->byte_offset == in->byte_offset, "byte_offset changed");
  FUZZ_CHECK(t->dtype.code == in->dtype.code && t->dtype.bits == in->dtype.bits &&
                 t->dtype.lanes == in->dtype.lanes,
             "dtype changed");
  FUZZ_CHECK(t->device.device_type == in->device.device_type &&
                 t->device.device_id == in->device.device_id,
             "device changed");
  int valid = t->ndim >= 0 && (t->ndim == 0 || t->shape != NULL);
  FUZZ_CLAUSE("TEN-044", t->ndim >= 0, "accepted ndim %d", t->ndim);
  FUZZ_CLAUSE("TEN-043", t->ndim <= 0 || t->shape != NULL, "accepted ndim %d with a NULL shape",
              t->ndim);
  for (int32_t i = 0; t->shape != NULL && i < t->ndim; ++i) {
    FUZZ_CHECK(t->shape[i] == in->shape[i], "shape[%d] changed", i);
    FUZZ_CLAUSE("TEN-040", t->shape[i] >= 0, "accepted a negative dimension");
    valid &= t->shape[i] >= 0;
    if (in->strides != NULL && t->strides != NULL) {
      FUZZ_CHECK(t->strides[i] == in->strides[i], "strides[%d] changed", i);
    }
  }
  return valid;
}

/* Both exports share the data and release their own reference when deleted. */
static void check_export(TVMFFIObjectHandle obj) {
  DLManagedTensorVersioned* out = NULL;
  if (TVMFFITensorToDLPackVersioned(obj, &out) != 0) {
    fuzz_expect_raised("TVMFFITensorToDLPackVersioned", kImportKinds);
    return;
  }
  FUZZ_CHECK(out != NULL, "export succeeded with a NULL result");
  const DLTensor* t = TVMFFITensorGetDLTensorPtr(obj);
  FUZZ_CHECK(out->dl_tensor.data == t->data && out->dl_tensor.ndim == t->ndim,
             "export does not share the tensor");
  if (out->deleter != NULL) out->deleter(out);
  DLManagedTensor* legacy = NULL;
  if (TVMFFITensorToDLPack(obj, &legacy) != 0) {
    fuzz_expect_raised("TVMFFITensorToDLPack", kImportKinds);
    return;
  }
  FUZZ_CHECK(legacy != NULL && legacy->dl_tensor.data == t->data,
             "legacy export does not share the tensor");
  if (legacy->deleter != NULL) legacy->deleter(legacy);
}

static int import(Producer* p, const DLTensor* t, uint64_t flags, uint32_t major, uint32_t minor,
                  int null_deleter, int32_t align, int32_t contiguous, TVMFFIObjectHandle* out) {
  if (p->versioned) {
    DLManagedTensorVersioned* m = calloc(1, sizeof(*m));
    p->managed = m;
    m->version.major = major;
    m->version.minor = minor;
    m->manager_ctx = p;
    m->deleter = null_deleter ? NULL : deleter_versioned;
    m->flags = flags;
    m->dl_tensor = *t;
    return TVMFFITensorFromDLPackVersioned(m, align, contiguous, out);
  }
  DLManagedTensor* m = calloc(1, sizeof(*m));
  p->managed = m;
  m->manager_ctx = p;
  m->deleter = null_deleter ? NULL : deleter_legacy;
  m->dl_tensor = *t;
  return TVMFFITensorFromDLPack(m, align, contiguous, out);
}

/* Runs the producer's deleter the way its owner would. */
static void run_deleter(Producer* p) {
  if (p->versioned) {
    DLManagedTensorVersioned* m = p->managed;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor* m = p->managed;
    if (m->deleter) m->deleter(m);
  }
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  static const char* const needed[] = {"TVMFFITensorFromDLPackVersioned",
                                       "TVMFFITensorFromDLPack",
                                       "TVMFFITensorToDLPackVersioned",
                                       "TVMFFITensorToDLPack",
                                       "TVMFFIErrorMoveFromRaised",
                                       "TVMFFIObjectIncRef",
                                       "TVMFFIObjectDecRef",
                                       NULL};
  fuzz_impl_init("dlpack", needed);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzReader r = fuzz_reader(data, size);
  g_deleted = 0;
  Producer* p = calloc(1, sizeof(*p));
  uint8_t mode = fuzz_u8(&r);
  p->versioned = (mode & 1) == 0;
  int null_deleter = (mode & 0x0e) == 0x0e;
  uint8_t ver = fuzz_u8(&r);
  uint32_t major = ver < 220 ? DLPACK_MAJOR_VERSION : fuzz_u32(&r);
  uint32_t minor = ver < 200 ? DLPACK_MINOR_VERSION : fuzz_u32(&r);
  uint8_t fl = fuzz_u8(&r);
  uint64_t flags = fl < 200 ? (fl & 0x7) : fuzz_u64(&r);
  int32_t align = read_alignment(&r);
  uint8_t cont = fuzz_u8(&r);
  int32_t contiguous = cont < 250 ? (cont & 1) : (int32_t)fuzz_u32(&r);
  DLTensor t;
  memset(&t, 0, sizeof(t));
  read_tensor(&r, p, &t);
  if (avoided(&t)) {
    free_producer(p);
    return 0;
  }

  TVMFFIObjectHandle obj = NULL;
  int rc = import(p, &t, flags, major, minor, null_deleter, align, contiguous, &obj);
  /* The deleter may free p: keep what the checks below need. */
  int deleter_set = !null_deleter;
  if (rc == 0) {
    fuzz_expect_nothing_raised("TVMFFITensorFromDLPack*");
    FUZZ_CHECK(obj != NULL, "import succeeded with a NULL tensor");
    FUZZ_CHECK(g_deleted == 0, "the deleter ran while the tensor is alive");
    if (check_tensor(obj, &t)) {
      TVMFFIObjectIncRef(obj);
      check_export(obj);
      TVMFFIObjectDecRef(obj);
    }
    FUZZ_CHECK(g_deleted == 0, "the deleter ran while the tensor is alive");
    TVMFFIObjectDecRef(obj);
    if (deleter_set) {
      FUZZ_CHECK(g_deleted == 1, "the last reference went but the deleter ran %d times", g_deleted);
    } else {
      free_producer(p);
    }
  } else {
    FUZZ_CHECK(rc == -1, "import returned %d", rc);
    fuzz_expect_raised("TVMFFITensorFromDLPack*", kImportKinds);
    /* Upstream leaves a refused tensor with the caller; a runtime that
     * released it instead must have done so exactly once. */
    if (g_deleted == 0) {
      if (deleter_set)
        run_deleter(p);
      else
        free_producer(p);
    }
    if (deleter_set) FUZZ_CHECK(g_deleted == 1, "deleter ran %d times", g_deleted);
  }
  return 0;
}
