/* The process-wide table of global functions, keyed by name bytes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arg.h"
#include "tffi_error.h"
#include "function.h"
#include "mem.h"
#include "object.h"
#include "registry.h"

/* Names are byte strings of a given length: embedded NULs are part of them
 * and the empty name is a name like any other. */
typedef struct TffiEntry {
  struct TffiEntry* next;
  uint64_t hash;
  size_t len;
  TVMFFIObject* fn; /* one reference, owned by the table */
  char* metadata;   /* owned copy (NUL-terminated), or NULL when none was given */
  size_t metadata_len;
  char name[];
} TffiEntry;

/* Longest name accepted: bounds the copy made from caller input. */
#define TFFI_NAME_MAX ((size_t)1 << 20)

static pthread_mutex_t tffi_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static TffiEntry** tffi_buckets;
static size_t tffi_nbuckets; /* a power of two, or 0 before the first entry */
static size_t tffi_nentries;
/* Raised by every change to the table (under the lock), read without it:
 * lets a caller keep a function it looked up for as long as no name can
 * have been given another. */
static _Atomic uint64_t tffi_registry_version;

/* Eight bytes a step (names are looked up on every module load and call
 * by name): multiply-xorshift rounds, then a final mix so that the low bits
 * the buckets use depend on every byte. Hashes never leave the process, so
 * the host's byte order does not matter. */
static uint64_t tffi_hash_mix(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

static uint64_t tffi_hash(const char* name, size_t len) {
  uint64_t h = 0x243f6a8885a308d3ull ^ len, w;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    memcpy(&w, name + i, 8);
    h = tffi_hash_mix(h, w);
  }
  if (i < len && len >= 8) {
    /* The last, partial word: the final eight bytes, overlapping. */
    memcpy(&w, name + len - 8, 8);
    h = tffi_hash_mix(h, w);
  } else if (i < len) {
    for (w = 0; i < len; ++i) w = (w << 8) | (unsigned char)name[i];
    h = tffi_hash_mix(h, w);
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

/* Where the entry for the name is, or where it would be linked. Lock held. */
static inline __attribute__((always_inline)) TffiEntry** tffi_find(const char* name, size_t len,
                                                                   uint64_t hash) {
  if (tffi_nbuckets == 0) return NULL;
  TffiEntry** at = &tffi_buckets[hash & (tffi_nbuckets - 1)];
  while (*at && !((*at)->hash == hash && (*at)->len == len &&
                  (len == 0 || memcmp((*at)->name, name, len) == 0)))
    at = &(*at)->next;
  return at;
}

/* Keeps chains short by doubling once entries outnumber buckets. Lock held.
 * Failure to grow is harmless: chains just get longer. */
static void tffi_maybe_grow(void) {
  if (tffi_nentries < tffi_nbuckets) return;
  size_t n = tffi_nbuckets ? tffi_nbuckets * 2 : 64;
  TffiEntry** fresh = tffi_calloc(n, sizeof *fresh);
  if (fresh == NULL) return;
  for (size_t i = 0; i < tffi_nbuckets; ++i) {
    for (TffiEntry* e = tffi_buckets[i]; e;) {
      TffiEntry* next = e->next;
      e->next = fresh[e->hash & (n - 1)];
      fresh[e->hash & (n - 1)] = e;
      e = next;
    }
  }
  tffi_free(tffi_buckets);
  tffi_buckets = fresh;
  tffi_nbuckets = n;
}

static inline __attribute__((always_inline)) int tffi_check_name(const char* api, const char* name,
                                                                 size_t len) {
  if (name == NULL && len != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: name.data is NULL but name.size is %zu", api, len);
  if (len > TFFI_NAME_MAX)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: name.size %zu exceeds the limit of %zu bytes", api,
                      len, TFFI_NAME_MAX);
  return 0;
}

uint64_t tffi_global_version(void) {
  return atomic_load_explicit(&tffi_registry_version, memory_order_acquire);
}

int tffi_global_get(const char* name, size_t len, TVMFFIObject** out) {
  *out = NULL;
  if (tffi_check_name("TVMFFIFunctionGetGlobal", name, len) != 0) return -1;
  uint64_t hash = tffi_hash(name, len);
  pthread_mutex_lock(&tffi_registry_lock);
  TffiEntry** at = tffi_find(name, len, hash);
  if (at && *at) {
    *out = (*at)->fn;
    tffi_incref(*out);
  }
  pthread_mutex_unlock(&tffi_registry_lock);
  return 0;
}

/* Links a new entry; the table takes a reference to fn and ownership of
 * metadata. Lock held. */
static int tffi_insert(const char* name, size_t len, uint64_t hash, TVMFFIObject* fn,
                       char** metadata, size_t metadata_len) {
  /* No terminating NUL: a name is only ever compared with its length. */
  TffiEntry* e = tffi_malloc(sizeof *e + len);
  if (e == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "TVMFFIFunctionSetGlobal: out of memory");
  if (len) memcpy(e->name, name, len);
  e->hash = hash;
  e->len = len;
  e->fn = fn;
  e->metadata = *metadata;
  e->metadata_len = metadata_len;
  *metadata = NULL;
  tffi_incref(fn);
  tffi_maybe_grow();
  TffiEntry** head = &tffi_buckets[hash & (tffi_nbuckets - 1)];
  e->next = *head;
  *head = e;
  ++tffi_nentries;
  return 0;
}

int tffi_global_set(const char* name, size_t len, TVMFFIObject* fn, int allow_override) {
  return tffi_global_set_with_metadata(name, len, fn, allow_override, NULL, 0);
}

int tffi_global_set_with_metadata(const char* name, size_t len, TVMFFIObject* fn,
                                  int allow_override, const char* metadata, size_t metadata_len) {
  if (tffi_check_name("TVMFFIFunctionSetGlobal", name, len) != 0) return -1;
  if (fn == NULL) return tffi_arg_null("TVMFFIFunctionSetGlobal", "argument `f`");
  if (fn->type_index != kTVMFFIFunction)
    return tffi_raise(
        TFFI_TYPE_ERROR,
        "TVMFFIFunctionSetGlobal: argument `f` has type index %d, expected a Function (%d)",
        (int)fn->type_index, (int)kTVMFFIFunction);
  char* meta = NULL; /* copied before the lock: the table holds its own */
  if (metadata != NULL && (meta = tffi_strndup(metadata, metadata_len)) == NULL)
    return tffi_raise(TFFI_MEMORY_ERROR, "TVMFFIFunctionSetGlobal: out of memory");
  uint64_t hash = tffi_hash(name, len);
  TVMFFIObject* old = NULL;
  int rc = 0;
  pthread_mutex_lock(&tffi_registry_lock);
  TffiEntry** at = tffi_find(name, len, hash);
  if (at && *at && !allow_override) {
    /* The whole name, as upstream quotes it: tffi_check_name bounds len far
     * below INT_MAX. */
    rc = tffi_raise(TFFI_RUNTIME_ERROR, "Global Function `%.*s` is already registered", (int)len,
                    name);
  } else if (at && *at) {
    old = (*at)->fn;
    tffi_incref(fn);
    (*at)->fn = fn;
    /* The new registration's metadata replaces the old (none stays none). */
    char* old_meta = (*at)->metadata;
    (*at)->metadata = meta;
    (*at)->metadata_len = metadata_len;
    meta = old_meta;
  } else {
    if (tffi_nbuckets == 0) tffi_maybe_grow();
    rc = tffi_nbuckets ? tffi_insert(name, len, hash, fn, &meta, metadata_len)
                       : tffi_raise(TFFI_MEMORY_ERROR, "TVMFFIFunctionSetGlobal: out of memory");
  }
  /* Even a refused registration counts: a needless look-up is harmless. */
  atomic_fetch_add_explicit(&tffi_registry_version, 1, memory_order_release);
  pthread_mutex_unlock(&tffi_registry_lock);
  tffi_free(meta);
  /* Outside the lock: the old function's deleter may itself use the table. */
  if (old) tffi_decref(old);
  return rc;
}

int tffi_global_remove(const char* name, size_t len) {
  if (tffi_check_name("ffi.FunctionRemoveGlobal", name, len) != 0) return -1;
  uint64_t hash = tffi_hash(name, len);
  pthread_mutex_lock(&tffi_registry_lock);
  TffiEntry** at = tffi_find(name, len, hash);
  TffiEntry* gone = at ? *at : NULL;
  if (gone) {
    *at = gone->next;
    --tffi_nentries;
  }
  atomic_fetch_add_explicit(&tffi_registry_version, 1, memory_order_release);
  pthread_mutex_unlock(&tffi_registry_lock);
  if (gone == NULL) return 0;
  tffi_decref(gone->fn);
  tffi_free(gone->metadata);
  tffi_free(gone);
  return 1;
}

int tffi_global_metadata(const char* name, size_t len, char** out, size_t* out_len) {
  *out = NULL;
  if (tffi_check_name("ffi.GetGlobalFuncMetadata", name, len) != 0) return -1;
  uint64_t hash = tffi_hash(name, len);
  int rc = 0;
  pthread_mutex_lock(&tffi_registry_lock);
  TffiEntry** at = tffi_find(name, len, hash);
  if (at && *at) {
    const TffiEntry* e = *at;
    *out_len = e->metadata ? e->metadata_len : 0;
    *out = tffi_strndup(e->metadata ? e->metadata : "", *out_len);
    rc = *out ? 1 : -1;
  }
  pthread_mutex_unlock(&tffi_registry_lock);
  if (rc < 0) return tffi_raise(TFFI_MEMORY_ERROR, "ffi.GetGlobalFuncMetadata: out of memory");
  return rc;
}

int tffi_global_each(int (*visit)(void* ctx, const char* name, size_t len), void* ctx) {
  int rc = 0;
  pthread_mutex_lock(&tffi_registry_lock);
  for (size_t i = 0; i < tffi_nbuckets && rc == 0; ++i)
    for (const TffiEntry* e = tffi_buckets[i]; e && rc == 0; e = e->next)
      rc = visit(ctx, e->name, e->len);
  pthread_mutex_unlock(&tffi_registry_lock);
  return rc;
}

int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f, int allow_override) {
  if (name == NULL) return tffi_arg_null("TVMFFIFunctionSetGlobal", "name");
  return tffi_global_set(name->data, name->size, f, allow_override);
}

int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_arg_null("TVMFFIFunctionGetGlobal", "out");
  *out = NULL;
  if (name == NULL) return tffi_arg_null("TVMFFIFunctionGetGlobal", "name");
  TVMFFIObject* fn = NULL;
  int rc = tffi_global_get(name->data, name->size, &fn);
  *out = fn;
  return rc;
}

int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* method_info, int allow_override) {
  if (method_info == NULL)
    return tffi_arg_null("TVMFFIFunctionSetGlobalFromMethodInfo", "argument `method_info`");
  /* The function and its metadata are kept (ffi.GetGlobalFuncMetadata reads
   * it); the doc has no reader. */
  const TVMFFIAny* method = &method_info->method;
  if (method->type_index != kTVMFFIFunction || method->v_obj == NULL)
    return tffi_raise(TFFI_TYPE_ERROR,
                      "TVMFFIFunctionSetGlobalFromMethodInfo: `method_info.method` has type index "
                      "%d, expected a Function (%d)",
                      (int)method->type_index, (int)kTVMFFIFunction);
  const TVMFFIByteArray* meta = &method_info->metadata;
  if (meta->data == NULL && meta->size != 0)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "TVMFFIFunctionSetGlobalFromMethodInfo: `method_info.metadata.data` is NULL "
                      "but its size is %zu",
                      meta->size);
  return tffi_global_set_with_metadata(method_info->name.data, method_info->name.size,
                                       method->v_obj, allow_override, meta->data ? meta->data : "",
                                       meta->size);
}
