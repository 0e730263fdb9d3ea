/* Unit tests of the reflection records and type attribute columns: the
 * limits and refusals the conformance suite does not reach, and that a
 * refused registration keeps no reference (valgrind and ASan check the
 * memory side). */
#include "reflection.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "type.h"
#include "unit_test_support.h"

static TVMFFIByteArray text(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  return b;
}

static int32_t new_type(const char* k) {
  TVMFFIByteArray b = text(k);
  int32_t index = TVMFFITypeGetOrAllocIndex(&b, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(index, TFFI_TYPE_DYN_BEGIN);
  return index;
}

static TVMFFIFieldInfo plain_field(const char* name) {
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof f);
  f.name = text(name);
  f.size = 8;
  f.alignment = 8;
  f.offset = 24;
  return f;
}

static int noop_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  result->type_index = kTVMFFINone;
  return 0;
}

static TVMFFIObject* new_function(void) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(TVMFFIFunctionCreate(NULL, noop_call, NULL, &fn), 0);
  return fn;
}

static uint32_t strong(TVMFFIObject* obj) {
  return (uint32_t)(obj->combined_ref_count & 0xffffffffu);
}

Test(reflection, overlong_texts_refused) {
  int32_t t = new_type("unit.refl.Long");
  size_t n = TFFI_REFLECT_NAME_MAX + 1;
  char* big = malloc(TFFI_REFLECT_TEXT_MAX + 1);
  cr_assert_not_null(big);
  memset(big, 'a', TFFI_REFLECT_TEXT_MAX + 1);
  TVMFFIFieldInfo f = plain_field("x");
  f.name.data = big;
  f.name.size = n;
  cr_expect_eq(TVMFFITypeRegisterField(t, &f), -1);
  expect_raised("ValueError", "info->name");
  f = plain_field("x");
  f.doc.data = big;
  f.doc.size = TFFI_REFLECT_TEXT_MAX;
  cr_expect_eq(TVMFFITypeRegisterField(t, &f), 0, "a doc at the limit is accepted");
  f = plain_field("y");
  f.metadata.data = big;
  f.metadata.size = TFFI_REFLECT_TEXT_MAX + 1;
  cr_expect_eq(TVMFFITypeRegisterField(t, &f), -1);
  expect_raised("ValueError", "info->metadata");
  TVMFFIByteArray name = {big, n};
  TVMFFIAny v = {0};
  cr_expect_eq(TVMFFITypeRegisterAttr(t, &name, &v), -1);
  expect_raised("ValueError", "attr_name");
  cr_expect_null(TVMFFIGetTypeAttrColumn(&name));
  expect_raised("ValueError", "attr_name");
  free(big);
}

Test(reflection, setter_flagged_but_not_a_function) {
  int32_t t = new_type("unit.refl.Setter");
  TVMFFIAny s;
  TVMFFIByteArray content = {"a string object long enough for the heap", 40};
  cr_assert_eq(TVMFFIStringFromByteArray(&content, &s), 0);
  TVMFFIFieldInfo f = plain_field("x");
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj;
  f.setter = s.v_obj;
  cr_expect_eq(TVMFFITypeRegisterField(t, &f), -1);
  expect_raised("TypeError", "info->setter");
  cr_expect_eq(strong(s.v_obj), 1);
  tffi_decref(s.v_obj);
}

Test(reflection, refused_registrations_keep_no_reference) {
  int32_t t = new_type("unit.refl.Refs");
  TVMFFIObject* fn = new_function();
  TVMFFIFieldInfo f = plain_field("x");
  f.flags = kTVMFFIFieldFlagBitSetterIsFunctionObj | kTVMFFIFieldFlagBitMaskHasDefault;
  f.setter = fn;
  f.default_value_or_factory.type_index = kTVMFFIFunction;
  f.default_value_or_factory.v_obj = fn;
  cr_assert_eq(TVMFFITypeRegisterField(t, &f), 0);
  cr_expect_eq(strong(fn), 3, "setter and default each hold one");
  cr_expect_eq(TVMFFITypeRegisterField(t, &f), -1, "duplicate");
  expect_raised("RuntimeError", "`x`");
  cr_expect_eq(TVMFFITypeRegisterField(TFFI_TYPE_MAX_INDEX - 1, &f), -1);
  expect_raised("KeyError", "type_index");
  f.name = text("y");
  f.default_value_or_factory.type_index = 40; /* names no value kind */
  cr_expect_eq(TVMFFITypeRegisterField(t, &f), -1);
  expect_raised("TypeError", "info->default_value_or_factory");
  cr_expect_eq(strong(fn), 3, "a refused field kept a reference");
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text("m");
  m.method.type_index = kTVMFFIFunction;
  m.method.v_obj = fn;
  cr_expect_eq(TVMFFITypeRegisterMethod(-7, &m), -1);
  expect_raised("KeyError", "-7");
  m.method.type_index = 20;
  cr_expect_eq(TVMFFITypeRegisterMethod(t, &m), -1);
  expect_raised("TypeError", "info->method");
  TVMFFIAny value = {0};
  value.type_index = kTVMFFIFunction;
  value.v_obj = fn;
  TVMFFIByteArray attr = text("unit.refl.refs");
  cr_assert_eq(TVMFFITypeRegisterAttr(t, &attr, &value), 0);
  cr_expect_eq(strong(fn), 4);
  cr_expect_eq(TVMFFITypeRegisterAttr(t, &attr, &value), -1);
  expect_raised("RuntimeError", "unit.refl.refs");
  cr_expect_eq(TVMFFITypeRegisterAttr(kTVMFFINone, &attr, &value), 0);
  cr_expect_eq(strong(fn), 4, "a refused or None-index attribute kept a reference");
  tffi_decref(fn);
}

Test(reflection, methods_may_repeat_a_name) {
  int32_t t = new_type("unit.refl.Overloads");
  TVMFFIObject* fn = new_function();
  TVMFFIMethodInfo m;
  memset(&m, 0, sizeof m);
  m.name = text("f");
  m.method.type_index = kTVMFFIFunction;
  m.method.v_obj = fn;
  cr_assert_eq(TVMFFITypeRegisterMethod(t, &m), 0);
  cr_assert_eq(TVMFFITypeRegisterMethod(t, &m), 0);
  cr_expect_eq(TVMFFIGetTypeInfo(t)->num_methods, 2);
  tffi_decref(fn);
}

Test(reflection, builtin_columns_start_empty) {
  TVMFFIByteArray name = text("__ffi_repr__");
  const TVMFFITypeAttrColumn* c = TVMFFIGetTypeAttrColumn(&name);
  cr_assert_not_null(c);
  cr_expect_eq(c->size, 0);
  cr_expect_null(c->data);
  int32_t t = new_type("unit.refl.Repr");
  TVMFFIAny v = {0};
  v.type_index = kTVMFFIBool;
  v.v_int64 = 1;
  cr_assert_eq(TVMFFITypeRegisterAttr(t, &name, &v), 0);
  cr_expect_eq(TVMFFIGetTypeAttrColumn(&name), c);
  cr_expect_eq(c->size, t + 1);
  cr_expect_eq(c->data[t].type_index, kTVMFFIBool);
}

Test(reflection, object_metadata_is_the_static_record) {
  cr_expect_eq(TVMFFIGetTypeInfo(kTVMFFIObject)->metadata, &tffi_object_metadata);
}
