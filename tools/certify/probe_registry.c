#include "probe_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "buf.h"
#include "probe_args.h"

static void text_add(CertBuf* t, const char* prefix, const char* line) {
  cert_buf_add(t, prefix);
  cert_buf_add(t, line);
  cert_buf_add(t, "\n");
}

/* Calls a Function object on `args`; 0 with the result, or -1. */
static int call_object(TVMFFIObjectHandle f, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  *out = (TVMFFIAny){.type_index = kTVMFFINone};
  if (cert_api.function_call(f, args, n, out) == 0) return 0;
  TVMFFIObjectHandle err = NULL;
  cert_api.error_move(&err);
  if (err) cert_api.dec_ref(err);
  return -1;
}

static int call_global(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIObjectHandle f = NULL;
  TVMFFIByteArray key = {name, strlen(name)};
  if (cert_api.get_global == NULL || cert_api.function_call == NULL ||
      cert_api.get_global(&key, &f) != 0 || f == NULL) {
    return -1;
  }
  int rc = call_object(f, args, n, out);
  cert_api.dec_ref(f);
  return rc;
}

static void add_str(CertBuf* t, const char* prefix, const TVMFFIAny* v) {
  char* str = NULL;
  if (cert_str_text(v, &str) == 0) text_add(t, prefix, str);
  free(str);
}

/* Global function names, by upstream's name-list functor ("G name"); a
 * runtime without it says so ("G?"). */
static void list_globals(CertBuf* t) {
  TVMFFIAny functor;
  if (call_global("ffi.FunctionListGlobalNamesFunctor", NULL, 0, &functor) != 0 ||
      functor.type_index != kTVMFFIFunction) {
    text_add(t, "G?", "");
    return;
  }
  TVMFFIAny arg = {.type_index = kTVMFFIInt, .v_int64 = -1}, count;
  if (call_object(functor.v_obj, &arg, 1, &count) == 0 && count.type_index == kTVMFFIInt) {
    for (int64_t i = 0; i < count.v_int64 && i < 100000; ++i) {
      TVMFFIAny name;
      arg.v_int64 = i;
      if (call_object(functor.v_obj, &arg, 1, &name) != 0) break;
      add_str(t, "G ", &name);
      if (name.type_index >= kTVMFFIStaticObjectBegin) cert_api.dec_ref(name.v_obj);
    }
  }
  cert_api.dec_ref(functor.v_obj);
}

/* Type keys ("T key"): upstream lists them; elsewhere the dynamic type
 * indices are walked (a runtime that returns NULL for unknown ones). */
static void list_types(CertBuf* t) {
  TVMFFIAny keys;
  if (call_global("ffi.GetRegisteredTypeKeys", NULL, 0, &keys) == 0 &&
      keys.type_index == kTVMFFIArray) {
    TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(keys.v_obj);
    const TVMFFIAny* items = cell->data;
    for (int64_t i = 0; i < cell->size && i < 100000; ++i) add_str(t, "T ", &items[i]);
    cert_api.dec_ref(keys.v_obj);
    return;
  }
  int misses = 0;
  for (int32_t i = kTVMFFIDynObjectBegin; cert_api.type_info && misses < 64 && i < 1 << 20; ++i) {
    const TVMFFITypeInfo* info = cert_api.type_info(i);
    if (info == NULL) {
      TVMFFIObjectHandle err = NULL;
      cert_api.error_move(&err);
      if (err) cert_api.dec_ref(err);
      misses++;
      continue;
    }
    misses = 0;
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(info->type_key.size < 255 ? info->type_key.size : 255),
             info->type_key.data);
    text_add(t, "T ", key);
  }
}

char* cert_registry_text(const char* tag) {
  CertBuf t = {0};
  text_add(&t, "", tag);
  list_globals(&t);
  list_types(&t);
  return t.s;
}
