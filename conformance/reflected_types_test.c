/* Clauses RTY-001 to RTY-009 of spec/host.md: the reflected types a
 * runtime registers itself (enum types, the type keys Python binds at
 * import), the constructors made from reflection ("ffi._RegisterFFIInit",
 * "ffi.MakeObjectFromPackedArgs"), the `__ffi_convert__` attributes of the
 * built-in types, and the storage pieces of Python-defined classes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_support.h"

/* The field `name` of a type's record; fails the test when it has none. */
static const TVMFFIFieldInfo* field_of(const TVMFFITypeInfo* info, const char* name) {
  const TVMFFIFieldInfo* f = core_field_of(info, name);
  cr_assert_not_null(f, "%.*s has no field %s", (int)info->type_key.size, info->type_key.data,
                     name);
  return f;
}

static void expect_field(const char* type, const char* name, int64_t offset, int64_t size,
                         const char* schema) {
  const TVMFFIFieldInfo* f = field_of(API(TVMFFIGetTypeInfo)(core_type_index(type)), name);
  cr_expect_eq(f->offset, offset, "%s.%s at %lld", type, name, (long long)f->offset);
  cr_expect_eq(f->size, size, "%s.%s is %lld bytes", type, name, (long long)f->size);
  cr_expect_not_null(f->getter, "%s.%s has no getter", type, name);
  char want[512];
  size_t n = (size_t)snprintf(want, sizeof want, "{\"type_schema\":\"");
  for (const char* p = schema; *p; ++p) {
    if (*p == '"') want[n++] = '\\';
    want[n++] = *p;
  }
  memcpy(want + n, "\"}", 3);
  cr_expect(
      f->metadata.size == strlen(want) && memcmp(f->metadata.data, want, f->metadata.size) == 0,
      "%s.%s metadata %.*s, expected %s", type, name, (int)f->metadata.size, f->metadata.data,
      want);
}

/* RTY-001: the enum types, their parents, sizes and fields. */
Test(reflected_types, RTY_001_enum_types) {
  const TVMFFITypeInfo* state = API(TVMFFIGetTypeInfo)(core_type_index("ffi.EnumState"));
  const TVMFFITypeInfo* ints = API(TVMFFIGetTypeInfo)(core_type_index("ffi.IntEnum"));
  cr_expect_eq(state->type_depth, 1);
  cr_assert_eq(ints->type_depth, 2);
  cr_expect_eq(ints->type_ancestors[1]->type_index, core_type_index("ffi.Enum"));
  cr_assert_not_null(state->metadata);
  cr_expect_eq(state->metadata->total_size, 48);
  expect_field("ffi.EnumState", "entries", 24, 8,
               "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"ffi.Object\"}]}");
  expect_field("ffi.EnumState", "indexes", 32, 8,
               "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"Any\"},{\"type\":\"ffi.Object\"}]}");
  expect_field("ffi.Enum", "_int_index", 24, 8, "{\"type\":\"int\"}");
  expect_field("ffi.Enum", "_str_index", 32, 16, "{\"type\":\"ffi.String\"}");
  expect_field("ffi.IntEnum", "value", 24, 8, "{\"type\":\"int\"}");
  expect_field("ffi.StrEnum", "value", 32, 16, "{\"type\":\"ffi.String\"}");
}

/* RTY-001: the rest of the records: attrs' schema, each field's flags,
 * static type index and setter, each type's structural kind, and
 * creators that make a blank singleton (index 0, name "") of their own
 * type. */
Test(reflected_types, RTY_001_enum_records) {
  expect_field("ffi.EnumState", "attrs", 40, 8,
               "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"ffi.String\"},{\"type\":\"ffi.Dict\","
               "\"args\":[{\"type\":\"ffi.Object\"},{\"type\":\"Any\"}]}]}");
  static const struct {
    const char *type, *name;
    int64_t flags;
    int32_t static_index;
  } fields[] = {
      {"ffi.EnumState", "entries", kTVMFFIFieldFlagBitMaskInitOff, kTVMFFIList},
      {"ffi.EnumState", "indexes", kTVMFFIFieldFlagBitMaskInitOff, kTVMFFIObject},
      {"ffi.EnumState", "attrs", kTVMFFIFieldFlagBitMaskInitOff, kTVMFFIObject},
      {"ffi.Enum", "_int_index", kTVMFFIFieldFlagBitMaskSEqHashIgnore, kTVMFFIInt},
      {"ffi.IntEnum", "value",
       kTVMFFIFieldFlagBitMaskInitOff | kTVMFFIFieldFlagBitMaskSEqHashIgnore, kTVMFFIInt},
  };
  for (size_t i = 0; i < sizeof fields / sizeof *fields; ++i) {
    const TVMFFIFieldInfo* f =
        field_of(API(TVMFFIGetTypeInfo)(core_type_index(fields[i].type)), fields[i].name);
    cr_expect_eq(f->flags & ~kTVMFFIFieldFlagBitMaskWritable, fields[i].flags, "%s.%s flags %lld",
                 fields[i].type, fields[i].name, (long long)f->flags);
    cr_expect_eq(f->field_static_type_index, fields[i].static_index, "%s.%s static type index %d",
                 fields[i].type, fields[i].name, f->field_static_type_index);
    cr_expect_not_null(f->setter, "%s.%s has no setter", fields[i].type, fields[i].name);
  }
  static const struct {
    const char* type;
    int32_t kind;
  } kinds[] = {{"ffi.EnumState", kTVMFFISEqHashKindUnsupported},
               {"ffi.Enum", kTVMFFISEqHashKindUniqueInstance},
               {"ffi.IntEnum", kTVMFFISEqHashKindUniqueInstance},
               {"ffi.StrEnum", kTVMFFISEqHashKindUniqueInstance}};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; ++i) {
    int32_t index = core_type_index(kinds[i].type);
    const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(index);
    cr_assert_not_null(info->metadata, "%s has no metadata", kinds[i].type);
    cr_expect_eq(info->metadata->structural_eq_hash_kind, kinds[i].kind, "%s kind %d",
                 kinds[i].type, info->metadata->structural_eq_hash_kind);
    cr_expect_eq(info->metadata->total_size, 48, "%s total size", kinds[i].type);
    cr_expect_eq(info->type_depth, i == 0 ? 1 : i == 1 ? 1 : 2, "%s depth", kinds[i].type);
    if (i == 0) continue;
    cr_assert_not_null(info->metadata->creator, "%s has no creator", kinds[i].type);
    TVMFFIObjectHandle made = NULL;
    cr_assert_eq(info->metadata->creator(&made), 0);
    cr_assert_eq(TVMFFIObjectGetTypeIndex(made), index, "%s's creator made another type",
                 kinds[i].type);
    const TVMFFITypeInfo* base = API(TVMFFIGetTypeInfo)(core_type_index("ffi.Enum"));
    TVMFFIAny iv = core_none(), sv = core_none();
    const TVMFFIFieldInfo *fi = field_of(base, "_int_index"), *fs = field_of(base, "_str_index");
    cr_assert_eq(fi->getter((char*)made + fi->offset, &iv), 0);
    cr_assert_eq(fs->getter((char*)made + fs->offset, &sv), 0);
    cr_expect(iv.type_index == kTVMFFIInt && iv.v_int64 == 0, "%s: blank _int_index",
              kinds[i].type);
    cr_expect(host_is_str(&sv, ""), "%s: blank _str_index of type index %d", kinds[i].type,
              sv.type_index);
    core_release(&sv);
    API(TVMFFIObjectDecRef)(made);
  }
}

/* Sets the field `name` of type key `type` on obj through its plain
 * setter; the setter's return code (the error left raised). */
static int set_field(void* obj, const char* type, const char* name, TVMFFIAny value) {
  const TVMFFIFieldInfo* f = field_of(API(TVMFFIGetTypeInfo)(core_type_index(type)), name);
  cr_assert(f->setter && !(f->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj),
            "%s.%s has no plain setter", type, name);
  return ((TVMFFIFieldSetter)f->setter)((char*)obj + f->offset, &value);
}

static TVMFFIAny get_field(void* obj, const char* type, const char* name) {
  const TVMFFIFieldInfo* f = field_of(API(TVMFFIGetTypeInfo)(core_type_index(type)), name);
  TVMFFIAny v = core_none();
  cr_assert_eq(f->getter((char*)obj + f->offset, &v), 0);
  return v;
}

/* RTY-001: the setters of the enum fields store what their getters read
 * back (an int, a str, an object with a reference of its own) and refuse
 * a value of another kind with a TypeError. */
Test(reflected_types, RTY_001_enum_setters) {
  const TVMFFITypeInfo* ints = API(TVMFFIGetTypeInfo)(core_type_index("ffi.IntEnum"));
  const TVMFFITypeInfo* strs = API(TVMFFIGetTypeInfo)(core_type_index("ffi.StrEnum"));
  const TVMFFITypeInfo* state = API(TVMFFIGetTypeInfo)(core_type_index("ffi.EnumState"));
  TVMFFIObjectHandle e = NULL, s = NULL, st = NULL;
  cr_assert_eq(ints->metadata->creator(&e), 0);
  cr_assert_eq(strs->metadata->creator(&s), 0);
  cr_assert_eq(state->metadata->creator(&st), 0);
  cr_expect_eq(set_field(e, "ffi.Enum", "_int_index", core_int(7)), 0);
  TVMFFIAny v = get_field(e, "ffi.Enum", "_int_index");
  cr_expect(v.type_index == kTVMFFIInt && v.v_int64 == 7, "_int_index read back as %d",
            v.type_index);
  cr_expect_eq(set_field(e, "ffi.Enum", "_int_index", core_c_str("seven")), -1);
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_eq(set_field(e, "ffi.Enum", "_str_index", core_c_str("a name longer than seven")), 0);
  v = get_field(e, "ffi.Enum", "_str_index");
  cr_expect(host_is_str(&v, "a name longer than seven"), "_str_index read back as %d",
            v.type_index);
  core_release(&v);
  cr_expect_eq(set_field(e, "ffi.Enum", "_str_index", core_int(3)), -1);
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_eq(set_field(e, "ffi.IntEnum", "value", core_int(-4)), 0);
  v = get_field(e, "ffi.IntEnum", "value");
  cr_expect(v.type_index == kTVMFFIInt && v.v_int64 == -4);
  cr_expect_eq(set_field(s, "ffi.StrEnum", "value", core_c_str("v")), 0);
  v = get_field(s, "ffi.StrEnum", "value");
  cr_expect(host_is_str(&v, "v"));
  core_release(&v);
  TVMFFIAny l = host_ok("ffi.List", NULL, 0), d = host_ok("ffi.Dict", NULL, 0);
  uint32_t base = core_strong(l.v_obj);
  cr_expect_eq(set_field(st, "ffi.EnumState", "entries", l), 0);
  cr_expect_eq(core_strong(l.v_obj), base + 1, "the state holds no reference of its own");
  v = get_field(st, "ffi.EnumState", "entries");
  cr_expect_eq(v.v_obj, l.v_obj);
  core_release(&v);
  cr_expect_eq(set_field(st, "ffi.EnumState", "indexes", d), 0);
  v = get_field(st, "ffi.EnumState", "indexes");
  cr_expect_eq(v.v_obj, d.v_obj);
  core_release(&v);
  cr_expect_eq(set_field(st, "ffi.EnumState", "entries", core_int(1)), -1);
  EXPECT_RAISED(.kind = "TypeError");
  API(TVMFFIObjectDecRef)(st);
  cr_expect_eq(core_strong(l.v_obj), base, "the state kept its reference");
  API(TVMFFIObjectDecRef)(e);
  API(TVMFFIObjectDecRef)(s);
  core_release(&l);
  core_release(&d);
}

/* RTY-002: EnumState's __ffi_init__ makes a state of an empty list and two
 * empty dicts, read through the fields' getters. */
Test(reflected_types, RTY_002_enum_state_init) {
  const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(core_type_index("ffi.EnumState"));
  const TVMFFIAny* init = NULL;
  for (int32_t i = 0; i < info->num_methods; ++i)
    if (info->methods[i].name.size == 12 &&
        memcmp(info->methods[i].name.data, "__ffi_init__", 12) == 0)
      init = &info->methods[i].method;
  cr_assert_not_null(init, "ffi.EnumState has no __ffi_init__ method");
  TVMFFIAny s = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(init->v_obj, NULL, 0, &s), 0);
  cr_assert_eq(s.type_index, info->type_index);
  static const char* const names[] = {"entries", "indexes", "attrs"};
  static const int32_t kinds[] = {kTVMFFIList, kTVMFFIDict, kTVMFFIDict};
  for (int i = 0; i < 3; ++i) {
    const TVMFFIFieldInfo* f = field_of(info, names[i]);
    TVMFFIAny v = core_none();
    cr_assert_eq(f->getter((char*)s.v_obj + f->offset, &v), 0);
    cr_expect_eq(v.type_index, kinds[i], "%s holds type index %d", names[i], v.type_index);
    if (v.type_index == kinds[i]) {
      TVMFFIAny size = host_ok(i ? "ffi.DictSize" : "ffi.ListSize", &v, 1);
      cr_expect_eq(host_int_of(size, names[i]), 0, "%s is not empty", names[i]);
    }
    core_release(&v);
  }
  core_release(&s);
}

/* RTY-003: the type keys upstream's Python package binds classes to when
 * it imports are registered below ffi.Object. */
Test(reflected_types, RTY_003_import_type_keys) {
  static const char* const keys[] = {"ffi.StructuralKey",         "ffi.StructuralVisitor",
                                     "ffi.StructuralMutator",     "ffi.reflection.AccessStep",
                                     "ffi.reflection.AccessPath", "ffi.VisitInterrupt"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i) {
    const TVMFFITypeInfo* info = API(TVMFFIGetTypeInfo)(core_type_index(keys[i]));
    cr_expect_eq(info->type_depth, 1, "%s is at depth %d", keys[i], info->type_depth);
  }
}

/* A type of the test's own: conformance.Point {int64 x; int64 y = 5}. */
typedef struct {
  TVMFFIObject header;
  int64_t x, y;
} Point;

static void point_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int32_t point_index;

/* A zeroed object of Point's layout and the given type. */
static int point_new(int32_t type_index, TVMFFIObjectHandle* out) {
  Point* p = calloc(1, sizeof *p);
  p->header.combined_ref_count = 1 | ((uint64_t)1 << 32);
  p->header.type_index = type_index;
  p->header.deleter = point_delete;
  *out = p;
  return 0;
}

static int point_create(TVMFFIObjectHandle* out) { return point_new(point_index, out); }

/* Registers `key` below ffi.Object with Point's layout and `create`. */
static int32_t define_point_type(const char* key, int (*create)(TVMFFIObjectHandle*)) {
  TVMFFIByteArray k = {key, strlen(key)};
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&k, -1, 1, 0, 1, kTVMFFIObject);
  cr_assert_geq(index, 0);
  TVMFFITypeMetadata meta = {{"", 0}, create, (int32_t)sizeof(Point), kTVMFFISEqHashKindTreeNode};
  cr_assert_eq(API(TVMFFITypeRegisterMetadata)(index, &meta), 0);
  return index;
}

static void define_point(void) {
  point_index = define_point_type("conformance.Point", point_create);
  host_add_i64_field(point_index, "x", 24, 0, (void*)host_set_i64, core_none());
  host_add_i64_field(point_index, "y", 32, kTVMFFIFieldFlagBitMaskHasDefault, (void*)host_set_i64,
                     core_int(5));
  TVMFFIAny idx = core_int(point_index);
  host_ok("ffi._RegisterFFIInit", &idx, 1);
}

static TVMFFIAny point_init_fn(void) {
  TVMFFIByteArray name = {"__ffi_init__", 12};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&name);
  cr_assert_not_null(col);
  int32_t off = point_index - col->begin_index;
  cr_assert(off >= 0 && off < col->size && col->data[off].type_index == kTVMFFIFunction,
            "ffi._RegisterFFIInit left no __ffi_init__ for the type");
  return col->data[off];
}

static int init_point(TVMFFIAny* args, int n, Point** out) {
  TVMFFIAny f = point_init_fn(), r = core_none();
  int rc = API(TVMFFIFunctionCall)(f.v_obj, args, n, &r);
  *out = rc == 0 ? (Point*)r.v_obj : NULL;
  return rc;
}

/* RTY-004: the __ffi_init__ that ffi._RegisterFFIInit makes binds
 * positional arguments, then keyword pairs after the ffi.GetKwargsObject
 * marker, fills defaults, and refuses what Python's call would refuse. */
Test(reflected_types, RTY_004_auto_init) {
  define_point();
  Point* p;
  TVMFFIAny args[4] = {core_int(1), core_int(2)};
  cr_assert_eq(init_point(args, 2, &p), 0);
  cr_expect(p->x == 1 && p->y == 2);
  API(TVMFFIObjectDecRef)(p);
  cr_assert_eq(init_point(args, 1, &p), 0);
  cr_expect(p->x == 1 && p->y == 5, "the default of y was not used");
  API(TVMFFIObjectDecRef)(p);
  TVMFFIAny kw = host_ok("ffi.GetKwargsObject", NULL, 0);
  TVMFFIAny named[3] = {kw, core_c_str("x"), core_int(9)};
  cr_assert_eq(init_point(named, 3, &p), 0);
  cr_expect(p->x == 9 && p->y == 5);
  API(TVMFFIObjectDecRef)(p);
  cr_expect_eq(init_point(NULL, 0, &p), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"missing required argument: 'x'"});
  TVMFFIAny extra[3] = {core_int(1), core_int(2), core_int(3)};
  cr_expect_eq(init_point(extra, 3, &p), -1);
  EXPECT_RAISED(.kind = "TypeError",
                .says = {"takes at most 2 positional argument(s), but 3 were given"});
  TVMFFIAny bad[3] = {kw, core_c_str("z"), core_int(1)};
  cr_expect_eq(init_point(bad, 3, &p), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"unexpected keyword argument 'z'"});
  TVMFFIAny wrong[1] = {core_c_str("not an int")};
  cr_expect_eq(init_point(wrong, 1, &p), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"field 'x'"});
  core_release(&kw);
}

/* Expects the Point __ffi_init__ to refuse args with a TypeError saying
 * `says`. */
static void expect_init_refused(TVMFFIAny* args, int n, const char* says) {
  Point* p;
  cr_expect_eq(init_point(args, n, &p), -1, "%s: accepted", says);
  EXPECT_RAISED(.kind = "TypeError", .says = {says});
}

/* RTY-004: positional and keyword arguments together, keywords in any
 * order, and the refusals of a field given twice and of a keyword
 * without its value. */
Test(reflected_types, RTY_004_auto_init_keywords) {
  define_point();
  Point* p;
  TVMFFIAny kw = host_ok("ffi.GetKwargsObject", NULL, 0);
  TVMFFIAny mixed[4] = {core_int(1), kw, core_c_str("y"), core_int(7)};
  cr_assert_eq(init_point(mixed, 4, &p), 0);
  cr_expect(p->x == 1 && p->y == 7, "(1, y=7) made x=%lld y=%lld", (long long)p->x,
            (long long)p->y);
  API(TVMFFIObjectDecRef)(p);
  TVMFFIAny both[5] = {kw, core_c_str("y"), core_int(8), core_c_str("x"), core_int(6)};
  cr_assert_eq(init_point(both, 5, &p), 0);
  cr_expect(p->x == 6 && p->y == 8, "(y=8, x=6) made x=%lld y=%lld", (long long)p->x,
            (long long)p->y);
  API(TVMFFIObjectDecRef)(p);
  TVMFFIAny twice[4] = {core_int(1), kw, core_c_str("x"), core_int(2)};
  expect_init_refused(twice, 4, "multiple values for argument 'x'");
  TVMFFIAny only_y[3] = {kw, core_c_str("y"), core_int(2)};
  expect_init_refused(only_y, 3, "missing required argument: 'x'");
  TVMFFIAny odd[3] = {core_int(1), kw, core_c_str("y")};
  expect_init_refused(odd, 3, "KWARGS requires an even number of key-value arguments");
  core_release(&kw);
}

/* conformance.Factory {int64 a; int64 b = factory()}: a's setter is a
 * Function (field address, value), b's default comes from a factory
 * Function returning 42. */
static int32_t factory_index;

static int factory_create(TVMFFIObjectHandle* out) { return point_new(factory_index, out); }

static int setter_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self;
  memset(out, 0, sizeof *out);
  if (n != 2 || args[0].type_index != kTVMFFIOpaquePtr || args[1].type_index != kTVMFFIInt) {
    API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "the setter wants\n(field address, int)");
    return -1;
  }
  memcpy(args[0].v_ptr, &args[1].v_int64, 8);
  return 0;
}

static int factory_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  (void)self, (void)args, (void)n;
  *out = core_int(42);
  return 0;
}

static TVMFFIAny make_function(TVMFFISafeCallType call) {
  TVMFFIObjectHandle f = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, call, NULL, &f), 0);
  return core_obj(f);
}

static void define_factory(void) {
  if (factory_index > 0) return;
  factory_index = define_point_type("conformance.Factory", factory_create);
  TVMFFIAny setter = make_function(setter_call), factory = make_function(factory_call);
  host_add_i64_field(factory_index, "a", 24, kTVMFFIFieldFlagBitSetterIsFunctionObj, setter.v_obj,
                     core_none());
  host_add_i64_field(factory_index, "b", 32,
                     kTVMFFIFieldFlagBitMaskHasDefault | kTVMFFIFieldFlagBitMaskDefaultFromFactory,
                     (void*)host_set_i64, factory);
  core_release(&setter);
  core_release(&factory);
  TVMFFIAny idx = core_int(factory_index);
  host_ok("ffi._RegisterFFIInit", &idx, 1);
}

/* RTY-004, RTY-005: a setter that is a Function is called with the
 * field's address and the value; a default from a factory is the
 * factory's result; a Function setter's refusal names the field. */
Test(reflected_types, RTY_004_function_setters_and_factories) {
  define_factory();
  TVMFFIByteArray name = {"__ffi_init__", 12};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&name);
  TVMFFIAny init = col->data[factory_index - col->begin_index], args[1] = {core_int(7)};
  TVMFFIAny r = core_none();
  cr_assert_eq(init.type_index, kTVMFFIFunction);
  conf_expect_ok(API(TVMFFIFunctionCall)(init.v_obj, args, 1, &r), "Factory(7)");
  Point* p = (Point*)r.v_obj;
  cr_expect(p->x == 7 && p->y == 42, "Factory(7) made a=%lld b=%lld", (long long)p->x,
            (long long)p->y);
  core_release(&r);
  TVMFFIAny named[3] = {core_c_str("conformance.Factory"), core_c_str("a"), core_int(3)};
  r = host_ok("ffi.MakeObjectFromPackedArgs", named, 3);
  p = (Point*)r.v_obj;
  cr_expect(p->x == 3 && p->y == 42, "MakeObjectFromPackedArgs made a=%lld b=%lld", (long long)p->x,
            (long long)p->y);
  core_release(&r);
  args[0] = core_c_str("no int");
  r = core_none();
  cr_expect_eq(API(TVMFFIFunctionCall)(init.v_obj, args, 1, &r), -1);
  TVMFFIObjectHandle raised = core_take_raised();
  cr_assert(raised != NULL && raised != (TVMFFIObjectHandle)(uintptr_t)0x1, "nothing raised");
  const TVMFFIErrorCell* cell = conf_error_cell(raised);
  char text[512];
  snprintf(text, sizeof text, "%.*s: %.*s", (int)cell->kind.size, cell->kind.data,
           (int)cell->message.size, cell->message.data);
  cr_expect(strncmp(text, "TypeError: ", 11) == 0 && strstr(text, "field 'a'") != NULL &&
                strstr(text, "the setter wants\n  (field address, int)") != NULL,
            "%s", text);
  conformance_layout_guard(CONF_LAYOUT_TVMFFIErrorCell, "cause_chain extra_context");
  cr_expect_null(cell->extra_context, "the renamed error has an extra context");
  cr_assert_not_null(cell->cause_chain,
                     "the renamed error does not hold the setter's as its cause");
  const TVMFFIErrorCell* cause = conf_error_cell(cell->cause_chain);
  snprintf(text, sizeof text, "%.*s: %.*s", (int)cause->kind.size, cause->kind.data,
           (int)cause->message.size, cause->message.data);
  cr_expect_str_eq(text, "TypeError: the setter wants\n(field address, int)");
  API(TVMFFIObjectDecRef)(raised);
}

/* The type converter RTY-010's setters are given: the value itself, with a
 * reference of its own; the token it is called with is counted. */
static int converter_calls;
static char converter_token;

static int convert_same(void* converter, const TVMFFIAny* value, TVMFFIAny* out) {
  converter_calls += converter == &converter_token;
  *out = *value;
  if (out->type_index >= kTVMFFIStaticObjectBegin) API(TVMFFIObjectIncRef)(out->v_obj);
  return 0;
}

static int convert_refusing(void* converter, const TVMFFIAny* value, TVMFFIAny* out) {
  (void)converter, (void)value, (void)out;
  API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "the converter refuses");
  return -1;
}

/* The setter "ffi.MakeFieldSetter" makes for a field of `type_index`. */
static TVMFFIAny setter_for(int64_t type_index,
                            int (*convert)(void*, const TVMFFIAny*, TVMFFIAny*)) {
  TVMFFIAny args[3] = {core_int(type_index), core_int((int64_t)(intptr_t)&converter_token),
                       core_int((int64_t)(intptr_t)convert)};
  TVMFFIAny setter = host_ok("ffi.MakeFieldSetter", args, 3);
  cr_assert_eq(setter.type_index, kTVMFFIFunction, "ffi.MakeFieldSetter(%lld) made type index %d",
               (long long)type_index, setter.type_index);
  return setter;
}

/* Stores `value` through a setter for `type_index` into `field`. */
static void store_field(int64_t type_index, void* field, TVMFFIAny value) {
  TVMFFIAny setter = setter_for(type_index, convert_same), r = core_none();
  TVMFFIAny args[2] = {core_none(), value};
  args[0].type_index = kTVMFFIOpaquePtr;
  args[0].v_ptr = field;
  conf_expect_ok(API(TVMFFIFunctionCall)(setter.v_obj, args, 2, &r), "a field setter");
  core_release(&setter);
}

/* RTY-010: "ffi.MakeFieldSetter"(field_type_index, converter, f_convert)
 * makes a Function (field address, value) that passes the converter and
 * the value to f_convert and stores what it returns in the field, as a
 * value of the field's kind; f_convert's error is the setter's. */
Test(reflected_types, RTY_010_field_setters) {
  converter_calls = 0;
  int64_t i = 0;
  store_field(kTVMFFIInt, &i, core_int(-77));
  cr_expect_eq(i, -77, "an int field holds %lld", (long long)i);
  double d = 0;
  store_field(kTVMFFIFloat, &d, core_float(2.5));
  cr_expect(d == 2.5, "a float field holds %g", d);
  unsigned char b = 0;
  store_field(kTVMFFIBool, &b, core_bool(1));
  cr_expect_eq(b, 1, "a bool field holds %d", b);
  void* p = NULL;
  TVMFFIAny ptr = core_none();
  ptr.type_index = kTVMFFIOpaquePtr;
  ptr.v_ptr = &d;
  store_field(kTVMFFIOpaquePtr, &p, ptr);
  cr_expect_eq(p, &d, "a pointer field holds another pointer");
  DLDataType dt = {0, 0, 0};
  TVMFFIAny dtv = core_none();
  dtv.type_index = kTVMFFIDataType;
  dtv.v_dtype = (DLDataType){kDLFloat, 16, 4};
  store_field(kTVMFFIDataType, &dt, dtv);
  cr_expect(dt.code == kDLFloat && dt.bits == 16 && dt.lanes == 4,
            "a dtype field holds code %d bits %d lanes %d", dt.code, dt.bits, dt.lanes);
  DLDevice dev = {kDLCPU, 0};
  TVMFFIAny devv = core_none();
  devv.type_index = kTVMFFIDevice;
  devv.v_device = (DLDevice){kDLCUDA, 5};
  store_field(kTVMFFIDevice, &dev, devv);
  cr_expect(dev.device_type == kDLCUDA && dev.device_id == 5, "a device field holds %d:%d",
            dev.device_type, dev.device_id);
  TVMFFIAny arr = host_ok("ffi.Array", NULL, 0);
  uint32_t base = core_strong(arr.v_obj);
  void* obj = NULL;
  store_field(kTVMFFIObject, &obj, arr);
  cr_expect_eq(obj, arr.v_obj, "an object field holds another object");
  cr_expect_eq(core_strong(arr.v_obj), base + 1, "an object field holds no reference of its own");
  TVMFFIAny any = core_none();
  store_field(-1, &any, arr); /* an Any field */
  cr_expect(any.type_index == kTVMFFIArray && any.v_obj == arr.v_obj, "an Any field holds %d",
            any.type_index);
  cr_expect_eq(core_strong(arr.v_obj), base + 2, "an Any field holds no reference of its own");
  core_release(&any);
  API(TVMFFIObjectDecRef)(obj);
  core_release(&arr);
  cr_expect_eq(converter_calls, 8, "the converter was called with its token %d times of 8",
               converter_calls);
  TVMFFIAny refusing = setter_for(kTVMFFIInt, convert_refusing), r = core_none();
  TVMFFIAny args[2] = {core_none(), core_int(1)};
  args[0].type_index = kTVMFFIOpaquePtr;
  args[0].v_ptr = &i;
  cr_expect_eq(API(TVMFFIFunctionCall)(refusing.v_obj, args, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"the converter refuses"});
  cr_expect_eq(i, -77, "a refused value was stored");
  core_release(&refusing);
}

/* RTY-005: ffi.MakeObjectFromPackedArgs sets fields by name, fills
 * defaults, and refuses unknown names and missing fields (TypeError). */
Test(reflected_types, RTY_005_make_object_from_packed_args) {
  define_point();
  TVMFFIAny args[5] = {core_c_str("conformance.Point"), core_c_str("y"), core_int(3),
                       core_c_str("x"), core_int(4)};
  TVMFFIAny o = host_ok("ffi.MakeObjectFromPackedArgs", args, 5);
  cr_assert_eq(o.type_index, point_index);
  cr_expect(((Point*)o.v_obj)->x == 4 && ((Point*)o.v_obj)->y == 3);
  core_release(&o);
  TVMFFIAny by_index[3] = {core_int(point_index), core_c_str("x"), core_int(1)};
  o = host_ok("ffi.MakeObjectFromPackedArgs", by_index, 3);
  cr_expect(((Point*)o.v_obj)->x == 1 && ((Point*)o.v_obj)->y == 5);
  core_release(&o);
  TVMFFIAny unknown[5] = {core_c_str("conformance.Point"), core_c_str("x"), core_int(1),
                          core_c_str("w"), core_int(2)};
  host_refused("ffi.MakeObjectFromPackedArgs", unknown, 5, "TypeError", "does not have field `w`");
  TVMFFIAny none[1] = {core_c_str("conformance.Point")};
  host_refused("ffi.MakeObjectFromPackedArgs", none, 1, "TypeError", "Required field `x`");
}

/* The `__ffi_convert__` Function of a type key. */
static TVMFFIAny convert_fn(const char* key) {
  TVMFFIByteArray name = {"__ffi_convert__", 15};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&name);
  cr_assert_not_null(col, "there is no __ffi_convert__ column");
  int32_t off = core_type_index(key) - col->begin_index;
  cr_assert(off >= 0 && off < col->size && col->data[off].type_index == kTVMFFIFunction,
            "%s has no __ffi_convert__", key);
  return col->data[off];
}

/* RTY-006: the built-in object types have a `__ffi_convert__` Function;
 * ffi.Shape's turns an array of ints into a shape and refuses one holding
 * a string, saying "Cannot cast from `ffi.Array` to `ffi.Shape`". */
Test(reflected_types, RTY_006_convert_attrs) {
  static const char* const keys[] = {"ffi.Object", "ffi.Function", "ffi.Error", "ffi.String",
                                     "ffi.Bytes",  "ffi.Array",    "ffi.List",  "ffi.Map",
                                     "ffi.Dict",   "ffi.Shape",    "ffi.Tensor"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i) convert_fn(keys[i]);
  TVMFFIAny f = convert_fn("ffi.Shape");
  TVMFFIAny items[2] = {core_int(2), core_int(3)}, arr = host_ok("ffi.Array", items, 2),
            out = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(f.v_obj, &arr, 1, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIShape);
  cr_expect_eq(TVMFFIShapeGetCellPtr(out.v_obj)->size, 2);
  core_release(&out);
  /* An array of ints is no str, bytes, error or function. */
  static const char* const not_seq[] = {"ffi.String", "ffi.Bytes", "ffi.Error", "ffi.Function"};
  for (size_t i = 0; i < sizeof not_seq / sizeof *not_seq; ++i) {
    cr_expect_eq(API(TVMFFIFunctionCall)(convert_fn(not_seq[i]).v_obj, &arr, 1, &out), -1,
                 "%s's __ffi_convert__ took an array of ints", not_seq[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"Cannot cast from `ffi.Array`"});
  }
  core_release(&arr);
  items[1] = core_c_str("x");
  arr = host_ok("ffi.Array", items, 2);
  cr_expect_eq(API(TVMFFIFunctionCall)(f.v_obj, &arr, 1, &out), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"Cannot cast from `ffi.Array` to `ffi.Shape`"});
  core_release(&arr);
  TVMFFIByteArray raw = {"x\0y", 3};
  TVMFFIAny view = core_none(), bytes = core_none();
  view.type_index = kTVMFFIByteArrayPtr;
  view.v_ptr = &raw;
  cr_assert_eq(API(TVMFFIFunctionCall)(convert_fn("ffi.Bytes").v_obj, &view, 1, &bytes), 0);
  TVMFFIByteArray got = core_str_bytes(&bytes);
  cr_expect(got.size == 3 && memcmp(got.data, "x\0y", 3) == 0, "a byte array did not convert");
  core_release(&bytes);
  /* Bytes short enough to live in the value itself convert to themselves. */
  TVMFFIAny small = core_none();
  small.type_index = kTVMFFISmallBytes;
  small.small_str_len = 2;
  memcpy(small.v_bytes, "a\0", 2);
  cr_assert_eq(API(TVMFFIFunctionCall)(convert_fn("ffi.Bytes").v_obj, &small, 1, &bytes), 0);
  got = core_str_bytes(&bytes);
  cr_expect(got.size == 2 && memcmp(got.data, "a\0", 2) == 0, "short bytes did not convert");
  core_release(&bytes);
  TVMFFIAny list = host_ok("ffi.List", items, 1), to_array = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(convert_fn("ffi.Array").v_obj, &list, 1, &to_array), 0);
  cr_expect_eq(to_array.type_index, kTVMFFIArray, "a list did not convert to an array");
  core_release(&to_array);
  core_release(&list);
}

/* RTY-009: a C string that is a NULL pointer is refused, not read. */
Test(reflected_types, RTY_009_convert_null_c_string) {
  TVMFFIAny null_text = core_none(), text = core_none();
  null_text.type_index = kTVMFFIRawStr; /* v_c_str NULL */
  cr_expect_eq(API(TVMFFIFunctionCall)(convert_fn("ffi.String").v_obj, &null_text, 1, &text), -1,
               "a NULL C string converted to a str");
  EXPECT_RAISED(.kind = "TypeError", .says = {"Cannot cast"});
}

/* RTY-009: a byte array whose data is NULL is refused unless it is empty
 * (then it is b""), and so is a NULL byte-array pointer: nothing is read. */
Test(reflected_types, RTY_009_convert_null_byte_array) {
  TVMFFIByteArray empty = {NULL, 0}, hollow = {NULL, 3};
  TVMFFIAny view = core_none(), bytes = core_none();
  view.type_index = kTVMFFIByteArrayPtr;
  view.v_ptr = &empty;
  conf_expect_ok(API(TVMFFIFunctionCall)(convert_fn("ffi.Bytes").v_obj, &view, 1, &bytes),
                 "ffi.Bytes's __ffi_convert__ of an empty byte array");
  cr_expect_eq(core_str_bytes(&bytes).size, 0);
  core_release(&bytes);
  view.v_ptr = &hollow;
  cr_expect_eq(API(TVMFFIFunctionCall)(convert_fn("ffi.Bytes").v_obj, &view, 1, &bytes), -1,
               "3 bytes at NULL converted to bytes");
  EXPECT_RAISED(.kind = "TypeError", .says = {"Cannot cast"});
  view.v_ptr = NULL;
  cr_expect_eq(API(TVMFFIFunctionCall)(convert_fn("ffi.Bytes").v_obj, &view, 1, &bytes), -1,
               "a NULL byte-array pointer converted to bytes");
  EXPECT_RAISED(.kind = "TypeError", .says = {"Cannot cast"});
}

static TVMFFIFieldGetter getter_for(int64_t type_index) {
  TVMFFIAny ti = core_int(type_index), g = host_ok("ffi.MakeFieldGetter", &ti, 1);
  return (TVMFFIFieldGetter)(intptr_t)host_int_of(g, "getter");
}

/* A getter for an object field reads one pointer: the object, or None. */
static void expect_object_getter(int64_t type_index) {
  TVMFFIFieldGetter getter = getter_for(type_index);
  TVMFFIAny arr = host_ok("ffi.Array", NULL, 0), v = core_none();
  void* field[2] = {arr.v_obj, (void*)(uintptr_t)0x5a5a5a5a};
  cr_assert_eq(getter(field, &v), 0);
  cr_expect(v.type_index == kTVMFFIArray && v.v_obj == arr.v_obj,
            "getter of type index %lld read type index %d", (long long)type_index, v.type_index);
  core_release(&v);
  field[0] = NULL;
  cr_assert_eq(getter(field, &v), 0);
  cr_expect_eq(v.type_index, kTVMFFINone, "a NULL object field read as type index %d",
               v.type_index);
  core_release(&arr);
}

/* A getter for an Any field reads the whole value. */
static void expect_any_getter(int64_t type_index) {
  TVMFFIFieldGetter getter = getter_for(type_index);
  TVMFFIAny field = core_int(41), v = core_none();
  cr_assert_eq(getter(&field, &v), 0);
  cr_expect(v.type_index == kTVMFFIInt && v.v_int64 == 41,
            "getter of type index %lld read type index %d", (long long)type_index, v.type_index);
}

/* RTY-007: the storage pieces of Python-defined classes: a getter address
 * for an int field, and `__ffi_new__` / `__ffi_shallow_copy__` for a type
 * given its total size. */
Test(reflected_types, RTY_007_py_class_storage) {
  TVMFFIAny ti = core_int(kTVMFFIInt), g = host_ok("ffi.MakeFieldGetter", &ti, 1);
  TVMFFIFieldGetter getter = (TVMFFIFieldGetter)(intptr_t)host_int_of(g, "getter");
  int64_t field = 77;
  TVMFFIAny v = core_none();
  cr_assert_eq(getter(&field, &v), 0);
  cr_expect(v.type_index == kTVMFFIInt && v.v_int64 == 77);
  expect_object_getter(kTVMFFIObject);
  expect_object_getter(kTVMFFIStr);
  expect_any_getter(-1); /* Any */
  expect_any_getter(kTVMFFINone);
  TVMFFIAny raw_str = core_int(kTVMFFIRawStr), none = core_none();
  cr_expect_eq(host_call("ffi.MakeFieldGetter", &raw_str, 1, &none), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"Unsupported field type index for getter: 8"});
  TVMFFIByteArray key = {"conformance.PyLike", 18};
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 1, 0, 1, kTVMFFIObject);
  TVMFFIFieldInfo f;
  memset(&f, 0, sizeof f);
  f.name = (TVMFFIByteArray){"n", 1};
  f.size = 8;
  f.alignment = 8;
  f.offset = 24;
  f.getter = getter;
  f.setter = (void*)host_set_i64;
  f.field_static_type_index = kTVMFFIInt;
  cr_assert_eq(API(TVMFFITypeRegisterField)(index, &f), 0);
  f.name = (TVMFFIByteArray){"m", 1};
  f.offset = 32;
  cr_assert_eq(API(TVMFFITypeRegisterField)(index, &f), 0);
  TVMFFIAny args[2] = {core_int(index), core_int(40)};
  host_ok("ffi._PyClassRegisterTypeAttrColumns", args, 2);
  TVMFFIByteArray new_name = {"__ffi_new__", 11}, copy_name = {"__ffi_shallow_copy__", 20};
  const TVMFFITypeAttrColumn* nc = API(TVMFFIGetTypeAttrColumn)(&new_name);
  const TVMFFITypeAttrColumn* cc = API(TVMFFIGetTypeAttrColumn)(&copy_name);
  TVMFFIAny made = core_none(), copied = core_none();
  cr_assert_eq(API(TVMFFIFunctionCall)(nc->data[index - nc->begin_index].v_obj, NULL, 0, &made), 0);
  cr_assert_eq(made.type_index, index);
  int64_t* n = (int64_t*)((char*)made.v_obj + 24);
  cr_expect_eq(*n, 0, "a new object's field is not zero");
  /* Plain ints whose bytes, read as a TVMFFIAny, would name an object. */
  n[0] = kTVMFFIStaticObjectBegin + 136;
  n[1] = 8;
  cr_assert_eq(API(TVMFFIFunctionCall)(cc->data[index - cc->begin_index].v_obj, &made, 1, &copied),
               0);
  cr_expect_neq(copied.v_obj, made.v_obj);
  cr_expect_eq(*(int64_t*)((char*)copied.v_obj + 24), kTVMFFIStaticObjectBegin + 136);
  cr_expect_eq(*(int64_t*)((char*)copied.v_obj + 32), 8);
  core_release(&made);
  core_release(&copied);
}

/* RTY-007: getters of the plain field kinds read the field's bytes as a
 * value of that kind: a double, a one-byte bool, an opaque pointer (NULL
 * too), a dtype, a device. */
Test(reflected_types, RTY_007_plain_field_getters) {
  TVMFFIAny v = core_none();
  double d = -2.5;
  cr_assert_eq(getter_for(kTVMFFIFloat)(&d, &v), 0);
  cr_expect(v.type_index == kTVMFFIFloat && v.v_float64 == -2.5, "float field read as %d",
            v.type_index);
  unsigned char flags[2] = {0, 1};
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(getter_for(kTVMFFIBool)(&flags[i], &v), 0);
    cr_expect(v.type_index == kTVMFFIBool && v.v_int64 == (i != 0), "bool byte %d read as %d/%lld",
              i, v.type_index, (long long)v.v_int64);
  }
  void* ptrs[2] = {&d, NULL};
  cr_assert_eq(getter_for(kTVMFFIOpaquePtr)(&ptrs[0], &v), 0);
  cr_expect(v.type_index == kTVMFFIOpaquePtr && v.v_ptr == &d, "pointer field read as %d",
            v.type_index);
  cr_assert_eq(getter_for(kTVMFFIOpaquePtr)(&ptrs[1], &v), 0);
  cr_expect(v.type_index == kTVMFFIOpaquePtr && v.v_ptr == NULL, "a NULL pointer field read as %d",
            v.type_index);
  DLDataType dt = {kDLFloat, 16, 2};
  cr_assert_eq(getter_for(kTVMFFIDataType)(&dt, &v), 0);
  cr_expect(v.type_index == kTVMFFIDataType && v.v_dtype.code == kDLFloat && v.v_dtype.bits == 16 &&
                v.v_dtype.lanes == 2,
            "dtype field read as %d", v.type_index);
  DLDevice dev = {kDLCUDA, 3};
  cr_assert_eq(getter_for(kTVMFFIDevice)(&dev, &v), 0);
  cr_expect(v.type_index == kTVMFFIDevice && v.v_device.device_type == kDLCUDA &&
                v.v_device.device_id == 3,
            "device field read as %d", v.type_index);
}

/* Calls the type attribute `attr` of type_index with n arguments: its
 * return code, the result in *out. */
static int call_attr(const char* attr, int32_t type_index, TVMFFIAny* args, int n, TVMFFIAny* out) {
  TVMFFIByteArray name = {attr, strlen(attr)};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&name);
  cr_assert_not_null(col, "no %s column", attr);
  *out = core_none();
  return API(TVMFFIFunctionCall)(col->data[type_index - col->begin_index].v_obj, args, n, out);
}

/* RTY-007: `__ffi_shallow_copy__` gives the copy a reference of its own to
 * what object and Any fields hold, an object made by `__ffi_new__` gives
 * its fields' references back when it goes, and both refuse arguments
 * they do not take. */
Test(reflected_types, RTY_007_py_class_references) {
  TVMFFIByteArray key = {"conformance.PyRefs", 18};
  int32_t index = API(TVMFFITypeGetOrAllocIndex)(&key, -1, 1, 0, 1, kTVMFFIObject);
  static const char* const names[] = {"o", "a"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIFieldInfo f;
    memset(&f, 0, sizeof f);
    f.name = (TVMFFIByteArray){names[i], 1};
    f.size = i ? 16 : 8;
    f.alignment = 8;
    f.offset = i ? 32 : 24;
    f.getter = getter_for(i ? -1 : kTVMFFIObject);
    f.field_static_type_index = i ? -1 : kTVMFFIObject;
    cr_assert_eq(API(TVMFFITypeRegisterField)(index, &f), 0);
  }
  TVMFFIAny args[2] = {core_int(index), core_int(48)}, made, copied, extra = core_int(1);
  host_ok("ffi._PyClassRegisterTypeAttrColumns", args, 2);
  conf_expect_ok(call_attr("__ffi_new__", index, NULL, 0, &made), "__ffi_new__()");
  TVMFFIAny held_o = host_ok("ffi.Array", NULL, 0), held_a = host_ok("ffi.List", NULL, 0);
  uint32_t base_o = core_strong(held_o.v_obj), base_a = core_strong(held_a.v_obj);
  char* fields = (char*)made.v_obj;
  API(TVMFFIObjectIncRef)(held_o.v_obj);
  API(TVMFFIObjectIncRef)(held_a.v_obj);
  memcpy(fields + 24, &held_o.v_obj, sizeof(void*));
  memcpy(fields + 32, &held_a, sizeof held_a);
  conf_expect_ok(call_attr("__ffi_shallow_copy__", index, &made, 1, &copied),
                 "__ffi_shallow_copy__");
  cr_expect_eq(core_strong(held_o.v_obj), base_o + 2, "the copy's object field holds no reference");
  cr_expect_eq(core_strong(held_a.v_obj), base_a + 2, "the copy's Any field holds no reference");
  core_release(&copied);
  cr_expect_eq(core_strong(held_o.v_obj), base_o + 1);
  cr_expect_eq(core_strong(held_a.v_obj), base_a + 1);
  core_release(&made);
  cr_expect_eq(core_strong(held_o.v_obj), base_o, "the object field's reference was kept");
  cr_expect_eq(core_strong(held_a.v_obj), base_a, "the Any field's reference was kept");
  TVMFFIAny out;
  cr_expect_eq(call_attr("__ffi_new__", index, &extra, 1, &out), -1, "__ffi_new__(1) accepted");
  EXPECT_RAISED(.kind = "TypeError", .says = {"xpected 0"});
  cr_expect_eq(call_attr("__ffi_shallow_copy__", index, NULL, 0, &out), -1,
               "__ffi_shallow_copy__() accepted");
  EXPECT_RAISED(.kind = NULL);
  core_release(&held_o);
  core_release(&held_a);
}

/* ffi.BigInt's entry in the type attribute column `name` (None if none). */
static TVMFFIAny big_attr(const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  const TVMFFITypeAttrColumn* col = API(TVMFFIGetTypeAttrColumn)(&n);
  int32_t off = col ? kTVMFFIBigInt - col->begin_index : -1;
  return off >= 0 && off < col->size ? col->data[off] : core_none();
}

static TVMFFIAny big_of(int64_t low, int64_t high) {
  int64_t words[2] = {low, high};
  TVMFFIByteArray bytes = {(const char*)words, sizeof words};
  TVMFFIAny v = core_none();
  cr_assert_eq(API(TVMFFIBigIntFromByteArray)(&bytes, &v), 0);
  return v;
}

/* RTY-008: ffi.BigInt has a `__ffi_hash__` Function (value, recursion) ->
 * int, alike for equal values and unlike for these unequal ones; it and
 * any `__any_hash__` / `__any_equal__` entry that is a Function refuse a
 * value that is not a big int with a TypeError. */
Test(reflected_types, RTY_008_big_int_attrs) {
  TVMFFIAny hash = big_attr("__ffi_hash__");
  cr_assert_eq(hash.type_index, kTVMFFIFunction, "ffi.BigInt has no __ffi_hash__ Function");
  TVMFFIAny a = big_of(5, 1), b = big_of(5, 1), c = big_of(6, 1);
  TVMFFIObjectHandle rec = core_global("ffi.RecursiveHash", 0);
  int64_t h[3];
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny args[2] = {i == 0 ? a : i == 1 ? b : c, core_obj(rec)}, out = core_none();
    conf_expect_ok(API(TVMFFIFunctionCall)(hash.v_obj, args, 2, &out), "__ffi_hash__");
    h[i] = host_int_of(out, "__ffi_hash__");
  }
  cr_expect_eq(h[0], h[1], "equal big ints hash unlike");
  cr_expect_neq(h[0], h[2], "unequal big ints hash alike");
  static const char* const hooks[] = {"__ffi_hash__", "__any_hash__", "__any_equal__"};
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny f = big_attr(hooks[i]);
    if (f.type_index != kTVMFFIFunction) continue; /* upstream: a native hook, not a Function */
    TVMFFIAny args[2] = {core_int(1), core_int(1)}, out = core_none();
    cr_expect_eq(API(TVMFFIFunctionCall)(f.v_obj, args,
                                         i == 0   ? 2
                                         : i == 1 ? 1
                                                  : 2,
                                         &out),
                 -1, "%s of an int", hooks[i]);
    EXPECT_RAISED(.kind = "TypeError");
    cr_expect_eq(API(TVMFFIFunctionCall)(f.v_obj, args, 0, &out), -1, "%s of nothing", hooks[i]);
    EXPECT_RAISED(.kind = "TypeError");
  }
  API(TVMFFIObjectDecRef)(rec);
  for (TVMFFIAny *v = (TVMFFIAny[]){a, b, c}, *end = v + 3; v < end; ++v) core_release(v);
}
