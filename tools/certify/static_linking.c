/* The loader model: what ld.so would do loading the library into a host
 * that loaded the runtime first, read from the files alone. DT_NEEDED
 * entries are searched for as ld.so searches them (lib_search.h), and the
 * undefined symbols resolved against the runtime and every library that
 * loads (static.needed-found, static.undefined, static.runtime-findable,
 * static.driver, static.cxx-api). */
#include "static_linking.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_search.h"
#include "reference/vec.h"
#include "symbol_names.h"

/* The loader model reads at most this many libraries (a dependency bomb). */
#define CERT_MAX_OBJECTS 256

size_t cert_count_cxx_imports(const CertElf* elf, CertBuf* list) {
  size_t n = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    if (!cert_is_upstream_cxx_symbol(elf->imports.items[i].name)) continue;
    n++;
    if (list) cert_buf_item(list, elf->imports.items[i].name);
  }
  return n;
}

typedef struct {
  const CertElf* borrowed; /* the library, the runtime; NULL: `own` */
  CertElf own;
  char* requested;  /* the name it was loaded by */
  size_t parent;    /* the node whose DT_NEEDED brought it in (SIZE_MAX: a root) */
  int from_library; /* reached from the library under test */
} CertNode;

enum { CERT_NODE_RUNTIME = 0, CERT_NODE_LIBRARY = 1 }; /* the two roots, in this order */

typedef struct {
  CertNode* nodes;
  size_t n, cap;
} CertLinkSet;

static int link_push(CertLinkSet* set, const CertElf* elf, const char* requested, size_t parent,
                     int from_library) {
  if (tffi_vec_reserve(&set->nodes, &set->cap, set->n + 1, sizeof *set->nodes) != 0) return -1;
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

static void link_free(CertLinkSet* set) {
  for (size_t i = 0; i < set->n; ++i) {
    if (set->nodes[i].borrowed == NULL) cert_elf_free(&set->nodes[i].own);
    free(set->nodes[i].requested);
  }
  free(set->nodes);
}

static const CertElf* node_elf(const CertNode* node) {
  return node->borrowed != NULL ? node->borrowed : &node->own;
}

static const char* file_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* A loaded object answers to the name it was requested by and its soname. */
static size_t link_lookup(const CertLinkSet* set, const char* name, const char* path) {
  char want[PATH_MAX], have[PATH_MAX];
  int have_want = path != NULL && realpath(path, want) != NULL;
  for (size_t i = 0; i < set->n; ++i) {
    const CertNode* node = &set->nodes[i];
    if (strcmp(node->requested, name) == 0) return i;
    if (node_elf(node)->soname != NULL && strcmp(node_elf(node)->soname, name) == 0) return i;
    if (have_want && realpath(node_elf(node)->path, have) != NULL && strcmp(want, have) == 0)
      return i;
  }
  return SIZE_MAX;
}

typedef struct {
  CertBuf missing; /* "name (needed by X; looked in ...)" */
  size_t n_missing;
  CertBuf missing_names;  /* just the names, for the consequences */
  CertBuf found;          /* "name => path" */
  CertBuf stubbed;        /* driver libraries this machine lacks, loaded as the toolkit's stubs */
  CertBuf no_driver;      /* driver libraries this machine lacks, with no stub to stand in */
  int runtime_unfindable; /* the library needs the runtime's soname but could not find it itself */
  char runtime_looked[1024];
} CertLinkReport;

/* The scopes for a search on behalf of node i: itself, then its loaders. */
static size_t search_scopes(const CertLinkSet* set, size_t i, CertSearchScope* scopes, size_t max) {
  size_t n = 0;
  for (size_t at = i; at != SIZE_MAX && n < max; at = set->nodes[at].parent) {
    scopes[n].path = node_elf(&set->nodes[at])->path;
    scopes[n].rpath = node_elf(&set->nodes[at])->rpath;
    scopes[n].runpath = node_elf(&set->nodes[at])->runpath;
    n++;
  }
  return n;
}

static int resolve_needed(CertLinkSet* set, size_t i, const CertLoadEnv* env, CertLinkReport* rep) {
  int from_library = set->nodes[i].from_library;
  /* Pushing a node may move the array, so node i is looked up afresh. */
  for (size_t k = 0; k < node_elf(&set->nodes[i])->n_needed; ++k) {
    const CertElf* elf = node_elf(&set->nodes[i]);
    const char* name = elf->needed[k];
    CertSearchScope scopes[16];
    size_t n_scopes = search_scopes(set, i, scopes, 16);
    char where[1024];
    int found = cert_search_library(name, scopes, n_scopes, elf->machine, elf->elf_class, where,
                                    sizeof where);
    size_t loaded = link_lookup(set, name, found ? where : NULL);
    if (from_library && i == CERT_NODE_LIBRARY && strcmp(name, CERT_RUNTIME_SONAME) == 0 &&
        !found) {
      rep->runtime_unfindable = 1;
      snprintf(rep->runtime_looked, sizeof rep->runtime_looked, "%s", where);
    }
    if (loaded != SIZE_MAX) {
      if (from_library && !set->nodes[loaded].from_library) set->nodes[loaded].from_library = 1;
      if (from_library && i == CERT_NODE_LIBRARY) {
        char line[PATH_MAX + 64];
        snprintf(line, sizeof line, "%s => %s", name, node_elf(&set->nodes[loaded])->path);
        cert_buf_item(&rep->found, line);
      }
      continue;
    }
    char stub[64];
    if (!found && cert_driver_stub_name(name, stub, sizeof stub)) {
      /* The NVIDIA driver is not installed: the machine's gap. Stand the
       * toolkit's stub in for it, as the dynamic stage does. */
      int have_stub =
          env->driver_stubs != NULL &&
          snprintf(where, sizeof where, "%s/%s", env->driver_stubs, stub) < (int)sizeof where &&
          cert_elf_ident(where, &(int){0}, &(int){0}) == 0;
      if (from_library) cert_buf_item(have_stub ? &rep->stubbed : &rep->no_driver, name);
      if (!have_stub) continue;
      found = 1;
    }
    if (!found) {
      if (from_library) {
        char line[2048];
        snprintf(line, sizeof line, "%s (needed by %s; looked in %s)", name, file_name(elf->path),
                 where);
        cert_buf_item(&rep->missing, line);
        cert_buf_item(&rep->missing_names, name);
        rep->n_missing++;
      }
      continue;
    }
    if (set->n >= CERT_MAX_OBJECTS) continue;
    if (link_push(set, NULL, name, i, from_library) != 0) return -1;
    elf = node_elf(&set->nodes[i]);
    name = elf->needed[k];
    CertNode* node = &set->nodes[set->n - 1];
    char err[256];
    if (cert_elf_read(where, &node->own, err, sizeof err) != 0) {
      free(node->requested);
      set->n--;
      if (from_library) {
        char line[2048];
        snprintf(line, sizeof line, "%s (needed by %s; %s is unreadable: %s)", name,
                 file_name(elf->path), where, err);
        cert_buf_item(&rep->missing, line);
        rep->n_missing++;
      }
      continue;
    }
    if (from_library && i == CERT_NODE_LIBRARY) {
      char line[PATH_MAX + 64];
      snprintf(line, sizeof line, "%s => %s", name, where);
      cert_buf_item(&rep->found, line);
    }
  }
  return 0;
}

/* The objects LD_PRELOAD names, loaded before everything else: a name
 * without a slash is searched for as the loader does. */
static int link_preload(CertLinkSet* set, const CertElf* elf, const char* preload) {
  char* copy = preload ? strdup(preload) : NULL;
  if (preload && copy == NULL) return -1;
  char* save = NULL;
  int rc = 0;
  for (char* name = copy ? strtok_r(copy, " :", &save) : NULL; name != NULL && rc == 0;
       name = strtok_r(NULL, " :", &save)) {
    char where[1024];
    if (!cert_search_library(name, NULL, 0, elf->machine, elf->elf_class, where, sizeof where))
      continue;
    if (set->n >= CERT_MAX_OBJECTS || link_push(set, NULL, name, SIZE_MAX, 0) != 0) {
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
static int link_library(const CertElf* elf, const CertElf* runtime, const CertLoadEnv* env,
                        CertLinkSet* set, CertLinkReport* rep) {
  if (link_push(set, runtime, runtime->path, SIZE_MAX, 0) != 0) return -1;
  if (link_push(set, elf, elf->path, SIZE_MAX, 1) != 0) return -1;
  if (link_preload(set, elf, env->preload) != 0) return -1;
  /* The library's own needs first, so that what it reaches is marked as its. */
  if (resolve_needed(set, CERT_NODE_LIBRARY, env, rep) != 0) return -1;
  if (resolve_needed(set, CERT_NODE_RUNTIME, env, rep) != 0) return -1;
  for (size_t i = 2; i < set->n; ++i) {
    if (resolve_needed(set, i, env, rep) != 0) return -1;
  }
  return 0;
}

static int defined_in(const CertLinkSet* set, const char* name) {
  for (size_t i = 0; i < set->n; ++i) {
    if (i == CERT_NODE_LIBRARY) continue; /* its own undefined symbols are what we look for */
    if (cert_elf_find(node_elf(&set->nodes[i]), name, 0) != NULL) return 1;
  }
  return 0;
}

/* DT_NEEDED: each missing library is one finding that says what follows
 * from it; a driver this machine lacks is the machine's gap (SKIP). */
static int report_needed(const CertElf* elf, CertLinkReport* rep, const CertLoadEnv* env,
                         const char* runtime_path, CertFindings* out) {
  int rc = 0;
  if (rep->n_missing > 0) {
    rc = cert_findings_add(out, "", "static.needed-found", "CST-007", runtime_path, CERT_FAIL,
                           cert_buf_end(&rep->missing), "",
                           "%zu needed librar%s (%s) cannot be found the way the dynamic loader "
                           "searches, so the library does not load here: none of its functions "
                           "could be probed, and undefined symbols the missing librar%s may define "
                           "are not judged. If hosts provide it (a package that loads it first), "
                           "give certify the same with LD_LIBRARY_PATH or LD_PRELOAD",
                           rep->n_missing, rep->n_missing == 1 ? "y" : "ies",
                           cert_buf_end(&rep->missing_names), rep->n_missing == 1 ? "y" : "ies");
  } else {
    rc = cert_findings_add(out, "", "static.needed-found", "CST-007", runtime_path, CERT_PASS,
                           cert_buf_end(&rep->found), "",
                           "every needed library is found (%zu direct)", elf->n_needed);
  }
  if (rc == 0 && rep->stubbed.items > 0) {
    rc =
        cert_findings_add(out, "", "static.driver", "", runtime_path, CERT_SKIP,
                          env->driver_stubs ? env->driver_stubs : "", "",
                          "needs the NVIDIA driver (%s), which this machine does not have: certify "
                          "loads the library against the CUDA toolkit's driver stub instead, so it "
                          "loads and is probed, and calls that need a GPU say so and SKIP",
                          cert_buf_end(&rep->stubbed));
  }
  if (rc == 0 && rep->no_driver.items > 0) {
    rc = cert_findings_add(out, "", "static.driver", "", runtime_path, CERT_SKIP, "", "",
                           "needs the NVIDIA driver (%s), which this machine does not have, and "
                           "no driver stub of the CUDA toolkit was found to stand in: the library "
                           "cannot load here, so nothing of it could be called",
                           cert_buf_end(&rep->no_driver));
  }
  return rc;
}

/* Undefined symbols nothing in the link set defines, sorted by what the
 * loader does with them (with lazy binding, as hosts load kernel
 * libraries): bound at load (the load fails), bound at a call's first use
 * (that call ends the process), or upstream's C++ API (static.cxx-api). */
static int report_undefined(const CertElf* elf, const CertLinkSet* set, const CertLinkReport* rep,
                            const char* runtime_path, CertFindings* out) {
  CertBuf now = {0}, lazy = {0}, cxx = {0};
  for (size_t i = 0; i < elf->imports.n; ++i) {
    const CertSymbol* s = &elf->imports.items[i];
    if (s->is_weak || cert_starts_with(s->name, "TVMFFI")) continue; /* TVMFFI*: CST-006 */
    if (!s->is_referenced) continue; /* no relocation: the loader never looks it up */
    if (defined_in(set, s->name)) continue;
    cert_buf_item(cert_is_upstream_cxx_symbol(s->name) ? &cxx : s->is_lazy ? &lazy : &now, s->name);
  }
  size_t cxx_total = cert_count_cxx_imports(elf, NULL);
  int rc = 0;
  if (rep->n_missing > 0 || rep->no_driver.items > 0) {
    size_t n = now.items + lazy.items + cxx.items;
    CertBuf all = {0};
    cert_buf_add(&all, cert_buf_end(&now));
    if (now.items && lazy.items) cert_buf_add(&all, ", ");
    cert_buf_add(&all, cert_buf_end(&lazy));
    rc =
        cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path,
                          n ? CERT_SKIP : CERT_PASS, cert_buf_end(&all), "",
                          n ? "%zu undefined symbol%s not judged: a needed library that is missing "
                              "here may define them (static.needed-found)"
                            : "every undefined symbol is defined by the runtime or a needed "
                              "library found here (%zu)",
                          n ? n : set->n, n == 1 ? "" : "s");
    cert_buf_free(&all);
  } else if (now.items > 0) {
    rc = cert_findings_add(
        out, "", "static.undefined", "CST-008", runtime_path, CERT_FAIL, cert_buf_end(&now), "",
        "%zu undefined symbol%s that neither the runtime nor any library it needs "
        "(directly or through others) defines, and that the loader binds when it "
        "loads the library (data%s): the load fails",
        now.items, now.items == 1 ? "" : "s",
        elf->bind_now ? ", and every function: it asks for immediate binding" : "");
  }
  if (rc == 0 && rep->n_missing == 0 && rep->no_driver.items == 0 && lazy.items > 0) {
    rc = cert_findings_add(
        out, "", "static.undefined", "CST-008", runtime_path, CERT_WARN, cert_buf_end(&lazy), "",
        "%zu function%s that nothing loaded defines: the library loads with lazy "
        "binding, as hosts load it (tvm_ffi.load_module: RTLD_LAZY | RTLD_LOCAL), "
        "but a call that reaches one ends the host process with 'symbol lookup "
        "error' (the probes show which calls do)",
        lazy.items, lazy.items == 1 ? "" : "s");
  } else if (rc == 0 && rep->n_missing == 0 && rep->no_driver.items == 0 && now.items == 0) {
    rc = cert_findings_add(out, "", "static.undefined", "CST-008", runtime_path, CERT_PASS, "", "",
                           "every undefined symbol is defined by the runtime or a needed library "
                           "(%zu libraries read)",
                           set->n);
  }
  if (rc == 0 && cxx_total > 0) {
    CertBuf all = {0};
    cert_count_cxx_imports(elf, &all);
    rc = cxx.items == 0
             ? cert_findings_add(
                   out, "", "static.cxx-api", "", runtime_path, CERT_WARN, cert_buf_end(&all), "",
                   "built on upstream's C++ API: it imports %zu C++ symbol%s of "
                   "namespace tvm::ffi, which the C ABI does not have, so it runs only "
                   "on a runtime that defines them (this one does; upstream's "
                   "libtvm_ffi.so does)",
                   cxx_total, cxx_total == 1 ? "" : "s")
             : cert_findings_add(out, "", "static.cxx-api", "", runtime_path, CERT_SKIP,
                                 cert_buf_end(&cxx), "",
                                 "built on upstream's C++ API: this runtime defines %zu of the %zu "
                                 "C++ symbols of namespace tvm::ffi it imports, so under it the "
                                 "library loads (they are bound lazily) but calls that reach them "
                                 "cannot run; they are judged under upstream's runtime",
                                 cxx_total - cxx.items, cxx_total);
    cert_buf_free(&all);
  }
  cert_buf_free(&now);
  cert_buf_free(&lazy);
  cert_buf_free(&cxx);
  return rc;
}

static void link_report_free(CertLinkReport* rep) {
  cert_buf_free(&rep->missing);
  cert_buf_free(&rep->missing_names);
  cert_buf_free(&rep->found);
  cert_buf_free(&rep->stubbed);
  cert_buf_free(&rep->no_driver);
}

/* With runtime == NULL (unreadable) the libraries are still searched, but
 * undefined symbols are not judged: the runtime might define them. */
int cert_check_linking(const CertElf* elf, const CertElf* runtime, const char* runtime_path,
                       const char* runtime_err, const CertLoadEnv* env, CertFindings* out) {
  CertElf none;
  memset(&none, 0, sizeof none);
  none.path = (char*)"";
  int runtime_known = runtime != NULL;
  if (!runtime_known) runtime = &none;
  CertLinkSet set = {0};
  CertLinkReport rep = {0};
  int rc = link_library(elf, runtime, env, &set, &rep);
  if (rc == 0) rc = report_needed(elf, &rep, env, runtime_path, out);
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
    rc = report_undefined(elf, &set, &rep, runtime_path, out);
  }
  link_report_free(&rep);
  link_free(&set);
  return rc;
}
