/*
 * The layout guard (layout_guard.h). Each fact of layout_releases.inc is
 * compiled here against the headers the suite is built with, so "the
 * headers used" is always this build's own answer, and is compared with
 * the value the table records for the release the library reports.
 */
#include "layout_guard.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "impl.h"

enum { CONF_LAYOUT_SIZE, CONF_LAYOUT_OFFSET };
enum { RECORDED_ABSENT = -1, RECORDED_AMBIGUOUS = -2 };

typedef struct {
  ConfLayoutPart part;
  const char* field; /* "" for the struct itself */
  int measure;       /* CONF_LAYOUT_SIZE or CONF_LAYOUT_OFFSET */
  long long used;    /* in the headers used */
} LayoutFact;

static const LayoutFact facts[] = {
#define CONF_LAYOUT_FACT(part, field, measure, expr) \
  {CONF_LAYOUT_##part, field, CONF_LAYOUT_##measure, (long long)(expr)},
#include "layout_releases.inc"
#undef CONF_LAYOUT_FACT
};
enum { FACT_COUNT = sizeof facts / sizeof *facts };

/* A row ends with the number of facts, so a short row is caught at run
 * time (a long one does not compile). */
typedef struct {
  const char* version; /* as TVMFFIGetVersion reports it */
  const char* wheels;  /* the releases on PyPI that report it */
  long long values[FACT_COUNT + 1];
} LayoutRelease;

static const LayoutRelease releases[] = {
#define CONF_LAYOUT_RELEASE(version, wheels, ...) {version, wheels, {__VA_ARGS__}},
#include "layout_releases.inc"
#undef CONF_LAYOUT_RELEASE
};

static const char* const part_names[] = {
#define CONF_LAYOUT_PART(name, what) what,
#include "layout_releases.inc"
#undef CONF_LAYOUT_PART
};

static const char* const part_structs[] = {
#define CONF_LAYOUT_PART(name, what) #name,
#include "layout_releases.inc"
#undef CONF_LAYOUT_PART
};

size_t conf_layout_fact_count(void) { return FACT_COUNT; }

int conf_layout_table_is_whole(void) {
  for (size_t i = 0; i < sizeof releases / sizeof *releases; ++i)
    if (releases[i].values[FACT_COUNT] != FACT_COUNT) return 0;
  return 1;
}

static const LayoutRelease* find_release(const char* version) {
  for (size_t i = 0; i < sizeof releases / sizeof *releases; ++i)
    if (strcmp(releases[i].version, version) == 0) return &releases[i];
  return NULL;
}

/* Whether `field` is one of the space-separated names in `fields`. */
static int listed(const char* fields, const char* field) {
  size_t n = strlen(field);
  for (const char* p = fields; *p;) {
    while (*p == ' ') ++p;
    size_t len = strcspn(p, " ");
    if (len == n && len > 0 && strncmp(p, field, n) == 0) return 1;
    p += len;
  }
  return 0;
}

/* The first name in `fields` that no fact of `part` has, copied into out;
 * 0 when every name is known. */
static int unknown_field(ConfLayoutPart part, const char* fields, char* out, size_t size) {
  for (const char* p = fields; *p;) {
    while (*p == ' ') ++p;
    size_t len = strcspn(p, " ");
    int known = 0;
    for (size_t i = 0; i < FACT_COUNT && len > 0; ++i)
      known |= facts[i].part == part && strlen(facts[i].field) == len &&
               strncmp(facts[i].field, p, len) == 0;
    if (len > 0 && !known) {
      snprintf(out, size, "%.*s", (int)len, p);
      return 1;
    }
    p += len;
  }
  return 0;
}

/* Appends one clause to msg, "; "-separated after the first. */
static void add_clause(char* msg, size_t size, const char* fmt, ...) {
  size_t at = strlen(msg);
  if (at + 3 >= size) return;
  if (at > 0) {
    memcpy(msg + at, "; ", 3);
    at += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + at, size - at, fmt, ap);
  va_end(ap);
}

/* Says how one fact of a release differs from the headers used. */
static void describe(const LayoutFact* f, long long recorded, const char* what, const char* version,
                     char* msg, size_t size) {
  if (f->field[0] == '\0')
    add_clause(msg, size, "%s is %lld bytes in %s, %lld in the headers used", what, recorded,
               version, f->used);
  else if (recorded == RECORDED_ABSENT && f->measure == CONF_LAYOUT_OFFSET)
    add_clause(msg, size, "%s has no %s in %s (offset %lld in the headers used)", what, f->field,
               version, f->used);
  else if (f->measure == CONF_LAYOUT_OFFSET)
    add_clause(msg, size, "%s field %s is at offset %lld in %s, %lld in the headers used", what,
               f->field, recorded, version, f->used);
  else
    add_clause(msg, size, "%s field %s is %lld bytes in %s, %lld in the headers used", what,
               f->field, recorded, version, f->used);
}

ConfLayoutVerdict conf_layout_compare(ConfLayoutPart part, const char* fields, const char* version,
                                      char* msg, size_t size) {
  const char* what = part_names[part];
  char bad[64];
  msg[0] = '\0';
  if (fields != NULL && unknown_field(part, fields, bad, sizeof bad)) {
    snprintf(msg, size, "conformance_layout_guard: %s (%s) has no field `%s` in the headers used",
             what, part_structs[part], bad);
    return CONF_LAYOUT_BAD_FIELD;
  }
  const LayoutRelease* rel = find_release(version);
  if (rel == NULL) {
    snprintf(msg, size, "no layout is recorded for release %s", version);
    return CONF_LAYOUT_UNKNOWN;
  }
  char differs[1024] = "", uncertain[512] = "";
  int size_differs = 0, field_differs = 0;
  for (size_t i = 0; i < FACT_COUNT; ++i) {
    const LayoutFact* f = &facts[i];
    long long recorded = rel->values[i];
    if (f->part != part || recorded == f->used) continue;
    int is_size = f->field[0] == '\0';
    if (is_size && recorded == RECORDED_ABSENT) {
      snprintf(msg, size, "layout mismatch: %s (%s) does not exist in %s, %lld bytes in %s", what,
               part_structs[part], version, f->used, "the headers used");
      return CONF_LAYOUT_DIFFERS;
    }
    /* The struct's size is context for any field that moved; a field the
     * test does not read changes nothing for it. */
    if (!is_size && fields != NULL && !listed(fields, f->field)) continue;
    if (recorded == RECORDED_AMBIGUOUS) {
      if (uncertain[0] == '\0')
        snprintf(uncertain, sizeof uncertain,
                 "layout uncertain: the releases reporting %s (%s) disagree on the %s (%s)%s%s",
                 version, rel->wheels, what, part_structs[part], is_size ? "" : ", field ",
                 f->field);
      continue;
    }
    /* A field that is absent says so once: not again through its size. */
    if (!is_size && f->measure == CONF_LAYOUT_SIZE && recorded == RECORDED_ABSENT) continue;
    describe(f, recorded, what, version, differs, sizeof differs);
    size_differs |= is_size;
    field_differs |= !is_size;
  }
  if (field_differs || (size_differs && fields == NULL)) {
    snprintf(msg, size, "layout mismatch: %s", differs);
    return CONF_LAYOUT_DIFFERS;
  }
  if (uncertain[0] != '\0') {
    snprintf(msg, size, "%s", uncertain);
    return CONF_LAYOUT_UNCERTAIN;
  }
  return CONF_LAYOUT_SAME;
}

void conformance_layout_guard(ConfLayoutPart part, const char* fields) {
  char msg[1024];
  const char* version = conf_impl_version();
  ConfLayoutVerdict v = conf_layout_compare(part, fields, version, msg, sizeof msg);
  if (v == CONF_LAYOUT_BAD_FIELD) cr_assert_fail("%s", msg);
  if (conf_impl_is_reference() || version[0] == '\0') return;
  if (v == CONF_LAYOUT_DIFFERS) cr_assert_fail("%s", msg);
  if (v == CONF_LAYOUT_UNCERTAIN) cr_log_warn("%s", msg);
}
