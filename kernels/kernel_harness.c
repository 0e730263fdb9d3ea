#include "kernels/kernel_harness.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void kern_kernel_open(KernKernel* k, const char* path, const char* name) {
  memset(k, 0, sizeof *k);
  const char* full = conf_runfile(path);
  /* RTLD_LOCAL as a host does: the kernel's own symbols stay private, while
   * its TVMFFI* references bind to the runtime loaded RTLD_GLOBAL before. */
  k->lib = dlopen(full, RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(k->lib, "cannot load kernel library %s: %s", full, dlerror());
  char symbol[256];
  snprintf(symbol, sizeof symbol, "__tvm_ffi_%s", name);
  k->sym = (TVMFFISafeCallType)dlsym(k->lib, symbol);
  cr_assert_not_null(k->sym, "%s does not export %s", full, symbol);
  int rc = API(TVMFFIFunctionCreate)(NULL, k->sym, NULL, &k->fn);
  cr_assert_eq(rc, 0, "TVMFFIFunctionCreate failed wrapping %s", symbol);
  cr_assert_not_null(k->fn);
}

void kern_kernel_close(KernKernel* k) {
  if (k->fn) API(TVMFFIObjectDecRef)(k->fn);
  /* The library stays mapped: an error object raised by it may still be
   * referenced by the runtime's thread-local slot until the process ends. */
  k->fn = NULL;
}

int kern_kernel_call(KernKernel* k, TVMFFIAny* args, int32_t num_args) {
  TVMFFIAny result;
  memset(&result, 0, sizeof result);
  int rc = API(TVMFFIFunctionCall)(k->fn, args, num_args, &result);
  cr_assert_eq(result.type_index, kTVMFFINone,
               "scale must leave the result None, got type index %d", result.type_index);
  return rc;
}

static TVMFFIByteArray error_part(TVMFFIObjectHandle err, int which) {
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  return which == 0 ? cell->kind : cell->message;
}

void kern_expect_raised(const char* kind, const char* const* parts) {
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err, "the call returned -1 without raising an error");
  TVMFFIByteArray got_kind = error_part(err, 0);
  TVMFFIByteArray msg = error_part(err, 1);
  char text[512];
  snprintf(text, sizeof text, "%.*s", (int)msg.size, msg.data);
  char kind_text[64];
  snprintf(kind_text, sizeof kind_text, "%.*s", (int)got_kind.size, got_kind.data);
  API(TVMFFIObjectDecRef)(err);
  cr_assert_str_eq(kind_text, kind, "expected %s, got %s: %s", kind, kind_text, text);
  for (const char* const* p = parts; *p != NULL; ++p) {
    cr_assert_not_null(strstr(text, *p), "the %s message \"%s\" does not contain \"%s\"", kind,
                       text, *p);
  }
}

void kern_kernel_call_ok(KernKernel* k, TVMFFIAny* args, int32_t num_args) {
  int rc = kern_kernel_call(k, args, num_args);
  if (rc == 0) return;
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  cr_assert_not_null(err, "the call returned %d without raising an error", rc);
  TVMFFIByteArray kind = error_part(err, 0);
  TVMFFIByteArray msg = error_part(err, 1);
  char text[512];
  snprintf(text, sizeof text, "%.*s: %.*s", (int)kind.size, kind.data, (int)msg.size, msg.data);
  API(TVMFFIObjectDecRef)(err);
  cr_assert_fail("the call failed: %s", text);
}

/* An argument of the given kind with every other byte zero (padding
 * included), so a kernel that reads past the payload sees zeros. */
static TVMFFIAny arg_of_kind(int32_t type_index) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = type_index;
  return a;
}

TVMFFIAny kern_arg_dltensor(DLTensor* t) {
  TVMFFIAny a = arg_of_kind(kTVMFFIDLTensorPtr);
  a.v_ptr = t;
  return a;
}

TVMFFIAny kern_arg_float(double v) {
  TVMFFIAny a = arg_of_kind(kTVMFFIFloat);
  a.v_float64 = v;
  return a;
}

TVMFFIAny kern_arg_int(int64_t v) {
  TVMFFIAny a = arg_of_kind(kTVMFFIInt);
  a.v_int64 = v;
  return a;
}

TVMFFIAny kern_arg_object(TVMFFIObjectHandle obj, int32_t type_index) {
  TVMFFIAny a = arg_of_kind(type_index);
  a.v_obj = (TVMFFIObject*)obj;
  return a;
}

DLTensor kern_dltensor_1d(void* data, int64_t* extent, DLDataType dtype, DLDevice device) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device = device;
  t.ndim = 1;
  t.dtype = dtype;
  t.shape = extent;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

static void managed_deleter(DLManagedTensor* self) {
  int* deleted = (int*)self->manager_ctx;
  if (deleted) ++*deleted;
  free(self);
}

TVMFFIObjectHandle kern_tensor_object(DLTensor* t, int* deleted) {
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof *m);
  cr_assert_not_null(m);
  m->dl_tensor = *t;
  m->manager_ctx = deleted;
  m->deleter = managed_deleter;
  TVMFFIObjectHandle obj = NULL;
  int rc = API(TVMFFITensorFromDLPack)(m, 0, 0, &obj);
  if (rc != 0) {
    free(m);
    TVMFFIObjectHandle err = NULL;
    API(TVMFFIErrorMoveFromRaised)(&err);
    if (err) API(TVMFFIObjectDecRef)(err);
    cr_assert_fail("TVMFFITensorFromDLPack refused a well-formed tensor");
  }
  return obj;
}

uint32_t kern_strong_refs(TVMFFIObjectHandle obj) {
  return (uint32_t)(__atomic_load_n(&((TVMFFIObject*)obj)->combined_ref_count, __ATOMIC_RELAXED) &
                    0xffffffffu);
}

TVMFFIAny* kern_guarded_args(int32_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  cr_assert((size_t)n * sizeof(TVMFFIAny) <= page);
  char* base = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(base, MAP_FAILED);
  cr_assert_eq(mprotect(base + page, page, PROT_NONE), 0);
  return (TVMFFIAny*)(base + page - (size_t)n * sizeof(TVMFFIAny));
}

void kern_guarded_args_free(TVMFFIAny* args, int32_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  munmap((char*)(args + n) - page, 2 * page);
}

int kern_survives(void (*fn)(void* ctx), void* ctx) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1, "fork failed");
  if (pid == 0) {
    fn(ctx);
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Reads the dynamic section of a loaded library and reports whether any
 * DT_NEEDED entry contains `needle`. */
typedef struct {
  const char* path_part;
  const char* needle;
  int found_lib;
  int needs;
} NeededQuery;

static int visit_phdr(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  NeededQuery* q = data;
  if (info->dlpi_name == NULL || strstr(info->dlpi_name, q->path_part) == NULL) return 0;
  q->found_lib = 1;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const ElfW(Dyn)* dyn = (const ElfW(Dyn)*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const char* strtab = NULL;
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_STRTAB) strtab = (const char*)d->d_un.d_ptr;
    }
    if (strtab == NULL) continue;
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_NEEDED && strstr(strtab + d->d_un.d_val, q->needle)) q->needs = 1;
    }
  }
  return 1;
}

int kern_loaded_lib_needs(const char* path_part, const char* needle) {
  NeededQuery q = {path_part, needle, 0, 0};
  dl_iterate_phdr(visit_phdr, &q);
  cr_assert(q.found_lib, "no loaded library matches %s", path_part);
  return q.needs;
}
