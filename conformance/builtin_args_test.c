/* Clauses FN-123 to FN-126, ERR-079, ERR-080 and ARR-010 to ARR-013 of
 * spec/functions.md, spec/errors.md and spec/containers.md: how the
 * runtime's own global functions (ffi.Array*, ffi.Module*) and C entry
 * points take and refuse their arguments. The
 * messages are checked for what any implementation says, not for one
 * wording: the function's name, the argument's position as `#i`, and the
 * expected type after the function's name (upstream puts the whole
 * signature there, the reference the one type). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc_fail.h"
#include "core_support.h"

typedef struct {
  char kind[64];
  char message[1024];
} ArgError;

static ArgError arg_err;

/* Moves the raised error into arg_err (both empty when none). */
static void take_error(void) {
  memset(&arg_err, 0, sizeof arg_err);
  TVMFFIObjectHandle err = NULL;
  API(TVMFFIErrorMoveFromRaised)(&err);
  if (err == NULL) return;
  const TVMFFIErrorCell* cell = conf_error_cell(err);
  size_t k = cell->kind.size < sizeof arg_err.kind ? cell->kind.size : sizeof arg_err.kind - 1;
  size_t m =
      cell->message.size < sizeof arg_err.message ? cell->message.size : sizeof arg_err.message - 1;
  memcpy(arg_err.kind, cell->kind.data, k);
  memcpy(arg_err.message, cell->message.data, m);
  API(TVMFFIObjectDecRef)(err);
}

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* `word` in `text` as a whole word (ffi.Array is not found inside
 * ffi.ArraySize, #1 not inside #12), from `from` on; NULL when absent. */
static const char* find_word(const char* text, const char* from, const char* word) {
  size_t n = strlen(word);
  for (const char* at = strstr(from, word); at != NULL; at = strstr(at + 1, word)) {
    int starts = at == text || !word_char(at[-1]) || !word_char(word[0]);
    int ends = !word_char(at[n]) && !(word[n - 1] != '.' && isdigit((unsigned char)at[n]));
    if (starts && ends) return at;
  }
  return NULL;
}

static TVMFFIObjectHandle global(const char* name) { return core_global(name, 0); }

static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObjectHandle fn = global(name);
  memset(result, 0, sizeof *result);
  int rc = API(TVMFFIFunctionCall)(fn, args, n, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* Calls `fn` expecting the refusal of argument `pos`: -1, TypeError, a
 * message naming fn, `#pos`, and `type` after fn's name. */
static void expect_refused(const char* fn, TVMFFIAny* args, int32_t n, int pos, const char* type) {
  TVMFFIAny out;
  int rc = call(fn, args, n, &out);
  if (rc == 0) core_release(&out);
  take_error();
  cr_expect_eq(rc, -1, "%s: argument #%d of the wrong kind: returned %d", fn, pos, rc);
  cr_expect_str_eq(arg_err.kind, "TypeError", "%s #%d: kind %s (message: %s)", fn, pos,
                   arg_err.kind, arg_err.message);
  const char* name = find_word(arg_err.message, arg_err.message, fn);
  char hash[16];
  snprintf(hash, sizeof hash, "#%d", pos);
  cr_expect(name != NULL, "%s #%d: the message does not name the function: %s", fn, pos,
            arg_err.message);
  cr_expect(find_word(arg_err.message, arg_err.message, hash) != NULL,
            "%s: the message does not give the position %s: %s", fn, hash, arg_err.message);
  cr_expect(name != NULL && find_word(arg_err.message, name + strlen(fn), type) != NULL,
            "%s #%d: the message does not name the expected type %s after the function: %s", fn,
            pos, type, arg_err.message);
}

static TVMFFIAny value_of(int32_t type_index, int64_t bits) {
  TVMFFIAny v = core_int(bits);
  v.type_index = type_index;
  return v;
}

static TVMFFIAny none(void) { return value_of(kTVMFFINone, 0); }
static TVMFFIAny boolean(int b) { return value_of(kTVMFFIBool, b); }
static TVMFFIAny float_of(double d) {
  TVMFFIAny v = none();
  v.type_index = kTVMFFIFloat;
  v.v_float64 = d;
  return v;
}

static TVMFFIAny array_of_two(int64_t a, int64_t b) {
  TVMFFIAny args[2] = {core_int(a), core_int(b)}, arr;
  cr_assert_eq(call("ffi.Array", args, 2, &arr), 0);
  cr_assert_eq(arr.type_index, kTVMFFIArray);
  return arr;
}

static TVMFFIAny system_lib(void) {
  TVMFFIAny mod;
  cr_assert_eq(call("ffi.SystemLib", NULL, 0, &mod), 0);
  take_error();
  cr_assert_eq(mod.type_index, kTVMFFIModule, "ffi.SystemLib gave type index %d (%s)",
               mod.type_index, arg_err.message);
  return mod;
}

/* FN-123: an argument of the wrong kind is refused with a TypeError naming
 * the function, the argument's position and the expected type. */
TEST(builtin_args, FN_123_wrong_kind_names_function_position_and_type) {
  TVMFFIAny arr = array_of_two(10, 20), mod = system_lib(), q[3];
  TVMFFIAny wrong_objects[] = {core_int(3), float_of(1.5), none(), core_c_str("x"), mod};
  for (size_t i = 0; i < sizeof wrong_objects / sizeof wrong_objects[0]; ++i) {
    q[0] = wrong_objects[i];
    expect_refused("ffi.ArraySize", q, 1, 0, "ffi.Array");
    q[1] = core_int(0);
    expect_refused("ffi.ArrayGetItem", q, 2, 0, "ffi.Array");
  }
  TVMFFIAny wrong_ints[] = {float_of(1.0), core_c_str("1"), none(), mod};
  for (size_t i = 0; i < sizeof wrong_ints / sizeof wrong_ints[0]; ++i) {
    q[0] = arr;
    q[1] = wrong_ints[i];
    expect_refused("ffi.ArrayGetItem", q, 2, 1, "int");
  }
  static const char* const lookups[] = {"ffi.ModuleGetFunction", "ffi.ModuleImplementsFunction",
                                        "ffi.ModuleGetFunctionMetadata",
                                        "ffi.ModuleGetFunctionDoc"};
  for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; ++i) {
    TVMFFIAny bad_mod[3] = {arr, core_c_str("f"), boolean(0)};
    expect_refused(lookups[i], bad_mod, 3, 0, "ffi.Module");
    TVMFFIAny bad_name[3] = {mod, core_int(2), boolean(0)};
    expect_refused(lookups[i], bad_name, 3, 1, "str");
    bad_name[1] = boolean(1);
    expect_refused(lookups[i], bad_name, 3, 1, "str");
    bad_name[1] = arr;
    expect_refused(lookups[i], bad_name, 3, 1, "str");
    bad_name[1] = mod;
    expect_refused(lookups[i], bad_name, 3, 1, "str");
    TVMFFIAny bad_flag[3] = {mod, core_c_str("f"), core_c_str("yes")};
    expect_refused(lookups[i], bad_flag, 3, 2, "bool");
    bad_flag[2] = float_of(1.0);
    expect_refused(lookups[i], bad_flag, 3, 2, "bool");
  }
  static const char* const one_module[] = {"ffi.ModuleGetKind", "ffi.ModuleGetPropertyMask",
                                           "ffi.ModuleGetWriteFormats", "ffi.ModuleClearImports"};
  for (size_t i = 0; i < sizeof one_module / sizeof one_module[0]; ++i) {
    q[0] = core_int(2);
    expect_refused(one_module[i], q, 1, 0, "ffi.Module");
  }
  TVMFFIAny src[2] = {mod, core_int(2)};
  expect_refused("ffi.ModuleInspectSource", src, 2, 1, "str");
  TVMFFIAny write[3] = {mod, core_int(2), core_c_str("so")};
  expect_refused("ffi.ModuleWriteToFile", write, 3, 1, "str");
  write[1] = core_c_str("/nonexistent/conf_fn123.so");
  write[2] = core_int(3);
  expect_refused("ffi.ModuleWriteToFile", write, 3, 2, "str");
  TVMFFIAny imp[2] = {mod, core_int(2)};
  expect_refused("ffi.ModuleImportModule", imp, 2, 1, "ffi.Module");
  imp[0] = core_int(2);
  imp[1] = mod;
  expect_refused("ffi.ModuleImportModule", imp, 2, 0, "ffi.Module");
  q[0] = none();
  expect_refused("ffi.ModuleLoadFromFile", q, 1, 0, "str");
  q[0] = arr;
  expect_refused("ffi.ModuleLoadFromFile", q, 1, 0, "str");
  TVMFFIAny load[2] = {core_int(3), core_c_str("so")};
  expect_refused("ffi.Module.load_from_file.so", load, 2, 0, "str");
  load[0] = core_c_str("/nonexistent/conf_fn123.so");
  load[1] = core_int(3);
  expect_refused("ffi.Module.load_from_file.so", load, 2, 1, "str");
  core_release(&mod);
  core_release(&arr);
}

/* FN-124: a wrong argument count is a TypeError naming the function, then
 * the count expected, then the count given. */
static void expect_count_refused(const char* fn, TVMFFIAny* args, int32_t n, int want) {
  TVMFFIAny out;
  int rc = call(fn, args, n, &out);
  if (rc == 0) core_release(&out);
  take_error();
  cr_expect_eq(rc, -1, "%s with %d arguments: returned %d", fn, n, rc);
  cr_expect_str_eq(arg_err.kind, "TypeError", "%s with %d arguments: kind %s (message: %s)", fn, n,
                   arg_err.kind, arg_err.message);
  char lower[sizeof arg_err.message], expected[32], got[32];
  for (size_t i = 0; i < sizeof lower; ++i)
    lower[i] = (char)tolower((unsigned char)arg_err.message[i]);
  snprintf(expected, sizeof expected, "expected %d", want);
  snprintf(got, sizeof got, "got %d", (int)n);
  const char* name = find_word(arg_err.message, arg_err.message, fn);
  const char* at =
      name ? find_word(lower, lower + (name - arg_err.message) + strlen(fn), expected) : NULL;
  cr_expect(name != NULL && at != NULL && find_word(lower, at + strlen(expected), got) != NULL,
            "%s with %d arguments: the message does not name the function, then \"%s\", then "
            "\"%s\": %s",
            fn, n, expected, got, arg_err.message);
}

TEST(builtin_args, FN_124_wrong_count_names_function_and_counts) {
  TVMFFIAny arr = array_of_two(1, 2), mod = system_lib();
  TVMFFIAny q[4] = {arr, core_int(0), core_int(0), core_int(0)};
  expect_count_refused("ffi.ArraySize", q, 0, 1);
  expect_count_refused("ffi.ArraySize", q, 2, 1);
  expect_count_refused("ffi.ArrayGetItem", q, 1, 2);
  expect_count_refused("ffi.ArrayGetItem", q, 3, 2);
  TVMFFIAny m[4] = {mod, core_c_str("f"), boolean(0), core_int(0)};
  expect_count_refused("ffi.ModuleGetFunction", m, 2, 3);
  expect_count_refused("ffi.ModuleGetFunction", m, 4, 3);
  expect_count_refused("ffi.ModuleImplementsFunction", m, 1, 3);
  expect_count_refused("ffi.ModuleGetKind", m, 0, 1);
  expect_count_refused("ffi.ModuleGetKind", m, 2, 1);
  expect_count_refused("ffi.ModuleInspectSource", m, 3, 2);
  expect_count_refused("ffi.ModuleWriteToFile", m, 2, 3);
  expect_count_refused("ffi.ModuleImportModule", m, 1, 2);
  TVMFFIAny s[2] = {core_c_str("/nonexistent/conf_fn124.so"), core_c_str("so")};
  expect_count_refused("ffi.ModuleLoadFromFile", s, 2, 1);
  expect_count_refused("ffi.ModuleLoadFromFile", s, 0, 1);
  expect_count_refused("ffi.Module.load_from_file.so", s, 1, 2);
  core_release(&mod);
  core_release(&arr);
}

static int answer_41(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  *result = core_int(41);
  return 0;
}

/* ffi.ModuleImplementsFunction(mod, name, query_imports) as 0 or 1; -1
 * when refused. */
static int implements(TVMFFIAny mod, TVMFFIAny name, TVMFFIAny flag) {
  TVMFFIAny q[3] = {mod, name, flag}, out;
  if (call("ffi.ModuleImplementsFunction", q, 3, &out) != 0) {
    take_error();
    cr_expect_fail("name of type index %d refused: %s: %s", name.type_index, arg_err.kind,
                   arg_err.message);
    return -1;
  }
  cr_expect_eq(out.type_index, kTVMFFIBool, "result type index %d", out.type_index);
  return out.v_int64 != 0;
}

static TVMFFIAny small_str(const char* s) {
  TVMFFIAny v = none();
  size_t n = strlen(s);
  cr_assert_lt(n, sizeof v.v_bytes);
  v.type_index = kTVMFFISmallStr;
  v.small_str_len = (uint32_t)n;
  memcpy(v.v_bytes, s, n);
  return v;
}

/* FN-125: a bool is taken where an int is, an int where a bool is, and a
 * str in each of its forms (const char*, small string, heap string) with
 * its exact bytes. */
TEST(builtin_args, FN_125_accepted_argument_kinds) {
  TVMFFIAny arr = array_of_two(10, 20), out;
  for (int b = 0; b <= 1; ++b) {
    TVMFFIAny q[2] = {arr, boolean(b)};
    int rc = call("ffi.ArrayGetItem", q, 2, &out);
    take_error();
    cr_expect_eq(rc, 0, "ffi.ArrayGetItem with index %s refused: %s", b ? "true" : "false",
                 arg_err.message);
    if (rc == 0) {
      cr_expect(out.type_index == kTVMFFIInt && out.v_int64 == (b ? 20 : 10),
                "index %s gave type %d value %lld", b ? "true" : "false", out.type_index,
                (long long)out.v_int64);
    }
  }
  core_release(&arr);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_fa_pr", (void*)answer_41), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_fn125_a_longer_name",
                                                        (void*)answer_41),
               0);
  TVMFFIAny mod = system_lib();
  static const char* const long_name = "conf_fn125_a_longer_name";
  TVMFFIByteArray bytes = {long_name, strlen(long_name)};
  TVMFFIAny heap;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &heap), 0);
  cr_assert_eq(heap.type_index, kTVMFFIStr, "a %zu-byte string is type index %d", bytes.size,
               heap.type_index);
  TVMFFIAny flags[] = {boolean(0), boolean(1), core_int(0), core_int(7)};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i) {
    cr_expect_eq(implements(mod, core_c_str("fa_pr"), flags[i]), 1, "const char* name, flag %zu",
                 i);
    cr_expect_eq(implements(mod, small_str("fa_pr"), flags[i]), 1, "small string name, flag %zu",
                 i);
    cr_expect_eq(implements(mod, heap, flags[i]), 1, "heap string name, flag %zu", i);
    cr_expect_eq(implements(mod, core_c_str(long_name), flags[i]), 1, "long name, flag %zu", i);
    cr_expect_eq(implements(mod, small_str("fa_p"), flags[i]), 0, "a prefix, flag %zu", i);
    cr_expect_eq(implements(mod, small_str("fa_pr_"), flags[i]), 0, "a longer one, flag %zu", i);
    cr_expect_eq(implements(mod, core_c_str("conf_fn125_a_longer_nam"), flags[i]), 0,
                 "a prefix of the long name, flag %zu", i);
  }
  /* query_imports read as a bool from a bool or an int: a function only an
   * import has is found exactly when it is true. */
  cr_assert_eq(
      API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf125b_only_b", (void*)answer_41), 0);
  TVMFFIAny prefix = core_c_str("conf125b_"), lib_b;
  cr_assert_eq(call("ffi.SystemLib", &prefix, 1, &lib_b), 0);
  cr_assert_eq(lib_b.type_index, kTVMFFIModule);
  TVMFFIAny wire[2] = {mod, lib_b};
  cr_assert_eq(call("ffi.ModuleImportModule", wire, 2, &out), 0);
  core_release(&out);
  TVMFFIAny import_flags[] = {boolean(0), boolean(1), core_int(0), core_int(7), core_int(-1)};
  static const int found[] = {0, 1, 0, 1, 1};
  for (size_t i = 0; i < sizeof found / sizeof found[0]; ++i) {
    cr_expect_eq(implements(mod, core_c_str("only_b"), import_flags[i]), found[i],
                 "query_imports %s %lld",
                 import_flags[i].type_index == kTVMFFIBool ? "bool" : "int",
                 (long long)import_flags[i].v_int64);
  }
  core_release(&lib_b);
  TVMFFIAny q[3] = {mod, small_str("fa_pr"), core_int(1)};
  cr_assert_eq(call("ffi.ModuleGetFunction", q, 3, &out), 0);
  cr_assert_eq(out.type_index, kTVMFFIFunction, "the function found is type index %d",
               out.type_index);
  TVMFFIAny r;
  memset(&r, 0, sizeof r);
  cr_expect_eq(API(TVMFFIFunctionCall)(out.v_obj, NULL, 0, &r), 0);
  cr_expect_eq(r.v_int64, 41);
  core_release(&out);
  core_release(&heap);
  core_release(&mod);
}

/* FN-126: an object-tagged argument holding no object is refused like any
 * other wrong kind, not dereferenced. */
TEST(builtin_args, FN_126_null_object_argument_refused) {
  HOSTILE_INPUT("upstream dereferences the NULL object");
  TVMFFIAny q[3] = {value_of(kTVMFFIArray, 0), core_int(0), boolean(0)};
  expect_refused("ffi.ArraySize", q, 1, 0, "ffi.Array");
  expect_refused("ffi.ArrayGetItem", q, 2, 0, "ffi.Array");
  q[0] = value_of(kTVMFFIModule, 0);
  q[1] = core_c_str("f");
  expect_refused("ffi.ModuleGetFunction", q, 3, 0, "ffi.Module");
  expect_refused("ffi.ModuleGetKind", q, 1, 0, "ffi.Module");
  TVMFFIAny mod = system_lib();
  TVMFFIAny named[3] = {mod, value_of(kTVMFFIStr, 0), boolean(0)};
  expect_refused("ffi.ModuleGetFunction", named, 3, 1, "str");
  named[1] = value_of(kTVMFFIRawStr, 0);
  expect_refused("ffi.ModuleGetFunction", named, 3, 1, "str");
  TVMFFIAny load[1] = {value_of(kTVMFFIStr, 0)};
  expect_refused("ffi.ModuleLoadFromFile", load, 1, 0, "str");
  load[0] = value_of(kTVMFFIRawStr, 0);
  expect_refused("ffi.ModuleLoadFromFile", load, 1, 0, "str");
  core_release(&mod);
}

/* Takes the raised error and checks its kind, and that its message names
 * `api` (the whole name), after it `param` (a whole word), and after that
 * says `reason` (case aside). */
static void expect_named_in_order(const char* kind, const char* api, const char* param,
                                  const char* reason) {
  take_error();
  cr_expect_str_eq(arg_err.kind, kind, "%s(%s): kind %s (message: %s)", api, param, arg_err.kind,
                   arg_err.message);
  char lower[sizeof arg_err.message], want[64];
  for (size_t i = 0; i < sizeof lower; ++i)
    lower[i] = (char)tolower((unsigned char)arg_err.message[i]);
  size_t n = strlen(reason);
  cr_assert_lt(n, sizeof want);
  for (size_t i = 0; i <= n; ++i) want[i] = (char)tolower((unsigned char)reason[i]);
  const char* at = find_word(arg_err.message, arg_err.message, api);
  const char* p = at ? find_word(arg_err.message, at + strlen(api), param) : NULL;
  const char* r = p ? strstr(lower + (p - arg_err.message) + strlen(param), want) : NULL;
  cr_expect(r != NULL, "%s: the message does not name the function, then %s, then say \"%s\": %s",
            api, param, reason, arg_err.message);
}

static int no_op(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  return 0;
}

/* ERR-079: a refused C parameter is named after the function, and the
 * reason comes after the parameter. */
TEST(builtin_args, ERR_079_refusal_names_function_then_parameter_then_reason) {
  HOSTILE_INPUT("upstream dereferences NULL and foreign handles unchecked");
  TVMFFIAny view = core_int(1), out = core_int(5);
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(NULL, &out), -1);
  expect_named_in_order("ValueError", "TVMFFIAnyViewToOwnedAny", "any_view", "null");
  cr_expect_eq(API(TVMFFIAnyViewToOwnedAny)(&view, NULL), -1);
  expect_named_in_order("ValueError", "TVMFFIAnyViewToOwnedAny", "out", "null");
  TVMFFIObjectHandle fn = (TVMFFIObjectHandle)1;
  cr_expect_eq(API(TVMFFIFunctionCreate)(NULL, NULL, NULL, &fn), -1);
  expect_named_in_order("ValueError", "TVMFFIFunctionCreate", "safe_call", "null");
  cr_expect_eq(API(TVMFFIFunctionCreate)(NULL, no_op, NULL, NULL), -1);
  expect_named_in_order("ValueError", "TVMFFIFunctionCreate", "out", "null");
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, no_op, NULL, &fn), 0);
  TVMFFIObjectHandle found = (TVMFFIObjectHandle)1;
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(fn, "x", &found), -1);
  expect_named_in_order("TypeError", "TVMFFIEnvModLookupFromImports", "library_ctx", "module");
  DLManagedTensorVersioned* versioned = NULL;
  cr_expect_eq(API(TVMFFITensorToDLPackVersioned)(fn, &versioned), -1);
  expect_named_in_order("TypeError", "TVMFFITensorToDLPackVersioned", "from", "tensor");
  DLManagedTensor* legacy = NULL;
  cr_expect_eq(API(TVMFFITensorToDLPack)(fn, &legacy), -1);
  expect_named_in_order("TypeError", "TVMFFITensorToDLPack", "from", "tensor");
  API(TVMFFIObjectDecRef)(fn);
}

/* ERR-080: TVMFFIBigIntFromByteArray names itself, then the parameter
 * refused, then why. */
TEST(builtin_args, ERR_080_bigint_refusal_in_order) {
  HOSTILE_INPUT("upstream dereferences NULL unchecked");
  TVMFFIByteArray in = {NULL, 8};
  TVMFFIAny out = core_int(5);
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(NULL, &out), -1);
  expect_named_in_order("ValueError", "TVMFFIBigIntFromByteArray", "input", "null");
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&in, NULL), -1);
  expect_named_in_order("ValueError", "TVMFFIBigIntFromByteArray", "out", "null");
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&in, &out), -1);
  expect_named_in_order("ValueError", "TVMFFIBigIntFromByteArray", "input->data", "null");
  TVMFFIByteArray partial = {"12345", 5};
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&partial, &out), -1);
  expect_named_in_order("ValueError", "TVMFFIBigIntFromByteArray", "input->size", "5");
  cr_expect_eq(API(TVMFFIBigIntFromByteArray)(&partial, &out), -1);
  expect_named_in_order("ValueError", "TVMFFIBigIntFromByteArray", "input->size", "64-bit words");
}

/* ARR-010: an array of 2^24 arguments is made: a runtime may bound an
 * array's size, but not below that. The arguments are zero pages (each one
 * None) that are never written. */
TEST(builtin_args, ARR_010_array_of_two_to_the_24) {
  int32_t n = (int32_t)1 << 24;
  size_t bytes = (size_t)n * sizeof(TVMFFIAny);
  TVMFFIAny* args =
      mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  cr_assert_neq(args, MAP_FAILED, "mmap of %zu bytes failed", bytes);
  TVMFFIAny arr;
  int rc = call("ffi.Array", args, n, &arr);
  munmap(args, bytes);
  take_error();
  cr_assert_eq(rc, 0, "ffi.Array of %d None arguments refused: %s: %s", n, arg_err.kind,
               arg_err.message);
  cr_assert_eq(arr.type_index, kTVMFFIArray);
  TVMFFIAny q[2] = {arr, core_int(n - 1)}, out;
  cr_expect_eq(call("ffi.ArraySize", q, 1, &out), 0);
  cr_expect(out.type_index == kTVMFFIInt && out.v_int64 == n, "size: type %d value %lld",
            out.type_index, (long long)out.v_int64);
  cr_expect_eq(call("ffi.ArrayGetItem", q, 2, &out), 0);
  cr_expect_eq(out.type_index, kTVMFFINone, "the last element is type index %d", out.type_index);
  core_release(&arr);
}

/* ARR-011: a count past any bound (INT32_MAX with one argument really
 * there) is refused with ValueError naming num_args, reading no argument. */
TEST(builtin_args, ARR_011_array_count_past_bound_refused) {
  HOSTILE_INPUT("an implementation may read INT32_MAX arguments");
  TVMFFIAny one = core_int(3), out;
  int rc = call("ffi.Array", &one, INT32_MAX, &out);
  if (rc == 0) core_release(&out);
  cr_expect_eq(rc, -1, "num_args INT32_MAX accepted");
  expect_named_in_order("ValueError", "ffi.Array", "num_args", "2147483647");
  cr_expect_eq(call("ffi.Array", &one, -1, &out), -1, "num_args -1 accepted");
  expect_named_in_order("ValueError", "ffi.Array", "num_args", "-1");
}

/* ARR-012: the IndexError of an index out of bounds says the index, and
 * after it the array's size. */
TEST(builtin_args, ARR_012_index_error_says_index_then_size) {
  TVMFFIAny args[3] = {core_int(1), core_int(2), core_int(3)}, arr, out;
  cr_assert_eq(call("ffi.Array", args, 3, &arr), 0);
  static const int64_t bad[] = {7, -1, 1LL << 40};
  static const char* const bad_text[] = {"7", "-1", "1099511627776"};
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny q[2] = {arr, core_int(bad[i])};
    cr_expect_eq(call("ffi.ArrayGetItem", q, 2, &out), -1, "index %s accepted", bad_text[i]);
    take_error();
    cr_expect_str_eq(arg_err.kind, "IndexError", "index %s: kind %s", bad_text[i], arg_err.kind);
    const char* at = find_word(arg_err.message, arg_err.message, bad_text[i]);
    cr_expect(at != NULL && find_word(arg_err.message, at + strlen(bad_text[i]), "3") != NULL,
              "the message does not say the index %s, then the size 3: %s", bad_text[i],
              arg_err.message);
  }
  core_release(&arr);
}

/* ARR-013: with any one allocation failing, or every one from some point
 * on, "ffi.Array" makes the whole array (0) or none (-1, MemoryError), giving
 * back the references it took, and works right after. */
TEST(builtin_args, ARR_013_array_allocation_failure) {
  conf_alloc_require();
  static const char* const long_text = "an element long enough to live on the heap";
  TVMFFIByteArray bytes = {"a shared heap string element", 28};
  TVMFFIAny shared;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &shared), 0);
  TVMFFIAny args[4] = {core_int(7), core_c_str(long_text), core_obj(shared.v_obj),
                       core_c_str(long_text)};
  TVMFFIObjectHandle fn = global("ffi.Array");
  long points = 0;
  for (int sticky = 0; sticky <= 1; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIAny out;
      memset(&out, 0, sizeof out);
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIFunctionCall(fn, args, 4, &out);
      conf_alloc_disarm(&w);
      if (rc == 0) {
        cr_assert_eq(out.type_index, kTVMFFIArray, "allocation %ld failed: 0 with type index %d",
                     w.n, out.type_index);
        TVMFFISeqCell cell;
        memcpy(&cell, (const char*)out.v_obj + sizeof(TVMFFIObject), sizeof cell);
        cr_assert_eq(cell.size, 4, "allocation %ld failed: size %lld", w.n, (long long)cell.size);
        const TVMFFIAny* e = cell.data;
        TVMFFIByteArray b = core_str_bytes(&e[3]);
        cr_assert(e[0].v_int64 == 7 && e[2].v_obj == shared.v_obj && b.size == strlen(long_text) &&
                      memcmp(b.data, long_text, b.size) == 0,
                  "allocation %ld failed: a wrong array", w.n);
        core_release(&out);
        core_take_raised();
      } else {
        cr_assert_eq(rc, -1, "allocation %ld failed: returned %d", w.n, rc);
        EXPECT_RAISED(.kind = "MemoryError");
      }
      cr_assert_eq(core_strong(shared.v_obj), 1u,
                   "allocation %ld failed: the shared element keeps %u references", w.n,
                   core_strong(shared.v_obj));
      cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 4, &out), 0, "right after allocation %ld",
                   w.n);
      core_release(&out);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  core_release(&shared);
  conf_alloc_done(points, "ffi.Array");
}
