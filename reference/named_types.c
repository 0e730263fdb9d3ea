/* Type keys that upstream's runtime registers and its Python package looks
 * up when it imports (it binds a class to each), for features this runtime
 * does not implement: structural keys, visitors and mutators, access paths.
 * They exist here as bare types below ffi.Object, with no fields, methods
 * or constructor, so the import succeeds and any use of them fails with a
 * Python error naming what is missing (their constructors, ffi.StructuralKey
 * and the like, are not registered global functions here). */
#include <string.h>

#include "tffi_error.h"
#include "type.h"

static const char* const tffi_named_types[] = {
    "ffi.StructuralKey",         "ffi.StructuralVisitor",     "ffi.StructuralMutator",
    "ffi.reflection.AccessStep", "ffi.reflection.AccessPath",
};

static int tffi_named_types_register(void) {
  for (size_t i = 0; i < sizeof tffi_named_types / sizeof *tffi_named_types; ++i) {
    TVMFFIByteArray key = {tffi_named_types[i], strlen(tffi_named_types[i])};
    if (TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject) < 0) return -1;
  }
  return 0;
}

__attribute__((constructor)) static void tffi_named_types_at_load(void) {
  tffi_type_on_ready(tffi_named_types_register);
}
