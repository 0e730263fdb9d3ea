/* One probe call, described as plain data, and its one-line text form (the
 * `replay` line of a finding). The same description builds the real
 * arguments in a child process (probe_child.c), so a replay re-runs exactly
 * what failed.
 *
 * Grammar (whitespace around commas is free):
 *
 *   line     := NAME '(' [arg {',' arg}] ')' {' ' attr}
 *   attr     := 'runtime=' WORD | 'threads=' 1|2 | 'expect=' KIND[':' NAME]
 *               | 'check=reference' | 'returns=none' | 'probe=' WORD
 *   arg      := item | 'array:[' [item {',' item}] ']'   (an ffi.Array)
 *   item     := 'none' | 'bool:' true|false | 'int:' INT | 'float:' NUMBER
 *               | 'str:' WORD | 'rawstr:' WORD | 'bytes:' WORD
 *               | 'dtype:' DTYPE | 'device:' DEVICE | 'ptr:' null|guard
 *               | 'ptr:' LAYOUT                    (a raw pointer to such memory)
 *               | 'shape:[' [INT {'x' INT}] ']'    (an ffi.Shape)
 *               | 'object:' function|error          (a wrong object type)
 *               | 'dl:null'                         (a NULL DLTensor*)
 *               | ('dl:'|'tensor:') LAYOUT
 *   LAYOUT   := DTYPE '[' [INT {'x' INT}] ']' ['{' opt {';' opt} '}'] '@' DEVICE
 *   opt      := 'strides=' (INT {'x' INT} | 'null') | 'offset=' INT | 'data=' null|guard
 *               | 'align=' INT                      (data starts at a multiple of it)
 *   DTYPE    := float32, float16, bfloat16, float64, int32, int8, uint8, bool, ... ['x' LANES]
 *   DEVICE   := cpu|cuda|cuda_host|rocm|metal|vulkan|opencl|type<N> ':' INT
 *
 * `dl:` passes a DLTensor* view (type index 7), `tensor:` a Tensor object
 * (70) made by the runtime's TVMFFITensorFromDLPackVersioned. Without
 * options a tensor has explicit compact strides, byte_offset 0, and data
 * that ends right before an unreadable page (CPU) or is an unreadable page
 * (other devices; NULL when it has no elements). `str:` of up to 7 bytes is
 * a small string, longer ones a String object. `runtime=` is informative:
 * the runtime a replay uses is the one certify is run with. `probe=` names
 * the check the call belongs to (`legacy-forms`, `errors.shape`, ...), so
 * a replay is judged as the run judged it. */
#ifndef CERT_PROBE_CALL_H_
#define CERT_PROBE_CALL_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

enum {
  CERT_MAX_ARGS = 12,
  CERT_MAX_ITEMS = 8,
  CERT_MAX_NDIM = 4,
  CERT_WORD_MAX = 24,
  CERT_NAME_MAX = 128
};

typedef enum {
  CERT_ARG_NONE,
  CERT_ARG_BOOL,
  CERT_ARG_INT,
  CERT_ARG_FLOAT,
  CERT_ARG_STR,
  CERT_ARG_RAWSTR,
  CERT_ARG_BYTES,
  CERT_ARG_DTYPE,
  CERT_ARG_DEVICE,
  CERT_ARG_PTR,
  CERT_ARG_FUNCTION, /* a Function object where something else is expected */
  CERT_ARG_ERROR,    /* an Error object */
  CERT_ARG_DLNULL,   /* a NULL DLTensor* */
  CERT_ARG_DLTENSOR, /* DLTensor* view */
  CERT_ARG_TENSOR,   /* Tensor object */
  CERT_ARG_DATAPTR,  /* an opaque pointer to memory laid out like a tensor (a DSL's raw pointer) */
  CERT_ARG_SHAPE,    /* ffi.Shape of `ndim` extents in `shape` */
  CERT_ARG_ARRAY,    /* ffi.Array of the call's items[i .. i + ndim) */
} CertArgKind;

typedef enum { CERT_STRIDES_COMPACT, CERT_STRIDES_EXPLICIT, CERT_STRIDES_NULL } CertStrides;
typedef enum { CERT_DATA_DEFAULT, CERT_DATA_NULL, CERT_DATA_GUARD } CertData;

typedef struct {
  CertArgKind kind;
  int64_t i;                /* bool, int; ptr: 0 null, 1 guard */
  double f;                 /* float */
  char word[CERT_WORD_MAX]; /* str, rawstr, bytes */
  DLDataType dtype;         /* dtype, tensors */
  DLDevice device;          /* device, tensors */
  int32_t ndim;
  int64_t shape[CERT_MAX_NDIM];
  int64_t strides[CERT_MAX_NDIM]; /* with CERT_STRIDES_EXPLICIT */
  CertStrides strides_mode;
  uint64_t byte_offset;
  CertData data;
  uint32_t align; /* tensors, data pointers: data starts at a multiple of it (0: anywhere) */
} CertArg;

typedef struct {
  char function[CERT_NAME_MAX]; /* without the __tvm_ffi_ prefix */
  int32_t nargs;
  CertArg args[CERT_MAX_ARGS];
  int threads;                     /* 1, or 2: the same call from two threads at once */
  char runtime[CERT_NAME_MAX];     /* informative */
  char expect_kind[32];            /* a documented error kind the call must fail with */
  char expect_name[CERT_NAME_MAX]; /* ... whose message names this argument */
  int check_reference;             /* compare outputs with the manifest's reference */
  int returns_none;                /* the result slot must stay None */
  char probe[32]; /* the check it belongs to, without "probe." ("" for a plain call) */
  int32_t nitems;
  CertArg items[CERT_MAX_ITEMS]; /* the elements of array arguments */
} CertCall;

/* Writes the call's line into buf (always NUL-terminated). Returns the
 * length it needed, like snprintf. */
int cert_call_format(const CertCall* call, char* buf, size_t size);

/* Parses a line (probe_call_parse.c). Returns 0, or -1 with a reason in err. */
int cert_call_parse(const char* line, CertCall* call, char* err, size_t errlen);

/* A call of `function` with no arguments on one thread. */
CertCall cert_call_new(const char* function);

/* The first tensor argument after argument `after` (-1: from the start),
 * or -1. */
int cert_call_next_tensor(const CertCall* c, int after);

/* Argument and tensor helpers shared by the plan and the child. */
CertArg cert_arg_simple(CertArgKind kind);
CertArg cert_arg_int(int64_t v);
CertArg cert_arg_float(double v);
CertArg cert_arg_tensor(CertArgKind kind, DLDataType dtype, int32_t ndim, const int64_t* shape,
                        DLDevice device);
CertArg cert_arg_tensor_1d(CertArgKind kind, DLDataType dtype, int64_t n, DLDevice device);
/* The kinds a parameter may be given, one value of each: none, bool, int,
 * float, str (small and heap), raw str, bytes (small and heap), dtype,
 * device, pointer (NULL and not), function, error, NULL DLTensor*, DLTensor*
 * and Tensor. */
enum { CERT_ARG_KIND_VARIANTS = 18 };
CertArg cert_arg_kind_variant(int v, DLDevice dev);
int64_t cert_arg_elements(const CertArg* a); /* product of the shape, -1 on overflow */
int cert_arg_is_tensor(const CertArg* a);    /* dl: or tensor: with a shape */
int cert_arg_has_layout(const CertArg* a); /* a tensor or a data pointer: memory certify lays out */

/* dtype and device words: "float32", "cuda:0". */
int cert_dtype_parse(const char* s, size_t n, DLDataType* out);
void cert_dtype_format(DLDataType t, char* buf, size_t size);
int cert_device_parse(const char* s, size_t n, DLDevice* out);
void cert_device_format(DLDevice d, char* buf, size_t size);
size_t cert_dtype_bytes(DLDataType t); /* bytes per element, rounded up; 0 if unknown */

/* Element values (probe_values.c): loads widen exactly to double; stores
 * round the way the dtype does (float16/bfloat16 to nearest even through
 * float32, float32 to nearest, integers truncate). Return -1 for a dtype
 * they do not know (more than one lane, complex, sub-byte, ...). */
int cert_value_load(DLDataType t, const void* p, double* out);
int cert_value_store(DLDataType t, void* p, double v);

#endif
