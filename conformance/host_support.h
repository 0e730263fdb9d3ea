/* Helpers for the clauses of spec/host.md: calling the runtime's global
 * functions by name (a global the implementation lacks SKIPs the test,
 * naming it) and making and reading values. Raised errors are checked as
 * everywhere in the suite (core_support.h). */
#ifndef CONFORMANCE_HOST_SUPPORT_H_
#define CONFORMANCE_HOST_SUPPORT_H_

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core_support.h"

/* Calls the global function `name`; *out is zeroed first. */
static inline int host_call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIObjectHandle fn = core_global(name, 1);
  memset(out, 0, sizeof *out);
  int rc = API(TVMFFIFunctionCall)(fn, args, n, out);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* As host_call, failing the test (with the error) unless it returns 0. */
static inline TVMFFIAny host_ok(const char* name, TVMFFIAny* args, int32_t n) {
  TVMFFIAny out;
  conf_expect_ok(host_call(name, args, n, &out), name);
  return out;
}

/* Calls `name` expecting -1 with an error of `kind` whose message contains
 * `part` (NULL: any message). */
static inline void host_refused(const char* name, TVMFFIAny* args, int32_t n, const char* kind,
                                const char* part) {
  TVMFFIAny out;
  int rc = host_call(name, args, n, &out);
  if (rc == 0) core_release(&out);
  cr_expect_eq(rc, -1, "%s: expected -1 (%s), got %d", name, kind, rc);
  EXPECT_RAISED(.kind = kind, .says = {part});
}

/* An owned string value (small or heap as the implementation makes it). */
static inline TVMFFIAny host_str(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  TVMFFIAny v;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&b, &v), 0);
  return v;
}

/* A getter and a setter of an int64 field, for the test types the host
 * clauses register. */
static inline int host_get_i64(void* field, TVMFFIAny* out) {
  memset(out, 0, sizeof *out);
  out->type_index = kTVMFFIInt;
  memcpy(&out->v_int64, field, 8);
  return 0;
}

static inline int host_set_i64(void* field, const TVMFFIAny* v) {
  if (v->type_index != kTVMFFIInt) {
    API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "an int is needed");
    return -1;
  }
  memcpy(field, &v->v_int64, 8);
  return 0;
}

/* Registers the int64 field `name` at `offset` of the type (setter NULL:
 * read-only; default_value None: none). */
static inline void host_add_i64_field(int32_t index, const char* name, int64_t offset,
                                      int64_t flags, void* setter, TVMFFIAny default_value) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof f);
  f.name = (TVMFFIByteArray){name, strlen(name)};
  f.size = 8;
  f.alignment = 8;
  f.offset = offset;
  f.flags = flags;
  f.getter = host_get_i64;
  f.setter = setter;
  f.default_value_or_factory = default_value;
  f.field_static_type_index = kTVMFFIInt;
  cr_assert_eq(API(TVMFFITypeRegisterField)(index, &f), 0);
}

/* Whether value is a str (any form) equal to s. */
static inline int host_is_str(const TVMFFIAny* value, const char* s) {
  int32_t t = value->type_index;
  if (t != kTVMFFIStr && t != kTVMFFISmallStr) return 0;
  TVMFFIByteArray b = core_str_bytes(value);
  return b.size == strlen(s) && memcmp(b.data, s, b.size) == 0;
}

/* The int a call returned (failing the test on another kind). */
static inline int64_t host_int_of(TVMFFIAny v, const char* what) {
  cr_assert(v.type_index == kTVMFFIInt || v.type_index == kTVMFFIBool,
            "%s: expected an int, got type index %d", what, v.type_index);
  return v.v_int64;
}

/* An export of a test library (loaded once per process, RTLD_LOCAL, after
 * the implementation), called through its safe-call ABI. */
typedef int (*HostSafeCall)(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out);

static inline HostSafeCall host_export(const char* runfile, const char* name) {
  void* lib = dlopen(conf_runfile(runfile), RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(lib, "cannot load %s on %s: %s", runfile, conf_impl_path(), dlerror());
  HostSafeCall f = (HostSafeCall)dlsym(lib, name);
  cr_assert_not_null((void*)f, "%s exports no %s", runfile, name);
  return f;
}

/* Calls the container_interop.cc export __tvm_ffi_<name>. */
static inline TVMFFIAny host_interop(const char* name, TVMFFIAny* args, int32_t n) {
  char symbol[128];
  snprintf(symbol, sizeof symbol, "__tvm_ffi_%s", name);
  HostSafeCall f = host_export("conformance/testlibs/libcontainer_interop.so", symbol);
  TVMFFIAny out = core_none();
  conf_expect_ok(f(NULL, args, n, &out), symbol);
  return out;
}

#endif
