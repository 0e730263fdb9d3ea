/* AnyHash and AnyEqual of upstream's headers, in C (see any_hash.h). */
#include "any_hash.h"

#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "tffi_string.h"

#define TFFI_HASH_MOD 2147483647ull
#define TFFI_HASH_MUL 1099511628211ull

/* Upstream's StableHashCombine. */
static uint64_t tffi_hash_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ull + (key << 6) + (key >> 2));
}

uint64_t tffi_hash_bytes(const char* data, size_t size) {
  uint64_t result = 0, word;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    memcpy(&word, data + i, 8);
    result = (result * TFFI_HASH_MUL + word) % TFFI_HASH_MOD;
  }
  if (i < size) {
    word = 0;
    memcpy(&word, data + i, size - i);
    result = (result * TFFI_HASH_MUL + word) % TFFI_HASH_MOD;
  }
  return result;
}

/* The attribute column `name`, looked up once: a column never moves once it
 * exists, and upstream's headers look it up once too. */
static const TVMFFITypeAttrColumn* tffi_column(const TVMFFITypeAttrColumn** cache,
                                               const char* name) {
  const TVMFFITypeAttrColumn* column = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (column == NULL) {
    TVMFFIByteArray key = {name, strlen(name)};
    column = TVMFFIGetTypeAttrColumn(&key);
    __atomic_store_n(cache, column, __ATOMIC_RELEASE);
  }
  return column;
}

/* The entry of `column` for type_index, or NULL when the type has none. */
static const TVMFFIAny* tffi_custom(const TVMFFITypeAttrColumn* column, int32_t type_index) {
  if (column == NULL || type_index < kTVMFFIStaticObjectBegin) return NULL;
  int32_t offset = type_index - column->begin_index;
  if (offset < 0 || offset >= column->size) return NULL;
  const TVMFFIAny* entry = &column->data[offset];
  return entry->type_index == kTVMFFINone ? NULL : entry;
}

/* Calls a custom hash or equality: a native function pointer (upstream's
 * NativeFunctionView: arguments by reference, the result by value, an
 * error object in place of the result when it failed) or a Function. */
typedef TVMFFIAny (*TffiNative1)(const TVMFFIAny*);
typedef TVMFFIAny (*TffiNative2)(const TVMFFIAny*, const TVMFFIAny*);

static int tffi_call_custom(const char* what, const TVMFFIAny* fn, const TVMFFIAny* args, int32_t n,
                            int32_t want_kind, int64_t* out) {
  TVMFFIAny result = tffi_any_none();
  if (fn->type_index == kTVMFFIOpaquePtr && fn->v_ptr != NULL) {
    result =
        n == 1 ? ((TffiNative1)fn->v_ptr)(&args[0]) : ((TffiNative2)fn->v_ptr)(&args[0], &args[1]);
    if (result.type_index == kTVMFFIError) {
      tffi_set_raised(result.v_obj);
      return -1;
    }
  } else if (fn->type_index == kTVMFFIFunction && fn->v_obj != NULL) {
    if (TVMFFIFunctionCall(fn->v_obj, (TVMFFIAny*)args, n, &result) != 0) return -1;
  } else {
    return tffi_raise(TFFI_TYPE_ERROR, "%s: the attribute holds type index %d, not a function",
                      what, (int)fn->type_index);
  }
  if (result.type_index != want_kind) {
    int32_t got = result.type_index;
    tffi_any_release(&result);
    return tffi_raise(TFFI_TYPE_ERROR, "%s: the custom function returned type index %d", what,
                      (int)got);
  }
  *out = result.v_int64;
  return 0;
}

int tffi_any_hash(const TVMFFIAny* key, uint64_t* out) {
  static const TVMFFITypeAttrColumn* column;
  int32_t t = key->type_index;
  size_t size;
  const char* data = tffi_any_str_data(key, &size);
  if (t == kTVMFFISmallStr || t == kTVMFFISmallBytes) {
    /* The payload is zero beyond the content: the same as hashing it. */
    *out = tffi_hash_combine(t == kTVMFFISmallStr ? kTVMFFIStr : kTVMFFIBytes,
                             key->v_uint64 % TFFI_HASH_MOD);
    return 0;
  }
  if (data != NULL) {
    *out = tffi_hash_combine((uint64_t)t, tffi_hash_bytes(data, size));
    return 0;
  }
  const TVMFFIAny* custom = tffi_custom(tffi_column(&column, "__any_hash__"), t);
  if (custom != NULL) {
    int64_t h;
    if (tffi_call_custom("__any_hash__", custom, key, 1, kTVMFFIInt, &h) != 0) return -1;
    *out = tffi_hash_combine((uint64_t)t, (uint64_t)h);
    return 0;
  }
  *out = tffi_hash_combine((uint64_t)t, key->v_uint64);
  return 0;
}

/* Whether t is a text kind, and the heap twin of a small one. */
static int32_t tffi_text_kind(int32_t t) {
  if (t == kTVMFFISmallStr) return kTVMFFIStr;
  if (t == kTVMFFISmallBytes) return kTVMFFIBytes;
  return (t == kTVMFFIStr || t == kTVMFFIBytes) ? t : -1;
}

int tffi_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs) {
  static const TVMFFITypeAttrColumn* column;
  if (memcmp(lhs, rhs, sizeof *lhs) == 0) return 1;
  int32_t lt = lhs->type_index, rt = rhs->type_index;
  int32_t lk = tffi_text_kind(lt), rk = tffi_text_kind(rt);
  if (lk >= 0 && lk == rk) {
    size_t ls, rs;
    const char* ld = tffi_any_str_data(lhs, &ls);
    const char* rd = tffi_any_str_data(rhs, &rs);
    return ls == rs && (ls == 0 || memcmp(ld, rd, ls) == 0);
  }
  if (lt != rt) return 0;
  const TVMFFIAny* custom = tffi_custom(tffi_column(&column, "__any_equal__"), lt);
  if (custom == NULL) return 0;
  TVMFFIAny args[2] = {*lhs, *rhs};
  int64_t eq;
  if (tffi_call_custom("__any_equal__", custom, args, 2, kTVMFFIBool, &eq) != 0) return -1;
  return eq != 0;
}
