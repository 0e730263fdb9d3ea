#include "text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at `p` (n bytes left), or 0 when it is
 * not one: no overlong forms, no surrogates, nothing above U+10FFFF, and not
 * U+FFFE/U+FFFF (XML refuses those). Sets *cp to the code point. */
static size_t utf8_seq(const unsigned char* p, size_t n, uint32_t* cp) {
  if (p[0] < 0x80) {
    *cp = p[0];
    return 1;
  }
  size_t len;
  uint32_t min;
  uint32_t c;
  if ((p[0] & 0xE0) == 0xC0) {
    len = 2, min = 0x80, c = p[0] & 0x1F;
  } else if ((p[0] & 0xF0) == 0xE0) {
    len = 3, min = 0x800, c = p[0] & 0x0F;
  } else if ((p[0] & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, c = p[0] & 0x07;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (p[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  if (c == 0xFFFE || c == 0xFFFF) return 0;
  *cp = c;
  return len;
}

char* cert_text_clean(const char* s) {
  if (s == NULL) s = "";
  size_t n = strlen(s);
  /* Worst case: every byte becomes six characters (`\u0080`). */
  char* out = malloc(n * 6 + 1);
  if (out == NULL) return NULL;
  const unsigned char* p = (const unsigned char*)s;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp = 0;
    size_t len = utf8_seq(p + i, n - i, &cp);
    if (len == 0 || (cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F) {
      o += (size_t)sprintf(out + o, "\\x%02x", p[i]);
      i += 1;
    } else if (cp >= 0x80 && cp <= 0x9F) {
      o += (size_t)sprintf(out + o, "\\u%04x", (unsigned)cp);
      i += len;
    } else {
      memcpy(out + o, p + i, len);
      o += len;
      i += len;
    }
  }
  out[o] = '\0';
  return out;
}

void cert_text_put_markup(FILE* out, const char* s) {
  for (; *s; ++s) {
    switch (*s) {
      case '&': fputs("&amp;", out); break;
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break;
      case '"': fputs("&quot;", out); break;
      case '\'': fputs("&#39;", out); break;
      default: fputc(*s, out);
    }
  }
}

void cert_text_put_untrusted(FILE* out, const char* s) {
  char* clean = cert_text_clean(s);
  cert_text_put_markup(out, clean ? clean : "(out of memory)");
  free(clean);
}

void cert_text_put_shell(FILE* out, const char* s) {
  if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@=+-,") ==
                strlen(s)) {
    fputs(s, out); /* nothing a shell would change */
    return;
  }
  fputc('\'', out);
  for (; *s; ++s) {
    if (*s == '\'') {
      fputs("'\\''", out);
    } else {
      fputc(*s, out);
    }
  }
  fputc('\'', out);
}
