/* Exports no __tvm_ffi_<name> function: like xgrammar or a library built on
 * upstream's C++ registration macros, it registers what it offers with the
 * runtime when it loads (two global functions and a type). certify loads
 * it and lists them. */
#include <string.h>
#include <tvm/ffi/c_api.h>

static int answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)self, (void)args, (void)n;
  r->type_index = kTVMFFIInt;
  r->v_int64 = 42;
  return 0;
}

static void set_global(const char* name) {
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionCreate(NULL, answer, NULL, &f) != 0) return;
  TVMFFIByteArray key = {name, strlen(name)};
  TVMFFIFunctionSetGlobal(&key, f, 1);
  TVMFFIObjectDecRef(f);
}

__attribute__((constructor)) static void register_everything(void) {
  set_global("cert_registers.compile_grammar");
  set_global("cert_registers.match");
  TVMFFIByteArray key = {"cert_registers.Grammar", strlen("cert_registers.Grammar")};
  TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, kTVMFFIObject);
}
