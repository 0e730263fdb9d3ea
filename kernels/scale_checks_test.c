/* Clauses KER-020 to KER-033 of spec/kernels.md: the argument checks of both
 * scale kernels (CPU and CUDA), in their documented order. No GPU is needed:
 * a refused call never reaches the CUDA runtime, and the CUDA tensors here
 * carry addresses that are never dereferenced. */
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel_harness.h"

typedef struct {
  const char* lib;
  int32_t device_type; /* the kernel's device */
  int32_t other_type;  /* a device it refuses */
  const char* other_name;
} Flavour;

static const Flavour kFlavours[] = {
    {"kernels/libscale_cpu.so", kDLCPU, kDLCUDA, "cuda:0"},
    {"kernels/libscale_cuda.so", kDLCUDA, kDLCPU, "cpu:0"},
};
#define FOR_EACH_FLAVOUR(fl) \
  for (const Flavour* fl = kFlavours; fl < kFlavours + sizeof kFlavours / sizeof kFlavours[0]; ++fl)

/* A valid pair of float32 tensors of `n` elements for flavour `fl`, with
 * CPU storage behind them (used only by the CPU kernel). */
typedef struct {
  float in[8];
  float out[8];
  int64_t n_in, n_out;
  int64_t strides[2];
  int64_t shape2[2];
  DLTensor tin, tout;
  TVMFFIAny args[3];
  KernKernel k;
} Case;

static void case_init(Case* c, const Flavour* fl) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < 8; ++i) {
    c->in[i] = (float)(i + 1);
    c->out[i] = -7.0f;
  }
  c->n_in = c->n_out = 8;
  DLDevice dev = kern_device(fl->device_type, 0);
  c->tin = kern_dltensor_1d(c->in, &c->n_in, kern_dtype(kDLFloat, 32), dev);
  c->tout = kern_dltensor_1d(c->out, &c->n_out, kern_dtype(kDLFloat, 32), dev);
  c->args[0] = kern_arg_dltensor(&c->tout);
  c->args[1] = kern_arg_dltensor(&c->tin);
  c->args[2] = kern_arg_float(2.0);
  kern_kernel_open(&c->k, fl->lib, "scale");
}

static void case_fails(Case* c, const char* kind, const char* p1, const char* p2, const char* p3) {
  EXPECT_CALL_FAILS(&c->k, c->args, 3, kind, p1, p2 ? p2 : p1, p3 ? p3 : p1);
  /* KER-033: whatever was refused, output is as it was. */
  for (int i = 0; i < 8; ++i) cr_assert_eq(c->out[i], -7.0f, "output[%d] was written", i);
}

static void case_done(Case* c) { kern_kernel_close(&c->k); }

/* KER-020: other than 3 arguments is a TypeError naming scale and the count. */
TEST(scale_checks, KER_020_arity) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    EXPECT_CALL_FAILS(&c.k, c.args, 2, "TypeError", "scale", "3", "got 2");
    EXPECT_CALL_FAILS(&c.k, c.args, 0, "TypeError", "scale", "got 0");
    TVMFFIAny four[4] = {c.args[0], c.args[1], c.args[2], kern_arg_int(1)};
    EXPECT_CALL_FAILS(&c.k, four, 4, "TypeError", "scale", "got 4");
    case_done(&c);
  }
}

/* KER-021: a non-tensor output or input is a TypeError naming it. */
TEST(scale_checks, KER_021_not_a_tensor) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.args[0] = kern_arg_int(3);
    case_fails(&c, "TypeError", "output", "int", NULL);
    c.args[0] = kern_arg_dltensor(&c.tout);
    c.args[1].type_index = kTVMFFIRawStr;
    c.args[1].v_c_str = "not a tensor";
    case_fails(&c, "TypeError", "input", NULL, NULL);
    memset(&c.args[1], 0, sizeof c.args[1]); /* None */
    case_fails(&c, "TypeError", "input", "None", NULL);
    case_done(&c);
  }
}

/* KER-022: a NULL DLTensor* is a ValueError naming the argument. */
TEST(scale_checks, KER_022_null_dltensor) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.args[0] = kern_arg_dltensor(NULL);
    case_fails(&c, "ValueError", "output", "NULL", NULL);
    c.args[0] = kern_arg_dltensor(&c.tout);
    c.args[1] = kern_arg_dltensor(NULL);
    case_fails(&c, "ValueError", "input", "NULL", NULL);
    case_done(&c);
  }
}

/* KER-023: factor must be a float or an int. */
TEST(scale_checks, KER_023_factor_type) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.args[2].type_index = kTVMFFIBool;
    c.args[2].v_int64 = 1;
    case_fails(&c, "TypeError", "factor", "bool", NULL);
    memset(&c.args[2], 0, sizeof c.args[2]);
    case_fails(&c, "TypeError", "factor", "None", NULL);
    c.args[2].type_index = kTVMFFIRawStr;
    c.args[2].v_c_str = "2.0";
    case_fails(&c, "TypeError", "factor", NULL, NULL);
    case_done(&c);
  }
}

/* KER-024: a tensor on another device type is a ValueError naming the
 * argument and where it is; as a view and as a Tensor object. */
TEST(scale_checks, KER_024_wrong_device) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.tout.device = kern_device(fl->other_type, 0);
    case_fails(&c, "ValueError", "output", fl->other_name, NULL);
    c.tout.device = kern_device(fl->device_type, 0);
    c.tin.device = kern_device(fl->other_type, 0);
    case_fails(&c, "ValueError", "input", fl->other_name, NULL);
    int deleted = 0;
    TVMFFIObjectHandle obj = kern_tensor_object(&c.tin, &deleted);
    c.args[1] = kern_arg_object(obj, kTVMFFITensor);
    case_fails(&c, "ValueError", "input", fl->other_name, NULL);
    API(TVMFFIObjectDecRef)(obj);
    cr_expect_eq(deleted, 1);
    case_done(&c);
  }
}

/* KER-025: a strided tensor is a ValueError naming the argument; unit
 * strides given explicitly and strides of extent-1 axes are accepted. */
TEST(scale_checks, KER_025_not_contiguous) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.n_out = 4;
    c.n_in = 4;
    c.strides[0] = 2;
    c.tout.strides = c.strides;
    case_fails(&c, "ValueError", "output", "contiguous", NULL);
    c.tout.strides = NULL;
    c.tin.strides = c.strides;
    case_fails(&c, "ValueError", "input", "contiguous", NULL);
    c.tin.strides = NULL;
    case_done(&c);
  }
  /* Accepted layouts, checked where the call can complete (CPU). */
  Case c;
  case_init(&c, &kFlavours[0]);
  c.strides[0] = 1;
  c.tin.strides = c.strides;
  kern_kernel_call_ok(&c.k, c.args, 3);
  cr_expect_eq(c.out[7], 16.0f);
  c.n_in = c.n_out = 1;
  c.strides[0] = 5;
  c.tout.strides = c.strides;
  c.out[0] = 0;
  kern_kernel_call_ok(&c.k, c.args, 3);
  cr_expect_eq(c.out[0], 2.0f);
  /* empty tensors have no layout; NumPy gives them stride 0 */
  c.n_in = c.n_out = 0;
  c.strides[0] = 0;
  c.tin.strides = c.strides;
  kern_kernel_call_ok(&c.k, c.args, 3);
  case_done(&c);
}

/* KER-026: anything but 1-D, or a negative extent, is a ValueError. */
TEST(scale_checks, KER_026_not_1d) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.shape2[0] = 2;
    c.shape2[1] = 4;
    c.tout.ndim = 2;
    c.tout.shape = c.shape2;
    case_fails(&c, "ValueError", "output", "1-D", NULL);
    c.tout.ndim = 0;
    case_fails(&c, "ValueError", "output", "1-D", NULL);
    c.tout.ndim = 1;
    c.tout.shape = &c.n_out;
    c.tin.ndim = 2;
    c.tin.shape = c.shape2;
    case_fails(&c, "ValueError", "input", "1-D", NULL);
    c.tin.ndim = 1;
    c.tin.shape = &c.n_in;
    c.n_in = -8;
    case_fails(&c, "ValueError", "input", "negative", NULL);
    case_done(&c);
  }
}

/* KER-027: devices that differ (same type, other index) are refused. */
TEST(scale_checks, KER_027_devices_differ) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.tin.device.device_id = 1;
    case_fails(&c, "ValueError", "output and input", "devices differ", NULL);
    case_done(&c);
  }
}

/* KER-028: dtypes that differ are refused, naming both. */
TEST(scale_checks, KER_028_dtypes_differ) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.n_in = c.n_out = 4;
    c.tin.dtype = kern_dtype(kDLFloat, 64);
    case_fails(&c, "ValueError", "dtypes differ", "float32", "float64");
    c.tin.dtype = kern_dtype(kDLBfloat, 16);
    c.tout.dtype = kern_dtype(kDLFloat, 16);
    case_fails(&c, "ValueError", "output and input", "float16", "bfloat16");
    case_done(&c);
  }
}

/* KER-029: element counts that differ are refused, naming both counts. */
TEST(scale_checks, KER_029_counts_differ) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.n_in = 7;
    case_fails(&c, "ValueError", "output and input", "element counts differ", "(8 vs 7)");
    case_done(&c);
  }
}

/* KER-030: unsupported dtypes are a TypeError naming input and the dtype. */
TEST(scale_checks, KER_030_unsupported_dtype) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.tin.dtype = c.tout.dtype = kern_dtype(kDLInt, 32);
    case_fails(&c, "TypeError", "input", "int32", NULL);
    DLDataType vec = {kDLFloat, 32, 4};
    c.n_in = c.n_out = 2;
    c.tin.dtype = c.tout.dtype = vec;
    case_fails(&c, "TypeError", "input", "float32x4", NULL);
    c.n_in = c.n_out = 8;
    c.tin.dtype = c.tout.dtype = kern_dtype(kDLFloat, 8);
    case_fails(&c, "TypeError", "input", "float8", NULL);
    case_done(&c);
  }
}

/* KER-031: a non-empty tensor with NULL data is refused, never touched. */
TEST(scale_checks, KER_031_null_data) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    c.tin.data = NULL;
    case_fails(&c, "ValueError", "input", "NULL", NULL);
    c.tin.data = c.in;
    c.tout.data = NULL;
    EXPECT_CALL_FAILS(&c.k, c.args, 3, "ValueError", "output", "NULL");
    case_done(&c);
  }
}

/* KER-032: with several faults, the first check in the documented order
 * decides; output before input within a check. */
TEST(scale_checks, KER_032_first_failing_check_wins) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    /* arity before everything */
    c.args[0] = kern_arg_int(1);
    EXPECT_CALL_FAILS(&c.k, c.args, 2, "TypeError", "scale");
    /* output's type before input's type before factor */
    c.args[1] = kern_arg_int(1);
    c.args[2] = kern_arg_dltensor(&c.tin);
    case_fails(&c, "TypeError", "output", NULL, NULL);
    c.args[0] = kern_arg_dltensor(&c.tout);
    case_fails(&c, "TypeError", "input", NULL, NULL);
    c.args[1] = kern_arg_dltensor(&c.tin);
    /* factor's type before any tensor property */
    c.tout.device = kern_device(fl->other_type, 0);
    case_fails(&c, "TypeError", "factor", NULL, NULL);
    c.args[2] = kern_arg_float(2.0);
    /* input's device before output's contiguity */
    c.tout.device = kern_device(fl->device_type, 0);
    c.tin.device = kern_device(fl->other_type, 0);
    c.strides[0] = 3;
    c.tout.strides = c.strides;
    case_fails(&c, "ValueError", "input", fl->other_name, NULL);
    c.tin.device = kern_device(fl->device_type, 0);
    /* contiguity before dimensions */
    c.tin.ndim = 2;
    c.shape2[0] = 2;
    c.shape2[1] = 4;
    c.tin.shape = c.shape2;
    case_fails(&c, "ValueError", "output", "contiguous", NULL);
    c.tout.strides = NULL;
    case_fails(&c, "ValueError", "input", "1-D", NULL);
    c.tin.ndim = 1;
    c.tin.shape = &c.n_in;
    /* devices before dtypes before counts before dtype support */
    c.tin.device.device_id = 1;
    c.tin.dtype = c.tout.dtype = kern_dtype(kDLInt, 8);
    c.tout.dtype = kern_dtype(kDLInt, 16);
    c.n_in = 3;
    case_fails(&c, "ValueError", "devices differ", NULL, NULL);
    c.tin.device.device_id = 0;
    case_fails(&c, "ValueError", "dtypes differ", NULL, NULL);
    c.tout.dtype = kern_dtype(kDLInt, 8);
    case_fails(&c, "ValueError", "element counts differ", NULL, NULL);
    c.n_in = 8;
    c.tin.data = NULL;
    case_fails(&c, "TypeError", "input", "int8", NULL);
    case_done(&c);
  }
}

/* KER-033: a refused call writes nothing to output, even when the refusal
 * comes last in the order (the NULL input data of a valid-looking pair). */
TEST(scale_checks, KER_033_refused_call_writes_nothing) {
  Case c;
  case_init(&c, &kFlavours[0]);
  c.tin.data = NULL;
  case_fails(&c, "ValueError", "input", NULL, NULL);
  c.tin.data = c.in;
  c.tin.dtype = c.tout.dtype = kern_dtype(kDLUInt, 32);
  case_fails(&c, "TypeError", "uint32", NULL, NULL);
  case_done(&c);
}

/* KER-013: nothing past args[num_args - 1] is read: the slots end at an
 * unreadable page, for a complete call and for short ones. */
TEST(scale_checks, KER_013_reads_only_given_args) {
  FOR_EACH_FLAVOUR(fl) {
    Case c;
    case_init(&c, fl);
    if (fl->device_type == kDLCUDA) {
      c.n_in = c.n_out = 0; /* completes without a GPU */
    }
    for (int32_t n = 0; n <= 3; ++n) {
      TVMFFIAny* args = kern_guarded_args(n);
      memcpy(args, c.args, (size_t)n * sizeof(TVMFFIAny));
      int rc = kern_kernel_call(&c.k, args, n);
      if (n == 3) {
        cr_expect_eq(rc, 0, "a complete call failed");
      } else {
        cr_expect_eq(rc, -1);
        EXPECT_RAISED("TypeError", "scale");
      }
      kern_guarded_args_free(args, n);
    }
    case_done(&c);
  }
}
