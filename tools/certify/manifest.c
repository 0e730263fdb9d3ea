#include "manifest.h"

#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* const kErrorCaseNames[CERT_ERR_COUNT] = {
    "arity", "type", "dtype", "device", "shape", "layout", "null_data", "divisibility",
};

const char* cert_error_case_name(CertErrorCase c) {
  return (unsigned)c < CERT_ERR_COUNT ? kErrorCaseNames[c] : "?";
}

typedef struct {
  char* err;
  size_t errlen;
} Ctx;

static int bad(Ctx* c, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(Ctx* c, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* A short string value copied into a fixed buffer. */
static int get_word(Ctx* c, json_t* v, const char* where, char* out, size_t size) {
  if (!json_is_string(v)) return bad(c, "%s: expected a string", where);
  size_t len = json_string_length(v);
  if (len == 0 || len >= size) return bad(c, "%s: must be 1 to %zu bytes", where, size - 1);
  const char* s = json_string_value(v);
  if (memchr(s, '\0', len) != NULL) return bad(c, "%s: contains a NUL byte", where);
  memcpy(out, s, len + 1);
  return 0;
}

static int is_ident(const char* s) {
  if (!isalpha((unsigned char)s[0]) && s[0] != '_') return 0;
  for (const char* p = s; *p; ++p) {
    if (!isalnum((unsigned char)*p) && *p != '_') return 0;
  }
  return 1;
}

static const struct {
  const char* word;
  CertManifestKind kind;
  int has_shape; /* 1: needs "shape"; 0: must not have one */
} kKinds[] = {
    {"tensor", CERT_MKIND_TENSOR, 1}, {"float", CERT_MKIND_FLOAT, 0},
    {"int", CERT_MKIND_INT, 0},       {"bool", CERT_MKIND_BOOL, 0},
    {"stream", CERT_MKIND_STREAM, 0}, {"pointer", CERT_MKIND_POINTER, 1},
    {"shape", CERT_MKIND_SHAPE, 1},   {"tuple", CERT_MKIND_TUPLE, 0},
};

static int parse_kind(Ctx* c, json_t* j, const char* where, CertManifestKind* kind,
                      int* has_shape) {
  char word[16];
  if (get_word(c, json_object_get(j, "kind"), where, word, sizeof word) != 0) return -1;
  for (size_t k = 0; k < sizeof kKinds / sizeof kKinds[0]; ++k) {
    if (strcmp(word, kKinds[k].word) == 0) {
      *kind = kKinds[k].kind;
      *has_shape = kKinds[k].has_shape;
      return 0;
    }
  }
  return bad(c, "%s.kind: \"%s\" is not tensor, float, int, bool, stream, pointer, shape or tuple",
             where, word);
}

static int parse_dims(Ctx* c, json_t* shape, const char* where, int32_t* ndim, char (*dims)[16]) {
  if (!json_is_array(shape) || json_array_size(shape) > CERT_MAX_NDIM) {
    return bad(c, "%s.shape: expected a list of at most %d extents", where, CERT_MAX_NDIM);
  }
  *ndim = (int32_t)json_array_size(shape);
  for (int32_t d = 0; d < *ndim; ++d) {
    json_t* e = json_array_get(shape, (size_t)d);
    if (json_is_integer(e)) {
      json_int_t x = json_integer_value(e);
      if (x < 0 || x > 4096) return bad(c, "%s.shape[%d]: extents are 0..4096", where, (int)d);
      snprintf(dims[d], 16, "%lld", (long long)x);
    } else if (get_word(c, e, where, dims[d], 16) != 0 || !is_ident(dims[d])) {
      return bad(c, "%s.shape[%d]: expected a name or a number", where, (int)d);
    }
  }
  return 0;
}

static int only_keys(Ctx* c, json_t* j, const char* where, const char* const* keys) {
  const char* key;
  json_t* v;
  json_object_foreach(j, key, v) {
    int known = 0;
    for (int k = 0; keys[k]; ++k) known |= strcmp(key, keys[k]) == 0;
    if (!known) return bad(c, "%s: unknown key \"%s\"", where, key);
  }
  return 0;
}

static int parse_items(Ctx* c, json_t* items, const char* where, CertManifestArg* a) {
  if (!json_is_array(items) || json_array_size(items) == 0 ||
      json_array_size(items) > CERT_MANIFEST_MAX_ITEMS) {
    return bad(c, "%s.items: expected a list of 1 to %d items", where, CERT_MANIFEST_MAX_ITEMS);
  }
  static const char* const keys[] = {"kind", "shape", NULL};
  for (size_t k = 0; k < json_array_size(items); ++k) {
    char at[240];
    snprintf(at, sizeof at, "%s.items[%zu]", where, k);
    json_t* j = json_array_get(items, k);
    if (!json_is_object(j)) return bad(c, "%s: expected an object", at);
    if (only_keys(c, j, at, keys) != 0) return -1;
    CertManifestItem* it = &a->items[a->nitems];
    int has_shape = 0;
    if (parse_kind(c, j, at, &it->kind, &has_shape) != 0) return -1;
    if (it->kind == CERT_MKIND_TUPLE || it->kind == CERT_MKIND_STREAM) {
      return bad(c, "%s.kind: a tuple holds scalars, tensors, pointers or shapes", at);
    }
    json_t* shape = json_object_get(j, "shape");
    if (has_shape != (shape != NULL))
      return bad(c, "%s.shape: %s", at,
                 has_shape ? "needed" : "only tensors, pointers and shapes have one");
    if (shape && parse_dims(c, shape, at, &it->ndim, it->dims) != 0) return -1;
    a->nitems++;
  }
  return 0;
}

static int parse_arg(Ctx* c, const char* fn, size_t k, json_t* j, CertManifestArg* a) {
  char where[200];
  snprintf(where, sizeof where, "functions.%s.args[%zu]", fn, k);
  if (!json_is_object(j)) return bad(c, "%s: expected an object", where);
  static const char* const keys[] = {"name", "kind", "shape", "align", "items", "extent", NULL};
  if (only_keys(c, j, where, keys) != 0) return -1;
  if (get_word(c, json_object_get(j, "name"), where, a->name, sizeof a->name) != 0) return -1;
  if (!is_ident(a->name)) return bad(c, "%s.name: not an identifier", where);
  int has_shape = 0;
  if (parse_kind(c, j, where, &a->kind, &has_shape) != 0) return -1;
  json_t* shape = json_object_get(j, "shape");
  if (!has_shape && shape)
    return bad(c, "%s.shape: only tensors, pointers and shapes have a shape", where);
  if (has_shape && parse_dims(c, shape, where, &a->ndim, a->dims) != 0) return -1;
  json_t* align = json_object_get(j, "align");
  if (align) {
    json_int_t x = json_is_integer(align) ? json_integer_value(align) : 0;
    if (a->kind != CERT_MKIND_TENSOR && a->kind != CERT_MKIND_POINTER) {
      return bad(c, "%s.align: only tensors and pointers have an alignment", where);
    }
    if (x < 1 || x > 4096 || (x & (x - 1)) != 0)
      return bad(c, "%s.align: a power of two up to 4096", where);
    a->align = (uint32_t)x;
  }
  json_t* extent = json_object_get(j, "extent");
  if (extent) {
    if (a->kind != CERT_MKIND_INT)
      return bad(c, "%s.extent: only ints are passed an extent", where);
    if (get_word(c, extent, where, a->extent, sizeof a->extent) != 0 || !is_ident(a->extent)) {
      return bad(c, "%s.extent: expected an extent name", where);
    }
  }
  json_t* items = json_object_get(j, "items");
  if ((a->kind == CERT_MKIND_TUPLE) != (items != NULL)) {
    return bad(c, "%s.items: %s", where, items ? "only tuples have items" : "a tuple needs items");
  }
  return items ? parse_items(c, items, where, a) : 0;
}

static int parse_divisible(Ctx* c, const char* fn, json_t* j, CertManifestFunction* f) {
  if (!json_is_object(j) || json_object_size(j) > CERT_MANIFEST_MAX_DIVISIBLE) {
    return bad(c, "functions.%s.divisible: expected an object of at most %d extent names", fn,
               CERT_MANIFEST_MAX_DIVISIBLE);
  }
  const char* key;
  json_t* v;
  json_object_foreach(j, key, v) {
    CertDivisible* d = &f->divisible[f->ndivisible];
    if (!is_ident(key) || strlen(key) >= sizeof d->name) {
      return bad(c, "functions.%s.divisible: \"%s\" is not an extent name", fn, key);
    }
    json_int_t by = json_is_integer(v) ? json_integer_value(v) : 0;
    if (by < 1 || by > 4096)
      return bad(c, "functions.%s.divisible.%s: a number from 1 to 4096", fn, key);
    snprintf(d->name, sizeof d->name, "%s", key);
    d->by = by;
    f->ndivisible++;
  }
  return 0;
}

static int parse_errors(Ctx* c, const char* fn, json_t* j, CertManifestFunction* f) {
  if (!json_is_object(j)) return bad(c, "functions.%s.errors: expected an object", fn);
  const char* key;
  json_t* v;
  json_object_foreach(j, key, v) {
    int which = -1;
    for (int k = 0; k < CERT_ERR_COUNT; ++k) {
      if (strcmp(key, kErrorCaseNames[k]) == 0) which = k;
    }
    if (which < 0) return bad(c, "functions.%s.errors: unknown case \"%s\"", fn, key);
    CertManifestError* e = &f->errors[which];
    char where[200];
    snprintf(where, sizeof where, "functions.%s.errors.%s", fn, key);
    if (json_is_object(v)) {
      if (json_object_size(v) > 2) return bad(c, "%s: only kind and names", where);
      if (get_word(c, json_object_get(v, "kind"), where, e->kind, sizeof e->kind) != 0) return -1;
      json_t* names = json_object_get(v, "names");
      if (names && get_word(c, names, where, e->names, sizeof e->names) != 0) return -1;
      if (json_object_size(v) == 2 && names == NULL)
        return bad(c, "%s: only kind and names", where);
    } else if (get_word(c, v, where, e->kind, sizeof e->kind) != 0) {
      return -1;
    }
    if (!is_ident(e->kind)) return bad(c, "%s: the kind is not an identifier", where);
    e->documented = 1;
  }
  return 0;
}

static int arg_index(const CertManifestFunction* f, const char* name, size_t len) {
  for (int k = 0; k < f->nargs; ++k) {
    if (strlen(f->args[k].name) == len && memcmp(f->args[k].name, name, len) == 0) return k;
  }
  return -1;
}

/* NAME '=' term {op term} */
static int parse_reference(Ctx* c, const char* fn, const char* s, CertManifestFunction* f) {
  CertExpr* e = &f->reference;
  const char* p = s;
  while (isspace((unsigned char)*p)) ++p;
  const char* start = p;
  while (isalnum((unsigned char)*p) || *p == '_') ++p;
  e->out_arg = arg_index(f, start, (size_t)(p - start));
  if (e->out_arg < 0 || (f->args[e->out_arg].kind != CERT_MKIND_TENSOR &&
                         f->args[e->out_arg].kind != CERT_MKIND_POINTER)) {
    return bad(c, "functions.%s.reference: must start with a tensor or pointer argument's name",
               fn);
  }
  while (isspace((unsigned char)*p)) ++p;
  if (*p++ != '=') return bad(c, "functions.%s.reference: expected '='", fn);
  for (;;) {
    while (isspace((unsigned char)*p)) ++p;
    if (e->nterms == CERT_EXPR_MAX)
      return bad(c, "functions.%s.reference: more than %d terms", fn, CERT_EXPR_MAX);
    start = p;
    if (isdigit((unsigned char)*p) || *p == '.') {
      char* end = NULL;
      e->term_const[e->nterms] = strtod(p, &end);
      e->term_arg[e->nterms] = -1;
      e->term_item[e->nterms] = -1;
      p = end;
    } else {
      while (isalnum((unsigned char)*p) || *p == '_') ++p;
      int k = arg_index(f, start, (size_t)(p - start));
      if (k < 0) return bad(c, "functions.%s.reference: unknown name at \"%.20s\"", fn, start);
      e->term_arg[e->nterms] = k;
      e->term_item[e->nterms] = -1;
      CertManifestKind kind = f->args[k].kind;
      if (*p == '[' && kind == CERT_MKIND_TUPLE) {
        char* end = NULL;
        long item = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end != ']' || item < 0 || item >= f->args[k].nitems) {
          return bad(c, "functions.%s.reference: bad item at \"%.20s\"", fn, start);
        }
        e->term_item[e->nterms] = (int)item;
        kind = f->args[k].items[item].kind;
        p = end + 1;
        if (kind != CERT_MKIND_FLOAT && kind != CERT_MKIND_INT) {
          return bad(c, "functions.%s.reference: a tuple item in it must be a float or an int", fn);
        }
      }
      if (kind != CERT_MKIND_TENSOR && kind != CERT_MKIND_POINTER && kind != CERT_MKIND_FLOAT &&
          kind != CERT_MKIND_INT) {
        return bad(c, "functions.%s.reference: \"%.20s\" is not a number, tensor or pointer", fn,
                   start);
      }
    }
    e->nterms++;
    while (isspace((unsigned char)*p)) ++p;
    if (*p == '\0') return 0;
    if (*p != '+' && *p != '-' && *p != '*')
      return bad(c, "functions.%s.reference: expected + - or *", fn);
    e->ops[e->nterms - 1] = *p++;
  }
}

static int parse_dtypes(Ctx* c, const char* fn, json_t* j, CertManifestFunction* f) {
  if (!json_is_array(j) || json_array_size(j) == 0 ||
      json_array_size(j) > CERT_MANIFEST_MAX_DTYPES) {
    return bad(c, "functions.%s.dtypes: expected 1 to %d dtypes", fn, CERT_MANIFEST_MAX_DTYPES);
  }
  for (size_t k = 0; k < json_array_size(j); ++k) {
    char w[24];
    if (get_word(c, json_array_get(j, k), "dtypes", w, sizeof w) != 0) return -1;
    if (cert_dtype_parse(w, strlen(w), &f->dtypes[f->ndtypes]) != 0 ||
        cert_dtype_bytes(f->dtypes[f->ndtypes]) == 0) {
      return bad(c, "functions.%s.dtypes: \"%s\" is not a dtype", fn, w);
    }
    f->ndtypes++;
  }
  return 0;
}

static int parse_function(Ctx* c, const char* name, json_t* j, CertManifestFunction* f) {
  if (strlen(name) == 0 || strlen(name) >= sizeof f->name)
    return bad(c, "functions: bad name length");
  snprintf(f->name, sizeof f->name, "%s", name);
  if (!json_is_object(j)) return bad(c, "functions.%s: expected an object", name);
  static const char* const keys[] = {
      "device",    "dtypes",      "args", "returns", "reference", "errors", "errors_name_argument",
      "divisible", "byte_offset", NULL};
  const char* key;
  json_t* v;
  json_object_foreach(j, key, v) {
    int known = 0;
    for (int k = 0; keys[k]; ++k) known |= strcmp(key, keys[k]) == 0;
    if (!known) return bad(c, "functions.%s: unknown key \"%s\"", name, key);
  }
  char dev[16] = "cpu";
  json_t* d = json_object_get(j, "device");
  if (d && get_word(c, d, "device", dev, sizeof dev) != 0) return -1;
  if (strcmp(dev, "cpu") == 0)
    f->device = kDLCPU;
  else if (strcmp(dev, "cuda") == 0)
    f->device = kDLCUDA;
  else
    return bad(c, "functions.%s.device: \"%s\" is not cpu or cuda", name, dev);
  json_t* args = json_object_get(j, "args");
  if (!json_is_array(args) || json_array_size(args) > CERT_MAX_ARGS - 1) {
    return bad(c, "functions.%s.args: expected a list of at most %d arguments", name,
               CERT_MAX_ARGS - 1);
  }
  for (size_t k = 0; k < json_array_size(args); ++k) {
    if (parse_arg(c, name, k, json_array_get(args, k), &f->args[k]) != 0) return -1;
    f->nargs++;
    if (arg_index(f, f->args[k].name, strlen(f->args[k].name)) != (int)k) {
      return bad(c, "functions.%s.args[%zu]: duplicate name", name, k);
    }
  }
  json_t* dt = json_object_get(j, "dtypes");
  if (dt && parse_dtypes(c, name, dt, f) != 0) return -1;
  for (int k = 0; k < f->nargs; ++k) {
    int laid_out = f->args[k].kind == CERT_MKIND_TENSOR || f->args[k].kind == CERT_MKIND_POINTER;
    for (int i = 0; i < f->args[k].nitems; ++i) {
      laid_out |= f->args[k].items[i].kind == CERT_MKIND_TENSOR ||
                  f->args[k].items[i].kind == CERT_MKIND_POINTER;
    }
    if (laid_out && f->ndtypes == 0) {
      return bad(c, "functions.%s.dtypes: needed for tensor and pointer arguments", name);
    }
  }
  json_t* offset = json_object_get(j, "byte_offset");
  if (offset && !json_is_boolean(offset))
    return bad(c, "functions.%s.byte_offset: expected a bool", name);
  f->refuses_byte_offset = offset && json_is_false(offset);
  json_t* div = json_object_get(j, "divisible");
  if (div && parse_divisible(c, name, div, f) != 0) return -1;
  json_t* ret = json_object_get(j, "returns");
  if (ret) {
    if (!json_is_string(ret) || strcmp(json_string_value(ret), "none") != 0) {
      return bad(c, "functions.%s.returns: only \"none\" is understood", name);
    }
    f->returns_none = 1;
  }
  json_t* ref = json_object_get(j, "reference");
  if (ref) {
    char expr[200];
    if (get_word(c, ref, "reference", expr, sizeof expr) != 0) return -1;
    if (f->device != kDLCPU) return bad(c, "functions.%s.reference: CPU functions only", name);
    if (parse_reference(c, name, expr, f) != 0) return -1;
    f->has_reference = 1;
  }
  json_t* errs = json_object_get(j, "errors");
  if (errs && parse_errors(c, name, errs, f) != 0) return -1;
  json_t* nm = json_object_get(j, "errors_name_argument");
  if (nm && !json_is_boolean(nm))
    return bad(c, "functions.%s.errors_name_argument: expected a bool", name);
  f->errors_name_argument = nm && json_is_true(nm);
  return 0;
}

int cert_manifest_parse(const char* text, size_t len, CertManifest* out, char* err, size_t errlen) {
  Ctx c = {err, errlen};
  memset(out, 0, sizeof *out);
  json_error_t jerr;
  json_t* root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return bad(&c, "not JSON: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
  int rc = -1;
  json_t* fns = json_object_get(root, "functions");
  if (!json_is_object(root) || !json_is_object(fns)) {
    bad(&c, "expected an object with \"functions\"");
    goto done;
  }
  const char* key;
  json_t* v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "functions") != 0 && strcmp(key, "library") != 0 &&
        strcmp(key, "comment") != 0) {
      bad(&c, "unknown key \"%s\"", key);
      goto done;
    }
  }
  if (json_object_size(fns) > CERT_MANIFEST_MAX_FUNCTIONS) {
    bad(&c, "functions: more than %d", CERT_MANIFEST_MAX_FUNCTIONS);
    goto done;
  }
  out->fns = calloc(json_object_size(fns) + 1, sizeof *out->fns);
  if (out->fns == NULL) {
    bad(&c, "out of memory");
    goto done;
  }
  json_object_foreach(fns, key, v) {
    if (parse_function(&c, key, v, &out->fns[out->n]) != 0) goto done;
    out->n++;
  }
  rc = 0;
done:
  json_decref(root);
  if (rc != 0) cert_manifest_free(out);
  return rc;
}

int cert_manifest_load(const char* path, CertManifest* out, char* err, size_t errlen) {
  memset(out, 0, sizeof *out);
  FILE* f = fopen(path, "rb");
  if (f == NULL) return snprintf(err, errlen, "%s: cannot open", path), -1;
  char* buf = malloc(1 << 20);
  size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
  int too_big = buf && n == (1 << 20);
  fclose(f);
  if (buf == NULL) return snprintf(err, errlen, "out of memory"), -1;
  if (too_big) {
    free(buf);
    return snprintf(err, errlen, "%s: larger than 1 MiB", path), -1;
  }
  char inner[400];
  int rc = cert_manifest_parse(buf, n, out, inner, sizeof inner);
  free(buf);
  if (rc != 0) snprintf(err, errlen, "%s: %s", path, inner);
  return rc;
}

void cert_manifest_free(CertManifest* m) {
  free(m->fns);
  m->fns = NULL;
  m->n = 0;
}

int64_t cert_manifest_divisor(const CertManifestFunction* f, const char* extent) {
  for (int k = 0; f && k < f->ndivisible; ++k) {
    if (strcmp(f->divisible[k].name, extent) == 0) return f->divisible[k].by;
  }
  return 1;
}

const CertManifestFunction* cert_manifest_find(const CertManifest* m, const char* name) {
  for (size_t k = 0; m && k < m->n; ++k) {
    if (strcmp(m->fns[k].name, name) == 0) return &m->fns[k];
  }
  return NULL;
}
