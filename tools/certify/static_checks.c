/* The static stage: what certify can tell about a library from its file
 * alone. Each check appends findings (check ids `static.*`, clauses of
 * spec/certify_static.md and the areas they refine); a check that passes
 * says so too, so the report shows every check it made. */
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "elf_facts.h"
#include "lib_search.h"
#include "reference/library_bin.h"
#include "release_table.h"

#define CERT_PREFIX "__tvm_ffi_"
#define CERT_RESERVED "__tvm_ffi__"
#define CERT_RUNTIME_SONAME "libtvm_ffi.so"
/* A decoded metadata or doc string longer than this is cut (bounded memory). */
#define CERT_MAX_TEXT ((size_t)1 << 20)
/* Evidence lists stop after this many names ("... and N more"). */
#define CERT_MAX_LISTED 40
/* The loader model reads at most this many libraries (a dependency bomb). */
#define CERT_MAX_OBJECTS 256

static int cert_starts(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- a growing string for evidence ---- */

typedef struct {
  char* s;
  size_t len, cap;
  size_t items;
  int failed;
} CertText;

static void cert_text_add(CertText* t, const char* piece) {
  size_t n = strlen(piece);
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1) cap *= 2;
    char* grown = realloc(t->s, cap);
    if (grown == NULL) {
      t->failed = 1;
      return;
    }
    t->s = grown;
    t->cap = cap;
  }
  memcpy(t->s + t->len, piece, n + 1);
  t->len += n;
}

/* Adds one name to a comma-separated list, stopping at CERT_MAX_LISTED. */
static void cert_text_item(CertText* t, const char* name) {
  t->items++;
  if (t->items > CERT_MAX_LISTED) return;
  if (t->items > 1) cert_text_add(t, ", ");
  cert_text_add(t, name);
}

static const char* cert_text_end(CertText* t) {
  if (t->items > CERT_MAX_LISTED) {
    char more[64];
    snprintf(more, sizeof more, ", ... and %zu more", t->items - CERT_MAX_LISTED);
    cert_text_add(t, more);
  }
  return t->failed || t->s == NULL ? "" : t->s;
}

static void cert_text_free(CertText* t) { free(t->s); }

/* Appends one finding; a failed append (out of memory) is a tool error. */
#define CERT_ADD(out, fn, check, clause, verdict, evidence, ...)                          \
  do {                                                                                   \
    if (cert_findings_add((out), (fn), (check), (clause), "", (verdict), (evidence), "", \
                          __VA_ARGS__) != 0)                                             \
      return -1;                                                                         \
  } while (0)

/* ---- exports ---- */

/* A name that looks like a misspelt export prefix, for a hint. */
static const char* cert_near_miss(const CertElf* elf) {
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const char* n = elf->exports.items[i].name;
    if (!cert_starts(n, CERT_PREFIX) && strstr(n, "tvm_ffi") != NULL) return n;
  }
  return NULL;
}

/* Imports through which a library registers global functions or types when
 * it loads (upstream's C++ registration macros end in these). */
static const char* cert_registration_import(const CertElf* elf) {
  static const char* const kRegister[] = {
      "TVMFFIFunctionSetGlobal", "TVMFFIFunctionSetGlobalFromMethodInfo", "TVMFFITypeGetOrAllocIndex",
      "TVMFFITypeRegisterField", "TVMFFITypeRegisterMethod", "TVMFFITypeRegisterAttr", NULL};
  for (const char* const* r = kRegister; *r != NULL; ++r) {
    if (cert_elf_find(elf, *r, 1) != NULL) return *r;
  }
  return NULL;
}

static size_t cert_count_cxx_imports(const CertElf* elf, CertText* list) {
  size_t n = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    if (!cert_is_upstream_cxx_symbol(elf->imports.items[i].name)) continue;
    n++;
    if (list) cert_text_item(list, elf->imports.items[i].name);
  }
  return n;
}

static int cert_check_exports(const CertElf* elf, CertFindings* out) {
  size_t n = cert_elf_callable(elf, NULL, 0);
  const char* registers = cert_registration_import(elf);
  if (n == 0 && registers != NULL && cert_near_miss(elf) == NULL) {
    size_t cxx = cert_count_cxx_imports(elf, NULL);
    CERT_ADD(out, "", "static.exports", "CST-001", CERT_SKIP, registers,
             "exports no function __tvm_ffi_<name>: it registers global functions or types when "
             "it loads (it imports %s)%s, so hosts reach it through the runtime's registry, not "
             "through exports; certify calls exported functions only: the dynamic stage loads it "
             "and lists what it registers",
             registers, cxx ? ", as libraries built on upstream's C++ API do (static.cxx-api)" : "");
    return 0;
  }
  if (n == 0) {
    const char* near = cert_near_miss(elf);
    if (near != NULL) {
      CERT_ADD(out, "", "static.exports", "CST-001", CERT_FAIL, near,
               "exports no function __tvm_ffi_<name>, so a host finds nothing to call; '%s' "
               "looks like one without the exact prefix '__tvm_ffi_'",
               near);
    } else {
      CERT_ADD(out, "", "static.exports", "CST-001", CERT_FAIL, "",
               "exports no function __tvm_ffi_<name>, so a host finds nothing to call");
    }
    return 0;
  }
  const char** names = calloc(n, sizeof *names);
  if (names == NULL) return -1;
  cert_elf_callable(elf, names, n);
  CertText list = {0};
  for (size_t i = 0; i < n; ++i) cert_text_item(&list, names[i]);
  free(names);
  int rc = cert_findings_add(out, "", "static.exports", "CST-001", "", CERT_PASS,
                             cert_text_end(&list), "", "exports %zu function%s __tvm_ffi_<name>",
                             n, n == 1 ? "" : "s");
  cert_text_free(&list);
  return rc;
}

/* Every non-reserved __tvm_ffi_<name> must be code. */
static int cert_check_export_kinds(const CertElf* elf, CertFindings* out) {
  size_t prefix = strlen(CERT_PREFIX);
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const CertSymbol* s = &elf->exports.items[i];
    if (!cert_starts(s->name, CERT_PREFIX) || cert_starts(s->name, CERT_RESERVED)) continue;
    const char* fn = s->name + prefix;
    if (s->is_function) continue;
    CERT_ADD(out, fn, "static.export-kind", "CST-002", CERT_FAIL, s->name,
             "%s is data (%zu bytes), not a function: a host that calls it jumps into data",
             s->name, s->size);
  }
  return 0;
}

/* ---- reserved names: library_bin, metadata, doc ---- */

static int cert_check_library_bin(const CertElf* elf, const CertSymbol* s, CertFindings* out) {
  if (s->file_bytes == 0 || s->file_bytes < s->size) {
    CERT_ADD(out, "", "static.library-bin", "CST-004", CERT_FAIL, s->name,
             "__tvm_ffi__library_bin has %zu of its %zu bytes in the file (it lies in a "
             "section without contents), so a loader reads no blob",
             s->file_bytes, s->size);
    return 0;
  }
  TffiLibraryBin bin;
  int rc = tffi_library_bin_parse(elf->image + s->file_offset, s->file_bytes, &bin);
  if (rc == 0) {
    char ev[128];
    snprintf(ev, sizeof ev, "%zu modules, %zu imports, nbytes %llu", bin.num_modules,
             bin.num_children, (unsigned long long)bin.nbytes);
    tffi_library_bin_free(&bin);
    CERT_ADD(out, "", "static.library-bin", "CST-004", CERT_PASS, ev,
             "__tvm_ffi__library_bin is a well-formed blob");
    return 0;
  }
  char msg[512] = "";
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) {
    const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    snprintf(msg, sizeof msg, "%.*s: %.*s", (int)cell->kind.size, cell->kind.data,
             (int)cell->message.size, cell->message.data);
    TVMFFIObjectDecRef(err);
  }
  size_t offset = bin.error_offset;
  const char* field = bin.error_field ? bin.error_field : "?";
  tffi_library_bin_free(&bin);
  CERT_ADD(out, "", "static.library-bin", "CST-004", CERT_FAIL, msg,
           "__tvm_ffi__library_bin is malformed at byte %zu (field %s): every runtime refuses "
           "to load the library",
           offset, field);
  return 0;
}

/* The text a data symbol holds: a char array, or a pointer variable whose
 * RELATIVE relocation says where its string lives. NULL when neither. */
static char* cert_decode_text(const CertElf* elf, const CertSymbol* s, const char** form) {
  const unsigned char* bytes = NULL;
  size_t n = 0;
  size_t ptr_size = elf->elf_class == 2 ? 8 : 4;
  if (s->size == ptr_size) {
    for (size_t i = 0; i < elf->n_relative; ++i) {
      if (elf->relative_offsets[i] != s->value) continue;
      n = cert_elf_bytes_at(elf, elf->relative_addends[i], CERT_MAX_TEXT, &bytes);
      *form = "a pointer to a string";
      break;
    }
  }
  if (bytes == NULL && s->file_bytes > 0) {
    bytes = elf->image + s->file_offset;
    n = s->file_bytes < CERT_MAX_TEXT ? s->file_bytes : CERT_MAX_TEXT;
    *form = "a character array";
  }
  if (bytes == NULL) return NULL;
  size_t len = strnlen((const char*)bytes, n);
  return strndup((const char*)bytes, len);
}

/* What a metadata string says, in a few words, or why it is not JSON. */
static int cert_describe_json(const char* text, char* out, size_t outlen) {
  json_error_t error;
  json_t* root = json_loads(text, JSON_REJECT_DUPLICATES, &error);
  if (root == NULL) {
    snprintf(out, outlen, "not JSON (line %d column %d: %s)", error.line, error.column,
             error.text);
    return -1;
  }
  if (!json_is_object(root)) {
    snprintf(out, outlen, "JSON but not an object");
    json_decref(root);
    return -1;
  }
  size_t used = (size_t)snprintf(out, outlen, "a JSON object with keys");
  const char* key;
  json_t* value;
  size_t k = 0;
  json_object_foreach(root, key, value) {
    (void)value;
    if (used >= outlen || k++ == 16) break;
    used += (size_t)snprintf(out + used, outlen - used, "%s %s", k > 1 ? "," : "", key);
  }
  if (k == 0 && used < outlen) snprintf(out + used, outlen - used, " (none)");
  json_decref(root);
  return 0;
}

/* __tvm_ffi__metadata_<name> and __tvm_ffi__doc_<name>: safe-call functions
 * that a runtime calls (SYM-009, SYM-010). Data there is a FAIL, but its
 * text is decoded so the vendor sees what was meant. */
static int cert_check_described(const CertElf* elf, const CertSymbol* s, int is_metadata,
                                CertFindings* out) {
  const char* kind = is_metadata ? "metadata" : "doc";
  const char* check = is_metadata ? "static.metadata" : "static.doc";
  const char* clause = is_metadata ? "SYM-009" : "SYM-010";
  const char* fn = s->name + strlen(is_metadata ? "__tvm_ffi__metadata_" : "__tvm_ffi__doc_");
  char target[PATH_MAX];
  snprintf(target, sizeof target, "%s%s", CERT_PREFIX, fn);
  if (cert_elf_find(elf, target, 0) == NULL) {
    CERT_ADD(out, fn, "static.described-exists", "CST-005", CERT_NONSTRICT, s->name,
             "%s describes %s, which the library does not export", s->name, target);
  }
  if (s->is_function) {
    CERT_ADD(out, fn, check, clause, CERT_PASS, s->name,
             "%s is a safe-call function, as runtimes call it; its text is read by the dynamic "
             "stage, which calls it in a child process",
             s->name);
    return 0;
  }
  const char* form = "data";
  char* text = cert_decode_text(elf, s, &form);
  if (text == NULL) {
    CERT_ADD(out, fn, check, clause, CERT_FAIL, s->name,
             "%s is data without readable text, not a safe-call function: a runtime asking for "
             "the %s calls it and jumps into data",
             s->name, kind);
    return 0;
  }
  char what[512] = "text";
  if (is_metadata) cert_describe_json(text, what, sizeof what);
  CertText ev = {0};
  cert_text_add(&ev, text);
  int rc = cert_findings_add(out, fn, check, clause, "", CERT_FAIL, cert_text_end(&ev), "",
                             "%s is data (%s holding %s), not a safe-call function: a runtime "
                             "asking for the %s calls it and jumps into data",
                             s->name, form, what, kind);
  cert_text_free(&ev);
  free(text);
  return rc;
}

static int cert_check_reserved(const CertElf* elf, CertFindings* out) {
  static const char* const kDataNames[] = {"__tvm_ffi__library_bin", "__tvm_ffi__library_ctx",
                                           NULL};
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const CertSymbol* s = &elf->exports.items[i];
    if (!cert_starts(s->name, CERT_RESERVED)) continue;
    int is_data_name = cert_starts(s->name, "__tvm_ffi__cubin_");
    for (const char* const* d = kDataNames; *d != NULL; ++d) {
      if (strcmp(s->name, *d) == 0) is_data_name = 1;
    }
    if (cert_starts(s->name, "__tvm_ffi__metadata_")) {
      if (cert_check_described(elf, s, 1, out) != 0) return -1;
    } else if (cert_starts(s->name, "__tvm_ffi__doc_")) {
      if (cert_check_described(elf, s, 0, out) != 0) return -1;
    } else if (is_data_name && s->is_function) {
      CERT_ADD(out, "", "static.reserved-kind", "CST-003", CERT_FAIL, s->name,
               "%s is a function, but runtimes read it as data", s->name);
    } else if (strcmp(s->name, "__tvm_ffi__library_bin") == 0) {
      if (cert_check_library_bin(elf, s, out) != 0) return -1;
    } else if (!is_data_name) {
      CERT_ADD(out, "", "static.reserved-kind", "CST-003", CERT_WARN, s->name,
               "%s uses the reserved prefix __tvm_ffi__ with a name no runtime knows: no host "
               "calls or reads it",
               s->name);
    }
  }
  return 0;
}

/* ---- the runtime and the release table ---- */

static int cert_check_runtime_imports(const CertElf* elf, const CertElf* runtime,
                                      const char* runtime_path, CertFindings* out) {
  CertText missing = {0}, weak = {0};
  size_t total = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    const CertSymbol* s = &elf->imports.items[i];
    if (!cert_starts(s->name, "TVMFFI")) continue;
    total++;
    if (cert_elf_find(runtime, s->name, 0) != NULL) continue;
    cert_text_item(s->is_weak ? &weak : &missing, s->name);
  }
  int rc = 0;
  if (missing.items > 0) {
    rc = cert_findings_add(out, "", "static.runtime-imports", "CST-006", runtime_path, CERT_FAIL,
                           cert_text_end(&missing), "",
                           "imports %zu TVMFFI* symbol%s that the runtime %s does not define, "
                           "so the library does not load on it",
                           missing.items, missing.items == 1 ? "" : "s", runtime_path);
  } else {
    rc = cert_findings_add(out, "", "static.runtime-imports", "CST-006", runtime_path, CERT_PASS,
                           "", "", "the runtime defines all %zu TVMFFI* symbols it imports",
                           total);
  }
  if (rc == 0 && weak.items > 0) {
    rc = cert_findings_add(out, "", "static.runtime-imports", "CST-006", runtime_path, CERT_WARN,
                           cert_text_end(&weak), "",
                           "imports %zu TVMFFI* symbol%s weakly that the runtime does not "
                           "define: they are NULL at run time",
                           weak.items, weak.items == 1 ? "" : "s");
  }
  cert_text_free(&missing);
  cert_text_free(&weak);
  return rc;
}

static int cert_check_releases(const CertElf* elf, CertFindings* out) {
  size_t n = cert_release_count();
  uint32_t all = n >= 32 ? UINT32_MAX : ((uint32_t)1 << n) - 1;
  uint32_t mask = all;
  CertText unknown = {0};
  const char* newest_need = NULL; /* the symbol that sets the lower bound */
  size_t bound = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    const CertSymbol* s = &elf->imports.items[i];
    if (!cert_starts(s->name, "TVMFFI") || s->is_weak) continue;
    uint32_t m = cert_release_mask(s->name);
    if (m == 0) {
      cert_text_item(&unknown, s->name);
      continue;
    }
    mask &= m;
    size_t first = 0;
    while (first < n && !(m & ((uint32_t)1 << first))) first++;
    if (newest_need == NULL || first > bound) {
      newest_need = s->name;
      bound = first;
    }
  }
  int rc;
  if (unknown.items > 0) {
    rc = cert_findings_add(out, "", "static.releases", "", "", CERT_WARN, cert_text_end(&unknown),
                           "", "imports TVMFFI* symbols that no upstream release from %s to %s "
                           "defines: no pip apache-tvm-ffi runs it",
                           cert_release_name(0), cert_release_name(n - 1));
  } else if (mask == 0) {
    rc = cert_findings_add(out, "", "static.releases", "", "", CERT_WARN, "", "",
                           "no single upstream release defines every TVMFFI* symbol it imports");
  } else {
    size_t lo = 0, hi = n - 1;
    while (!(mask & ((uint32_t)1 << lo))) lo++;
    while (!(mask & ((uint32_t)1 << hi))) hi--;
    /* Symbols say which releases define the imports, and bound the
     * headers the library was built with from below when an import came
     * later than the first release; they say nothing of layouts, so no
     * range is called compatible here (certify --releases runs it). */
    char ev[256], built[256];
    if (newest_need == NULL) snprintf(ev, sizeof ev, "no TVMFFI* imports");
    else if (lo == 0) snprintf(ev, sizeof ev, "every TVMFFI* import is in %s", cert_release_name(0));
    else snprintf(ev, sizeof ev, "%s (first in %s)", newest_need, cert_release_name(lo));
    if (lo > 0) {
      snprintf(built, sizeof built, "built against >= %s, since it imports %s", cert_release_name(lo),
               newest_need);
    } else {
      snprintf(built, sizeof built, "which headers it was built with cannot be told from its symbols");
    }
    if (hi == n - 1) {
      rc = cert_findings_add(out, "", "static.releases", "", "", CERT_PASS, ev, "",
                             "imports are defined from %s on (symbols only); %s; certify --releases all "
                             "runs it under each release",
                             cert_release_name(lo), built);
    } else {
      rc = cert_findings_add(out, "", "static.releases", "", "", CERT_WARN, ev, "",
                             "imports are defined only from %s to %s (symbols only): later releases "
                             "dropped a symbol it imports, so it was built against < %s",
                             cert_release_name(lo), cert_release_name(hi), cert_release_name(hi + 1));
    }
  }
  cert_text_free(&unknown);
  return rc;
}

/* ---- the loader model: DT_NEEDED and undefined symbols ---- */

typedef struct {
  const CertElf* borrowed; /* the library, the runtime; NULL: `own` */
  CertElf own;
  char* requested;    /* the name it was loaded by */
  size_t parent;      /* the node whose DT_NEEDED brought it in (SIZE_MAX: a root) */
  int from_library;   /* reached from the library under test */
} CertNode;

enum { CERT_NODE_RUNTIME = 0, CERT_NODE_LIBRARY = 1 }; /* the two roots, in this order */

typedef struct {
  CertNode* nodes;
  size_t n, cap;
} CertLinkSet;

static int cert_link_push(CertLinkSet* set, const CertElf* elf, const char* requested,
                          size_t parent, int from_library) {
  if (set->n == set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 16;
    CertNode* grown = realloc(set->nodes, cap * sizeof *grown);
    if (grown == NULL) return -1;
    set->nodes = grown;
    set->cap = cap;
  }
  CertNode* node = &set->nodes[set->n];
  memset(node, 0, sizeof *node);
  node->borrowed = elf;
  node->requested = strdup(requested);
  if (node->requested == NULL) return -1;
  node->parent = parent;
  node->from_library = from_library;
  set->n++;
  return 0;
}

static void cert_link_free(CertLinkSet* set) {
  for (size_t i = 0; i < set->n; ++i) {
    if (set->nodes[i].borrowed == NULL) cert_elf_free(&set->nodes[i].own);
    free(set->nodes[i].requested);
  }
  free(set->nodes);
}

static const CertElf* cert_node_elf(const CertNode* node) {
  return node->borrowed != NULL ? node->borrowed : &node->own;
}

static const char* cert_base(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* A loaded object answers to the name it was requested by and its soname. */
static size_t cert_link_lookup(const CertLinkSet* set, const char* name, const char* path) {
  char want[PATH_MAX], have[PATH_MAX];
  int have_want = path != NULL && realpath(path, want) != NULL;
  for (size_t i = 0; i < set->n; ++i) {
    const CertNode* node = &set->nodes[i];
    if (strcmp(node->requested, name) == 0) return i;
    if (cert_node_elf(node)->soname != NULL && strcmp(cert_node_elf(node)->soname, name) == 0) return i;
    if (have_want && realpath(cert_node_elf(node)->path, have) != NULL && strcmp(want, have) == 0) return i;
  }
  return SIZE_MAX;
}

typedef struct {
  CertText missing;      /* "name (needed by X; looked in ...)" */
  size_t n_missing;
  CertText missing_names; /* just the names, for the consequences */
  CertText found;        /* "name => path" */
  CertText stubbed;      /* driver libraries this machine lacks, loaded as the toolkit's stubs */
  CertText no_driver;    /* driver libraries this machine lacks, with no stub to stand in */
  int runtime_unfindable; /* the library needs the runtime's soname but could not find it itself */
  char runtime_looked[1024];
} CertLinkReport;

/* The scopes for a search on behalf of node i: itself, then its loaders. */
static size_t cert_scopes(const CertLinkSet* set, size_t i, CertSearchScope* scopes, size_t max) {
  size_t n = 0;
  for (size_t at = i; at != SIZE_MAX && n < max; at = set->nodes[at].parent) {
    scopes[n].path = cert_node_elf(&set->nodes[at])->path;
    scopes[n].rpath = cert_node_elf(&set->nodes[at])->rpath;
    scopes[n].runpath = cert_node_elf(&set->nodes[at])->runpath;
    n++;
  }
  return n;
}

static int cert_resolve_needed(CertLinkSet* set, size_t i, const CertLoadEnv* env,
                               CertLinkReport* rep) {
  int from_library = set->nodes[i].from_library;
  /* Pushing a node may move the array, so node i is looked up afresh. */
  for (size_t k = 0; k < cert_node_elf(&set->nodes[i])->n_needed; ++k) {
    const CertElf* elf = cert_node_elf(&set->nodes[i]);
    const char* name = elf->needed[k];
    CertSearchScope scopes[16];
    size_t n_scopes = cert_scopes(set, i, scopes, 16);
    char where[1024];
    int found = cert_search_library(name, scopes, n_scopes, elf->machine, elf->elf_class, where,
                                    sizeof where);
    size_t loaded = cert_link_lookup(set, name, found ? where : NULL);
    if (from_library && i == CERT_NODE_LIBRARY && strcmp(name, CERT_RUNTIME_SONAME) == 0 && !found) {
      rep->runtime_unfindable = 1;
      snprintf(rep->runtime_looked, sizeof rep->runtime_looked, "%s", where);
    }
    if (loaded != SIZE_MAX) {
      if (from_library && !set->nodes[loaded].from_library) set->nodes[loaded].from_library = 1;
      if (from_library && i == CERT_NODE_LIBRARY) {
        char line[PATH_MAX + 64];
        snprintf(line, sizeof line, "%s => %s", name, cert_node_elf(&set->nodes[loaded])->path);
        cert_text_item(&rep->found, line);
      }
      continue;
    }
    char stub[64];
    if (!found && cert_driver_stub_name(name, stub, sizeof stub)) {
      /* The NVIDIA driver is not installed: the machine's gap. Stand the
       * toolkit's stub in for it, as the dynamic stage does. */
      int have_stub = env->driver_stubs != NULL &&
                      snprintf(where, sizeof where, "%s/%s", env->driver_stubs, stub) < (int)sizeof where &&
                      cert_elf_ident(where, &(int){0}, &(int){0}) == 0;
      if (from_library) cert_text_item(have_stub ? &rep->stubbed : &rep->no_driver, name);
      if (!have_stub) continue;
      found = 1;
    }
    if (!found) {
      if (from_library) {
        char line[2048];
        snprintf(line, sizeof line, "%s (needed by %s; looked in %s)", name,
                 cert_base(elf->path), where);
        cert_text_item(&rep->missing, line);
        cert_text_item(&rep->missing_names, name);
        rep->n_missing++;
      }
      continue;
    }
    if (set->n >= CERT_MAX_OBJECTS) continue;
    if (cert_link_push(set, NULL, name, i, from_library) != 0) return -1;
    elf = cert_node_elf(&set->nodes[i]);
    name = elf->needed[k];
    CertNode* node = &set->nodes[set->n - 1];
    char err[256];
    if (cert_elf_read(where, &node->own, err, sizeof err) != 0) {
      free(node->requested);
      set->n--;
      if (from_library) {
        char line[2048];
        snprintf(line, sizeof line, "%s (needed by %s; %s is unreadable: %s)", name,
                 cert_base(elf->path), where, err);
        cert_text_item(&rep->missing, line);
        rep->n_missing++;
      }
      continue;
    }
    if (from_library && i == CERT_NODE_LIBRARY) {
      char line[PATH_MAX + 64];
      snprintf(line, sizeof line, "%s => %s", name, where);
      cert_text_item(&rep->found, line);
    }
  }
  return 0;
}

/* The objects LD_PRELOAD names, loaded before everything else: a name
 * without a slash is searched for as the loader does. */
static int cert_link_preload(CertLinkSet* set, const CertElf* elf, const char* preload) {
  char* copy = preload ? strdup(preload) : NULL;
  if (preload && copy == NULL) return -1;
  char* save = NULL;
  int rc = 0;
  for (char* name = copy ? strtok_r(copy, " :", &save) : NULL; name != NULL && rc == 0;
       name = strtok_r(NULL, " :", &save)) {
    char where[1024];
    if (!cert_search_library(name, NULL, 0, elf->machine, elf->elf_class, where, sizeof where)) continue;
    if (set->n >= CERT_MAX_OBJECTS || cert_link_push(set, NULL, name, SIZE_MAX, 0) != 0) {
      rc = set->n >= CERT_MAX_OBJECTS ? 0 : -1;
      break;
    }
    CertNode* node = &set->nodes[set->n - 1];
    char err[256];
    if (cert_elf_read(where, &node->own, err, sizeof err) != 0) {
      free(node->requested);
      set->n--;
    }
  }
  free(copy);
  return rc;
}

/* Breadth first, like the loader: the runtime's tree and the library's. */
static int cert_link(const CertElf* elf, const CertElf* runtime, const CertLoadEnv* env,
                     CertLinkSet* set, CertLinkReport* rep) {
  if (cert_link_push(set, runtime, runtime->path, SIZE_MAX, 0) != 0) return -1;
  if (cert_link_push(set, elf, elf->path, SIZE_MAX, 1) != 0) return -1;
  if (cert_link_preload(set, elf, env->preload) != 0) return -1;
  /* The library's own needs first, so that what it reaches is marked as its. */
  if (cert_resolve_needed(set, CERT_NODE_LIBRARY, env, rep) != 0) return -1;
  if (cert_resolve_needed(set, CERT_NODE_RUNTIME, env, rep) != 0) return -1;
  for (size_t i = 2; i < set->n; ++i) {
    if (cert_resolve_needed(set, i, env, rep) != 0) return -1;
  }
  return 0;
}

static int cert_defined_in(const CertLinkSet* set, const char* name) {
  for (size_t i = 0; i < set->n; ++i) {
    if (i == CERT_NODE_LIBRARY) continue; /* its own undefined symbols are what we look for */
    if (cert_elf_find(cert_node_elf(&set->nodes[i]), name, 0) != NULL) return 1;
  }
  return 0;
}

/* DT_NEEDED: each missing library is one finding that says what follows
 * from it; a driver this machine lacks is the machine's gap (SKIP). */
static int cert_report_needed(const CertElf* elf, CertLinkReport* rep, const CertLoadEnv* env,
                              const char* runtime_path, CertFindings* out) {
  int rc = 0;
  if (rep->n_missing > 0) {
    rc = cert_findings_add(out, "", "static.needed-found", "CST-007", runtime_path, CERT_FAIL,
                           cert_text_end(&rep->missing), "",
                           "%zu needed librar%s (%s) cannot be found the way the dynamic loader "
                           "searches, so the library does not load here: none of its functions "
                           "could be probed, and undefined symbols the missing librar%s may define "
                           "are not judged. If hosts provide it (a package that loads it first), "
                           "give certify the same with LD_LIBRARY_PATH or LD_PRELOAD",
                           rep->n_missing, rep->n_missing == 1 ? "y" : "ies",
                           cert_text_end(&rep->missing_names), rep->n_missing == 1 ? "y" : "ies");
  } else {
    rc = cert_findings_add(out, "", "static.needed-found", "CST-007", runtime_path, CERT_PASS,
                           cert_text_end(&rep->found), "",
                           "every needed library is found (%zu direct)", elf->n_needed);
  }
  if (rc == 0 && rep->stubbed.items > 0) {
    rc = cert_findings_add(out, "", "static.driver", "", runtime_path, CERT_SKIP,
                           env->driver_stubs ? env->driver_stubs : "", "",
                           "needs the NVIDIA driver (%s), which this machine does not have: certify "
                           "loads the library against the CUDA toolkit's driver stub instead, so it "
                           "loads and is probed, and calls that need a GPU say so and SKIP",
                           cert_text_end(&rep->stubbed));
  }
  if (rc == 0 && rep->no_driver.items > 0) {
    rc = cert_findings_add(out, "", "static.driver", "", runtime_path, CERT_SKIP, "", "",
                           "needs the NVIDIA driver (%s), which this machine does not have, and "
                           "no driver stub of the CUDA toolkit was found to stand in: the library "
                           "cannot load here, so nothing of it could be called",
                           cert_text_end(&rep->no_driver));
  }
  return rc;
}

/* Undefined symbols nothing in the link set defines, sorted by what the
 * loader does with them (with lazy binding, as hosts load kernel
 * libraries): bound at load (the load fails), bound at a call's first use
 * (that call ends the process), or upstream's C++ API (static.cxx-api). */
static int cert_report_undefined(const CertElf* elf, const CertLinkSet* set,
                                 const CertLinkReport* rep, const char* runtime_path,
                                 CertFindings* out) {
  CertText now = {0}, lazy = {0}, cxx = {0};
  for (size_t i = 0; i < elf->imports.n; ++i) {
    const CertSymbol* s = &elf->imports.items[i];
    if (s->is_weak || cert_starts(s->name, "TVMFFI")) continue; /* TVMFFI*: CST-006 */
    if (!s->is_referenced) continue; /* no relocation: the loader never looks it up */
    if (cert_defined_in(set, s->name)) continue;
    cert_text_item(cert_is_upstream_cxx_symbol(s->name) ? &cxx : s->is_lazy ? &lazy : &now, s->name);
  }
  size_t cxx_total = cert_count_cxx_imports(elf, NULL);
  int rc = 0;
  if (rep->n_missing > 0 || rep->no_driver.items > 0) {
    size_t n = now.items + lazy.items + cxx.items;
    CertText all = {0};
    cert_text_add(&all, cert_text_end(&now));
    if (now.items && lazy.items) cert_text_add(&all, ", ");
    cert_text_add(&all, cert_text_end(&lazy));
    rc = cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path,
                           n ? CERT_SKIP : CERT_PASS, cert_text_end(&all), "",
                           n ? "%zu undefined symbol%s not judged: a needed library that is missing "
                               "here may define them (static.needed-found)"
                             : "every undefined symbol is defined by the runtime or a needed "
                               "library found here (%zu)",
                           n ? n : set->n, n == 1 ? "" : "s");
    cert_text_free(&all);
  } else if (now.items > 0) {
    rc = cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path, CERT_FAIL,
                           cert_text_end(&now), "",
                           "%zu undefined symbol%s that neither the runtime nor any library it needs "
                           "(directly or through others) defines, and that the loader binds when it "
                           "loads the library (data%s): the load fails",
                           now.items, now.items == 1 ? "" : "s",
                           elf->bind_now ? ", and every function: it asks for immediate binding" : "");
  }
  if (rc == 0 && rep->n_missing == 0 && rep->no_driver.items == 0 && lazy.items > 0) {
    rc = cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path, CERT_WARN,
                           cert_text_end(&lazy), "",
                           "%zu function%s that nothing loaded defines: the library loads with lazy "
                           "binding, as hosts load it (tvm_ffi.load_module: RTLD_LAZY | RTLD_LOCAL), "
                           "but a call that reaches one ends the host process with 'symbol lookup "
                           "error' (the probes show which calls do)",
                           lazy.items, lazy.items == 1 ? "" : "s");
  } else if (rc == 0 && rep->n_missing == 0 && rep->no_driver.items == 0 && now.items == 0) {
    rc = cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path, CERT_PASS, "", "",
                           "every undefined symbol is defined by the runtime or a needed library "
                           "(%zu libraries read)", set->n);
  }
  if (rc == 0 && cxx_total > 0) {
    CertText all = {0};
    cert_count_cxx_imports(elf, &all);
    rc = cxx.items == 0
             ? cert_findings_add(out, "", "static.cxx-api", "", runtime_path, CERT_WARN,
                                 cert_text_end(&all), "",
                                 "built on upstream's C++ API: it imports %zu C++ symbol%s of "
                                 "namespace tvm::ffi, which the C ABI does not have, so it runs only "
                                 "on a runtime that defines them (this one does; upstream's "
                                 "libtvm_ffi.so does)",
                                 cxx_total, cxx_total == 1 ? "" : "s")
             : cert_findings_add(out, "", "static.cxx-api", "", runtime_path, CERT_SKIP,
                                 cert_text_end(&cxx), "",
                                 "built on upstream's C++ API: this runtime defines %zu of the %zu "
                                 "C++ symbols of namespace tvm::ffi it imports, so under it the "
                                 "library loads (they are bound lazily) but calls that reach them "
                                 "cannot run; they are judged under upstream's runtime",
                                 cxx_total - cxx.items, cxx_total);
    cert_text_free(&all);
  }
  cert_text_free(&now);
  cert_text_free(&lazy);
  cert_text_free(&cxx);
  return rc;
}

static void cert_link_report_free(CertLinkReport* rep) {
  cert_text_free(&rep->missing);
  cert_text_free(&rep->missing_names);
  cert_text_free(&rep->found);
  cert_text_free(&rep->stubbed);
  cert_text_free(&rep->no_driver);
}

/* With runtime == NULL (unreadable) the libraries are still searched, but
 * undefined symbols are not judged: the runtime might define them. */
static int cert_check_linking(const CertElf* elf, const CertElf* runtime,
                              const char* runtime_path, const char* runtime_err,
                              const CertLoadEnv* env, CertFindings* out) {
  CertElf none;
  memset(&none, 0, sizeof none);
  none.path = (char*)"";
  int runtime_known = runtime != NULL;
  if (!runtime_known) runtime = &none;
  CertLinkSet set = {0};
  CertLinkReport rep = {0};
  int rc = cert_link(elf, runtime, env, &set, &rep);
  if (rc == 0) rc = cert_report_needed(elf, &rep, env, runtime_path, out);
  if (rc == 0 && rep.runtime_unfindable && runtime_known) {
    const char* soname = runtime->soname ? runtime->soname : "(none)";
    rc = cert_findings_add(out, "", "static.runtime-findable", "", runtime_path, CERT_WARN,
                           rep.runtime_looked, "",
                           "needs %s but has no DT_RUNPATH or DT_RPATH that finds one: it loads "
                           "only into a process that already loaded a runtime whose soname is "
                           "%s (this runtime's soname: %s)",
                           CERT_RUNTIME_SONAME, CERT_RUNTIME_SONAME, soname);
  }
  if (rc == 0 && !runtime_known) {
    rc = cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path, CERT_SKIP,
                           runtime_err, "",
                           "the runtime could not be read, so undefined symbols were not "
                           "resolved");
  } else if (rc == 0) {
    rc = cert_report_undefined(elf, &set, &rep, runtime_path, out);
  }
  cert_link_report_free(&rep);
  cert_link_free(&set);
  return rc;
}

/* Importing TVMFFI* without naming libtvm_ffi.so binds those references to
 * whatever runtime the host loaded globally before. */
static int cert_check_runtime_needed(const CertElf* elf, CertFindings* out) {
  int imports_tvmffi = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    if (cert_starts(elf->imports.items[i].name, "TVMFFI")) imports_tvmffi = 1;
  }
  int needs = 0;
  for (size_t i = 0; i < elf->n_needed; ++i) {
    if (strcmp(elf->needed[i], CERT_RUNTIME_SONAME) == 0) needs = 1;
  }
  if (imports_tvmffi && !needs) {
    CERT_ADD(out, "", "static.runtime-needed", "KER-002", CERT_WARN, "",
             "imports TVMFFI* symbols without %s in DT_NEEDED: it loads only into a process that "
             "already loaded a runtime with RTLD_GLOBAL (as tvm_ffi in Python does), and "
             "dlopen of it alone fails with undefined symbols",
             CERT_RUNTIME_SONAME);
  }
  return 0;
}

static int cert_check_cuda_stream(const CertElf* elf, CertFindings* out) {
  if (!elf->uses_cuda) return 0;
  if (elf->imports_env_get_stream) {
    CERT_ADD(out, "", "static.cuda-stream", "DEV-005", CERT_PASS, "TVMFFIEnvGetStream",
             "launches CUDA work and imports TVMFFIEnvGetStream");
    return 0;
  }
  CERT_ADD(out, "", "static.cuda-stream", "DEV-005", CERT_WARN, "",
           "launches CUDA work but does not import TVMFFIEnvGetStream: unless a function takes "
           "the stream as an argument (the file cannot show that), its work runs on a stream "
           "the caller did not choose");
  return 0;
}

int cert_static_checks(const CertElf* elf, const char* runtime_path, CertFindings* out) {
  CertLoadEnv env = {getenv("LD_PRELOAD"), NULL};
  return cert_static_checks_in(elf, runtime_path, &env, out);
}

int cert_static_checks_in(const CertElf* elf, const char* runtime_path, const CertLoadEnv* env,
                          CertFindings* out) {
  if (cert_check_exports(elf, out) != 0) return -1;
  if (cert_check_export_kinds(elf, out) != 0) return -1;
  if (cert_check_reserved(elf, out) != 0) return -1;
  if (cert_check_runtime_needed(elf, out) != 0) return -1;
  if (cert_check_cuda_stream(elf, out) != 0) return -1;
  if (cert_check_releases(elf, out) != 0) return -1;
  CertElf runtime;
  char err[512] = "";
  if (runtime_path == NULL || cert_elf_read(runtime_path, &runtime, err, sizeof err) != 0) {
    const char* why = runtime_path == NULL ? "no runtime given" : err;
    const char* rt = runtime_path ? runtime_path : "";
    if (cert_findings_add(out, "", "static.runtime-imports", "CST-006", rt, CERT_SKIP, why, "",
                          "the runtime could not be read, so its symbols are unknown") != 0)
      return -1;
    return cert_check_linking(elf, NULL, rt, why, env, out);
  }
  int rc = cert_check_runtime_imports(elf, &runtime, runtime_path, out);
  if (rc == 0) rc = cert_check_linking(elf, &runtime, runtime_path, "", env, out);
  cert_elf_free(&runtime);
  return rc;
}
