/*
 * Out-of-memory clauses of the core values (spec/string.md, spec/any.md,
 * spec/object.md, spec/functions.md, spec/types.md, spec/reflection.md):
 * each call runs with its 1st, 2nd, ... allocation failing (once, or from
 * there on; see alloc_fail.h) and must either succeed completely or return
 * -1 with a MemoryError raised and nothing half made, every time.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_fail.h"
#include "core_support.h"

static int bytes_are(TVMFFIByteArray got, const char* want) {
  return got.size == strlen(want) && memcmp(got.data, want, got.size) == 0;
}

/* Set by the tests of the clauses on a MemoryError's message: a single
 * failed allocation must leave a message that names the call and memory. */
static int oom_message_named;

static int mentions(TVMFFIByteArray text, const char* part) {
  size_t n = strlen(part);
  for (size_t i = 0; n <= text.size && i <= text.size - n; ++i)
    if (memcmp(text.data + i, part, n) == 0) return 1;
  return 0;
}

static int mentions_memory(TVMFFIByteArray text) {
  static const char word[] = "memory";
  for (size_t i = 0; i + 6 <= text.size; ++i) {
    size_t k = 0;
    while (k < 6 && (text.data[i + k] | 0x20) == word[k]) ++k;
    if (k == 6) return 1;
  }
  return 0;
}

/* After a step that returned -1: a MemoryError is raised (taken and
 * released here). */
static void expect_memory_error(const char* call, const ConfAllocWalk* w) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_not_null(err, "%s, allocation %ld failed: -1 with nothing raised", call, w->n);
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  cr_assert(bytes_are(cell->kind, "MemoryError"),
            "%s, allocation %ld failed: raised %.*s (%.*s), expected MemoryError", call, w->n,
            (int)cell->kind.size, cell->kind.data, (int)cell->message.size, cell->message.data);
  if (oom_message_named && !w->sticky) {
    cr_assert(mentions(cell->message, call) && mentions_memory(cell->message),
              "%s, allocation %ld failed: the MemoryError says \"%.*s\", naming neither the "
              "call nor memory",
              call, w->n, (int)cell->message.size, cell->message.data);
  }
  API(TVMFFIObjectDecRef)(err);
}

/* After a step that returned 0: nothing is raised. */
static void expect_nothing_raised(const char* call, const ConfAllocWalk* w) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert_null(err, "%s, allocation %ld failed: returned 0 but raised an error", call, w->n);
}

/* One call of a walk: runs it armed, returns its code. */
typedef int (*OomStep)(void* ctx);

/* Walks `step` over its allocations, once failing one allocation and once
 * failing every allocation from there on; `check` judges each outcome. */
static void walk(const char* call, OomStep step,
                 void (*check)(void* ctx, int rc, const ConfAllocWalk* w), void* ctx) {
  long points = 0;
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      conf_alloc_arm(&w);
      int rc = step(ctx);
      conf_alloc_disarm(&w);
      cr_assert(rc == 0 || rc == -1, "%s, allocation %ld failed: returned %d", call, w.n, rc);
      if (rc == 0)
        expect_nothing_raised(call, &w);
      else
        expect_memory_error(call, &w);
      check(ctx, rc, &w);
    }
    points += w.points;
  }
  conf_alloc_done(points, call);
}

/* ---- strings and bytes --------------------------------------------------- */

typedef struct {
  int (*from)(const TVMFFIByteArray*, TVMFFIAny*);
  int32_t kind;
  TVMFFIAny out;
} StrCtx;

static const char str_text[] = "a string long enough to live on the heap";

static int str_step(void* p) {
  StrCtx* c = p;
  TVMFFIByteArray in = {str_text, sizeof str_text - 1};
  memset(&c->out, 0xab, sizeof c->out);
  return c->from(&in, &c->out);
}

static void str_check(void* p, int rc, const ConfAllocWalk* w) {
  StrCtx* c = p;
  if (rc == 0) {
    cr_assert_eq(c->out.type_index, c->kind, "allocation %ld failed: returned 0 with kind %d", w->n,
                 c->out.type_index);
    cr_assert(bytes_are(core_str_bytes(&c->out), str_text),
              "allocation %ld failed: content differs", w->n);
    core_release(&c->out);
  } else {
    cr_assert_eq(c->out.type_index, kTVMFFINone,
                 "allocation %ld failed: -1 but out holds type index %d, not None", w->n,
                 c->out.type_index);
  }
}

/* STR-011: a heap string or bytes value whose allocation fails: -1 with a
 * MemoryError and out set to None, or 0 with the whole value. */
TEST(core_oom, STR_011_heap_value_allocation_fails) {
  StrCtx s = {API(TVMFFIStringFromByteArray), kTVMFFIStr, {0}};
  walk("TVMFFIStringFromByteArray", str_step, str_check, &s);
  StrCtx b = {API(TVMFFIBytesFromByteArray), kTVMFFIBytes, {0}};
  walk("TVMFFIBytesFromByteArray", str_step, str_check, &b);
}

/* Registered only to be replaced at once: it makes nothing. */
static void* oom_replaced_allocate(size_t size, size_t alignment, int32_t type_index,
                                   void* context) {
  (void)size, (void)alignment, (void)type_index, (void)context;
  return NULL;
}

/* OBJ-052: the built-in allocator handed back through
 * TVMFFISetCustomAllocator (the pointer TVMFFIGetCustomAllocator gave
 * before) is in charge as if none had ever been registered: a heap string
 * whose allocation fails is -1 with a MemoryError, as in STR-011. */
TEST(core_oom, OBJ_052_default_handed_back_raises_memory_error) {
  (void)API(TVMFFISetCustomAllocator);
  TVMFFICustomAllocator* builtin = API(TVMFFIGetCustomAllocator)();
  static TVMFFICustomAllocator other = {oom_replaced_allocate, NULL};
  cr_assert_eq(API(TVMFFISetCustomAllocator)(&other), 0);
  cr_assert_eq(API(TVMFFISetCustomAllocator)(builtin), 0);
  cr_assert_eq(API(TVMFFIGetCustomAllocator)(), builtin);
  StrCtx s = {API(TVMFFIStringFromByteArray), kTVMFFIStr, {0}};
  walk("TVMFFIStringFromByteArray", str_step, str_check, &s);
  StrCtx b = {API(TVMFFIBytesFromByteArray), kTVMFFIBytes, {0}};
  walk("TVMFFIBytesFromByteArray", str_step, str_check, &b);
}

typedef struct {
  TVMFFIAny view;
  int32_t kind;
  TVMFFIAny out;
} AnyCtx;

static int any_step(void* p) {
  AnyCtx* c = p;
  memset(&c->out, 0xab, sizeof c->out);
  return conf_api.TVMFFIAnyViewToOwnedAny(&c->view, &c->out);
}

static void any_check(void* p, int rc, const ConfAllocWalk* w) {
  AnyCtx* c = p;
  if (rc == 0) {
    cr_assert_eq(c->out.type_index, c->kind, "allocation %ld failed: returned 0 with kind %d", w->n,
                 c->out.type_index);
    cr_assert(bytes_are(core_str_bytes(&c->out), str_text),
              "allocation %ld failed: content differs", w->n);
    core_release(&c->out);
  } else {
    cr_assert_eq(c->out.type_index, kTVMFFINone,
                 "allocation %ld failed: -1 but out holds type index %d, not None", w->n,
                 c->out.type_index);
  }
}

/* ANY-023: converting a const char* or TVMFFIByteArray* view to an owned
 * heap value when an allocation fails: -1 with a MemoryError and out None,
 * or 0 with the whole value. */
TEST(core_oom, ANY_023_owned_copy_allocation_fails) {
  (void)API(TVMFFIAnyViewToOwnedAny);
  AnyCtx raw = {{0}, kTVMFFIStr, {0}};
  raw.view.type_index = kTVMFFIRawStr;
  raw.view.v_c_str = str_text;
  walk("TVMFFIAnyViewToOwnedAny (const char*)", any_step, any_check, &raw);
  static const TVMFFIByteArray bytes = {str_text, sizeof str_text - 1};
  AnyCtx ba = {{0}, kTVMFFIBytes, {0}};
  ba.view.type_index = kTVMFFIByteArrayPtr;
  ba.view.v_ptr = (void*)&bytes;
  walk("TVMFFIAnyViewToOwnedAny (TVMFFIByteArray*)", any_step, any_check, &ba);
}

/* ---- functions and opaque objects --------------------------------------- */

static int oom_deletes;
static void oom_delete(void* self) {
  (void)self;
  oom_deletes++;
}

static int oom_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)args, (void)n;
  rv->type_index = kTVMFFIInt;
  rv->zero_padding = 0;
  rv->v_int64 = (int64_t)(intptr_t)self;
  return 0;
}

typedef struct {
  TVMFFIObjectHandle out;
  int opaque;
} MakeCtx;

static int make_step(void* p) {
  MakeCtx* c = p;
  c->out = (TVMFFIObjectHandle)(uintptr_t)0x1;
  if (c->opaque)
    return conf_api.TVMFFIObjectCreateOpaque((void*)0x77, kTVMFFIOpaquePyObject, oom_delete,
                                             &c->out);
  return conf_api.TVMFFIFunctionCreate((void*)0x77, oom_call, oom_delete, &c->out);
}

static void make_check(void* p, int rc, const ConfAllocWalk* w) {
  MakeCtx* c = p;
  if (rc != 0) {
    cr_assert_null(c->out, "allocation %ld failed: -1 but out is %p, not NULL", w->n, c->out);
    return;
  }
  cr_assert_not_null(c->out);
  cr_assert_eq(core_strong(c->out), 1u);
  if (c->opaque) {
    cr_assert_eq(TVMFFIObjectGetTypeIndex(c->out), kTVMFFIOpaquePyObject);
  } else {
    TVMFFIAny rv = {0};
    cr_assert_eq(conf_api.TVMFFIFunctionCall(c->out, NULL, 0, &rv), 0);
    cr_assert_eq(rv.v_int64, 0x77, "allocation %ld failed: the function made answers %lld", w->n,
                 (long long)rv.v_int64);
  }
  int before = oom_deletes;
  API(TVMFFIObjectDecRef)(c->out);
  cr_assert_eq(oom_deletes, before + 1, "allocation %ld failed: deleter calls at release: %d", w->n,
               oom_deletes - before);
}

/* FN-053: TVMFFIFunctionCreate and TVMFFIObjectCreateOpaque when an
 * allocation fails: -1 with a MemoryError and out NULL, or 0 with a whole
 * object whose deleter runs once at release. */
TEST(core_oom, FN_053_create_allocation_fails) {
  (void)API(TVMFFIFunctionCreate), (void)API(TVMFFIObjectCreateOpaque);
  MakeCtx fn = {NULL, 0};
  walk("TVMFFIFunctionCreate", make_step, make_check, &fn);
  MakeCtx op = {NULL, 1};
  walk("TVMFFIObjectCreateOpaque", make_step, make_check, &op);
}

/* ---- the global registry ------------------------------------------------- */

typedef struct {
  TVMFFIObjectHandle fn;
  int step;
  char name[64];
} GlobalCtx;

static int global_step(void* p) {
  GlobalCtx* c = p;
  snprintf(c->name, sizeof c->name, "conformance.oom.global.%d", c->step++);
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  return conf_api.TVMFFIFunctionSetGlobal(&n, c->fn, 0);
}

static void global_check(void* p, int rc, const ConfAllocWalk* w) {
  GlobalCtx* c = p;
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  TVMFFIObjectHandle got = (TVMFFIObjectHandle)(uintptr_t)0x1;
  cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&n, &got), 0);
  if (rc == 0) {
    cr_assert_eq(got, c->fn, "allocation %ld failed: 0 but `%s` gives %p", w->n, c->name, got);
    API(TVMFFIObjectDecRef)(got);
  } else {
    cr_assert_null(got, "allocation %ld failed: -1 but `%s` is registered", w->n, c->name);
  }
}

/* FN-054: TVMFFIFunctionSetGlobal of a new name when an allocation fails:
 * -1 with a MemoryError and the name unregistered, taking no reference, or
 * 0 with the function registered, whatever the registry's size. */
TEST(core_oom, FN_054_set_global_allocation_fails) {
  (void)API(TVMFFIFunctionSetGlobal);
  GlobalCtx c = {NULL, 0, ""};
  cr_assert_eq(API(TVMFFIFunctionCreate)((void*)0x5, oom_call, NULL, &c.fn), 0);
  /* Walked again and again while the registry grows, so every growth of
   * its tables meets a failing allocation too. */
  for (int round = 0; round < 150; ++round)
    walk("TVMFFIFunctionSetGlobal", global_step, global_check, &c);
  uint32_t strong = core_strong(c.fn);
  /* One reference of ours, one per name the registry holds. */
  long registered = 0;
  for (int i = 0; i < c.step; ++i) {
    char name[64];
    snprintf(name, sizeof name, "conformance.oom.global.%d", i);
    TVMFFIByteArray n = {name, strlen(name)};
    TVMFFIObjectHandle got = NULL;
    cr_assert_eq(API(TVMFFIFunctionGetGlobal)(&n, &got), 0);
    if (got) {
      registered++;
      API(TVMFFIObjectDecRef)(got);
    }
  }
  cr_expect_eq(strong, (uint32_t)(1 + registered),
               "strong count %u with %ld names registered: a failed registration kept a "
               "reference",
               strong, registered);
}

/* ---- the type registry and reflection ----------------------------------- */

typedef struct {
  int step;
  char key[64];
  int32_t index;
} TypeCtx;

static int type_step(void* p) {
  TypeCtx* c = p;
  snprintf(c->key, sizeof c->key, "conformance.oom.Type%d", c->step++);
  TVMFFIByteArray k = {c->key, strlen(c->key)};
  c->index = conf_api.TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, kTVMFFIObject);
  return c->index < 0 ? -1 : 0;
}

static void type_check(void* p, int rc, const ConfAllocWalk* w) {
  TypeCtx* c = p;
  TVMFFIByteArray k = {c->key, strlen(c->key)};
  int32_t again = API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, -2);
  if (rc == 0) {
    cr_assert_geq(c->index, kTVMFFIDynObjectBegin);
    cr_assert_eq(again, c->index, "allocation %ld failed: `%s` registered as %d, found as %d", w->n,
                 c->key, c->index, again);
  } else {
    cr_assert_eq(c->index, -1, "allocation %ld failed: returned %d", w->n, c->index);
    cr_assert_eq(again, -2, "allocation %ld failed: -1 but `%s` is registered", w->n, c->key);
  }
}

/* TYP-016: TVMFFITypeGetOrAllocIndex of a new key when an allocation fails:
 * -1 with a MemoryError and the key unregistered, or the new index with
 * the type registered. */
TEST(core_oom, TYP_016_alloc_index_allocation_fails) {
  (void)API(TVMFFITypeGetOrAllocIndex);
  TypeCtx c = {0, "", 0};
  walk("TVMFFITypeGetOrAllocIndex", type_step, type_check, &c);
}

typedef struct {
  int32_t type;
  int what; /* 0 field, 1 method, 2 metadata */
  int step;
  int32_t count;
} ReflCtx;

static int refl_getter(void* field, TVMFFIAny* result) {
  (void)field;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1;
  return 0;
}

static int refl_step(void* p) {
  ReflCtx* c = p;
  char name[32];
  snprintf(name, sizeof name, "member%d", c->step++);
  TVMFFIByteArray n = {name, strlen(name)}, doc = {"a documented member", 19},
                  meta = {"{\"k\": 1}", 8};
  if (c->what == 0) {
    TVMFFIFieldInfo f;
    memset(&f, 0, sizeof f);
    f.name = n;
    f.doc = doc;
    f.metadata = meta;
    f.size = 8;
    f.alignment = 8;
    f.offset = 24;
    f.getter = refl_getter;
    f.field_static_type_index = kTVMFFIInt;
    return conf_api.TVMFFITypeRegisterField(c->type, &f);
  }
  if (c->what == 1) {
    TVMFFIMethodInfo m;
    memset(&m, 0, sizeof m);
    m.name = n;
    m.doc = doc;
    m.metadata = meta;
    m.method.type_index = kTVMFFIRawStr;
    m.method.v_c_str = str_text;
    return conf_api.TVMFFITypeRegisterMethod(c->type, &m);
  }
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.doc = doc;
  md.total_size = 32;
  return conf_api.TVMFFITypeRegisterMetadata(c->type, &md);
}

static void refl_check(void* p, int rc, const ConfAllocWalk* w) {
  ReflCtx* c = p;
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(c->type);
  cr_assert_not_null(info);
  int32_t now = c->what == 0   ? info->num_fields
                : c->what == 1 ? info->num_methods
                               : info->metadata != NULL;
  cr_assert_eq(now, c->count + (rc == 0),
               "allocation %ld failed: returned %d, %d records before, "
               "%d after",
               w->n, rc, c->count, now);
  if (c->what == 2 && rc == 0) {
    cr_assert(bytes_are(info->metadata->doc, "a documented member"));
    /* Metadata goes once per type: the next step needs a fresh one. */
    char key[48];
    snprintf(key, sizeof key, "conformance.oom.Meta%d", c->step);
    TVMFFIByteArray k = {key, strlen(key)};
    c->type = API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, kTVMFFIObject);
    cr_assert_geq(c->type, kTVMFFIDynObjectBegin);
    c->count = 0;
    return;
  }
  c->count = now;
}

static int32_t refl_type(const char* key) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t t = API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(t, kTVMFFIDynObjectBegin);
  return t;
}

/* RFL-020: TVMFFITypeRegisterField, ...Method and ...Metadata when an
 * allocation fails: -1 with a MemoryError and the type's records as they
 * were, or 0 with the record added. */
TEST(core_oom, RFL_020_register_allocation_fails) {
  (void)API(TVMFFITypeRegisterField), (void)API(TVMFFITypeRegisterMethod);
  (void)API(TVMFFITypeRegisterMetadata), (void)API(TVMFFIGetTypeInfo);
  ReflCtx f = {refl_type("conformance.oom.Fields"), 0, 0, 0};
  walk("TVMFFITypeRegisterField", refl_step, refl_check, &f);
  ReflCtx m = {refl_type("conformance.oom.Methods"), 1, 0, 0};
  walk("TVMFFITypeRegisterMethod", refl_step, refl_check, &m);
  ReflCtx md = {refl_type("conformance.oom.Meta"), 2, 0, 0};
  walk("TVMFFITypeRegisterMetadata", refl_step, refl_check, &md);
}

/* RFL-040: the MemoryError of TVMFFITypeRegisterField, ...Method and
 * ...Metadata when one allocation fails names the call and says memory. */
TEST(core_oom, RFL_040_memory_error_names_call) {
  (void)API(TVMFFITypeRegisterField), (void)API(TVMFFITypeRegisterMethod);
  (void)API(TVMFFITypeRegisterMetadata), (void)API(TVMFFIGetTypeInfo);
  oom_message_named = 1;
  ReflCtx f = {refl_type("conformance.oom.NamedFields"), 0, 0, 0};
  walk("TVMFFITypeRegisterField", refl_step, refl_check, &f);
  ReflCtx m = {refl_type("conformance.oom.NamedMethods"), 1, 0, 0};
  walk("TVMFFITypeRegisterMethod", refl_step, refl_check, &m);
  ReflCtx md = {refl_type("conformance.oom.NamedMeta"), 2, 0, 0};
  walk("TVMFFITypeRegisterMetadata", refl_step, refl_check, &md);
  oom_message_named = 0;
}

typedef struct {
  int32_t type;
  int step;
  char name[48];
} AttrCtx;

static int attr_step(void* p) {
  AttrCtx* c = p;
  snprintf(c->name, sizeof c->name, "__conformance_oom_%d__", c->step++);
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  TVMFFIAny v;
  memset(&v, 0, sizeof v);
  v.type_index = kTVMFFIRawStr;
  v.v_c_str = str_text;
  return conf_api.TVMFFITypeRegisterAttr(c->type, &n, &v);
}

static void attr_check(void* p, int rc, const ConfAllocWalk* w) {
  AttrCtx* c = p;
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&n);
  const TVMFFIAny* got = NULL;
  if (col && c->type >= col->begin_index && c->type - col->begin_index < col->size)
    got = &col->data[c->type - col->begin_index];
  if (rc == 0) {
    cr_assert_not_null(got, "allocation %ld failed: 0 but `%s` has no entry", w->n, c->name);
    cr_assert(bytes_are(core_str_bytes(got), str_text), "allocation %ld failed: value differs",
              w->n);
  } else {
    cr_assert(got == NULL || got->type_index == kTVMFFINone,
              "allocation %ld failed: -1 but `%s` holds a value of kind %d", w->n, c->name,
              got->type_index);
  }
  core_take_raised(); /* a lookup of a missing column may raise */
}

/* A new column only: type_index kTVMFFINone stores no value. */
static int column_step(void* p) {
  AttrCtx* c = p;
  snprintf(c->name, sizeof c->name, "__conformance_oom_column_%d__", c->step++);
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  TVMFFIAny none;
  memset(&none, 0, sizeof none);
  return conf_api.TVMFFITypeRegisterAttr(kTVMFFINone, &n, &none);
}

static void column_check(void* p, int rc, const ConfAllocWalk* w) {
  AttrCtx* c = p;
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&n);
  if (rc == 0)
    cr_assert_not_null(col, "allocation %ld failed: 0 but no column `%s`", w->n, c->name);
}

/* TAT-014: TVMFFITypeRegisterAttr of a new column when an allocation
 * fails: -1 with a MemoryError and no value stored, or 0 with the value
 * in the column. */
TEST(core_oom, TAT_014_register_attr_allocation_fails) {
  (void)API(TVMFFITypeRegisterAttr), (void)API(TVMFFIGetTypeAttrColumn);
  AttrCtx c = {refl_type("conformance.oom.Attrs"), 0, ""};
  walk("TVMFFITypeRegisterAttr", attr_step, attr_check, &c);
  /* Then 150 more columns, each walked: whatever the runtime keeps its
   * columns in has to grow somewhere on the way. */
  AttrCtx cols = {kTVMFFINone, 0, ""};
  for (int i = 0; i < 75; ++i) walk("TVMFFITypeRegisterAttr", column_step, column_check, &cols);
}

typedef struct {
  int step;
  char name[48];
} FirstAttrCtx;

/* An int value: copying it allocates nothing, so the first allocation of
 * the call is the attribute table's own. */
static int first_attr_step(void* p) {
  FirstAttrCtx* c = p;
  snprintf(c->name, sizeof c->name, "__conformance_first_attr_%d__", c->step++);
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  TVMFFIAny v = core_int(42);
  return conf_api.TVMFFITypeRegisterAttr(kTVMFFIStr, &n, &v);
}

static void first_attr_check(void* p, int rc, const ConfAllocWalk* w) {
  FirstAttrCtx* c = p;
  TVMFFIByteArray n = {c->name, strlen(c->name)};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&n);
  core_take_raised(); /* a lookup of a missing column may raise */
  if (rc != 0) return;
  cr_assert_not_null(col, "allocation %ld failed: 0 but no column `%s`", w->n, c->name);
  int64_t at = (int64_t)kTVMFFIStr - col->begin_index;
  cr_assert(at >= 0 && at < col->size && col->data[at].type_index == kTVMFFIInt &&
                col->data[at].v_int64 == 42,
            "allocation %ld failed: 0 but `%s` does not hold 42 for ffi.String", w->n, c->name);
}

/* TAT-019: the first TVMFFITypeRegisterAttr of a process (the type
 * registry already in use, no attribute column asked for yet) with an
 * allocation failing: exactly -1 with a MemoryError, or 0 with the value
 * stored; the built-in columns are there afterwards. */
TEST(core_oom, TAT_019_first_register_attr_allocation_fails) {
  (void)API(TVMFFITypeRegisterAttr), (void)API(TVMFFIGetTypeAttrColumn);
  cr_assert_not_null(API(TVMFFIGetTypeInfo)(kTVMFFIStr));
  FirstAttrCtx c = {0, ""};
  walk("TVMFFITypeRegisterAttr", first_attr_step, first_attr_check, &c);
  TVMFFIByteArray builtin = {"__ffi_repr__", 12};
  cr_expect_not_null(API(TVMFFIGetTypeAttrColumn)(&builtin), "no `__ffi_repr__` column");
}

/* ---- refused calls leak nothing ----------------------------------------- */

/* Bytes the process holds from malloc (the test binary's own malloc is
 * glibc's underneath, so mallinfo2 sees every allocation). */
static size_t heap_in_use(void) { return mallinfo2().uordblks; }

/* Runs `call` (which must be refused) 2000 times after a warm-up and
 * demands the heap did not grow by more than a few pages: a refusal that
 * leaks even 16 bytes shows as 32 KB. */
static void expect_refusal_leaks_nothing(const char* what, int (*call)(void* ctx), void* ctx) {
  conf_alloc_require();
  for (int i = 0; i < 50; ++i) {
    if (call(ctx) != -1) {
      /* Whether to refuse is another clause's business; this one is about
       * what a refusal leaves behind. */
      cr_log_warn("%s is not refused here: its leak check does not apply", what);
      return;
    }
    TVMFFIObjectHandle err = core_take_raised();
    if (err) API(TVMFFIObjectDecRef)(err);
  }
  size_t before = heap_in_use();
  for (int i = 0; i < 2000; ++i) {
    if (call(ctx) != -1) break;
    TVMFFIObjectHandle err = core_take_raised();
    if (err) conf_api.TVMFFIObjectDecRef(err);
  }
  size_t after = heap_in_use();
  cr_expect(after <= before + 8192, "%s: the heap grew by %zu bytes over 2000 refused calls", what,
            after - before);
}

typedef struct {
  int32_t type;
  TVMFFIFieldInfo field;
  TVMFFIMethodInfo method;
  TVMFFITypeMetadata metadata;
  TVMFFIByteArray name;
  TVMFFIAny value;
  TVMFFIObjectHandle fn;
} RefuseCtx;

static int refuse_field(void* p) {
  RefuseCtx* c = p;
  return conf_api.TVMFFITypeRegisterField(c->type, &c->field);
}
static int refuse_method(void* p) {
  RefuseCtx* c = p;
  return conf_api.TVMFFITypeRegisterMethod(c->type, &c->method);
}
static int refuse_metadata(void* p) {
  RefuseCtx* c = p;
  return conf_api.TVMFFITypeRegisterMetadata(c->type, &c->metadata);
}
static int refuse_attr(void* p) {
  RefuseCtx* c = p;
  return conf_api.TVMFFITypeRegisterAttr(c->type, &c->name, &c->value);
}
static int refuse_global(void* p) {
  RefuseCtx* c = p;
  return conf_api.TVMFFIFunctionSetGlobal(&c->name, c->fn, 0);
}
static int refuse_type(void* p) {
  RefuseCtx* c = p;
  return conf_api.TVMFFITypeGetOrAllocIndex(&c->name, -1, 3, 0, 1, kTVMFFIObject);
}
static int refuse_owned(void* p) {
  RefuseCtx* c = p;
  TVMFFIAny out;
  return conf_api.TVMFFIAnyViewToOwnedAny(&c->value, &out);
}

static RefuseCtx refuse_ctx(int32_t type) {
  RefuseCtx c;
  memset(&c, 0, sizeof c);
  c.type = type;
  static const char doc[] = "a doc string long enough to need memory of its own, 0123456789";
  c.field.name = (TVMFFIByteArray){"a_field_with_a_long_name", 24};
  c.field.doc = (TVMFFIByteArray){doc, sizeof doc - 1};
  c.field.metadata = (TVMFFIByteArray){"{\"k\": 1}", 8};
  c.field.size = 8;
  c.field.alignment = 8;
  c.field.offset = 24;
  c.field.getter = refl_getter;
  c.field.field_static_type_index = kTVMFFIInt;
  c.method.name = (TVMFFIByteArray){"a_method_with_a_long_name", 25};
  c.method.doc = c.field.doc;
  c.method.metadata = c.field.metadata;
  c.method.method.type_index = kTVMFFIRawStr;
  c.method.method.v_c_str = str_text;
  c.metadata.doc = c.field.doc;
  c.metadata.total_size = 32;
  return c;
}

/* RFL-021: refused registrations of fields, methods and metadata give back
 * what they copied: repeating one does not grow the heap. */
TEST(core_oom, RFL_021_refused_registration_leaks_nothing) {
  (void)API(TVMFFITypeRegisterField), (void)API(TVMFFITypeRegisterMethod);
  (void)API(TVMFFITypeRegisterMetadata);
  RefuseCtx unknown = refuse_ctx(99991);
  expect_refusal_leaks_nothing("TVMFFITypeRegisterField of an unknown type", refuse_field,
                               &unknown);
  expect_refusal_leaks_nothing("TVMFFITypeRegisterMethod of an unknown type", refuse_method,
                               &unknown);
  expect_refusal_leaks_nothing("TVMFFITypeRegisterMetadata of an unknown type", refuse_metadata,
                               &unknown);
  RefuseCtx taken = refuse_ctx(refl_type("conformance.oom.Refusals"));
  cr_assert_eq(refuse_field(&taken), 0);
  cr_assert_eq(refuse_metadata(&taken), 0);
  expect_refusal_leaks_nothing("TVMFFITypeRegisterField of a taken name", refuse_field, &taken);
  expect_refusal_leaks_nothing("a second TVMFFITypeRegisterMetadata", refuse_metadata, &taken);
  RefuseCtx bad = refuse_ctx(taken.type);
  bad.field.name = (TVMFFIByteArray){"another_field", 13};
  bad.field.flags = kTVMFFIFieldFlagBitMaskHasDefault;
  bad.field.default_value_or_factory.type_index = 20; /* names no kind */
  expect_refusal_leaks_nothing("TVMFFITypeRegisterField with a default of no kind", refuse_field,
                               &bad);
  bad.field.metadata = (TVMFFIByteArray){NULL, 4};
  bad.field.flags = 0;
  expect_refusal_leaks_nothing("TVMFFITypeRegisterField with metadata {NULL, 4}", refuse_field,
                               &bad);
  bad.method.method.type_index = 20;
  expect_refusal_leaks_nothing("TVMFFITypeRegisterMethod with a method of no kind", refuse_method,
                               &bad);
}

/* TAT-015: a refused TVMFFITypeRegisterAttr (the slot already taken)
 * releases the value it copied: repeating it does not grow the heap. */
TEST(core_oom, TAT_015_refused_attr_leaks_nothing) {
  (void)API(TVMFFITypeRegisterAttr);
  RefuseCtx c = refuse_ctx(refl_type("conformance.oom.AttrRefusals"));
  c.name = (TVMFFIByteArray){"__conformance_refused__", 23};
  c.value.type_index = kTVMFFIRawStr;
  c.value.v_c_str = str_text;
  cr_assert_eq(refuse_attr(&c), 0);
  expect_refusal_leaks_nothing("TVMFFITypeRegisterAttr of a taken slot", refuse_attr, &c);
}

/* FN-055: a refused TVMFFIFunctionSetGlobal (a taken name), and
 * TVMFFIAnyViewToOwnedAny of a moved rvalue reference, leak nothing:
 * repeating them does not grow the heap. */
TEST(core_oom, FN_055_refused_calls_leak_nothing) {
  (void)API(TVMFFIFunctionSetGlobal), (void)API(TVMFFIAnyViewToOwnedAny);
  RefuseCtx c = refuse_ctx(kTVMFFIObject);
  c.name = (TVMFFIByteArray){"conformance.oom.taken_global_name", 33};
  cr_assert_eq(API(TVMFFIFunctionCreate)((void*)0x5, oom_call, NULL, &c.fn), 0);
  cr_assert_eq(refuse_global(&c), 0);
  expect_refusal_leaks_nothing("TVMFFIFunctionSetGlobal of a taken name", refuse_global, &c);
  static TVMFFIObject* moved = NULL;
  c.value.type_index = kTVMFFIObjectRValueRef;
  c.value.v_ptr = &moved;
  expect_refusal_leaks_nothing("TVMFFIAnyViewToOwnedAny of a moved rvalue", refuse_owned, &c);
}

/* TYP-017: a refused TVMFFITypeGetOrAllocIndex (a depth that is not the
 * parent's plus one) leaks nothing: repeating it does not grow the heap. */
TEST(core_oom, TYP_017_refused_alloc_index_leaks_nothing) {
  HOSTILE_INPUT("TVMFFITypeGetOrAllocIndex may exit the process on a wrong depth");
  (void)API(TVMFFITypeGetOrAllocIndex);
  RefuseCtx c = refuse_ctx(kTVMFFIObject);
  c.name = (TVMFFIByteArray){"conformance.oom.WrongDepth", 26};
  expect_refusal_leaks_nothing("TVMFFITypeGetOrAllocIndex with a wrong depth", refuse_type, &c);
}

typedef struct {
  int info; /* 0: TVMFFITypeKeyToIndex, 1: TVMFFIGetTypeInfo */
  int32_t index;
} FirstUseCtx;

static int first_use_step(void* p) {
  FirstUseCtx* c = p;
  if (c->info) {
    const TVMFFITypeInfo* info = conf_api.TVMFFIGetTypeInfo(kTVMFFIStr);
    c->index = info ? info->type_index : -1;
    return info ? 0 : -1;
  }
  TVMFFIByteArray k = {"ffi.String", 10};
  c->index = -1;
  return conf_api.TVMFFITypeKeyToIndex(&k, &c->index);
}

static void first_use_check(void* p, int rc, const ConfAllocWalk* w) {
  FirstUseCtx* c = p;
  if (rc == 0)
    cr_assert_eq(c->index, kTVMFFIStr, "allocation %ld failed: ffi.String found as %d", w->n,
                 c->index);
}

/* TYP-019: the first use of the type registry in a process
 * (TVMFFITypeKeyToIndex, or TVMFFIGetTypeInfo) with an allocation failing:
 * -1 (NULL) with a MemoryError, or the built-in type found; a later call
 * finds it. */
TEST(core_oom, TYP_019_first_registry_use_allocation_fails) {
  (void)API(TVMFFITypeKeyToIndex), (void)API(TVMFFIGetTypeInfo);
  FirstUseCtx c = {0, 0};
  walk("TVMFFITypeKeyToIndex", first_use_step, first_use_check, &c);
}

/* TYP-019: the same through TVMFFIGetTypeInfo as the first use. */
TEST(core_oom, TYP_019_first_type_info_allocation_fails) {
  (void)API(TVMFFITypeKeyToIndex), (void)API(TVMFFIGetTypeInfo);
  FirstUseCtx c = {1, 0};
  walk("TVMFFIGetTypeInfo", first_use_step, first_use_check, &c);
}

/* The first use of TYP-019 with memory to spare, in a child process (the
 * registry is then still unused here): the live blocks it leaves behind,
 * or -1 when the child could not tell. */
static long first_use_live_in_child(void) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0, "fork failed");
  if (pid == 0) {
    FirstUseCtx c = {0, 0};
    conf_alloc_count_start();
    int rc = first_use_step(&c);
    long live = conf_alloc_count_stop();
    if (rc != 0 || c.index != kTVMFFIStr) live = -1;
    ssize_t wrote = write(fds[1], &live, sizeof live);
    _exit(wrote == (ssize_t)sizeof live ? 0 : 1);
  }
  close(fds[1]);
  long live = -1;
  ssize_t got = read(fds[0], &live, sizeof live);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  cr_assert(got == (ssize_t)sizeof live && WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "the child running the first use did not report");
  return live;
}

/* TYP-025: a first use of the type registry that fails for memory, step
 * after step (TYP-019's walk), and then succeeds, leaves no more live
 * allocations behind than a first use with memory to spare: what a failed
 * attempt made is kept for the next or given back, never made again. */
TEST(core_oom, TYP_025_failed_first_use_leaks_nothing) {
  (void)API(TVMFFITypeKeyToIndex);
  conf_alloc_require();
  /* An error raised and cleared first: whatever an implementation keeps
   * per thread for its errors then exists in both runs alike. */
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "warm-up");
  TVMFFIObjectHandle warm = core_take_raised();
  if (warm) API(TVMFFIObjectDecRef)(warm);
  long spare = first_use_live_in_child();
  cr_assert_geq(spare, 0, "the first use with memory to spare failed in the child");
  FirstUseCtx c = {0, 0};
  long failures = 0, bad_rc = 0, points = 0;
  conf_alloc_count_start();
  ConfAllocWalk w = conf_alloc_walk(0);
  while (conf_alloc_next(&w)) {
    conf_alloc_arm(&w);
    int rc = first_use_step(&c);
    conf_alloc_disarm(&w);
    TVMFFIObjectHandle err = core_take_raised();
    if (err) conf_api.TVMFFIObjectDecRef(err);
    failures += rc != 0;
    bad_rc += rc != 0 && rc != -1;
  }
  points = w.points;
  int rc = first_use_step(&c);
  long live = conf_alloc_count_stop();
  conf_alloc_done(points, "TVMFFITypeKeyToIndex");
  cr_assert_eq(bad_rc, 0, "a failed first use returned neither 0 nor -1");
  cr_assert_eq(rc, 0, "the first use with memory to spare after the walk failed");
  cr_assert_eq(c.index, kTVMFFIStr);
  cr_expect_eq(live, spare,
               "after %ld failed first uses (of %ld steps) %ld blocks are live, %ld after one "
               "with memory to spare",
               failures, points, live, spare);
}
