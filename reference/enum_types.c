/* The enum types of upstream's runtime: ffi.EnumState (the registry of one
 * enum class: its singletons in order, indices to singletons, attribute
 * columns) and ffi.Enum with its two payload kinds ffi.IntEnum and
 * ffi.StrEnum. C++ libraries built on upstream's headers make objects of
 * these types themselves (enum.h) and expect the runtime to have
 * registered them with exactly these layouts and fields; Python reads and
 * builds enum classes through the fields and EnumState's __ffi_init__. */
#include <string.h>

#include "any.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "map.h"
#include "object.h"
#include "reflect_def.h"
#include "type.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIObject* entries; /* ffi.List of the singletons */
  TVMFFIObject* indexes; /* ffi.Dict: int or str index -> singleton */
  TVMFFIObject* attrs;   /* ffi.Dict: name -> ffi.Dict singleton -> value */
} TffiEnumState;

typedef struct {
  TVMFFIObject header;
  int64_t int_index;
  TVMFFIAny str_index; /* a str */
} TffiEnum;

_Static_assert(sizeof(TffiEnumState) == 48 && sizeof(TffiEnum) == 48, "upstream's enum.h sizes");

static void tffi_enum_state_delete(void* self, int flags) {
  TffiEnumState* s = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFIObject* held[3] = {s->entries, s->indexes, s->attrs};
    for (int i = 0; i < 3; ++i)
      if (held[i]) tffi_decref(held[i]);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

static int32_t tffi_enum_state_index, tffi_enum_index;

/* An EnumState holding an empty list and two empty dicts, as upstream's
 * default constructor makes it. */
static int tffi_enum_state_create(TVMFFIObjectHandle* result) {
  *result = NULL;
  TffiEnumState* s = tffi_object_alloc(sizeof *s, tffi_enum_state_index, tffi_enum_state_delete);
  if (s == NULL) return -1;
  TVMFFIAny made;
  if (tffi_builtin_call("ffi.EnumState", "ffi.List", NULL, 0, &made) != 0) {
    tffi_decref(&s->header);
    return -1;
  }
  s->entries = made.v_obj;
  s->indexes = tffi_map_new(kTVMFFIDict, 0);
  s->attrs = s->indexes ? tffi_map_new(kTVMFFIDict, 0) : NULL;
  if (s->attrs == NULL) {
    tffi_decref(&s->header);
    return -1;
  }
  *result = &s->header;
  return 0;
}

static void tffi_enum_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong)
    tffi_any_release(&((TffiEnum*)self)->str_index);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* A blank singleton (index 0, name ""), what upstream's creator makes;
 * the enum machinery fills it in. */
static int tffi_enum_create_as(int32_t type_index, TVMFFIObjectHandle* result) {
  TffiEnum* e = tffi_object_alloc(sizeof *e, type_index, tffi_enum_delete);
  *result = e;
  if (e == NULL) return -1;
  e->str_index.type_index = kTVMFFISmallStr;
  return 0;
}

static int32_t tffi_int_enum_index, tffi_str_enum_index;
static int tffi_enum_create(TVMFFIObjectHandle* r) {
  return tffi_enum_create_as(tffi_enum_index, r);
}
static int tffi_int_enum_create(TVMFFIObjectHandle* r) {
  return tffi_enum_create_as(tffi_int_enum_index, r);
}
static int tffi_str_enum_create(TVMFFIObjectHandle* r) {
  return tffi_enum_create_as(tffi_str_enum_index, r);
}

/* EnumState's __ffi_init__: () -> a new EnumState. */
static int tffi_enum_state_init(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (num_args != 0)
    return tffi_raise(TFFI_TYPE_ERROR,
                      "ffi.EnumState.__ffi_init__: expected 0 arguments but got %d", (int)num_args);
  TVMFFIObjectHandle s;
  if (tffi_enum_state_create(&s) != 0) return -1;
  *result = tffi_any_object(s);
  return 0;
}

#define TFFI_INIT_OFF kTVMFFIFieldFlagBitMaskInitOff
#define TFFI_SEQ_IGNORE kTVMFFIFieldFlagBitMaskSEqHashIgnore
#define TFFI_OBJ_FIELD(name, off, ti, schema) \
  { name, off, 8, 8, TFFI_INIT_OFF, ti, tffi_field_get_object, tffi_field_set_object, schema }

static const TffiFieldDef tffi_enum_state_fields[] = {
    TFFI_OBJ_FIELD("entries", 24, kTVMFFIList,
                   "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"ffi.Object\"}]}"),
    TFFI_OBJ_FIELD(
        "indexes", 32, kTVMFFIObject,
        "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"Any\"},{\"type\":\"ffi.Object\"}]}"),
    TFFI_OBJ_FIELD(
        "attrs", 40, kTVMFFIObject,
        "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"ffi.String\"},{\"type\":\"ffi.Dict\","
        "\"args\":[{\"type\":\"ffi.Object\"},{\"type\":\"Any\"}]}]}"),
};

#define TFFI_INT_SCHEMA "{\"type\":\"int\"}"
#define TFFI_STR_SCHEMA "{\"type\":\"ffi.String\"}"

static const TffiFieldDef tffi_enum_fields[] = {
    {"_int_index", 24, 8, 8, TFFI_SEQ_IGNORE, kTVMFFIInt, tffi_field_get_int, tffi_field_set_int,
     TFFI_INT_SCHEMA},
    {"_str_index", 32, 16, 8, 0, -1, tffi_field_get_str, tffi_field_set_str, TFFI_STR_SCHEMA},
};

static const TffiFieldDef tffi_int_enum_fields[] = {
    {"value", 24, 8, 8, TFFI_INIT_OFF | TFFI_SEQ_IGNORE, kTVMFFIInt, tffi_field_get_int,
     tffi_field_set_int, TFFI_INT_SCHEMA},
};

static const TffiFieldDef tffi_str_enum_fields[] = {
    {"value", 32, 16, 8, TFFI_INIT_OFF | TFFI_SEQ_IGNORE, -1, tffi_field_get_str,
     tffi_field_set_str, TFFI_STR_SCHEMA},
};

#define TFFI_COUNT(a) ((int32_t)(sizeof(a) / sizeof *(a)))

static int tffi_enum_types_define(void) {
  /* Upstream registers no structural kind for the state (Unsupported). */
  TffiTypeDef state = {"ffi.EnumState",
                       kTVMFFIObject,
                       48,
                       tffi_enum_state_create,
                       kTVMFFISEqHashKindUnsupported,
                       tffi_enum_state_fields,
                       TFFI_COUNT(tffi_enum_state_fields)};
  TffiTypeDef base = {"ffi.Enum",
                      kTVMFFIObject,
                      48,
                      tffi_enum_create,
                      kTVMFFISEqHashKindUniqueInstance,
                      tffi_enum_fields,
                      TFFI_COUNT(tffi_enum_fields)};
  if ((tffi_enum_state_index = tffi_define_type(&state)) < 0 ||
      (tffi_enum_index = tffi_define_type(&base)) < 0)
    return -1;
  TffiTypeDef ints = {"ffi.IntEnum",
                      tffi_enum_index,
                      48,
                      tffi_int_enum_create,
                      kTVMFFISEqHashKindUniqueInstance,
                      tffi_int_enum_fields,
                      TFFI_COUNT(tffi_int_enum_fields)};
  TffiTypeDef strs = {"ffi.StrEnum",
                      tffi_enum_index,
                      48,
                      tffi_str_enum_create,
                      kTVMFFISEqHashKindUniqueInstance,
                      tffi_str_enum_fields,
                      TFFI_COUNT(tffi_str_enum_fields)};
  if ((tffi_int_enum_index = tffi_define_type(&ints)) < 0 ||
      (tffi_str_enum_index = tffi_define_type(&strs)) < 0)
    return -1;
  TVMFFIObject* init = tffi_function_new(NULL, tffi_enum_state_init, NULL);
  if (init == NULL) return -1;
  TVMFFIAny init_value = tffi_any_object(init);
  int rc = tffi_define_method(tffi_enum_state_index, "__ffi_init__", init, 1,
                              "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":"
                              "\"ffi.Object\"}],\"params\":[]}}") ||
           tffi_define_attr(tffi_enum_state_index, "__ffi_init__", &init_value);
  tffi_decref(init);
  return rc;
}

static int tffi_enum_types_register(void) { return tffi_enum_types_define(); }

__attribute__((constructor)) static void tffi_enum_types_at_load(void) {
  tffi_type_on_ready(tffi_enum_types_register);
}
