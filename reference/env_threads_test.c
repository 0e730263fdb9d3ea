/*
 * Threading test of the per-thread environment state and of tensors shared
 * between threads, meant for TSan (--config=tsan). Criterion's process
 * arena does not start under TSan, so this test has its own main and
 * reports failures by its exit status.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "tensor_test_support.h"
#include "object.h"
#include "tensor.h"
#include "threads_test_support.h"

#define ROUNDS 2000

static int alloc_a(DLTensor* p, DLManagedTensorVersioned** o, void* c,
                   void (*e)(void*, const char*, const char*)) {
  (void)p, (void)o, (void)c, (void)e;
  return -1;
}
static int alloc_b(DLTensor* p, DLManagedTensorVersioned** o, void* c,
                   void (*e)(void*, const char*, const char*)) {
  (void)p, (void)o, (void)c, (void)e;
  return -1;
}

/* Every thread sets its own streams (fast table and overflow list) and
 * reads back only its own values. */
static void* stream_worker(void* arg) {
  long me = (long)(intptr_t)arg;
  for (long r = 0; r < ROUNDS; ++r) {
    int32_t id = (int32_t)(r % 2 ? me : 1000 + me * 7 + r % 50);
    TVMFFIStreamHandle mine = (TVMFFIStreamHandle)(uintptr_t)((me + 1) << 20 | (r + 1) << 4);
    TVMFFIStreamHandle old = NULL;
    if (TVMFFIEnvSetStream(kDLCUDA, id, mine, &old) != 0) fail("set", me, r);
    if (old != NULL) fail("previous stream not NULL", me, r);
    if (TVMFFIEnvGetStream(kDLCUDA, id) != mine) fail("get", me, r);
    if (TVMFFIEnvSetStream(kDLCUDA, id, NULL, NULL) != 0) fail("clear", me, r);
  }
  /* Leave one overflow entry set: it must be freed at thread exit. */
  TVMFFIEnvSetStream(kDLCUDA, 5000 + (int32_t)me, (TVMFFIStreamHandle)(uintptr_t)16, NULL);
  return NULL;
}

/* Threads flip their own allocator while one thread keeps rewriting the
 * global one; a thread always reads its own when it set one. */
static void* allocator_worker(void* arg) {
  long me = (long)(intptr_t)arg;
  for (long r = 0; r < ROUNDS; ++r) {
    DLPackManagedTensorAllocator mine = r % 2 ? alloc_a : alloc_b;
    TVMFFIEnvSetDLPackManagedTensorAllocator(mine, me == 0, NULL);
    if (TVMFFIEnvGetDLPackManagedTensorAllocator() != mine) fail("own allocator", me, r);
    TVMFFIEnvSetDLPackManagedTensorAllocator(NULL, 0, NULL);
    DLPackManagedTensorAllocator seen = TVMFFIEnvGetDLPackManagedTensorAllocator();
    if (seen != NULL && seen != alloc_a && seen != alloc_b) fail("global allocator", me, r);
  }
  return NULL;
}

/* One tensor, exported and released from many threads at once. */
static TVMFFIObject* shared_tensor;

static void* tensor_worker(void* arg) {
  long me = (long)(intptr_t)arg;
  for (long r = 0; r < ROUNDS; ++r) {
    DLManagedTensorVersioned* e = NULL;
    if (TVMFFITensorToDLPackVersioned(shared_tensor, &e) != 0) {
      fail("export", me, r);
      continue;
    }
    TVMFFIObjectHandle view = NULL;
    if (TVMFFITensorCreateUnsafeView(shared_tensor, &e->dl_tensor, &view) != 0) {
      fail("view", me, r);
    } else {
      tffi_decref(view);
    }
    e->deleter(e);
  }
  return NULL;
}

int main(void) {
  run_threads(stream_worker);
  run_threads(allocator_worker);
  int64_t shape[2] = {4, 4};
  if (test_tensor_alloc_cpu(shape, 2, (DLDataType){kDLFloat, 32, 1}, &shared_tensor) != 0) {
    fail("alloc", -1, -1);
  } else {
    run_threads(tensor_worker);
    if (tffi_strong_count(shared_tensor) != 1) fail("references left over", -1, -1);
    tffi_decref(shared_tensor);
  }
  return threads_exit_status("streams, allocators, shared tensor");
}
