/* The type registry: TVMFFITypeKeyToIndex, TVMFFITypeGetOrAllocIndex and
 * TVMFFIGetTypeInfo, with the built-in types registered on first use. */
#include "arg.h"
#include "type.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tffi_error.h"
#include "mem.h"

/* What ffi.Object reports from the start, as upstream's runtime does: so a
 * library registering metadata for ffi.Object meets the same refusal. */
const TVMFFITypeMetadata tffi_object_metadata = {
    .doc = {NULL, 0},
    .creator = NULL,
    .total_size = (int32_t)sizeof(TVMFFIObject),
    .structural_eq_hash_kind = kTVMFFISEqHashKindUnsupported,
};

/* A registered type. The public record comes first so a TVMFFITypeInfo*
 * handed out is also a pointer to the whole entry. Entries never move or go
 * away, so those pointers stay valid for the life of the process. */
typedef struct {
  TVMFFITypeInfo info;
  int32_t num_slots;       /* indices [index, index + num_slots) belong to it */
  int32_t allocated_slots; /* of those, how many are taken (itself included) */
  int child_slots_can_overflow;
  const TVMFFITypeInfo** ancestors; /* owned; info.type_ancestors points here */
  char key[];                       /* owned copy of the key, NUL-terminated */
} TffiType;

static pthread_mutex_t tffi_types_lock = PTHREAD_MUTEX_INITIALIZER;
static TffiType** tffi_types; /* indexed by type index; NULL where free */
static int32_t tffi_types_cap;
static int32_t tffi_next_dyn = TFFI_TYPE_DYN_BEGIN;
static int tffi_types_ready;

/* Definitions the runtime's own units make in the registry
 * (tffi_type_on_ready), run before the first call that uses it does its
 * own work, outside the lock, until they have all succeeded. */
#define TFFI_TYPE_HOOKS_MAX 16
static int (*tffi_type_hooks[TFFI_TYPE_HOOKS_MAX])(void);
static int tffi_type_hook_count;
static int tffi_type_hooks_done;
static pthread_mutex_t tffi_type_hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int tffi_type_hooks_running;

static uint64_t tffi_key_hash(const char* key, size_t len) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a */
  for (size_t i = 0; i < len; ++i) h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
  return h;
}

/* Lock held. A linear scan: registries hold hundreds of types and lookups
 * by key are rare next to lookups by index. */
static TffiType* tffi_find_key(const char* key, size_t len) {
  for (int32_t i = 0; i < tffi_types_cap; ++i) {
    TffiType* t = tffi_types[i];
    if (t && t->info.type_key.size == len && memcmp(t->key, key, len) == 0) return t;
  }
  return NULL;
}

static TffiType* tffi_at(int32_t index) {
  return index >= 0 && index < tffi_types_cap ? tffi_types[index] : NULL;
}

/* Lock held. Makes room for indices below `need`. */
static int tffi_reserve(int32_t need) {
  /* need is at most TFFI_TYPE_MAX_INDEX: tffi_pick_index refuses more. */
  if (need <= tffi_types_cap) return 0;
  int32_t cap = tffi_types_cap ? tffi_types_cap : TFFI_TYPE_DYN_BEGIN;
  while (cap < need) cap *= 2;
  TffiType** grown = tffi_realloc(tffi_types, (size_t)cap * sizeof *grown);
  if (grown == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "the type registry is out of memory");
  memset(grown + tffi_types_cap, 0, (size_t)(cap - tffi_types_cap) * sizeof *grown);
  tffi_types = grown;
  tffi_types_cap = cap;
  return 0;
}

/* Lock held. Builds the entry for `index` below `parent` (NULL at depth 0). */
static int tffi_make_entry(int32_t index, const char* key, size_t len, TffiType* parent,
                           int32_t num_slots, int can_overflow) {
  TffiType* t = tffi_calloc(1, sizeof *t + len + 1);
  int32_t depth = parent ? parent->info.type_depth + 1 : 0;
  if (t == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "the type registry is out of memory");
  if (depth) {
    t->ancestors = tffi_calloc((size_t)depth, sizeof *t->ancestors);
    if (t->ancestors == NULL) {
      tffi_free(t);
      return tffi_raise(TFFI_MEMORY_ERROR, "the type registry is out of memory");
    }
    /* The parent's chain, then the parent itself: root first. */
    for (int32_t i = 0; i + 1 < depth; ++i) t->ancestors[i] = parent->ancestors[i];
    t->ancestors[depth - 1] = &parent->info;
  }
  memcpy(t->key, key, len);
  t->info.type_index = index;
  t->info.type_depth = depth;
  t->info.type_key.data = t->key;
  t->info.type_key.size = len;
  t->info.type_ancestors = t->ancestors;
  t->info.type_key_hash = tffi_key_hash(key, len);
  t->num_slots = num_slots;
  t->allocated_slots = 1;
  t->child_slots_can_overflow =
      can_overflow && (parent == NULL || parent->child_slots_can_overflow);
  tffi_types[index] = t;
  return 0;
}

/* Lock held. Picks the index of a new type below `parent` that reserves
 * `num_slots` indices (itself and its future children): from the parent's
 * reserved range while it lasts, then from the open range above. */
static int32_t tffi_pick_index(TffiType* parent, int32_t num_slots, const TVMFFIByteArray* key) {
  if (parent->num_slots - parent->allocated_slots >= num_slots) {
    int32_t index = parent->info.type_index + parent->allocated_slots;
    parent->allocated_slots += num_slots;
    return index;
  }
  if (!parent->child_slots_can_overflow)
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFITypeGetOrAllocIndex: parent_type_index %d (`%s`) has no child slot "
                      "left for type_key `%.*s`",
                      (int)parent->info.type_index, parent->key, (int)key->size, key->data);
  if (num_slots > TFFI_TYPE_MAX_INDEX - tffi_next_dyn)
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFITypeGetOrAllocIndex: num_child_slots %d does not fit: the type "
                      "registry holds %d indices",
                      (int)(num_slots - 1), TFFI_TYPE_MAX_INDEX);
  if (tffi_reserve(tffi_next_dyn + num_slots)) return -1;
  int32_t index = tffi_next_dyn;
  tffi_next_dyn += num_slots;
  return index;
}

/* Indices below kTVMFFIStaticObjectBegin are inline value kinds, roots of
 * their own; ffi.Object is the root of every object type; the other
 * built-in objects sit right below it. */
typedef struct {
  const char* key;
  int32_t index;
} TffiBuiltin;

static const TffiBuiltin tffi_builtins[] = {
    {"None", kTVMFFINone},
    {"int", kTVMFFIInt},
    {"bool", kTVMFFIBool},
    {"float", kTVMFFIFloat},
    {"void*", kTVMFFIOpaquePtr},
    {"DataType", kTVMFFIDataType},
    {"Device", kTVMFFIDevice},
    {"DLTensor*", kTVMFFIDLTensorPtr},
    {"const char*", kTVMFFIRawStr},
    {"TVMFFIByteArray*", kTVMFFIByteArrayPtr},
    {"ObjectRValueRef", kTVMFFIObjectRValueRef},
    {"ffi.SmallStr", kTVMFFISmallStr},
    {"ffi.SmallBytes", kTVMFFISmallBytes},
    {"ffi.Unchanged", kTVMFFIUnchanged},
    {"ffi.Object", kTVMFFIObject},
    {"ffi.String", kTVMFFIStr},
    {"ffi.Bytes", kTVMFFIBytes},
    {"ffi.Error", kTVMFFIError},
    {"ffi.Function", kTVMFFIFunction},
    {"ffi.Shape", kTVMFFIShape},
    {"ffi.Tensor", kTVMFFITensor},
    {"ffi.Array", kTVMFFIArray},
    {"ffi.Map", kTVMFFIMap},
    {"ffi.Module", kTVMFFIModule},
    {"ffi.OpaquePyObject", kTVMFFIOpaquePyObject},
    {"ffi.List", kTVMFFIList},
    {"ffi.Dict", kTVMFFIDict},
    {"ffi.VisitInterrupt", kTVMFFIVisitInterrupt},
    {"ffi.BigInt", kTVMFFIBigInt},
};

/* Lock held. Registers the built-in types once; fails only for memory. */
static int tffi_types_init(void) {
  if (tffi_types_ready) return 0;
  if (tffi_reserve(TFFI_TYPE_DYN_BEGIN)) return -1;
  for (size_t i = 0; i < sizeof tffi_builtins / sizeof *tffi_builtins; ++i) {
    const TffiBuiltin* b = &tffi_builtins[i];
    if (tffi_types[b->index]) continue;
    TffiType* parent = b->index > kTVMFFIObject ? tffi_types[kTVMFFIObject] : NULL;
    /* ffi.Object's children take fresh indices; the others have none. */
    int can_overflow = b->index == kTVMFFIObject;
    if (tffi_make_entry(b->index, b->key, strlen(b->key), parent, 1, can_overflow)) return -1;
  }
  tffi_types[kTVMFFIObject]->info.metadata = &tffi_object_metadata;
  tffi_types_ready = 1;
  return 0;
}

/* Checks a caller's key; returns 0 when usable. */
static int tffi_check_key(const char* api, const TVMFFIByteArray* type_key) {
  if (type_key == NULL) return tffi_arg_null(api, "type_key");
  if (type_key->data == NULL && type_key->size != 0)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: type_key->data is NULL with size %zu", api,
                      type_key->size);
  if (type_key->size > TFFI_TYPE_KEY_MAX)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: type_key is %zu bytes long, more than %d", api,
                      type_key->size, TFFI_TYPE_KEY_MAX);
  return 0;
}

void tffi_type_on_ready(int (*hook)(void)) {
  int i = __atomic_fetch_add(&tffi_type_hook_count, 1, __ATOMIC_ACQ_REL);
  if (i < TFFI_TYPE_HOOKS_MAX) __atomic_store_n(&tffi_type_hooks[i], hook, __ATOMIC_RELEASE);
}

/* Runs the hooks unless they all succeeded before; the calls they make
 * into the registry (on this thread) go straight on. */
static void tffi_type_run_hooks(void) {
  if (__atomic_load_n(&tffi_type_hooks_done, __ATOMIC_ACQUIRE) || tffi_type_hooks_running) return;
  pthread_mutex_lock(&tffi_type_hooks_lock);
  if (!__atomic_load_n(&tffi_type_hooks_done, __ATOMIC_ACQUIRE)) {
    /* The caller's raised error (none, or one it set before) survives. */
    TVMFFIObjectHandle raised = NULL;
    TVMFFIErrorMoveFromRaised(&raised);
    tffi_type_hooks_running = 1;
    int failed = 0, n = __atomic_load_n(&tffi_type_hook_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n && i < TFFI_TYPE_HOOKS_MAX; ++i) {
      int (*hook)(void) = __atomic_load_n(&tffi_type_hooks[i], __ATOMIC_ACQUIRE);
      if (hook && hook() != 0) failed = 1;
    }
    tffi_type_hooks_running = 0;
    tffi_set_raised(raised);
    if (!failed) __atomic_store_n(&tffi_type_hooks_done, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tffi_type_hooks_lock);
}

void tffi_type_ready(void) { tffi_type_run_hooks(); }

int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex) {
  if (tffi_check_key("TVMFFITypeKeyToIndex", type_key)) return -1;
  tffi_type_run_hooks();
  if (out_tindex == NULL) return tffi_arg_null("TVMFFITypeKeyToIndex", "out_tindex");
  pthread_mutex_lock(&tffi_types_lock);
  int rc = tffi_types_init();
  TffiType* t = rc ? NULL : tffi_find_key(type_key->data, type_key->size);
  if (t) *out_tindex = t->info.type_index;
  pthread_mutex_unlock(&tffi_types_lock);
  if (rc) return -1;
  if (t == NULL)
    return tffi_raise(TFFI_KEY_ERROR,
                      "TVMFFITypeKeyToIndex: type_key `%.*s` names no registered type",
                      (int)type_key->size, type_key->data);
  return 0;
}

/* Lock held. The checked body of TVMFFITypeGetOrAllocIndex. */
static int32_t tffi_get_or_alloc(const TVMFFIByteArray* type_key, int32_t static_type_index,
                                 int32_t type_depth, int32_t num_child_slots, int can_overflow,
                                 int32_t parent_type_index) {
  const char* api = "TVMFFITypeGetOrAllocIndex";
  TffiType* found = tffi_find_key(type_key->data, type_key->size);
  if (found) return found->info.type_index;
  if (parent_type_index == TFFI_TYPE_QUERY_ONLY) return TFFI_TYPE_QUERY_ONLY;
  TffiType* parent = NULL;
  if (parent_type_index >= 0) {
    parent = tffi_at(parent_type_index);
    if (parent == NULL)
      return tffi_raise(TFFI_KEY_ERROR, "%s: parent_type_index %d is not a registered type", api,
                        (int)parent_type_index);
  } else if (parent_type_index != -1) {
    return tffi_raise(TFFI_VALUE_ERROR, "%s: parent_type_index %d is invalid", api,
                      (int)parent_type_index);
  }
  int32_t want_depth = parent ? parent->info.type_depth + 1 : 0;
  if (type_depth != want_depth)
    return tffi_raise(TFFI_VALUE_ERROR,
                      "%s: type_depth %d does not match the parent's depth + 1 (%d)", api,
                      (int)type_depth, (int)want_depth);
  if (num_child_slots < 0 || num_child_slots > TFFI_TYPE_MAX_INDEX)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: num_child_slots %d is out of range", api,
                      (int)num_child_slots);
  int32_t index;
  if (static_type_index >= 0) {
    if (static_type_index >= TFFI_TYPE_DYN_BEGIN || tffi_types[static_type_index])
      return tffi_raise(TFFI_VALUE_ERROR, "%s: static_type_index %d is taken or out of range", api,
                        (int)static_type_index);
    index = static_type_index;
  } else {
    if (parent == NULL)
      return tffi_raise(TFFI_VALUE_ERROR,
                        "%s: parent_type_index -1 leaves a dynamic type (static_type_index %d) "
                        "without a parent",
                        api, (int)static_type_index);
    index = tffi_pick_index(parent, num_child_slots + 1, type_key);
    if (index < 0) return -1;
  }
  if (tffi_make_entry(index, type_key->data, type_key->size, parent, num_child_slots + 1,
                      can_overflow))
    return -1;
  return index;
}

int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key, int32_t static_type_index,
                                  int32_t type_depth, int32_t num_child_slots,
                                  int32_t child_slots_can_overflow, int32_t parent_type_index) {
  if (tffi_check_key("TVMFFITypeGetOrAllocIndex", type_key)) return -1;
  tffi_type_run_hooks();
  pthread_mutex_lock(&tffi_types_lock);
  int32_t index = tffi_types_init()
                      ? -1
                      : tffi_get_or_alloc(type_key, static_type_index, type_depth, num_child_slots,
                                          child_slots_can_overflow != 0, parent_type_index);
  pthread_mutex_unlock(&tffi_types_lock);
  return index;
}

const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index) {
  tffi_type_run_hooks();
  pthread_mutex_lock(&tffi_types_lock);
  int rc = tffi_types_init();
  TffiType* t = rc ? NULL : tffi_at(type_index);
  pthread_mutex_unlock(&tffi_types_lock);
  /* A failed first use already raised its MemoryError. */
  if (rc) return NULL;
  if (t == NULL) {
    tffi_raise(TFFI_KEY_ERROR, "TVMFFIGetTypeInfo: type_index %d is not a registered type",
               (int)type_index);
    return NULL;
  }
  return &t->info;
}

TVMFFITypeInfo* tffi_type_lock(int32_t type_index) {
  tffi_type_run_hooks();
  pthread_mutex_lock(&tffi_types_lock);
  TffiType* t = tffi_types_init() ? NULL : tffi_at(type_index);
  return t ? &t->info : NULL;
}

void tffi_type_unlock(void) { pthread_mutex_unlock(&tffi_types_lock); }

int tffi_type_each(int (*visit)(void* ctx, const TVMFFITypeInfo* info), void* ctx) {
  pthread_mutex_lock(&tffi_types_lock);
  int rc = tffi_types_init();
  for (int32_t i = 0; i < tffi_types_cap && rc == 0; ++i)
    if (tffi_types[i]) rc = visit(ctx, &tffi_types[i]->info);
  pthread_mutex_unlock(&tffi_types_lock);
  return rc;
}
