/* The JSON reader (json_scan.h). */
#include "json_scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tffi_error.h"
#include "mem.h"
#include "recursive.h"

int tffi_json_fail(const TffiJson* j, const char* what) {
  return tffi_raise(TFFI_VALUE_ERROR, "%s: %s at byte %zu", j->fn, what, j->at);
}

void tffi_json_space(TffiJson* j) {
  while (j->at < j->n && strchr(" \t\r\n", j->s[j->at]) && j->s[j->at]) ++j->at;
}

int tffi_json_eat(TffiJson* j, char c) {
  tffi_json_space(j);
  if (j->at < j->n && j->s[j->at] == c) return ++j->at, 1;
  return 0;
}

int tffi_json_expect(TffiJson* j, char c) {
  char what[] = "expected 'x'";
  what[10] = c;
  return tffi_json_eat(j, c) ? 0 : tffi_json_fail(j, what);
}

static void tffi_utf8_put(char* out, size_t* n, unsigned long cp) {
  if (cp < 0x80)
    out[(*n)++] = (char)cp;
  else if (cp < 0x800)
    out[(*n)++] = (char)(0xC0 | cp >> 6), out[(*n)++] = (char)(0x80 | (cp & 63));
  else if (cp < 0x10000)
    out[(*n)++] = (char)(0xE0 | cp >> 12), out[(*n)++] = (char)(0x80 | ((cp >> 6) & 63)),
    out[(*n)++] = (char)(0x80 | (cp & 63));
  else
    out[(*n)++] = (char)(0xF0 | cp >> 18), out[(*n)++] = (char)(0x80 | ((cp >> 12) & 63)),
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 63)), out[(*n)++] = (char)(0x80 | (cp & 63));
}

static int tffi_hex4(const TffiJson* j, size_t at, unsigned long* out) {
  if (at + 4 > j->n) return -1;
  char buf[5] = {j->s[at], j->s[at + 1], j->s[at + 2], j->s[at + 3], 0};
  char* end;
  *out = strtoul(buf, &end, 16);
  return end == buf + 4 ? 0 : -1;
}

/* The escape after a backslash, or 0 when it takes more than a letter. */
static char tffi_json_escape(char e) {
  switch (e) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
  }
}

/* A JSON string into a new buffer (*out, *len; tffi_free it). */
int tffi_json_string(TffiJson* j, char** out, size_t* len) {
  if (tffi_json_expect(j, '"')) return -1;
  size_t start = j->at;
  while (j->at < j->n && j->s[j->at] != '"') j->at += j->s[j->at] == '\\' ? 2 : 1;
  if (j->at >= j->n) return tffi_json_fail(j, "unterminated string");
  char* buf = tffi_malloc(j->at - start + 1);
  if (buf == NULL) return tffi_raise_oom(j->at - start + 1);
  size_t n = 0;
  for (size_t i = start; i < j->at; ++i) {
    unsigned long cp, lo;
    if (j->s[i] != '\\') {
      buf[n++] = j->s[i];
    } else if (tffi_json_escape(j->s[i + 1])) {
      buf[n++] = tffi_json_escape(j->s[++i]);
    } else if (j->s[i + 1] == 'u' && tffi_hex4(j, i + 2, &cp) == 0) {
      i += 5;
      if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < j->at && j->s[i + 1] == '\\' &&
          j->s[i + 2] == 'u' && tffi_hex4(j, i + 3, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i += 6;
      }
      tffi_utf8_put(buf, &n, cp);
    } else {
      tffi_free(buf);
      return tffi_json_fail(j, "bad escape in a string");
    }
  }
  ++j->at;
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* Skips one JSON value of any kind. */
int tffi_json_skip(TffiJson* j) {
  tffi_json_space(j);
  if (j->at >= j->n) return tffi_json_fail(j, "expected a value");
  char c = j->s[j->at];
  if (c == '"') {
    char* text;
    size_t len;
    if (tffi_json_string(j, &text, &len)) return -1;
    tffi_free(text);
    return 0;
  }
  if (c == '[' || c == '{') {
    if (++j->depth > TFFI_RECURSIVE_MAX_DEPTH) return tffi_json_fail(j, "nesting too deep");
    char close = c == '[' ? ']' : '}';
    ++j->at;
    if (!tffi_json_eat(j, close)) {
      do {
        if (c == '{' && (tffi_json_skip(j) || tffi_json_expect(j, ':'))) return -1;
        if (tffi_json_skip(j)) return -1;
      } while (tffi_json_eat(j, ','));
      if (tffi_json_expect(j, close)) return -1;
    }
    --j->depth;
    return 0;
  }
  size_t start = j->at;
  while (j->at < j->n &&
         (strchr("+-.eE", j->s[j->at]) || (j->s[j->at] >= '0' && j->s[j->at] <= '9') ||
          (j->s[j->at] >= 'a' && j->s[j->at] <= 'z') ||
          (j->s[j->at] >= 'A' && j->s[j->at] <= 'Z')) &&
         j->s[j->at])
    ++j->at;
  return j->at > start ? 0 : tffi_json_fail(j, "expected a value");
}

/* A number or literal token as text (NUL-terminated copy in buf). */
int tffi_json_token(TffiJson* j, char* buf, size_t cap) {
  tffi_json_space(j);
  size_t start = j->at;
  if (tffi_json_skip(j)) return -1;
  size_t n = j->at - start;
  if (n >= cap || j->s[start] == '"' || j->s[start] == '[' || j->s[start] == '{')
    return tffi_json_fail(j, "expected a number or literal");
  memcpy(buf, j->s + start, n);
  buf[n] = '\0';
  return 0;
}

int tffi_json_int(TffiJson* j, int64_t* out) {
  char buf[32], *end;
  if (tffi_json_token(j, buf, sizeof buf)) return -1;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (*end || errno) return tffi_json_fail(j, "expected an integer");
  *out = v;
  return 0;
}
