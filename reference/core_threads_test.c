/*
 * Threading test of the core values, meant for TSan (--config=tsan):
 * reference counts changed from many threads, strings, arrays and dtype
 * strings made concurrently, and the type registry and custom allocator used
 * from several threads at once. Criterion's process arena does not start
 * under TSan, so this test has its own main and reports by exit status.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "function.h"
#include "object.h"
#include "registry.h"
#include "tffi_string.h"
#include "threads_test_support.h"

#define ROUNDS 2000

static TVMFFIObject* shared;
static int shared_deletes;

static void count_delete(void* handle) {
  (void)handle;
  __atomic_fetch_add(&shared_deletes, 1, __ATOMIC_RELAXED);
}

/* Shares one object; makes and frees strings, arrays and dtype texts; looks
 * up and registers types. */
static void* worker(void* arg) {
  long t = (long)(intptr_t)arg;
  char key[64];
  TVMFFIObject* array_fn = NULL;
  if (tffi_global_get("ffi.Array", 9, &array_fn) != 0 || array_fn == NULL) fail("ffi.Array", t, 0);
  for (long r = 0; r < ROUNDS; ++r) {
    TVMFFIObjectIncRef(shared);
    TVMFFIAny s;
    TVMFFIByteArray in = {"a string long enough for the heap", 33};
    if (TVMFFIStringFromByteArray(&in, &s) != 0) fail("string", t, r);
    TVMFFIAny args[2] = {s, tffi_any_none()}, arr = tffi_any_none();
    args[1].v_obj = shared;
    args[1].type_index = shared->type_index;
    if (array_fn && TVMFFIFunctionCall(array_fn, args, 2, &arr) != 0) fail("array", t, r);
    tffi_any_release(&arr);
    tffi_any_release(&s);
    DLDataType dt = {kDLFloat, 16, (uint16_t)(1 + r % 8)};
    TVMFFIAny text;
    if (TVMFFIDataTypeToString(&dt, &text) != 0) fail("dtype", t, r);
    tffi_any_release(&text);
    if (r % 50 == 0) {
      snprintf(key, sizeof key, "threads.T%ld.R%ld", t, r);
      TVMFFIByteArray k = {key, strlen(key)};
      int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, kTVMFFIObject);
      int32_t again = -1;
      if (index < kTVMFFIDynObjectBegin) fail("type alloc", t, r);
      if (TVMFFITypeKeyToIndex(&k, &again) != 0 || again != index) fail("type lookup", t, r);
      const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
      if (info == NULL || info->type_index != index) fail("type info", t, r);
    }
    if (TVMFFIGetCustomAllocator() == NULL) fail("allocator", t, r);
    TVMFFIObjectDecRef(shared);
  }
  if (array_fn) tffi_decref(array_fn);
  return NULL;
}

int main(void) {
  if (TVMFFIObjectCreateOpaque((void*)0x1, kTVMFFIOpaquePyObject, count_delete,
                               (TVMFFIObjectHandle*)&shared) != 0) {
    fprintf(stderr, "FAIL: cannot create the shared object\n");
    return 1;
  }
  run_threads(worker);
  if (tffi_strong_count(shared) != 1) fail("strong count after the threads", -1, -1);
  if (shared_deletes != 0) fail("deleted too early", -1, -1);
  TVMFFIObjectDecRef(shared);
  if (shared_deletes != 1) fail("not deleted exactly once", -1, -1);
  return threads_exit_status("reference counts, strings, arrays, dtypes, types");
}
