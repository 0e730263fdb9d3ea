/* Kernels that go wrong in every way a probe must turn into a verdict
 * without going down itself (tools/certify/probe_test.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

#define VICTIM __attribute__((visibility("default"))) int

VICTIM __tvm_ffi_good(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  return 0;
}

VICTIM __tvm_ffi_segv(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  *(volatile int*)(uintptr_t)16 = 1;
  return 0;
}

VICTIM __tvm_ffi_aborts(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  abort();
}

VICTIM __tvm_ffi_exits(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  exit(3);
}

VICTIM __tvm_ffi_hangs(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  for (;;) sleep(1);
}

/* Touches memory until malloc fails, then dies of it like careless code
 * does; never more than 8 GiB whatever the limits. */
VICTIM __tvm_ffi_bomb(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  for (int k = 0; k < 128; ++k) {
    char* p = malloc((size_t)64 << 20);
    if (p == NULL) abort();
    memset(p, 1, (size_t)64 << 20);
  }
  return 0;
}

VICTIM __tvm_ffi_reads_past(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  volatile int32_t k = args[n].type_index;
  (void)k;
  return 0;
}

VICTIM __tvm_ffi_no_raise(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  return -1;
}

VICTIM __tvm_ffi_twice(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "left behind");
  return 0;
}
