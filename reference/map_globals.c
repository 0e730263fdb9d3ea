/* Maps and dicts across the ABI: "ffi.Map", "ffi.Dict" and their operations
 * (size, get, count, iterate, and for dicts set, erase, clear), under the
 * names and with the error kinds upstream's Python package relies on. */
#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "map.h"
#include "mem.h"
#include "object.h"
#include "sentinel.h"

/* What each registered function needs to know: its name, for messages,
 * and which of the two container kinds it takes. */
typedef struct {
  const char* name;
  int32_t type_index;
  const char* type_key;
} TffiMapFn;

/* The map or dict argument #i, not NULL. */
static int tffi_map_arg(const TffiMapFn* fn, const TVMFFIAny* args, int32_t i, TffiMap** out) {
  TVMFFIObject* obj = NULL;
  if (tffi_args_object(fn->name, args, i, fn->type_index == kTVMFFIMap ? "map" : "dict",
                       fn->type_index, fn->type_key, &obj))
    return -1;
  *out = (TffiMap*)obj;
  return 0;
}

static int tffi_map_args(const TffiMapFn* fn, const TVMFFIAny* args, int32_t num_args, int32_t want,
                         TffiMap** out) {
  return tffi_args_count(fn->name, num_args, want) || tffi_map_arg(fn, args, 0, out);
}

static TVMFFIAny tffi_int_value(int64_t v) {
  TVMFFIAny out = tffi_any_none();
  out.type_index = kTVMFFIInt;
  out.v_int64 = v;
  return out;
}

/* "ffi.Map" / "ffi.Dict"(k0, v0, k1, v1, ...): later keys win, in the
 * place of the first. */
static int tffi_map_make(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const TffiMapFn* fn = self;
  if (num_args < 0 || num_args % 2 != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: expected key-value pairs but got %d arguments",
                      fn->name, (int)num_args);
  TVMFFIObject* map = tffi_map_new(fn->type_index, (uint64_t)num_args / 2);
  if (map == NULL) return -1;
  for (int32_t i = 0; i < num_args; i += 2) {
    if (tffi_map_set((TffiMap*)map, &args[i], &args[i + 1]) != 0) {
      tffi_decref(map);
      return -1;
    }
  }
  *result = tffi_any_object(map);
  return 0;
}

static int tffi_map_size(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiMap* m;
  if (tffi_map_args(self, args, num_args, 1, &m)) return -1;
  *result = tffi_int_value((int64_t)m->size);
  return 0;
}

/* Looks args[1] up in the map args[0]: 1 found, 0 not, -1 error. The key
 * is compared in its owned form, as the map holds keys: a const char* is
 * the string it points to. */
static int tffi_map_lookup(const TffiMapFn* fn, const TVMFFIAny* args, int32_t num_args,
                           TffiKV** found) {
  TffiMap* m;
  TVMFFIAny key;
  if (tffi_map_args(fn, args, num_args, 2, &m) || tffi_any_copy_owned(&args[1], &key)) return -1;
  int rc = tffi_map_find(m, &key, found);
  tffi_any_release(&key);
  return rc;
}

static int tffi_map_get_item(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  TffiKV* found;
  int rc = tffi_map_lookup(self, args, num_args, &found);
  if (rc < 0) return -1;
  /* Upstream's words: Python's Map.__getitem__ passes them on. */
  if (rc == 0) return tffi_raise(TFFI_KEY_ERROR, "key is not in Map");
  return tffi_any_copy_owned(&found->value, result);
}

static int tffi_map_get_or_missing(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  TffiKV* found;
  int rc = tffi_map_lookup(self, args, num_args, &found);
  if (rc < 0) return -1;
  if (rc == 1) return tffi_any_copy_owned(&found->value, result);
  TVMFFIObject* missing = tffi_missing_object();
  if (missing == NULL) return -1;
  tffi_incref(missing);
  *result = tffi_any_object(missing);
  return 0;
}

static int tffi_map_count(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiKV* found;
  int rc = tffi_map_lookup(self, args, num_args, &found);
  if (rc < 0) return -1;
  *result = tffi_int_value(rc);
  return 0;
}

static int tffi_dict_set_item(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  TffiMap* m;
  if (tffi_map_args(self, args, num_args, 3, &m) || tffi_map_set(m, &args[1], &args[2])) return -1;
  *result = tffi_any_none();
  return 0;
}

static int tffi_dict_erase(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiMap* m;
  TVMFFIAny key;
  if (tffi_map_args(self, args, num_args, 2, &m) || tffi_any_copy_owned(&args[1], &key)) return -1;
  int rc = tffi_map_erase(m, &key);
  tffi_any_release(&key);
  if (rc < 0) return -1;
  *result = tffi_any_none();
  return 0;
}

static int tffi_dict_clear(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiMap* m;
  if (tffi_map_args(self, args, num_args, 1, &m)) return -1;
  tffi_map_clear(m);
  *result = tffi_any_none();
  return 0;
}

/* The iteration functor: (0) the current key, (1) its value, (2) step on,
 * returning whether an entry is left. It holds the map, and refuses to go
 * on once the dict changed under it rather than read a stale position. */
typedef struct {
  TffiMap* map;
  uint64_t pos;
} TffiMapIter;

static void tffi_map_iter_free(void* self) {
  TffiMapIter* it = self;
  tffi_decref(&it->map->header);
  tffi_free(it);
}

static int tffi_map_iter_call(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  const char* fn = "ffi.MapForwardIterFunctor()";
  TffiMapIter* it = self;
  int64_t command = 0;
  if (tffi_args_count(fn, num_args, 1) || tffi_args_int(fn, args, 0, "command", &command))
    return -1;
  if (!tffi_map_has_pos(it->map, it->pos))
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "%s: the map has no entry at this position (it "
                      "changed during iteration, or the iteration ended)",
                      fn);
  if (command == 0) return tffi_any_copy_owned(&tffi_map_at(it->map, it->pos)->key, result);
  if (command == 1) return tffi_any_copy_owned(&tffi_map_at(it->map, it->pos)->value, result);
  it->pos = tffi_map_next(it->map, it->pos);
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = it->pos != tffi_map_end(it->map);
  return 0;
}

static int tffi_map_iter_make(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  TffiMap* m;
  if (tffi_map_args(self, args, num_args, 1, &m)) return -1;
  TffiMapIter* it = tffi_malloc(sizeof *it);
  if (it == NULL) return tffi_raise_oom(sizeof *it);
  it->map = m;
  it->pos = tffi_map_begin(m);
  tffi_incref(&m->header);
  TVMFFIObject* functor = tffi_function_new(it, tffi_map_iter_call, tffi_map_iter_free);
  if (functor == NULL) {
    tffi_map_iter_free(it);
    return -1;
  }
  *result = tffi_any_object(functor);
  return 0;
}

#define TFFI_MAP_FN(name, call) \
  { {name, kTVMFFIMap, "ffi.Map"}, call }
#define TFFI_DICT_FN(name, call) \
  { {name, kTVMFFIDict, "ffi.Dict"}, call }

static const struct {
  TffiMapFn fn;
  TVMFFISafeCallType call;
} tffi_map_fns[] = {
    TFFI_MAP_FN("ffi.Map", tffi_map_make),
    TFFI_MAP_FN("ffi.MapSize", tffi_map_size),
    TFFI_MAP_FN("ffi.MapGetItem", tffi_map_get_item),
    TFFI_MAP_FN("ffi.MapGetItemOrMissing", tffi_map_get_or_missing),
    TFFI_MAP_FN("ffi.MapCount", tffi_map_count),
    TFFI_MAP_FN("ffi.MapForwardIterFunctor", tffi_map_iter_make),
    TFFI_DICT_FN("ffi.Dict", tffi_map_make),
    TFFI_DICT_FN("ffi.DictSize", tffi_map_size),
    TFFI_DICT_FN("ffi.DictGetItem", tffi_map_get_item),
    TFFI_DICT_FN("ffi.DictGetItemOrMissing", tffi_map_get_or_missing),
    TFFI_DICT_FN("ffi.DictCount", tffi_map_count),
    TFFI_DICT_FN("ffi.DictForwardIterFunctor", tffi_map_iter_make),
    TFFI_DICT_FN("ffi.DictSetItem", tffi_dict_set_item),
    TFFI_DICT_FN("ffi.DictErase", tffi_dict_erase),
    TFFI_DICT_FN("ffi.DictClear", tffi_dict_clear),
};

__attribute__((constructor)) static void tffi_map_globals_register(void) {
  for (size_t i = 0; i < sizeof tffi_map_fns / sizeof *tffi_map_fns; ++i)
    tffi_builtin_register_self(tffi_map_fns[i].fn.name, (void*)&tffi_map_fns[i].fn,
                               tffi_map_fns[i].call);
}
