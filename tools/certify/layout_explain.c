#include "layout_explain.h"

#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

static const char* type_name(int32_t t) {
  switch (t) {
    case kTVMFFIStr: return "Str";
    case kTVMFFIBytes: return "Bytes";
    case kTVMFFIError: return "Error";
    case kTVMFFIFunction: return "Function";
    case kTVMFFIShape: return "Shape";
    case kTVMFFITensor: return "Tensor";
    case kTVMFFIArray: return "Array";
    case kTVMFFIMap: return "Map";
    default: return t >= kTVMFFIStaticObjectBegin ? "object" : "not an object";
  }
}

/* "error cells made by the library are 56 bytes; this runtime reads 72:
 * built against headers older than 0.1.8.post0 (...)", when the field at
 * `offset` came with a recorded release; 0 when nothing explains it. */
static int layout_cause(const CertReadback* rb, char* out, size_t size) {
  CertHostLayout host;
  const char* since = NULL;
  int32_t before = 0;
  if (rb->offset < 0 || cert_host_layout_named(rb->host, &host) != 0 ||
      cert_layout_introduced(&host, rb->offset, &since, &before) != 0 || rb->offset < before) {
    return 0;
  }
  snprintf(
      out, size,
      "Error cells made by the library are %d bytes; this runtime reads %d: built against headers "
      "older than %s, see spec/layouts.md. TVMFFIErrorCell grew from %d to %d bytes at %s (%s "
      "appended at offset %d), a change labelled breaking for binaries built before it. Rebuild "
      "the library against apache-tvm-ffi >= %s, or keep the runtime older than %s.",
      before, host.cell_size, since, before, host.cell_size, since, rb->field, rb->offset, since,
      since);
  return 1;
}

static void what_was_found(const CertReadback* rb, char* out, size_t size) {
  switch (rb->problem) {
    case CERT_RB_PAST_END:
      snprintf(out, size, "%s at cell offset %d lies past the end of the object", rb->field,
               rb->offset);
      break;
    case CERT_RB_CAUSE:
    case CERT_RB_CONTEXT:
      if (rb->found_type < 0) {
        snprintf(out, size, "%s at cell offset %d holds 0x%llx, which points to no live object",
                 rb->field, rb->offset, (unsigned long long)rb->value);
      } else {
        snprintf(out, size, "%s at cell offset %d holds 0x%llx, which points to type index %d, %s",
                 rb->field, rb->offset, (unsigned long long)rb->value, rb->found_type,
                 rb->problem == CERT_RB_CAUSE ? "no Error object" : "no object");
      }
      break;
    case CERT_RB_HEADER:
      snprintf(out, size, "the object header does not read back (type index %d)", rb->type_index);
      break;
    case CERT_RB_TEXT:
      snprintf(out, size, "%s is not a readable byte array (data 0x%llx)", rb->field,
               (unsigned long long)rb->value);
      break;
    default:
      snprintf(out, size, "%s is not readable (0x%llx)", rb->field, (unsigned long long)rb->value);
      break;
  }
}

void cert_explain_readback(const CertReadback* rb, int is_error, char* reason, size_t reason_size,
                           char* evidence, size_t evidence_size) {
  char found[256];
  what_was_found(rb, found, sizeof found);
  if (!is_error || !layout_cause(rb, reason, reason_size)) {
    snprintf(reason, reason_size,
             "%s does not read back the way a host of this runtime's release (%s) reads it: %s.",
             is_error ? "The error the library raised" : "The object the function returned",
             rb->host, found);
  }
  char block[96] = "";
  if (rb->alloc_size >= 0)
    snprintf(block, sizeof block, "; the object lies in a %d-byte heap block", rb->alloc_size);
  snprintf(evidence, evidence_size, "read as %s lays it out (error cell %d bytes): %s%s", rb->host,
           rb->cell_size, found, block);
}

void cert_explain_heap_end(const CertSignal* sig, char* reason, size_t reason_size) {
  long long past = (long long)(sig->addr - sig->block) - (long long)sig->block_size;
  snprintf(
      reason, reason_size,
      "Read %lld byte%s past the end of a %lld-byte heap block (%s%s%d at its start): with every "
      "allocation ending at an unreadable page, the process touched memory nobody allocated%s.",
      past + 1, past == 0 ? "" : "s", (long long)sig->block_size, type_name(sig->block_type),
      sig->block_type >= kTVMFFIStaticObjectBegin ? ", type index " : ", first word ",
      sig->block_type,
      sig->block_type == kTVMFFIError
          ? "; an Error object smaller than this runtime's layout is one made with older headers "
            "(spec/layouts.md: TVMFFIErrorCell grew from 56 to 72 bytes at 0.1.8.post0)"
          : "");
}
