/* Kernels that make objects the way a library built against older
 * headers does, for the read-back probes (probe_layout_test.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#define VICTIM __attribute__((visibility("default"))) int

/* The error cell of releases before 0.1.8.post0: kind, message, backtrace
 * and the update hook, 56 bytes, no cause_chain or extra_context. */
typedef struct {
  TVMFFIByteArray kind, message, backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle, const TVMFFIByteArray*, int32_t);
} OldErrorCell;

/* The deleter protocol: the memory goes when the weak count does. */
static void free_object(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* One strong reference, and the weak one all strong ones share. */
#define ONE_REFERENCE (1u | ((uint64_t)1 << 32))

/* An Error of the old layout in a block of `block` bytes; whatever follows
 * the cell in the block (as a C++ ErrorObj subclass's members follow it)
 * is the byte `fill`. */
static TVMFFIObjectHandle old_error(size_t block, int fill) {
  char* p = malloc(block);
  if (p == NULL) return NULL;
  memset(p, fill, block);
  TVMFFIObject* h = (TVMFFIObject*)p;
  h->combined_ref_count = ONE_REFERENCE;
  h->type_index = kTVMFFIError;
  h->__padding = 0;
  h->deleter = free_object;
  OldErrorCell* c = (OldErrorCell*)(p + sizeof(TVMFFIObject));
  c->kind = (TVMFFIByteArray){"ValueError", 10};
  c->message = (TVMFFIByteArray){"made with the old error cell", 28};
  c->backtrace = (TVMFFIByteArray){"", 0};
  c->update_backtrace = NULL;
  return h;
}

static int raise_old(size_t block, int fill) {
  TVMFFIObjectHandle e = old_error(block, fill);
  if (e) TVMFFIErrorSetRaised(e);
  TVMFFIObjectDecRef(e);
  return -1;
}

/* Members after the cell: a host of 0.1.8.post0 or later reads them as
 * cause_chain and extra_context. */
VICTIM __tvm_ffi_old_error_with_members(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  return raise_old(sizeof(TVMFFIObject) + sizeof(OldErrorCell) + 32, 0x5a);
}

/* The block ends with the cell: with the strict heap, reading cause_chain
 * reads past it. */
VICTIM __tvm_ffi_old_error_exact(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  return raise_old(sizeof(TVMFFIObject) + sizeof(OldErrorCell), 0);
}

/* A str whose data pointer points nowhere. */
VICTIM __tvm_ffi_bad_string(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n;
  char* p = calloc(1, sizeof(TVMFFIObject) + sizeof(TVMFFIByteArray));
  if (p == NULL) return -1;
  TVMFFIObject* o = (TVMFFIObject*)p;
  o->combined_ref_count = ONE_REFERENCE;
  o->type_index = kTVMFFIStr;
  o->deleter = free_object;
  *(TVMFFIByteArray*)(p + sizeof(TVMFFIObject)) = (TVMFFIByteArray){(const char*)(uintptr_t)64, 5};
  r->type_index = kTVMFFIStr;
  r->v_obj = o;
  return 0;
}

/* Reads the byte after a block it allocated. */
VICTIM __tvm_ffi_reads_past_block(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  volatile char* p = malloc(24);
  if (p == NULL) return 0;
  char c = p[24];
  free((void*)p);
  return c == 127 ? 1 : 0;
}

/* A well-formed error of the current layout with a cause: reads back clean. */
VICTIM __tvm_ffi_chained_error(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  TVMFFIByteArray kind = {"ValueError", 10}, msg = {"outer", 5}, bt = {"", 0};
  TVMFFIByteArray ikind = {"KeyError", 8}, imsg = {"inner", 5};
  TVMFFIObjectHandle inner = NULL, outer = NULL;
  if (TVMFFIErrorCreate(&ikind, &imsg, &bt, &inner) != 0) return -1;
  int rc = TVMFFIErrorCreateWithCauseAndExtraContext(&kind, &msg, &bt, inner, NULL, &outer);
  TVMFFIObjectDecRef(inner);
  if (rc != 0) return -1;
  TVMFFIErrorSetRaised(outer);
  TVMFFIObjectDecRef(outer);
  return -1;
}
