/*
 * The layout facts of layout_facts.inc evaluated against UPSTREAM's c_api.h.
 * This translation unit sees only upstream's header (BUILD puts its include
 * folder first and this target depends on nothing of the reference), so
 * layout_test.c can hold our header's numbers against these, fact by fact.
 */
#include <stddef.h>
#include <tvm/ffi/c_api.h>

#include "layout_upstream.h"

#ifndef TVM_FFI_VERSION_PATCH
#error "layout_upstream.c must be compiled against upstream's tvm/ffi/c_api.h"
#endif

/* Proof of which header this is: upstream declares TVMFFIObjectGetTypeIndex
 * for C++ only, the reference header for C as well, so a file-scope object
 * of that name compiles against upstream's header and nowhere else. */
static const int TVMFFIObjectGetTypeIndex = 1;

static const ConfLayoutFact conf_facts[] = {
#define FACT(expr) {#expr, (long long)(expr)},
#include "layout_facts.inc"
#undef FACT
};

const ConfLayoutFact* conf_upstream_layout(size_t* count) {
  (void)TVMFFIObjectGetTypeIndex;
  *count = sizeof conf_facts / sizeof *conf_facts;
  return conf_facts;
}
