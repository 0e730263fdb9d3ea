#include "desc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LIBBIN_MAX_MODULES 65536
#define LIBBIN_MAX_FILE ((size_t)1 << 30)

int libbin_read_file(const char* path, size_t limit, unsigned char** data, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return -1;
  size_t cap = 4096, n = 0;
  unsigned char* buf = malloc(cap);
  while (buf != NULL) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    if (cap >= limit) { /* too large: refuse rather than grow without end */
      free(buf);
      buf = NULL;
      errno = EFBIG;
      break;
    }
    unsigned char* bigger = realloc(buf, cap * 2);
    if (bigger == NULL) free(buf);
    buf = bigger;
    cap *= 2;
  }
  int bad = buf == NULL || ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return -1;
  }
  *data = buf;
  *size = n;
  return 0;
}

/* Keeps `p` to be freed with the description. */
static int libbin_own(LibbinLibbinDesc* d, void* p) {
  char** more = realloc(d->owned, (d->num_owned + 1) * sizeof(char*));
  if (more == NULL) {
    free(p);
    return -1;
  }
  d->owned = more;
  d->owned[d->num_owned++] = p;
  return 0;
}

static int libbin_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static const char* libbin_decode_hex(const char* hex, uint8_t** out, size_t* size) {
  size_t n = strlen(hex);
  if (n % 2) return "hex= needs an even number of digits";
  uint8_t* buf = malloc(n / 2 + 1);
  if (buf == NULL) return "out of memory";
  for (size_t i = 0; i < n / 2; ++i) {
    int hi = libbin_hex_digit(hex[2 * i]), lo = libbin_hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      free(buf);
      return "hex= has a non-hex digit";
    }
    buf[i] = (uint8_t)(hi * 16 + lo);
  }
  *out = buf;
  *size = n / 2;
  return NULL;
}

static const char* libbin_load_payload(const char* path, const char* base_dir, uint8_t** out,
                                       size_t* size) {
  char full[4096];
  int n = path[0] == '/' || base_dir == NULL ? snprintf(full, sizeof full, "%s", path)
                                             : snprintf(full, sizeof full, "%s/%s", base_dir, path);
  if (n < 0 || (size_t)n >= sizeof full) return "file= path too long";
  if (libbin_read_file(full, LIBBIN_MAX_FILE, out, size) != 0) return "file= cannot be read";
  return NULL;
}

/* Per-module scratch while parsing: children are collected per line and
 * laid out as CSR at the end. */
typedef struct {
  uint64_t* children;
  size_t num_children;
} LibbinLine;

static const char* libbin_parse_imports(const char* list, LibbinLine* line) {
  const char* p = list;
  while (*p) {
    char* end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || errno || (*end != ',' && *end != '\0'))
      return "imports= needs indices like 1,2";
    uint64_t* more = realloc(line->children, (line->num_children + 1) * sizeof(uint64_t));
    if (more == NULL) return "out of memory";
    line->children = more;
    line->children[line->num_children++] = v;
    p = *end == ',' ? end + 1 : end;
  }
  return NULL;
}

static const char* libbin_parse_option(LibbinLibbinDesc* d, const char* tok, const char* base_dir,
                                       TffiLibraryBinEntry* e, LibbinLine* line) {
  uint8_t* payload = NULL;
  const char* why = NULL;
  if (strncmp(tok, "imports=", 8) == 0) return libbin_parse_imports(tok + 8, line);
  if (e->is_lib) return "_lib takes no payload";
  if (e->payload != NULL) return "more than one payload option";
  if (strncmp(tok, "text=", 5) == 0) {
    e->payload_size = strlen(tok + 5);
    payload = malloc(e->payload_size + 1);
    if (payload == NULL) return "out of memory";
    memcpy(payload, tok + 5, e->payload_size);
  } else if (strncmp(tok, "hex=", 4) == 0) {
    why = libbin_decode_hex(tok + 4, &payload, &e->payload_size);
  } else if (strncmp(tok, "file=", 5) == 0) {
    why = libbin_load_payload(tok + 5, base_dir, &payload, &e->payload_size);
  } else {
    return "unknown option (want imports=, text=, hex= or file=)";
  }
  if (why) return why;
  if (libbin_own(d, payload) != 0) return "out of memory";
  e->payload = payload;
  return NULL;
}

const char* libbin_kind_problem(const char* kind) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";
  if (strchr(letters, kind[0]) == NULL || kind[0] == '\0')
    return "a module kind starts with a letter or '_'";
  if (kind[strspn(kind, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789.-")] !=
      '\0')
    return "a module kind holds only letters, digits, '_', '.' and '-'";
  return NULL;
}

static const char* libbin_parse_line(LibbinLibbinDesc* d, char* text, const char* base_dir,
                                     TffiLibraryBinEntry* e, LibbinLine* line) {
  char* save = NULL;
  char* kind = strtok_r(text, " \t\r", &save);
  const char* bad = libbin_kind_problem(kind);
  if (bad) {
    static char why[512];
    snprintf(why, sizeof why, "`%.200s` is not a module kind: %s", kind, bad);
    return why;
  }
  char* copy = strdup(kind);
  if (copy == NULL || libbin_own(d, copy) != 0) return "out of memory";
  e->kind = copy;
  e->kind_size = strlen(copy);
  e->is_lib = strcmp(copy, TFFI_LIBRARY_BIN_LIB_KEY) == 0;
  for (char* tok = strtok_r(NULL, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
    const char* why = libbin_parse_option(d, tok, base_dir, e, line);
    if (why) return why;
  }
  if (!e->is_lib && e->payload == NULL) e->payload = (const uint8_t*)"";
  return NULL;
}

/* Lays the per-line child lists out as indptr + child_indices. */
static int libbin_build_csr(LibbinTree* bin, const LibbinLine* lines) {
  size_t total = 0;
  for (size_t i = 0; i < bin->num_modules; ++i) total += lines[i].num_children;
  bin->indptr = malloc((bin->num_modules + 1) * sizeof(uint64_t));
  bin->child_indices = malloc((total ? total : 1) * sizeof(uint64_t));
  if (bin->indptr == NULL || bin->child_indices == NULL) return -1;
  bin->indptr[0] = 0;
  size_t at = 0;
  for (size_t i = 0; i < bin->num_modules; ++i) {
    for (size_t j = 0; j < lines[i].num_children; ++j) {
      bin->child_indices[at++] = lines[i].children[j];
    }
    bin->indptr[i + 1] = at;
  }
  bin->num_children = total;
  return 0;
}

int libbin_libbin_desc_parse(const char* text, const char* name, const char* base_dir,
                             LibbinLibbinDesc* out, FILE* err) {
  memset(out, 0, sizeof *out);
  LibbinTree* bin = &out->bin;
  bin->entries = calloc(LIBBIN_MAX_MODULES, sizeof(TffiLibraryBinEntry));
  LibbinLine* lines = calloc(LIBBIN_MAX_MODULES, sizeof(LibbinLine));
  char* copy = strdup(text);
  const char* why = (bin->entries && lines && copy) ? NULL : "out of memory";
  size_t lineno = 0;
  for (char* l = why ? NULL : copy; l && *l && !why;) {
    char* next = strchr(l, '\n');
    if (next) *next++ = '\0';
    ++lineno;
    char* hash = strchr(l, '#');
    if (hash) *hash = '\0';
    if (strspn(l, " \t\r") < strlen(l)) {
      if (bin->num_modules == LIBBIN_MAX_MODULES) {
        why = "too many modules";
        break;
      }
      size_t i = bin->num_modules++;
      why = libbin_parse_line(out, l, base_dir, &bin->entries[i], &lines[i]);
    }
    l = next;
  }
  if (!why && bin->num_modules == 0) why = "no modules described";
  if (!why && libbin_build_csr(bin, lines) != 0) why = "out of memory";
  for (size_t i = 0; lines && i < LIBBIN_MAX_MODULES; ++i) free(lines[i].children);
  free(lines);
  free(copy);
  if (why) {
    fprintf(err, "%s:%zu: %s\n", name, lineno, why);
    libbin_libbin_desc_free(out);
    return -1;
  }
  return 0;
}

void libbin_libbin_desc_free(LibbinLibbinDesc* desc) {
  free(desc->bin.indptr);
  free(desc->bin.child_indices);
  free(desc->bin.entries);
  for (size_t i = 0; i < desc->num_owned; ++i) free(desc->owned[i]);
  free(desc->owned);
  memset(desc, 0, sizeof *desc);
}
