/* Text pieces of "ffi.ReprPrint" (repr_text.h). */
#include "repr_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "vec.h"

void tffi_text_add(TffiText* t, const char* data, size_t size) {
  if (t->failed) return;
  if (TFFI_VEC_RESERVE(t, t->n + size + 1) != 0) {
    t->failed = 1;
    return;
  }
  if (size) memcpy(t->items + t->n, data, size);
  t->n += size;
  t->items[t->n] = '\0';
}

void tffi_text_copy(TffiText* t, const TffiText* from, size_t start, size_t size) {
  if (t->failed) return;
  if (TFFI_VEC_RESERVE(t, t->n + size + 1) != 0) {
    t->failed = 1;
    return;
  }
  if (size) memcpy(t->items + t->n, from->items + start, size);
  t->n += size;
  t->items[t->n] = '\0';
}

void tffi_text_str(TffiText* t, const char* s) { tffi_text_add(t, s, strlen(s)); }

void tffi_text_printf(TffiText* t, const char* fmt, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n >= 0) tffi_text_add(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* The length of an ANSI colour sequence at s (ESC [ digits/; then m or
 * K), or 0. */
static size_t tffi_ansi_len(const unsigned char* s, size_t n) {
  if (n < 2 || s[0] != 0x1b || s[1] != '[') return 0;
  size_t j = 2;
  while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';')) ++j;
  return (j < n && (s[j] == 'm' || s[j] == 'K')) ? j + 1 : 0;
}

/* The code point of a well-formed 2-, 3- or 4-byte UTF-8 sequence at s
 * (as far as upstream checks it), with its length in *len; -1 if none. */
static long tffi_utf8(const unsigned char* s, size_t n, size_t* len) {
  if ((s[0] & 0xE0) == 0xC0 && n > 1 && (s[1] & 0xC0) == 0x80) {
    *len = 2;
    return ((long)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
  }
  if ((s[0] & 0xF0) == 0xE0 && n > 2 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
    *len = 3;
    return ((long)(s[0] & 0x0F) << 12) | ((long)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
  }
  if ((s[0] & 0xF8) == 0xF0 && n > 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 &&
      (s[3] & 0xC0) == 0x80) {
    *len = 4;
    return ((long)(s[0] & 0x07) << 18) | ((long)(s[1] & 0x3F) << 12) | ((long)(s[2] & 0x3F) << 6) |
           (s[3] & 0x3F);
  }
  return -1;
}

void tffi_text_quoted(TffiText* t, const char* data, size_t size) {
  const unsigned char* s = (const unsigned char*)data;
  tffi_text_add(t, "\"", 1);
  for (size_t i = 0; i < size;) {
    size_t ansi = tffi_ansi_len(s + i, size - i), len;
    unsigned char c = s[i];
    if (ansi) {
      tffi_text_str(t, "\\x1b");
      tffi_text_add(t, data + i + 1, ansi - 1);
      i += ansi;
      continue;
    }
    const char* esc = c == '\n'   ? "\\n"
                      : c == '\t' ? "\\t"
                      : c == '\r' ? "\\r"
                      : c == '\\' ? "\\\\"
                      : c == '"'  ? "\\\""
                                  : NULL;
    long cp;
    if (esc) {
      tffi_text_str(t, esc);
      len = 1;
    } else if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        tffi_text_printf(t, "\\x%02x", (unsigned)c);
      else
        tffi_text_add(t, (const char*)&c, 1);
      len = 1;
    } else if ((cp = tffi_utf8(s + i, size - i, &len)) >= 0) {
      tffi_text_printf(t, len == 4 ? "\\U%08lx" : "\\u%04lx", cp);
    } else {
      tffi_text_printf(t, "\\x%02x", (unsigned)c);
      len = 1;
    }
    i += len;
  }
  tffi_text_add(t, "\"", 1);
}

void tffi_text_bytes(TffiText* t, const char* data, size_t size) {
  tffi_text_str(t, "b\"");
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = (unsigned char)data[i];
    if (c >= 32 && c < 127 && c != '"' && c != '\\')
      tffi_text_add(t, (const char*)&c, 1);
    else
      tffi_text_printf(t, "\\x%02x", (unsigned)c);
  }
  tffi_text_add(t, "\"", 1);
}

void tffi_text_bigint(TffiText* t, const char* words, size_t size) {
  size_t n = size / 8;
  uint64_t* mag = tffi_malloc((n ? n : 1) * sizeof *mag);
  char* digits = tffi_malloc(n * 20 + 2);
  if (mag == NULL || digits == NULL) {
    t->failed = 1;
    tffi_free(mag);
    tffi_free(digits);
    return;
  }
  memcpy(mag, words, n * 8);
  int negative = n && (int64_t)mag[n - 1] < 0;
  if (negative) { /* two's complement negation: invert, add one */
    uint64_t carry = 1;
    for (size_t i = 0; i < n; ++i) {
      mag[i] = ~mag[i] + carry;
      carry = carry && mag[i] == 0;
    }
  }
  /* Base 10^18 chunks, least significant first, by long division; every
   * chunk but the top one has all its 18 digits. */
  size_t nd = 0;
  for (size_t top = n; top > 0;) {
    unsigned __int128 rem = 0;
    for (size_t i = top; i-- > 0;) {
      unsigned __int128 cur = (rem << 64) | mag[i];
      mag[i] = (uint64_t)(cur / 1000000000000000000ull);
      rem = cur % 1000000000000000000ull;
    }
    while (top > 0 && mag[top - 1] == 0) --top;
    for (int k = 0; k < 18 && (top > 0 || rem > 0 || k == 0); ++k, rem /= 10)
      digits[nd++] = (char)('0' + (int)(rem % 10));
  }
  if (nd == 0) digits[nd++] = '0';
  if (negative) tffi_text_add(t, "-", 1);
  while (nd-- > 0) tffi_text_add(t, &digits[nd], 1);
  tffi_free(mag);
  tffi_free(digits);
}

static const char* tffi_device_name(int type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    case kDLOneAPI: return "oneapi";
    case kDLWebGPU: return "webgpu";
    case kDLHexagon: return "hexagon";
    case kDLMAIA: return "maia";
    case kDLTrn: return "trn";
    default: return "unknown";
  }
}

void tffi_text_device(TffiText* t, DLDevice device) {
  tffi_text_printf(t, "%s:%d", tffi_device_name(device.device_type), (int)device.device_id);
}
