/*
 * Threading test of the reflection records and type attribute columns, for
 * TSan (--config=tsan): threads register fields and methods on one shared
 * type and attribute values in shared columns at once; every record must
 * arrive exactly once.
 */
#include <stdio.h>
#include <string.h>

#include "threads_test_support.h"
#include "type.h"

#define PER_THREAD 200

static int32_t shared_type;
static int32_t thread_types[THREADS];

static int noop_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  result->type_index = kTVMFFINone;
  return 0;
}

static void* worker(void* arg) {
  long t = (long)(intptr_t)arg;
  char name[64];
  TVMFFIObjectHandle fn = NULL;
  if (TVMFFIFunctionCreate(NULL, noop_call, NULL, &fn) != 0) fail("function", t, -1);
  for (long r = 0; r < PER_THREAD; ++r) {
    snprintf(name, sizeof name, "f_%ld_%ld", t, r);
    TVMFFIFieldInfo f;
    memset(&f, 0, sizeof f);
    f.name.data = name;
    f.name.size = strlen(name);
    f.size = 8;
    f.alignment = 8;
    f.offset = 24;
    if (TVMFFITypeRegisterField(shared_type, &f) != 0) fail("field", t, r);
    TVMFFIMethodInfo m;
    memset(&m, 0, sizeof m);
    m.name = f.name;
    m.method.type_index = kTVMFFIFunction;
    m.method.v_obj = fn;
    if (TVMFFITypeRegisterMethod(shared_type, &m) != 0) fail("method", t, r);
    snprintf(name, sizeof name, "threads.attr%ld", r % 10);
    TVMFFIByteArray attr = {name, strlen(name)};
    TVMFFIAny v = {0};
    v.type_index = kTVMFFIInt;
    v.v_int64 = t * 1000 + r % 10;
    if (r < 10 && TVMFFITypeRegisterAttr(thread_types[t], &attr, &v) != 0) fail("attr", t, r);
    if (TVMFFIGetTypeAttrColumn(&attr) == NULL && r >= 10) fail("column", t, r);
  }
  TVMFFIObjectDecRef(fn);
  return NULL;
}

int main(void) {
  TVMFFIByteArray key = {"threads.Reflected", 17};
  shared_type = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  if (shared_type < 0) fail("shared type", -1, -1);
  for (int i = 0; i < THREADS; ++i) {
    char k[32];
    snprintf(k, sizeof k, "threads.Attr%d", i);
    TVMFFIByteArray b = {k, strlen(k)};
    thread_types[i] = TVMFFITypeGetOrAllocIndex(&b, -1, 1, 0, 1, kTVMFFIObject);
    if (thread_types[i] < 0) fail("thread type", i, -1);
  }
  run_threads(worker);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(shared_type);
  if (info->num_fields != THREADS * PER_THREAD) fail("field count", -1, info->num_fields);
  if (info->num_methods != THREADS * PER_THREAD) fail("method count", -1, info->num_methods);
  for (int a = 0; a < 10; ++a) {
    char name[32];
    snprintf(name, sizeof name, "threads.attr%d", a);
    TVMFFIByteArray attr = {name, strlen(name)};
    const TVMFFITypeAttrColumn* c = TVMFFIGetTypeAttrColumn(&attr);
    if (c == NULL) {
      fail("missing column", -1, a);
      continue;
    }
    for (int i = 0; i < THREADS; ++i) {
      int32_t t = thread_types[i];
      if (t >= c->size || c->data[t].type_index != kTVMFFIInt || c->data[t].v_int64 != i * 1000 + a)
        fail("attribute value", i, a);
    }
  }
  return threads_exit_status("fields, methods and attributes registered concurrently");
}
