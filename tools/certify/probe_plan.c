#include "probe_plan.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_manifest_calls.h"
#include "reference/vec.h"
#include "symbol_names.h"

static const DLDataType kF32 = {kDLFloat, 32, 1};
static const DLDevice kCpu = {kDLCPU, 0};

int cert_plan_init(CertPlan* plan, const CertProbeOptions* opt) {
  memset(plan, 0, sizeof *plan);
  plan->opt = opt;
  /* A GPU driver is present: device memory would be real, so non-CPU
   * tensors are only ever given without elements. */
  plan->have_gpu = access("/dev/nvidiactl", F_OK) == 0;
  return 0;
}

void cert_plan_free(CertPlan* plan) {
  free(plan->fns);
  cert_results_free(plan->results, plan->n);
  free(plan->probes);
  free(plan->results);
  memset(plan, 0, sizeof *plan);
}

int cert_no_gpu_message(const char* m) {
  static const char* const kNoGpu[] = {"cudaErrorInsufficientDriver",
                                       "cudaErrorNoDevice",
                                       "cudaErrorStubLibrary",
                                       "CUDA_ERROR_NO_DEVICE",
                                       "CUDA_ERROR_NOT_INITIALIZED",
                                       "CUDA_ERROR_STUB_LIBRARY",
                                       "no CUDA-capable device",
                                       "CUDA driver is a stub library",
                                       NULL};
  for (const char* const* k = kNoGpu; *k != NULL; ++k) {
    if (strstr(m, *k) != NULL) return 1;
  }
  return 0;
}

static int add_varied(CertPlan* plan, const CertCall* call, CertProbeClass cls, int error_case,
                      int varied) {
  /* Probes and results: two arrays of one length, each grown with its own
   * copy of the capacity; the smaller is what both hold. */
  size_t cap_p = plan->cap, cap_r = plan->cap;
  if (tffi_vec_reserve(&plan->probes, &cap_p, plan->n + 1, sizeof *plan->probes) != 0 ||
      tffi_vec_reserve(&plan->results, &cap_r, plan->n + 1, sizeof *plan->results) != 0) {
    return -1;
  }
  plan->cap = cap_p < cap_r ? cap_p : cap_r;
  CertProbe* p = &plan->probes[plan->n];
  p->call = *call;
  p->cls = cls;
  p->error_case = error_case;
  p->varied_arg = varied;
  snprintf(p->call.runtime, sizeof p->call.runtime, "%s",
           plan->opt->runtime_label ? plan->opt->runtime_label : "");
  if (cls != CERT_P_REPLAY)
    cert_probe_class_word(cls, error_case, p->call.probe, sizeof p->call.probe);
  if (p->call.threads < 1) p->call.threads = 1;
  memset(&plan->results[plan->n], 0, sizeof plan->results[plan->n]);
  plan->n++;
  return 0;
}

static int add(CertPlan* plan, const CertCall* call, CertProbeClass cls, int error_case) {
  return add_varied(plan, call, cls, error_case, -1);
}

static CertPlanFunction* plan_function(CertPlan* plan, const char* function) {
  for (size_t k = 0; k < plan->n_fns; ++k) {
    if (strcmp(plan->fns[k].name, function) == 0) return &plan->fns[k];
  }
  if (tffi_vec_reserve(&plan->fns, &plan->fns_cap, plan->n_fns + 1, sizeof *plan->fns) != 0)
    return NULL;
  CertPlanFunction* f = &plan->fns[plan->n_fns++];
  memset(f, 0, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", function);
  f->base = SIZE_MAX;
  return f;
}

/* ---- the base call ---------------------------------------------------- */

static const CertManifestFunction* manifest_fn(const CertPlan* plan, const char* function) {
  return cert_manifest_find(plan->opt->manifest, function);
}

/* Candidate argument lists for a function without a manifest: n tensors,
 * or n-1 tensors and a float or int last, on the CPU and (a kernel that
 * takes only CUDA tensors) on CUDA. With a manifest, its base call. */
int cert_plan_discovery(CertPlan* plan, const char* function) {
  CertPlanFunction* fn = plan_function(plan, function);
  if (fn == NULL) return -1;
  for (int32_t n = 0; n <= 4; ++n) {
    CertCall c = cert_call_new(function);
    for (int32_t k = 0; k < n; ++k)
      c.args[k] = cert_arg_tensor_1d(CERT_ARG_DLTENSOR, kF32, 8, kCpu);
    c.nargs = n;
    if (add(plan, &c, CERT_P_ARITY, 0) != 0) return -1;
  }
  const CertManifestFunction* f = manifest_fn(plan, function);
  if (f) {
    fn->manifest = 1;
    fn->base = plan->n;
    CertCall base = cert_manifest_call(f, f->ndtypes ? f->dtypes[0] : kF32, 8, CERT_ARG_DLTENSOR);
    if (plan->have_gpu && f->device != kDLCPU) {
      for (int32_t k = 0; k < base.nargs; ++k) {
        if (cert_arg_has_layout(&base.args[k])) base.args[k].shape[0] = 0;
      }
    }
    return add(plan, &base, CERT_P_BASE, 0);
  }
  /* Tensors then a float or an int last (a kernel with a scalar
   * parameter), and only ints or only floats (a scalar function). */
  for (int32_t n = 1; n <= 4; ++n) {
    for (int shape = 0; shape < 4; ++shape) {
      CertCall c = cert_call_new(function);
      for (int32_t k = 0; k < n; ++k) {
        int last = k == n - 1;
        c.args[k] = shape == 2 || (shape == 0 && last) ? cert_arg_float(2.5)
                    : shape == 3 || (shape == 1 && last)
                        ? cert_arg_int(3)
                        : cert_arg_tensor_1d(CERT_ARG_DLTENSOR, kF32, 8, kCpu);
      }
      c.nargs = n;
      if (n == 1 && shape >= 2) continue; /* the same as shapes 0 and 1 */
      if (add(plan, &c, CERT_P_BASE, 0) != 0) return -1;
    }
  }
  /* The same tensors on CUDA: without a GPU the call reaches the launch
   * and fails for want of a device, which still shows it was accepted. */
  for (int32_t n = 1; n <= 4; ++n) {
    for (int scalar = 0; scalar < 2; ++scalar) {
      CertCall c = cert_call_new(function);
      DLDevice cuda = {kDLCUDA, 0};
      for (int32_t k = 0; k < n; ++k)
        c.args[k] = cert_arg_tensor_1d(CERT_ARG_DLTENSOR, kF32, plan->have_gpu ? 0 : 8, cuda);
      if (scalar) c.args[n - 1] = cert_arg_float(2.5);
      c.nargs = n;
      if (n == 1 && scalar) continue;
      if (add(plan, &c, CERT_P_BASE, 0) != 0) return -1;
    }
  }
  return 0;
}

int cert_plan_metadata(CertPlan* plan, const char* symbol) {
  if (!cert_starts_with(symbol, CERT_EXPORT_PREFIX)) return 0;
  CertCall c = cert_call_new(symbol + strlen(CERT_EXPORT_PREFIX));
  return add(plan, &c, CERT_P_META, 0);
}

/* A replay is judged as the probe it came from, which its line names. */
int cert_plan_add_replay(CertPlan* plan, const CertCall* call) {
  CertProbeClass cls = CERT_P_REPLAY;
  int error_case = 0;
  if (strncmp(call->function, "_metadata_", 10) == 0 || strncmp(call->function, "_doc_", 5) == 0) {
    cls = CERT_P_META;
  } else if (call->probe[0] && cert_probe_class_parse(call->probe, &cls, &error_case) != 0) {
    cls = CERT_P_REPLAY;
  }
  int varied = -1;
  for (int32_t k = 0; cls == CERT_P_KINDS && k < call->nargs; ++k) {
    if (call->args[k].kind == CERT_ARG_DLNULL) varied = k;
  }
  return add_varied(plan, call, cls, error_case, varied);
}

static int tensor_count(const CertCall* c) {
  int n = 0;
  for (int32_t k = 0; k < c->nargs; ++k) n += cert_arg_is_tensor(&c->args[k]);
  return n;
}

/* A discovery call the function accepted: it returned 0, or failed only
 * for want of a GPU (its arguments passed). */
static int accepted(const CertResult* r) {
  if (r->end != CERT_END_DONE || r->out.status != CERT_CALL_RETURNED) return 0;
  return r->out.t[0].rc == 0 || (r->out.t[0].rc == -1 && cert_no_gpu_message(r->out.t[0].message));
}

/* Of the discovery calls the function accepted, the one with the most
 * tensors (then the fewest arguments), preferring those that returned 0:
 * it exercises the most. Without one, three arguments (tensor, tensor,
 * float). Returns the probe that made it, or SIZE_MAX. */
static size_t discovered_base(const CertPlan* plan, const char* function, CertCall* base) {
  size_t best = SIZE_MAX;
  size_t fallback = SIZE_MAX;
  for (size_t k = 0; k < plan->n; ++k) {
    const CertProbe* p = &plan->probes[k];
    const CertResult* r = &plan->results[k];
    if (strcmp(p->call.function, function) != 0) continue;
    if (p->cls != CERT_P_BASE && p->cls != CERT_P_ARITY) continue;
    if (fallback == SIZE_MAX && p->cls == CERT_P_BASE && p->call.nargs == 3 &&
        p->call.args[2].kind == CERT_ARG_FLOAT && p->call.args[0].device.device_type == kDLCPU) {
      fallback = k;
    }
    if (!accepted(r)) continue;
    if (best == SIZE_MAX) {
      best = k;
      continue;
    }
    const CertCall* b = &plan->probes[best].call;
    int ok_now = r->out.t[0].rc == 0, ok_best = plan->results[best].out.t[0].rc == 0;
    if (ok_now != ok_best) {
      if (ok_now) best = k;
      continue;
    }
    if (tensor_count(&p->call) > tensor_count(b) ||
        (tensor_count(&p->call) == tensor_count(b) && p->call.nargs < b->nargs)) {
      best = k;
    }
  }
  size_t pick = best != SIZE_MAX ? best : fallback;
  if (pick != SIZE_MAX) {
    *base = plan->probes[pick].call;
    base->probe[0] = '\0';
    return pick;
  }
  CertCall c = cert_call_new(function);
  c.args[0] = cert_arg_tensor_1d(CERT_ARG_DLTENSOR, kF32, 8, kCpu);
  c.args[1] = cert_arg_tensor_1d(CERT_ARG_DLTENSOR, kF32, 8, kCpu);
  c.args[2] = cert_arg_float(2.5);
  c.nargs = 3;
  *base = c;
  return SIZE_MAX;
}

/* ---- phase 2 ------------------------------------------------------------ */

static int same_arg(const CertArg* a, const CertArg* b) {
  if (a->kind == CERT_ARG_ARRAY || b->kind == CERT_ARG_ARRAY) return a->kind == b->kind;
  char x[160], y[160];
  CertCall c1 = cert_call_new("f"), c2 = cert_call_new("f");
  c1.args[0] = *a, c1.nargs = 1;
  c2.args[0] = *b, c2.nargs = 1;
  cert_call_format(&c1, x, sizeof x);
  cert_call_format(&c2, y, sizeof y);
  return strcmp(x, y) == 0;
}

static int add_kinds(CertPlan* plan, const CertCall* base, DLDevice dev) {
  for (int32_t p = 0; p < base->nargs; ++p) {
    for (int v = 0; v < CERT_ARG_KIND_VARIANTS; ++v) {
      CertCall c = *base;
      c.returns_none = 0;
      c.args[p] = cert_arg_kind_variant(v, dev);
      if (plan->have_gpu && dev.device_type != kDLCPU && cert_arg_is_tensor(&c.args[p])) {
        c.args[p].shape[0] = 0;
      }
      if (same_arg(&c.args[p], &base->args[p])) continue;
      /* A raw data pointer is dereferenced whatever it holds (DSLs take an
       * int as an address too): only NULL is one a function can refuse. */
      if (base->args[p].kind == CERT_ARG_DATAPTR && (v == 2 || v == 12)) continue;
      if (add_varied(plan, &c, CERT_P_KINDS, 0, p) != 0) return -1;
    }
  }
  return 0;
}

typedef void (*FormFn)(CertArg* a, int variant);

static void form_object(CertArg* a, int v) { (void)v, a->kind = CERT_ARG_TENSOR; }
static void form_offset(CertArg* a, int v) {
  (void)v;
  a->byte_offset = 2 * (cert_dtype_bytes(a->dtype) ? cert_dtype_bytes(a->dtype) : 1) * 8;
}
static void form_empty(CertArg* a, int v) { (void)v, a->shape[0] = 0; }
static void form_scalar(CertArg* a, int v) { (void)v, a->ndim = 0; }
static void form_one(CertArg* a, int v) { (void)v, a->shape[0] = 1; }
static void form_large(CertArg* a, int v) { (void)v, a->shape[0] = 4099; }
static void form_2d(CertArg* a, int v) {
  (void)v;
  a->ndim = 2;
  a->shape[0] = 2;
  a->shape[1] = 4;
}
static void form_strided(CertArg* a, int v) {
  (void)v;
  a->strides_mode = CERT_STRIDES_EXPLICIT;
  for (int32_t d = 0; d < a->ndim; ++d) a->strides[d] = 2;
}
static void form_unit_stride_extent(CertArg* a, int v) {
  /* extent-1 axis with an arbitrary stride: still compact per DLPack */
  (void)v;
  a->ndim = 2;
  a->shape[1] = a->shape[0];
  a->shape[0] = 1;
  a->strides_mode = CERT_STRIDES_EXPLICIT;
  a->strides[0] = 12345;
  a->strides[1] = 1;
}
static const DLDataType kDtypes[] = {
    {kDLFloat, 64, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLInt, 32, 1},   {kDLInt, 64, 1},
    {kDLInt, 8, 1},    {kDLUInt, 8, 1},   {kDLBool, 8, 1},    {kDLFloat, 32, 4},
};
static void form_dtype(CertArg* a, int v) { a->dtype = kDtypes[v]; }
/* Other device types get an unreadable page as data (or NULL when empty). */
static const DLDevice kDevices[] = {{kDLCUDA, 0},   {kDLROCM, 0}, {kDLMetal, 0}, {kDLVulkan, 0},
                                    {kDLOpenCL, 0}, {kDLCPU, 1},  {kDLCUDA, 1}};
static void form_device(CertArg* a, int v) { a->device = kDevices[v]; }
static void form_null_strides(CertArg* a, int v) { (void)v, a->strides_mode = CERT_STRIDES_NULL; }
static void form_null_data(CertArg* a, int v) { (void)v, a->data = CERT_DATA_NULL; }

static int add_form(CertPlan* plan, const CertCall* base, FormFn fn, int variant,
                    CertProbeClass cls) {
  CertCall c = *base;
  c.returns_none = 0;
  int any = 0;
  for (int32_t p = 0; p < c.nargs; ++p) {
    if (!cert_arg_is_tensor(&c.args[p])) continue;
    fn(&c.args[p], variant);
    if (plan->have_gpu && c.args[p].device.device_type != kDLCPU) c.args[p].shape[0] = 0;
    if (c.args[p].ndim == 0) c.args[p].strides_mode = CERT_STRIDES_COMPACT;
    any = 1;
  }
  return any ? add(plan, &c, cls, 0) : 0;
}

static int add_forms(CertPlan* plan, const CertCall* base, int null_data_documented) {
  static const FormFn kSimple[] = {form_object, form_offset,  form_empty,
                                   form_scalar, form_one,     form_large,
                                   form_2d,     form_strided, form_unit_stride_extent};
  for (size_t k = 0; k < sizeof kSimple / sizeof kSimple[0]; ++k) {
    if (add_form(plan, base, kSimple[k], 0, CERT_P_FORMS) != 0) return -1;
  }
  for (int v = 0; v < (int)(sizeof kDtypes / sizeof kDtypes[0]); ++v) {
    if (add_form(plan, base, form_dtype, v, CERT_P_FORMS) != 0) return -1;
  }
  for (int v = 0; v < 7; ++v) {
    if (add_form(plan, base, form_device, v, CERT_P_FORMS) != 0) return -1;
  }
  if (add_form(plan, base, form_null_strides, 0, CERT_P_LEGACY) != 0) return -1;
  if (!null_data_documented && add_form(plan, base, form_null_data, 0, CERT_P_INVALID) != 0)
    return -1;
  return 0;
}

/* ---- manifest-driven calls ------------------------------------------------ */

static int add_valid_calls(CertPlan* plan, const CertManifestFunction* f) {
  static const int64_t kSizes[] = {0, 1, 7, 33, 4099};
  /* certify hands device tensors no device memory: where a GPU would run
   * the launch for real, only empty ones are valid calls. */
  size_t nsizes = plan->have_gpu && f->device != kDLCPU ? 1 : sizeof kSizes / sizeof kSizes[0];
  for (int d = 0; d < f->ndtypes; ++d) {
    for (size_t s = 0; s < nsizes; ++s) {
      for (int form = 0; form < (s == 2 ? (f->refuses_byte_offset ? 2 : 3) : 1); ++form) {
        CertCall c = cert_manifest_call(f, f->dtypes[d], kSizes[s],
                                        form == 1 ? CERT_ARG_TENSOR : CERT_ARG_DLTENSOR);
        /* A byte_offset moves the data off the alignment a tensor needs. */
        for (int32_t k = 0; form == 2 && k < c.nargs; ++k) {
          if (cert_arg_is_tensor(&c.args[k]) && c.args[k].align == 0) form_offset(&c.args[k], 0);
        }
        c.check_reference = f->has_reference;
        if (add(plan, &c, CERT_P_VALID, 0) != 0) return -1;
      }
    }
  }
  return 0;
}

static void expect(CertCall* c, const CertManifestFunction* f, CertErrorCase e, const char* wrong) {
  snprintf(c->expect_kind, sizeof c->expect_kind, "%s", f->errors[e].kind);
  const char* name =
      f->errors[e].names[0] ? f->errors[e].names : (f->errors_name_argument ? wrong : "");
  snprintf(c->expect_name, sizeof c->expect_name, "%s", name ? name : "");
  c->returns_none = 0;
}

static int add_error(CertPlan* plan, CertCall* c, CertErrorCase e) {
  return add(plan, c, CERT_P_ERRORS, e);
}

/* An extent that the manifest says must be a multiple, made one that is not. */
static int add_divisibility_call(CertPlan* plan, const CertManifestFunction* f,
                                 const CertCall* base) {
  if (!f->errors[CERT_ERR_DIVISIBILITY].documented || f->ndivisible == 0) return 0;
  const CertDivisible* d = &f->divisible[0];
  if (d->by < 2) return 0;
  CertCall c = *base;
  const char* wrong = "";
  for (int32_t k = 0; k < f->nargs; ++k) {
    for (int32_t x = 0; x < f->args[k].ndim; ++x) {
      if (strcmp(f->args[k].dims[x], d->name) != 0 || !cert_arg_has_layout(&c.args[k])) continue;
      c.args[k].shape[x] = d->by + 1;
      if (wrong[0] == '\0') wrong = f->args[k].name;
    }
  }
  if (wrong[0] == '\0') return 0;
  expect(&c, f, CERT_ERR_DIVISIBILITY, wrong);
  return add_error(plan, &c, CERT_ERR_DIVISIBILITY);
}

static int add_error_calls(CertPlan* plan, const CertManifestFunction* f) {
  const CertCall base = cert_manifest_call(f, f->dtypes[0], 7, CERT_ARG_DLTENSOR);
  CertCall c;
  if (f->errors[CERT_ERR_ARITY].documented) {
    for (int extra = -1; extra <= 1; extra += 2) {
      c = base;
      c.nargs = base.nargs + extra;
      if (c.nargs < 0) continue;
      if (extra > 0) c.args[c.nargs - 1] = cert_arg_float(1.0);
      expect(&c, f, CERT_ERR_ARITY, f->name);
      if (add_error(plan, &c, CERT_ERR_ARITY) != 0) return -1;
    }
  }
  for (int32_t k = 0; f->errors[CERT_ERR_TYPE].documented && k < base.nargs; ++k) {
    c = base;
    if (cert_arg_is_tensor(&base.args[k])) {
      c.args[k] = cert_arg_int(3);
    } else {
      c.args[k] = cert_arg_simple(CERT_ARG_STR);
      strcpy(c.args[k].word, "abc");
    }
    expect(&c, f, CERT_ERR_TYPE, f->args[k].name);
    if (add_error(plan, &c, CERT_ERR_TYPE) != 0) return -1;
  }
  int t0 = cert_call_next_tensor(&base, -1);
  int t1 = t0 >= 0 ? cert_call_next_tensor(&base, t0) : -1;
  if (t0 < 0) return 0;
  if (f->errors[CERT_ERR_DTYPE].documented) {
    c = base;
    for (int32_t k = 0; k < c.nargs; ++k) {
      if (cert_arg_is_tensor(&c.args[k])) c.args[k].dtype = cert_manifest_foreign_dtype(f);
    }
    expect(&c, f, CERT_ERR_DTYPE, "");
    if (add_error(plan, &c, CERT_ERR_DTYPE) != 0) return -1;
  }
  if (f->errors[CERT_ERR_DEVICE].documented) {
    c = base;
    c.args[t0].device = f->device == kDLCPU ? (DLDevice){kDLCUDA, 0} : kCpu;
    if (plan->have_gpu && c.args[t0].device.device_type != kDLCPU) c.args[t0].shape[0] = 0;
    expect(&c, f, CERT_ERR_DEVICE, f->args[t0].name);
    if (add_error(plan, &c, CERT_ERR_DEVICE) != 0) return -1;
  }
  if (f->errors[CERT_ERR_SHAPE].documented && t1 >= 0 && base.args[t1].ndim > 0) {
    c = base;
    c.args[t1].shape[0] += 1;
    expect(&c, f, CERT_ERR_SHAPE, "");
    if (add_error(plan, &c, CERT_ERR_SHAPE) != 0) return -1;
  }
  if (f->errors[CERT_ERR_LAYOUT].documented && base.args[t0].ndim > 0) {
    c = base;
    form_strided(&c.args[t0], 0);
    expect(&c, f, CERT_ERR_LAYOUT, f->args[t0].name);
    if (add_error(plan, &c, CERT_ERR_LAYOUT) != 0) return -1;
  }
  if (f->errors[CERT_ERR_NULL_DATA].documented && f->device == kDLCPU) {
    c = base;
    c.args[t0].data = CERT_DATA_NULL;
    expect(&c, f, CERT_ERR_NULL_DATA, f->args[t0].name);
    if (add_error(plan, &c, CERT_ERR_NULL_DATA) != 0) return -1;
  }
  return add_divisibility_call(plan, f, &base);
}

int cert_plan_probes(CertPlan* plan, const char* function) {
  const CertManifestFunction* f = manifest_fn(plan, function);
  CertPlanFunction* fn = plan_function(plan, function);
  if (fn == NULL) return -1;
  CertCall base;
  DLDevice dev = kCpu;
  if (f && fn->base != SIZE_MAX) {
    base = plan->probes[fn->base].call;
    base.probe[0] = '\0';
    dev = (DLDevice){f->device, 0};
  } else {
    fn->base = discovered_base(plan, function, &base);
  }
  if (add_kinds(plan, &base, dev) != 0) return -1;
  if (add_forms(plan, &base, f && f->errors[CERT_ERR_NULL_DATA].documented) != 0) return -1;
  CertCall t = base;
  t.threads = 2;
  if (add(plan, &t, CERT_P_THREADS, 0) != 0) return -1;
  if (f && add_valid_calls(plan, f) != 0) return -1;
  if (f && add_error_calls(plan, f) != 0) return -1;
  return 0;
}
