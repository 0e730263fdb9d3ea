/* Clauses RFL of spec/reflection.md: fields, methods and metadata of
 * registered types, as TVMFFIGetTypeInfo shows them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_support.h"
#include "core_support.h"

static TVMFFIByteArray text(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  return b;
}

static int text_is(const TVMFFIByteArray* got, const char* want) {
  return got->size == strlen(want) && (got->size == 0 || memcmp(got->data, want, got->size) == 0);
}

/* A fresh type below ffi.Object (or below `parent`). */
static int32_t new_type_below(const char* key, int32_t parent) {
  const TVMFFITypeInfo* p = API(TVMFFIGetTypeInfo)(parent);
  cr_assert_not_null(p);
  TVMFFIByteArray k = text(key);
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&k, -1, p->type_depth + 1, 0, 1, parent);
  cr_assert_geq(index, kTVMFFIDynObjectBegin, "cannot register type `%s`", key);
  return index;
}

static int32_t new_type(const char* key) { return new_type_below(key, kTVMFFIObject); }

static int field_getter(void* field, TVMFFIAny* result) {
  (void)field;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 7;
  return 0;
}

static int field_setter(void* field, const TVMFFIAny* value) {
  (void)field;
  (void)value;
  return 0;
}

static int make_nothing(TVMFFIObjectHandle* result) {
  *result = NULL;
  return 0;
}

static int answer_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 40 + n;
  return 0;
}

/* A field record with every member set to something recognisable. */
static TVMFFIFieldInfo field_named(const char* name) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof f);
  f.name = text(name);
  f.doc = text("the field's doc");
  f.metadata = text("{\"unit\": \"m\"}");
  f.flags = kTVMFFIFieldFlagBitMaskWritable;
  f.size = 8;
  f.alignment = 8;
  f.offset = 24;
  f.getter = field_getter;
  f.setter = (void*)field_setter;
  f.field_static_type_index = kTVMFFIInt;
  return f;
}

static TVMFFIObjectHandle new_function(void) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, answer_call, NULL, &fn), 0);
  return fn;
}

/* A heap string (long enough not to be inline), as an owned value. */
static TVMFFIAny heap_string(const char* s) {
  TVMFFIByteArray b = text(s);
  TVMFFIAny out;
  memset(&out, 0, sizeof out);
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&b, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIStr);
  return out;
}

/* RFL-001: a type just registered with TVMFFITypeGetOrAllocIndex has num_fields 0, num_methods 0
 * and NULL fields, methods and metadata in its TVMFFIGetTypeInfo record */
TEST(reflection, RFL_001_new_type_has_no_records) {
  int32_t t = new_type("conformance.refl.Empty");
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_assert_not_null(info);
  cr_expect_eq(info->num_fields, 0);
  cr_expect_eq(info->num_methods, 0);
  cr_expect_null(info->fields);
  cr_expect_null(info->methods);
  cr_expect_null(info->metadata);
}

/* RFL-002: TVMFFITypeRegisterField of a registered type returns 0 and appends a record to the
 * type's TVMFFIGetTypeInfo: num_fields grows by one, and fields[num_fields - 1] has the given
 * name, doc, metadata, flags, size, alignment, offset, getter, setter and
 * field_static_type_index */
TEST(reflection, RFL_002_field_record) {
  int32_t t = new_type("conformance.refl.Field");
  TVMFFIFieldInfo f = field_named("x");
  f.field_static_type_index = kTVMFFIFloat;
  f.offset = 32;
  f.size = 4;
  f.alignment = 4;
  f.flags = kTVMFFIFieldFlagBitMaskWritable | kTVMFFIFieldFlagBitMaskReprOff;
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_assert_eq(info->num_fields, 1);
  const TVMFFIFieldInfo* g = &info->fields[0];
  cr_expect(text_is(&g->name, "x"));
  cr_expect(text_is(&g->doc, "the field's doc"));
  cr_expect(text_is(&g->metadata, "{\"unit\": \"m\"}"));
  cr_expect_eq(g->flags, kTVMFFIFieldFlagBitMaskWritable | kTVMFFIFieldFlagBitMaskReprOff);
  cr_expect_eq(g->size, 4);
  cr_expect_eq(g->alignment, 4);
  cr_expect_eq(g->offset, 32);
  cr_expect_eq((void*)g->getter, (void*)field_getter);
  cr_expect_eq(g->setter, (void*)field_setter);
  cr_expect_eq(g->field_static_type_index, kTVMFFIFloat);
  TVMFFIAny got;
  memset(&got, 0, sizeof got);
  cr_expect_eq(g->getter(NULL, &got), 0);
  cr_expect_eq(got.v_int64, 7);
}

/* RFL-003: a registered field's or method's name, doc and metadata, and a type's metadata doc,
 * are the runtime's own copies: overwriting the caller's bytes after the call changes none of
 * them */
TEST(reflection, RFL_003_texts_are_copied) {
  int32_t t = new_type("conformance.refl.Copies");
  char name[] = "width", doc[] = "field doc", meta[] = "{}";
  char mname[] = "area", mdoc[] = "method doc", tdoc[] = "type doc";
  TVMFFIFieldInfo f = field_named("unused");
  f.name = text(name);
  f.doc = text(doc);
  f.metadata = text(meta);
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  TVMFFIObjectHandle fn = new_function();
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text(mname);
  m.doc = text(mdoc);
  m.metadata = text(meta);
  m.method.type_index = kTVMFFIFunction;
  m.method.v_obj = fn;
  cr_assert_eq(API(TVMFFITypeRegisterMethod)(t, &m), 0);
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.doc = text(tdoc);
  cr_assert_eq(API(TVMFFITypeRegisterMetadata)(t, &md), 0);
  memset(name, 'X', sizeof name - 1);
  memset(doc, 'X', sizeof doc - 1);
  memset(meta, 'X', sizeof meta - 1);
  memset(mname, 'X', sizeof mname - 1);
  memset(mdoc, 'X', sizeof mdoc - 1);
  memset(tdoc, 'X', sizeof tdoc - 1);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect(text_is(&info->fields[0].name, "width"));
  cr_expect(text_is(&info->fields[0].doc, "field doc"));
  cr_expect(text_is(&info->fields[0].metadata, "{}"));
  cr_expect(text_is(&info->methods[0].name, "area"));
  cr_expect(text_is(&info->methods[0].doc, "method doc"));
  cr_expect(text_is(&info->methods[0].metadata, "{}"));
  cr_expect(text_is(&info->metadata->doc, "type doc"));
  API(TVMFFIObjectDecRef)(fn);
}

/* RFL-004: with kTVMFFIFieldFlagBitMaskHasDefault in flags, the record's
 * default_value_or_factory is an owned copy of the given value (an object gains one strong
 * reference); without that flag the record's default is None, all 16 bytes zero, whatever was
 * passed */
TEST(reflection, RFL_004_default_value_owned_or_none) {
  int32_t t = new_type("conformance.refl.Defaults");
  TVMFFIAny s = heap_string("a default string long enough for the heap");
  uint32_t before = core_strong(s.v_obj);
  TVMFFIFieldInfo with = field_named("with_default");
  with.flags = kTVMFFIFieldFlagBitMaskHasDefault;
  with.default_value_or_factory = s;
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &with), 0);
  cr_expect_eq(core_strong(s.v_obj), before + 1, "the default's reference count went %u -> %u",
               before, core_strong(s.v_obj));
  TVMFFIFieldInfo without = field_named("without_default");
  without.flags = 0;
  without.default_value_or_factory = s;
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &without), 0);
  cr_expect_eq(core_strong(s.v_obj), before + 1, "a default without the flag was retained");
  TVMFFIFieldInfo inline_default = field_named("int_default");
  inline_default.flags = kTVMFFIFieldFlagBitMaskHasDefault;
  inline_default.default_value_or_factory.type_index = kTVMFFIInt;
  inline_default.default_value_or_factory.v_int64 = -5;
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &inline_default), 0);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  const TVMFFIFieldInfo* a = core_field_of(info, "with_default");
  const TVMFFIFieldInfo* b = core_field_of(info, "without_default");
  const TVMFFIFieldInfo* c = core_field_of(info, "int_default");
  cr_assert(a && b && c);
  cr_expect_eq(a->default_value_or_factory.type_index, kTVMFFIStr);
  cr_expect_eq(a->default_value_or_factory.v_obj, s.v_obj);
  static const unsigned char zero[16];
  cr_expect(memcmp(&b->default_value_or_factory, zero, 16) == 0,
            "a field without kTVMFFIFieldFlagBitMaskHasDefault has a default of type_index %d",
            b->default_value_or_factory.type_index);
  cr_expect_eq(c->default_value_or_factory.type_index, kTVMFFIInt);
  cr_expect_eq(c->default_value_or_factory.v_int64, -5);
  /* The caller's reference may go: the record keeps the string alive. */
  core_release(&s);
  TVMFFIByteArray kept = core_str_bytes(&a->default_value_or_factory);
  cr_expect_eq(kept.size, strlen("a default string long enough for the heap"));
}

/* RFL-005: with kTVMFFIFieldFlagBitSetterIsFunctionObj in flags, setter is a function object of
 * which the runtime takes one strong reference, so the caller may release its own */
TEST(reflection, RFL_005_setter_function_object_retained) {
  int32_t t = new_type("conformance.refl.SetterFn");
  TVMFFIObjectHandle fn = new_function();
  TVMFFIFieldInfo f = field_named("v");
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj | kTVMFFIFieldFlagBitMaskWritable;
  f.setter = fn;
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  cr_expect_eq(core_strong(fn), 2, "setter reference count %u, expected 2", core_strong(fn));
  API(TVMFFIObjectDecRef)(fn);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_assert_eq(info->fields[0].setter, fn);
  TVMFFIAny r;
  memset(&r, 0, sizeof r);
  cr_expect_eq(API(TVMFFIFunctionCall)(info->fields[0].setter, NULL, 0, &r), 0);
  cr_expect_eq(r.v_int64, 40);
}

/* RFL-006: fields and methods keep their registration order, and the TVMFFITypeInfo pointer of a
 * type stays the same when fields, methods or metadata are registered after it was looked up:
 * the record the caller holds shows them */
TEST(reflection, RFL_006_order_and_stable_record) {
  int32_t t = new_type("conformance.refl.Order");
  const TVMFFITypeInfo* held = API(TVMFFIGetTypeInfo)(t);
  static const char* names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
  for (int i = 0; i < 12; ++i) {
    TVMFFIFieldInfo f = field_named(names[i]);
    f.offset = 24 + 8 * i;
    cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  }
  TVMFFIObjectHandle fn = new_function();
  for (int i = 0; i < 3; ++i) {
    TVMFFIMethodInfo m;
    memset(&m, 0, sizeof m);
    m.name = text(names[i]);
    m.method.type_index = kTVMFFIFunction;
    m.method.v_obj = fn;
    cr_assert_eq(API(TVMFFITypeRegisterMethod)(t, &m), 0);
  }
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.total_size = 120;
  cr_assert_eq(API(TVMFFITypeRegisterMetadata)(t, &md), 0);
  cr_expect_eq(API(TVMFFIGetTypeInfo)(t), held, "the type's record moved");
  cr_assert_eq(held->num_fields, 12);
  for (int i = 0; i < 12; ++i) {
    cr_expect(text_is(&held->fields[i].name, names[i]), "field %d is `%.*s`", i,
              (int)held->fields[i].name.size, held->fields[i].name.data);
    cr_expect_eq(held->fields[i].offset, 24 + 8 * i);
  }
  cr_assert_eq(held->num_methods, 3);
  for (int i = 0; i < 3; ++i) cr_expect(text_is(&held->methods[i].name, names[i]));
  cr_assert_not_null(held->metadata);
  cr_expect_eq(held->metadata->total_size, 120);
  API(TVMFFIObjectDecRef)(fn);
}

/* RFL-007: TVMFFITypeRegisterField of a field name the type already has returns -1 with an error
 * whose message contains the name, and the type still has one field of that name */
TEST(reflection, RFL_007_duplicate_field_refused) {
  int32_t t = new_type("conformance.refl.Dup");
  TVMFFIFieldInfo f = field_named("twice");
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  f.offset = 40;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.says = {"twice"});
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect_eq(info->num_fields, 1);
  cr_expect_eq(info->fields[0].offset, 24);
}

/* RFL-008: the error of RFL-007 is a RuntimeError, like the other refused re-registrations
 * (RFL-013, TAT-008) */
TEST(reflection, RFL_008_duplicate_field_is_runtime_error) {
  int32_t t = new_type("conformance.refl.Dup2");
  TVMFFIFieldInfo f = field_named("twice");
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"twice"});
}

/* RFL-009: a type may register a field of the same name as a field of one of its ancestors: 0 is
 * returned and each type keeps its own record */
TEST(reflection, RFL_009_descendant_may_reuse_ancestor_field_name) {
  int32_t base = new_type("conformance.refl.Base");
  int32_t derived = new_type_below("conformance.refl.Derived", base);
  TVMFFIFieldInfo f = field_named("shared");
  cr_assert_eq(API(TVMFFITypeRegisterField)(base, &f), 0);
  f.offset = 48;
  cr_expect_eq(API(TVMFFITypeRegisterField)(derived, &f), 0);
  const TVMFFITypeInfo* b = API(TVMFFIGetTypeInfo)(base);
  const TVMFFITypeInfo* d = API(TVMFFIGetTypeInfo)(derived);
  cr_assert_eq(b->num_fields, 1);
  cr_assert_eq(d->num_fields, 1);
  cr_expect_eq(b->fields[0].offset, 24);
  cr_expect_eq(d->fields[0].offset, 48);
}

/* RFL-010: TVMFFITypeRegisterMethod returns 0 and appends a record to the type's methods with
 * the given name, doc, metadata, flags (kTVMFFIFieldFlagBitMaskIsStaticMethod for a static
 * method; without it a member method, whose first argument is the object) and method value */
TEST(reflection, RFL_010_method_records) {
  int32_t t = new_type("conformance.refl.Methods");
  TVMFFIObjectHandle fn = new_function();
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text("make");
  m.doc = text("a static method");
  m.metadata = text("{\"static\": true}");
  m.flags = kTVMFFIFieldFlagBitMaskIsStaticMethod;
  m.method.type_index = kTVMFFIFunction;
  m.method.v_obj = fn;
  cr_assert_eq(API(TVMFFITypeRegisterMethod)(t, &m), 0);
  m.name = text("area");
  m.doc = text("a member method");
  m.metadata = text("{}");
  m.flags = 0;
  cr_assert_eq(API(TVMFFITypeRegisterMethod)(t, &m), 0);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_assert_eq(info->num_methods, 2);
  const TVMFFIMethodInfo* s = &info->methods[0];
  const TVMFFIMethodInfo* a = &info->methods[1];
  cr_expect(text_is(&s->name, "make"));
  cr_expect(text_is(&s->doc, "a static method"));
  cr_expect(text_is(&s->metadata, "{\"static\": true}"));
  cr_expect_eq(s->flags, kTVMFFIFieldFlagBitMaskIsStaticMethod);
  cr_expect_eq(s->method.type_index, kTVMFFIFunction);
  cr_expect_eq(s->method.v_obj, fn);
  cr_expect(text_is(&a->name, "area"));
  cr_expect(text_is(&a->doc, "a member method"));
  cr_expect_eq(a->flags, 0);
  cr_expect_eq(a->method.v_obj, fn);
  API(TVMFFIObjectDecRef)(fn);
}

/* RFL-011: the runtime takes one strong reference to a registered method's function object: the
 * caller may release its own, and the function stays callable through the record */
TEST(reflection, RFL_011_method_function_retained) {
  int32_t t = new_type("conformance.refl.MethodRef");
  TVMFFIObjectHandle fn = new_function();
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text("answer");
  m.method.type_index = kTVMFFIFunction;
  m.method.v_obj = fn;
  cr_assert_eq(API(TVMFFITypeRegisterMethod)(t, &m), 0);
  cr_expect_eq(core_strong(fn), 2, "method reference count %u, expected 2", core_strong(fn));
  API(TVMFFIObjectDecRef)(fn);
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  TVMFFIAny args[2];
  memset(args, 0, sizeof args);
  TVMFFIAny r;
  memset(&r, 0, sizeof r);
  cr_assert_eq(API(TVMFFIFunctionCall)(info->methods[0].method.v_obj, args, 2, &r), 0);
  cr_expect_eq(r.type_index, kTVMFFIInt);
  cr_expect_eq(r.v_int64, 42);
}

/* RFL-012: TVMFFITypeRegisterMetadata returns 0 and sets the type's metadata to a record with
 * the given creator, total_size and structural_eq_hash_kind, and a copy of doc */
TEST(reflection, RFL_012_metadata_record) {
  int32_t t = new_type("conformance.refl.Meta");
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.doc = text("a type with metadata");
  md.creator = make_nothing;
  md.total_size = 48;
  md.structural_eq_hash_kind = kTVMFFISEqHashKindDAGNode;
  cr_assert_eq(API(TVMFFITypeRegisterMetadata)(t, &md), 0);
  const TVMFFITypeMetadata* got = API(TVMFFIGetTypeInfo)(t)->metadata;
  cr_assert_not_null(got);
  cr_expect(text_is(&got->doc, "a type with metadata"));
  cr_expect_eq((void*)got->creator, (void*)make_nothing);
  cr_expect_eq(got->total_size, 48);
  cr_expect_eq(got->structural_eq_hash_kind, kTVMFFISEqHashKindDAGNode);
}

/* RFL-013: a second TVMFFITypeRegisterMetadata for the same type returns -1 with a RuntimeError
 * whose message contains the type key, and the first record stays */
TEST(reflection, RFL_013_metadata_twice_refused) {
  int32_t t = new_type("conformance.refl.MetaTwice");
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.total_size = 32;
  cr_assert_eq(API(TVMFFITypeRegisterMetadata)(t, &md), 0);
  md.total_size = 64;
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, &md), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"conformance.refl.MetaTwice"});
  cr_expect_eq(API(TVMFFIGetTypeInfo)(t)->metadata->total_size, 32);
}

/* RFL-014: ffi.Object has metadata from the start: an empty doc, total_size 24
 * (sizeof(TVMFFIObject)), creator NULL, structural_eq_hash_kind
 * kTVMFFISEqHashKindUnsupported; registering metadata for it is refused as in RFL-013 */
TEST(reflection, RFL_014_object_has_metadata) {
  const TVMFFITypeInfo* object = API(TVMFFIGetTypeInfo)(kTVMFFIObject);
  cr_assert_not_null(object);
  const TVMFFITypeMetadata* md = object->metadata;
  cr_assert_not_null(md, "ffi.Object has no metadata");
  cr_expect_eq(md->doc.size, 0, "ffi.Object's doc has %zu bytes", md->doc.size);
  cr_expect_eq(md->total_size, 24);
  cr_expect_null((void*)md->creator);
  cr_expect_eq(md->structural_eq_hash_kind, kTVMFFISEqHashKindUnsupported);
  TVMFFITypeMetadata again;
  memset(&again, 0, sizeof again);
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(kTVMFFIObject, &again), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"ffi.Object"});
  cr_expect_eq(object->metadata, md);
}

/* Indices that name no type: negative, free below the dynamic range, and
 * one past the last registered type. */
static void unknown_indices(int32_t out[3]) {
  int32_t last = new_type("conformance.refl.Last");
  out[0] = -1;
  out[1] = 100;
  out[2] = last + 1;
}

/* RFL-015: TVMFFITypeRegisterField, TVMFFITypeRegisterMethod and TVMFFITypeRegisterMetadata of a
 * type_index that names no registered type (negative, a free index, one past every registered
 * type) return -1 with an error whose message contains the index */
TEST(reflection, RFL_015_unknown_type_refused) {
  int32_t bad[3];
  unknown_indices(bad);
  TVMFFIObjectHandle fn = new_function();
  for (int i = 0; i < 3; ++i) {
    char index[16];
    snprintf(index, sizeof index, "%d", (int)bad[i]);
    TVMFFIFieldInfo f = field_named("x");
    cr_expect_eq(API(TVMFFITypeRegisterField)(bad[i], &f), -1, "field on %d", (int)bad[i]);
    EXPECT_RAISED(.says = {index});
    TVMFFIMethodInfo m;
    memset(&m, 0, sizeof m);
    m.name = text("m");
    m.method.type_index = kTVMFFIFunction;
    m.method.v_obj = fn;
    cr_expect_eq(API(TVMFFITypeRegisterMethod)(bad[i], &m), -1, "method on %d", (int)bad[i]);
    EXPECT_RAISED(.says = {index});
    TVMFFITypeMetadata md;
    memset(&md, 0, sizeof md);
    cr_expect_eq(API(TVMFFITypeRegisterMetadata)(bad[i], &md), -1, "metadata on %d", (int)bad[i]);
    EXPECT_RAISED(.says = {index});
  }
  cr_expect_eq(core_strong(fn), 1, "a refused method kept a reference");
  API(TVMFFIObjectDecRef)(fn);
}

/* RFL-016: the error of RFL-015 is a KeyError, as for TVMFFIGetTypeInfo (TYP-009) */
TEST(reflection, RFL_016_unknown_type_is_key_error) {
  int32_t bad[3];
  unknown_indices(bad);
  for (int i = 0; i < 3; ++i) {
    char index[16];
    snprintf(index, sizeof index, "%d", (int)bad[i]);
    TVMFFIFieldInfo f = field_named("x");
    cr_expect_eq(API(TVMFFITypeRegisterField)(bad[i], &f), -1);
    EXPECT_RAISED(.kind = "KeyError", .says = {index});
    TVMFFITypeMetadata md;
    memset(&md, 0, sizeof md);
    cr_expect_eq(API(TVMFFITypeRegisterMetadata)(bad[i], &md), -1);
    EXPECT_RAISED(.kind = "KeyError", .says = {index});
  }
}

/* RFL-017: a NULL info (metadata) pointer, and a name, doc or metadata whose data is NULL with a
 * nonzero size, are refused with -1 and a ValueError naming the argument, registering nothing */
TEST(reflection, RFL_017_null_arguments_refused) {
  HOSTILE_INPUT("upstream dereferences the NULL");
  int32_t t = new_type("conformance.refl.Nulls");
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"info"});
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"info"});
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"metadata"});
  TVMFFIFieldInfo f = field_named("x");
  f.name.data = NULL;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
  f = field_named("x");
  f.doc.data = NULL;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"doc"});
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text("m");
  m.metadata.size = 3;
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, &m), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"metadata"});
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.doc.size = 9;
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, &md), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"doc"});
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect_eq(info->num_fields, 0);
  cr_expect_eq(info->num_methods, 0);
  cr_expect_null(info->metadata);
}

/* RFL-018: TVMFFITypeRegisterField refuses a negative size, a negative offset and an alignment
 * that is not a positive power of two (no C object has such a field) with -1 and a ValueError
 * naming the member, registering nothing */
TEST(reflection, RFL_018_impossible_field_geometry_refused) {
  int32_t t = new_type("conformance.refl.Geometry");
  static const struct {
    int64_t size, alignment, offset;
    const char* member;
  } bad[] = {
      {-8, 8, 24, "size"},
      {8, 8, -24, "offset"},
      {8, 0, 24, "alignment"},
      {8, 3, 24, "alignment"},
      {8, -8, 24, "alignment"},
      /* the first value past each edge */
      {-1, 8, 24, "size"},
      {8, 8, -1, "offset"},
      {8, -1, 24, "alignment"},
      /* negative with one bit set: x & (x - 1) alone would take it */
      {8, INT64_MIN, 24, "alignment"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    TVMFFIFieldInfo f = field_named("x");
    f.size = bad[i].size;
    f.alignment = bad[i].alignment;
    f.offset = bad[i].offset;
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1, "size %lld alignment %lld offset %lld",
                 (long long)f.size, (long long)f.alignment, (long long)f.offset);
    EXPECT_RAISED(.kind = "ValueError", .says = {bad[i].member});
  }
  cr_expect_eq(API(TVMFFIGetTypeInfo)(t)->num_fields, 0);
}

/* RFL-022: a field's or method's name, doc or metadata, or a type's
 * metadata doc, whose size is 2^31 bytes or more is refused with -1 and a
 * ValueError naming it, before a byte past the real ones is read, and
 * nothing is registered. */
TEST(reflection, RFL_022_huge_texts_refused) {
  HOSTILE_INPUT("the text is copied with its claimed size");
  int32_t t = new_type("conformance.refl.Huge");
  static const size_t huge[] = {(size_t)1 << 31, SIZE_MAX};
  for (int i = 0; i < 2; ++i) {
    TVMFFIByteArray big = {"tiny", huge[i]};
    TVMFFIFieldInfo f = field_named("x");
    f.name = big;
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"name"});
    f = field_named("x");
    f.doc = big;
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"doc"});
    TVMFFIMethodInfo m;
    memset(&m, 0, sizeof m);
    m.name = text("m");
    m.metadata = big;
    cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, &m), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"metadata"});
    TVMFFITypeMetadata md;
    memset(&md, 0, sizeof md);
    md.doc = big;
    cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, &md), -1);
    EXPECT_RAISED(.kind = "ValueError", .says = {"doc"});
  }
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect_eq(info->num_fields, 0);
  cr_expect_eq(info->num_methods, 0);
  cr_expect_null(info->metadata);
}

/* RFL-023: a TVMFFITypeRegisterField refused for its default value (a
 * value of no kind) leaves the setter as it found it: a setter flagged
 * kTVMFFIFieldFlagBitSetterIsFunctionObj keeps its reference count, a NULL
 * one under that flag and a plain C setter without it are not touched. */
TEST(reflection, RFL_023_refused_field_leaves_setter_alone) {
  int32_t t = new_type("conformance.refl.SetterKept");
  TVMFFIObjectHandle fn = new_function();
  TVMFFIFieldInfo f = field_named("with_function_setter");
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj | kTVMFFIFieldFlagBitMaskHasDefault;
  f.setter = fn;
  f.default_value_or_factory.type_index = 20; /* names no kind */
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1, "a default of no kind was accepted");
  EXPECT_RAISED(.kind = "TypeError", .says = {"type_index"});
  cr_expect_eq(core_strong(fn), 1u, "the setter's strong count is %u after the refusal",
               core_strong(fn));
  f.setter = NULL;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"type_index"});
  f = field_named("with_c_setter");
  f.flags = kTVMFFIFieldFlagBitMaskWritable | kTVMFFIFieldFlagBitMaskHasDefault;
  f.default_value_or_factory.type_index = 20;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"type_index"});
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect_eq(info->num_fields, 0, "a refused field was registered");
  API(TVMFFIObjectDecRef)(fn);
}

/* RFL-024: a setter flagged kTVMFFIFieldFlagBitSetterIsFunctionObj that is
 * not a function object (a heap string) is refused with -1 and a TypeError
 * naming the setter; the object's count is unchanged and nothing is
 * registered. */
TEST(reflection, RFL_024_non_function_setter_refused) {
  int32_t t = new_type("conformance.refl.BadSetter");
  TVMFFIAny s = heap_string("not a function, a string");
  TVMFFIFieldInfo f = field_named("bad_setter");
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj;
  f.setter = s.v_obj;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1, "a string setter was accepted");
  EXPECT_RAISED(.kind = "TypeError", .says = {"setter"});
  cr_expect_eq(core_strong(s.v_obj), 1u, "the string's count is %u", core_strong(s.v_obj));
  cr_expect_eq(API(TVMFFIGetTypeInfo)(t)->num_fields, 0);
  core_release(&s);
}

/* RFL-025: a default value of any kind the ABI defines is taken (None,
 * the last inline kind, an object); one whose type index names no kind
 * (14, 63, -2) is refused with a TypeError naming the function and
 * type_index. */
TEST(reflection, RFL_025_default_value_kinds) {
  int32_t t = new_type("conformance.refl.Defaults");
  static const int32_t good[] = {kTVMFFINone, kTVMFFIDevice, kTVMFFIDataType, kTVMFFIUnchanged};
  char name[32];
  for (int i = 0; i < 4; ++i) {
    snprintf(name, sizeof name, "good%d", i);
    TVMFFIFieldInfo f = field_named(name);
    f.flags = kTVMFFIFieldFlagBitMaskHasDefault;
    memset(&f.default_value_or_factory, 0, sizeof f.default_value_or_factory);
    f.default_value_or_factory.type_index = good[i];
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), 0, "a default of kind %d refused", good[i]);
    core_take_raised();
  }
  static const int32_t bad[] = {14, 63, -2};
  for (int i = 0; i < 3; ++i) {
    snprintf(name, sizeof name, "bad%d", i);
    TVMFFIFieldInfo f = field_named(name);
    f.flags = kTVMFFIFieldFlagBitMaskHasDefault;
    memset(&f.default_value_or_factory, 0, sizeof f.default_value_or_factory);
    f.default_value_or_factory.type_index = bad[i];
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1, "a default of kind %d taken", bad[i]);
    TVMFFIObjectHandle err = core_take_raised();
    cr_assert_not_null(err, "nothing raised for a default of kind %d", bad[i]);
    const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    cr_expect(text_is(&cell->kind, "TypeError"), "kind %.*s", (int)cell->kind.size,
              cell->kind.data);
    cr_expect(memmem(cell->message.data, cell->message.size, "TVMFFITypeRegisterField", 23) &&
                  memmem(cell->message.data, cell->message.size, "type_index", 10),
              "the message names neither the function nor type_index: %.*s",
              (int)cell->message.size, cell->message.data);
    API(TVMFFIObjectDecRef)(err);
  }
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect_eq(info->num_fields, 4);
  cr_expect_eq(info->fields[0].default_value_or_factory.type_index, kTVMFFINone);
  cr_expect_eq(info->fields[3].default_value_or_factory.type_index, kTVMFFIUnchanged);
}

/* RFL-026: the edges of a possible field are taken: size 0, offset 0,
 * alignment 1, and a large power-of-two alignment. */
TEST(reflection, RFL_026_edge_field_geometry_taken) {
  int32_t t = new_type("conformance.refl.EdgeGeometry");
  static const struct {
    int64_t size, alignment, offset;
  } edges[] = {{0, 8, 24}, {8, 8, 0}, {1, 1, 25}, {64, 4096, 4096}};
  char name[16];
  for (int i = 0; i < 4; ++i) {
    snprintf(name, sizeof name, "edge%d", i);
    TVMFFIFieldInfo f = field_named(name);
    f.size = edges[i].size;
    f.alignment = edges[i].alignment;
    f.offset = edges[i].offset;
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), 0,
                 "size %lld, alignment %lld, offset %lld refused", (long long)edges[i].size,
                 (long long)edges[i].alignment, (long long)edges[i].offset);
    core_take_raised();
  }
  cr_expect_eq(API(TVMFFIGetTypeInfo)(t)->num_fields, 4);
}

/* RFL-041: field names are compared as whole byte strings of their size. */
TEST(reflection, RFL_041_field_names_compared_whole) {
  int32_t t = new_type("conformance.refl.Prefixes");
  static const TVMFFIByteArray names[] = {{"a", 1}, {"ab", 2}, {"x\0", 2}, {"x", 1}};
  for (int i = 0; i < 4; ++i) {
    TVMFFIFieldInfo f = field_named("unused");
    f.name = names[i];
    f.offset = 24 + 8 * i;
    cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), 0, "field %d (%zu bytes) refused", i,
                 names[i].size);
    TVMFFIObjectHandle err = core_take_raised();
    if (err) API(TVMFFIObjectDecRef)(err);
  }
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_assert_eq(info->num_fields, 4);
  for (int i = 0; i < 4; ++i) {
    cr_expect_eq(info->fields[i].name.size, names[i].size);
    cr_expect_eq(memcmp(info->fields[i].name.data, names[i].data, names[i].size), 0);
  }
  /* Still one name each: the same bytes again are refused. */
  TVMFFIFieldInfo again = field_named("unused");
  again.name = names[2];
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &again), -1);
  TVMFFIObjectHandle err = core_take_raised();
  cr_expect_not_null(err, "a refused duplicate raised nothing");
  if (err) API(TVMFFIObjectDecRef)(err);
}

/* RFL-042: a TVMFFIByteArray* value whose data is NULL with a nonzero size,
 * as a method or as a field default, is refused with a ValueError. */
TEST(reflection, RFL_042_null_byte_array_value_refused) {
  HOSTILE_INPUT("upstream reads the NULL data");
  int32_t t = new_type("conformance.refl.NullBytesValue");
  TVMFFIByteArray broken = {NULL, 1};
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text("m");
  m.method.type_index = kTVMFFIByteArrayPtr;
  m.method.v_ptr = &broken;
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, &m), -1);
  EXPECT_RAISED(.kind = "ValueError");
  TVMFFIFieldInfo f = field_named("f");
  f.flags |= kTVMFFIFieldFlagBitMaskHasDefault;
  memset(&f.default_value_or_factory, 0, sizeof f.default_value_or_factory);
  f.default_value_or_factory.type_index = kTVMFFIByteArrayPtr;
  f.default_value_or_factory.v_ptr = &broken;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError");
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_expect_eq(info->num_fields, 0);
  cr_expect_eq(info->num_methods, 0);
}

/* RFL-043: a 4096-byte name and 2^20-byte doc and metadata are kept whole. */
TEST(reflection, RFL_043_long_texts_taken) {
  int32_t t = new_type("conformance.refl.LongTexts");
  enum { kName = 4096, kText = 1 << 20 };
  char* name = malloc(kName);
  char* big = malloc(kText);
  cr_assert(name && big);
  memset(name, 'n', kName);
  memset(big, 'd', kText);
  big[kText - 1] = 'e';
  TVMFFIFieldInfo f = field_named("unused");
  f.name = (TVMFFIByteArray){name, kName};
  f.doc = (TVMFFIByteArray){big, kText};
  f.metadata = (TVMFFIByteArray){big, kText};
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), 0, "long field texts refused");
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = (TVMFFIByteArray){name, kName};
  m.doc = (TVMFFIByteArray){big, kText};
  m.metadata = (TVMFFIByteArray){big, kText};
  m.method = core_int(1);
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, &m), 0, "long method texts refused");
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof md);
  md.doc = (TVMFFIByteArray){big, kText};
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, &md), 0, "a long type doc refused");
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(t);
  cr_assert_eq(info->num_fields, 1);
  cr_assert_eq(info->num_methods, 1);
  cr_assert_not_null(info->metadata);
  const TVMFFIByteArray* got[] = {&info->fields[0].name,     &info->fields[0].doc,
                                  &info->fields[0].metadata, &info->methods[0].name,
                                  &info->methods[0].doc,     &info->methods[0].metadata,
                                  &info->metadata->doc};
  for (int i = 0; i < 7; ++i) {
    const char* want = i == 0 || i == 3 ? name : big;
    size_t size = i == 0 || i == 3 ? kName : kText;
    cr_expect_eq(got[i]->size, size, "text %d: %zu bytes", i, got[i]->size);
    cr_expect(got[i]->size == size && memcmp(got[i]->data, want, size) == 0, "text %d differs", i);
  }
  free(name);
  free(big);
}

/* RFL-044: a TVMFFITypeRegisterField refused after its texts and values were
 * taken (a field name already registered for the type, a type_index that
 * names no type) keeps no reference to a setter flagged
 * kTVMFFIFieldFlagBitSetterIsFunctionObj: its strong count is back to 1
 * each time; a NULL setter under that flag, and a plain C setter without
 * it, are refused the same way. */
TEST(reflection, RFL_044_refused_append_gives_setter_back) {
  int32_t t = new_type("conformance.refl.SetterGivenBack");
  TVMFFIObjectHandle fn = new_function();
  TVMFFIFieldInfo f = field_named("taken");
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  int32_t where[2] = {t, 100};
  /* A plain C setter, not flagged, is no object: refusing it touches it not. */
  for (int i = 0; i < 2; ++i) {
    cr_expect_eq(API(TVMFFITypeRegisterField)(where[i], &f), -1);
    EXPECT_RAISED(.says = {i == 0 ? "taken" : "100"});
  }
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj | kTVMFFIFieldFlagBitMaskWritable;
  f.setter = fn;
  for (int i = 0; i < 2; ++i) {
    cr_expect_eq(API(TVMFFITypeRegisterField)(where[i], &f), -1, "field `taken` on %d accepted",
                 (int)where[i]);
    EXPECT_RAISED(.says = {i == 0 ? "taken" : "100"});
    cr_expect_eq(core_strong(fn), 1u, "the setter's strong count is %u after a refusal on %d",
                 core_strong(fn), (int)where[i]);
  }
  f.setter = NULL;
  for (int i = 0; i < 2; ++i) {
    cr_expect_eq(API(TVMFFITypeRegisterField)(where[i], &f), -1);
    EXPECT_RAISED(.says = {i == 0 ? "taken" : "100"});
  }
  cr_expect_eq(API(TVMFFIGetTypeInfo)(t)->num_fields, 1);
  API(TVMFFIObjectDecRef)(fn);
}

/* RFL-045: every refusal of TVMFFITypeRegisterField, TVMFFITypeRegisterMethod
 * and TVMFFITypeRegisterMetadata names the function, then the offending
 * argument (or member of it), then its value or what is wrong with it. */
TEST(reflection, RFL_045_refusal_names_function_argument_value) {
  HOSTILE_INPUT("upstream dereferences the NULL");
  const char* fld = "TVMFFITypeRegisterField";
  const char* mth = "TVMFFITypeRegisterMethod";
  const char* mta = "TVMFFITypeRegisterMetadata";
  int32_t t = new_type("conformance.refl.Named");
  int32_t bad[3];
  unknown_indices(bad);
  char index[16];
  snprintf(index, sizeof index, "%d", (int)bad[2]);

  cr_expect_eq(API(TVMFFITypeRegisterField)(t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "info", .says = {"NULL"});
  TVMFFIFieldInfo f = field_named("x");
  f.name.data = NULL;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "name", .says = {"NULL", "1"});
  f = field_named("x");
  f.doc.data = NULL;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "doc", .says = {"NULL", "15"});
  f = field_named("x");
  f.name = (TVMFFIByteArray){"tiny", (size_t)1 << 31};
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "name", .says = {"2147483648"});
  f = field_named("x");
  f.size = -8;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "size", .says = {"-8"});
  f = field_named("x");
  f.offset = -24;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "offset", .says = {"-24"});
  f = field_named("x");
  f.alignment = 3;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = fld, .arg = "alignment", .says = {"3"});
  f = field_named("x");
  f.flags |= kTVMFFIFieldFlagBitMaskHasDefault;
  f.default_value_or_factory.type_index = 20;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = fld, .arg = "default_value_or_factory", .says = {"20"});
  TVMFFIAny s = heap_string("not a function, a string");
  f = field_named("x");
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj;
  f.setter = s.v_obj;
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = fld, .arg = "setter", .says = {"65"});
  API(TVMFFIObjectDecRef)(s.v_obj);
  f = field_named("x");
  cr_expect_eq(API(TVMFFITypeRegisterField)(bad[2], &f), -1);
  EXPECT_RAISED(.kind = "KeyError", .api = fld, .arg = "type_index", .says = {index});
  cr_assert_eq(API(TVMFFITypeRegisterField)(t, &f), 0);
  cr_expect_eq(API(TVMFFITypeRegisterField)(t, &f), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .api = fld, .arg = "name",
                .says = {"`x`", "`conformance.refl.Named`"});

  TVMFFIMethodInfo m;
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = mth, .arg = "info", .says = {"NULL"});
  memset(&m, 0, sizeof m);
  m.name = text("m");
  m.metadata.size = 3;
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, &m), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = mth, .arg = "metadata", .says = {"NULL", "3"});
  memset(&m, 0, sizeof m);
  m.name = text("m");
  m.method.type_index = 20;
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(t, &m), -1);
  EXPECT_RAISED(.kind = "TypeError", .api = mth, .arg = "method", .says = {"20"});
  memset(&m, 0, sizeof m);
  m.name = text("m");
  cr_expect_eq(API(TVMFFITypeRegisterMethod)(bad[2], &m), -1);
  EXPECT_RAISED(.kind = "KeyError", .api = mth, .arg = "type_index", .says = {index});

  TVMFFITypeMetadata md;
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = mta, .arg = "metadata", .says = {"NULL"});
  memset(&md, 0, sizeof md);
  md.doc.size = 9;
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, &md), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = mta, .arg = "doc", .says = {"NULL", "9"});
  memset(&md, 0, sizeof md);
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(bad[2], &md), -1);
  EXPECT_RAISED(.kind = "KeyError", .api = mta, .arg = "type_index", .says = {index});
  cr_assert_eq(API(TVMFFITypeRegisterMetadata)(t, &md), 0);
  cr_expect_eq(API(TVMFFITypeRegisterMetadata)(t, &md), -1);
  snprintf(index, sizeof index, "%d", (int)t);
  EXPECT_RAISED(.kind = "RuntimeError", .api = mta, .arg = "type_index",
                .says = {index, "`conformance.refl.Named`"});
}
