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
#include "buf.h"
#include "static_linking.h"
#include "symbol_names.h"
#include "reference/library_bin.h"
#include "release_table.h"

/* A decoded metadata or doc string longer than this is cut (bounded memory). */
#define CERT_MAX_TEXT ((size_t)1 << 20)

/* Appends one finding; a failed append (out of memory) is a tool error. */
#define CERT_ADD(out, fn, check, clause, verdict, evidence, ...)                         \
  do {                                                                                   \
    if (cert_findings_add((out), (fn), (check), (clause), "", (verdict), (evidence), "", \
                          __VA_ARGS__) != 0)                                             \
      return -1;                                                                         \
  } while (0)

/* ---- exports ---- */

/* A name that looks like a misspelt export prefix, for a hint. */
static const char* near_miss(const CertElf* elf) {
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const char* n = elf->exports.items[i].name;
    if (!cert_starts_with(n, CERT_EXPORT_PREFIX) && strstr(n, "tvm_ffi") != NULL) return n;
  }
  return NULL;
}

/* Imports through which a library registers global functions or types when
 * it loads (upstream's C++ registration macros end in these). */
static const char* registration_import(const CertElf* elf) {
  static const char* const kRegister[] = {"TVMFFIFunctionSetGlobal",
                                          "TVMFFIFunctionSetGlobalFromMethodInfo",
                                          "TVMFFITypeGetOrAllocIndex",
                                          "TVMFFITypeRegisterField",
                                          "TVMFFITypeRegisterMethod",
                                          "TVMFFITypeRegisterAttr",
                                          NULL};
  for (const char* const* r = kRegister; *r != NULL; ++r) {
    if (cert_elf_find(elf, *r, 1) != NULL) return *r;
  }
  return NULL;
}

static int check_exports(const CertElf* elf, CertFindings* out) {
  size_t n = cert_elf_callable(elf, NULL, 0);
  const char* registers = registration_import(elf);
  if (n == 0 && registers != NULL && near_miss(elf) == NULL) {
    size_t cxx = cert_count_cxx_imports(elf, NULL);
    CERT_ADD(out, "", "static.exports", "CST-001", CERT_SKIP, registers,
             "exports no function __tvm_ffi_<name>: it registers global functions or types when "
             "it loads (it imports %s)%s, so hosts reach it through the runtime's registry, not "
             "through exports; certify calls exported functions only: the dynamic stage loads it "
             "and lists what it registers",
             registers,
             cxx ? ", as libraries built on upstream's C++ API do (static.cxx-api)" : "");
    return 0;
  }
  if (n == 0) {
    const char* near = near_miss(elf);
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
  CertBuf list = {0};
  for (size_t i = 0; i < n; ++i) cert_buf_item(&list, names[i]);
  free(names);
  int rc =
      cert_findings_add(out, "", "static.exports", "CST-001", "", CERT_PASS, cert_buf_end(&list),
                        "", "exports %zu function%s __tvm_ffi_<name>", n, n == 1 ? "" : "s");
  cert_buf_free(&list);
  return rc;
}

/* Every non-reserved __tvm_ffi_<name> must be code. */
static int check_export_kinds(const CertElf* elf, CertFindings* out) {
  size_t prefix = strlen(CERT_EXPORT_PREFIX);
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const CertSymbol* s = &elf->exports.items[i];
    if (!cert_starts_with(s->name, CERT_EXPORT_PREFIX) ||
        cert_starts_with(s->name, CERT_RESERVED_PREFIX))
      continue;
    const char* fn = s->name + prefix;
    if (s->is_function) continue;
    CERT_ADD(out, fn, "static.export-kind", "CST-002", CERT_FAIL, s->name,
             "%s is data (%zu bytes), not a function: a host that calls it jumps into data",
             s->name, s->size);
  }
  return 0;
}

/* ---- reserved names: library_bin, metadata, doc ---- */

static int check_library_bin(const CertElf* elf, const CertSymbol* s, CertFindings* out) {
  if (s->file_bytes == 0 || s->file_bytes < s->size) {
    CERT_ADD(out, "", "static.library-bin", "CST-004", CERT_FAIL, s->name,
             "__tvm_ffi__library_bin has %zu of its %zu bytes in the file (it lies in a "
             "section without contents), so a loader reads no blob",
             s->file_bytes, s->size);
    return 0;
  }
  TffiLibraryBinView bin;
  int rc = tffi_library_bin_check(elf->image + s->file_offset, s->file_bytes, &bin);
  if (rc == 0) {
    char ev[128];
    snprintf(ev, sizeof ev, "%zu modules, %zu imports, nbytes %llu", bin.num_modules,
             bin.num_children, (unsigned long long)tffi_library_bin_u64(bin.data, 0));
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
  CERT_ADD(out, "", "static.library-bin", "CST-004", CERT_FAIL, msg,
           "__tvm_ffi__library_bin is malformed at byte %zu (field %s): every runtime refuses "
           "to load the library",
           offset, field);
  return 0;
}

/* The text a data symbol holds: a char array, or a pointer variable whose
 * RELATIVE relocation says where its string lives. NULL when neither. */
static char* decode_text(const CertElf* elf, const CertSymbol* s, const char** form) {
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
static int describe_json(const char* text, char* out, size_t outlen) {
  json_error_t error;
  json_t* root = json_loads(text, JSON_REJECT_DUPLICATES, &error);
  if (root == NULL) {
    snprintf(out, outlen, "not JSON (line %d column %d: %s)", error.line, error.column, error.text);
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
static int check_described(const CertElf* elf, const CertSymbol* s, int is_metadata,
                           CertFindings* out) {
  const char* kind = is_metadata ? "metadata" : "doc";
  const char* check = is_metadata ? "static.metadata" : "static.doc";
  const char* clause = is_metadata ? "SYM-009" : "SYM-010";
  const char* fn = s->name + strlen(is_metadata ? CERT_METADATA_PREFIX : CERT_DOC_PREFIX);
  char target[PATH_MAX];
  snprintf(target, sizeof target, "%s%s", CERT_EXPORT_PREFIX, fn);
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
  char* text = decode_text(elf, s, &form);
  if (text == NULL) {
    CERT_ADD(out, fn, check, clause, CERT_FAIL, s->name,
             "%s is data without readable text, not a safe-call function: a runtime asking for "
             "the %s calls it and jumps into data",
             s->name, kind);
    return 0;
  }
  char what[512] = "text";
  if (is_metadata) describe_json(text, what, sizeof what);
  CertBuf ev = {0};
  cert_buf_add(&ev, text);
  int rc = cert_findings_add(out, fn, check, clause, "", CERT_FAIL, cert_buf_end(&ev), "",
                             "%s is data (%s holding %s), not a safe-call function: a runtime "
                             "asking for the %s calls it and jumps into data",
                             s->name, form, what, kind);
  cert_buf_free(&ev);
  free(text);
  return rc;
}

static int check_reserved(const CertElf* elf, CertFindings* out) {
  static const char* const kDataNames[] = {"__tvm_ffi__library_bin", "__tvm_ffi__library_ctx",
                                           NULL};
  for (size_t i = 0; i < elf->exports.n; ++i) {
    const CertSymbol* s = &elf->exports.items[i];
    if (!cert_starts_with(s->name, CERT_RESERVED_PREFIX)) continue;
    int is_data_name = cert_starts_with(s->name, CERT_RESERVED_PREFIX "cubin_");
    for (const char* const* d = kDataNames; *d != NULL; ++d) {
      if (strcmp(s->name, *d) == 0) is_data_name = 1;
    }
    if (cert_starts_with(s->name, CERT_METADATA_PREFIX)) {
      if (check_described(elf, s, 1, out) != 0) return -1;
    } else if (cert_starts_with(s->name, CERT_DOC_PREFIX)) {
      if (check_described(elf, s, 0, out) != 0) return -1;
    } else if (is_data_name && s->is_function) {
      CERT_ADD(out, "", "static.reserved-kind", "CST-003", CERT_FAIL, s->name,
               "%s is a function, but runtimes read it as data", s->name);
    } else if (strcmp(s->name, "__tvm_ffi__library_bin") == 0) {
      if (check_library_bin(elf, s, out) != 0) return -1;
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

static int check_runtime_imports(const CertElf* elf, const CertElf* runtime,
                                 const char* runtime_path, CertFindings* out) {
  CertBuf missing = {0}, weak = {0};
  size_t total = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    const CertSymbol* s = &elf->imports.items[i];
    if (!cert_starts_with(s->name, "TVMFFI")) continue;
    total++;
    if (cert_elf_find(runtime, s->name, 0) != NULL) continue;
    cert_buf_item(s->is_weak ? &weak : &missing, s->name);
  }
  int rc = 0;
  if (missing.items > 0) {
    rc = cert_findings_add(out, "", "static.runtime-imports", "CST-006", runtime_path, CERT_FAIL,
                           cert_buf_end(&missing), "",
                           "imports %zu TVMFFI* symbol%s that the runtime %s does not define, "
                           "so the library does not load on it",
                           missing.items, missing.items == 1 ? "" : "s", runtime_path);
  } else {
    rc = cert_findings_add(out, "", "static.runtime-imports", "CST-006", runtime_path, CERT_PASS,
                           "", "", "the runtime defines all %zu TVMFFI* symbols it imports", total);
  }
  if (rc == 0 && weak.items > 0) {
    rc = cert_findings_add(out, "", "static.runtime-imports", "CST-006", runtime_path, CERT_WARN,
                           cert_buf_end(&weak), "",
                           "imports %zu TVMFFI* symbol%s weakly that the runtime does not "
                           "define: they are NULL at run time",
                           weak.items, weak.items == 1 ? "" : "s");
  }
  cert_buf_free(&missing);
  cert_buf_free(&weak);
  return rc;
}

static int check_releases(const CertElf* elf, CertFindings* out) {
  size_t n = cert_release_count();
  uint32_t all = n >= 32 ? UINT32_MAX : ((uint32_t)1 << n) - 1;
  uint32_t mask = all;
  CertBuf unknown = {0};
  const char* newest_need = NULL; /* the symbol that sets the lower bound */
  size_t bound = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    const CertSymbol* s = &elf->imports.items[i];
    if (!cert_starts_with(s->name, "TVMFFI") || s->is_weak) continue;
    uint32_t m = cert_release_mask(s->name);
    if (m == 0) {
      cert_buf_item(&unknown, s->name);
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
    rc =
        cert_findings_add(out, "", "static.releases", "", "", CERT_WARN, cert_buf_end(&unknown), "",
                          "imports TVMFFI* symbols that no upstream release from %s to %s "
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
    if (newest_need == NULL)
      snprintf(ev, sizeof ev, "no TVMFFI* imports");
    else if (lo == 0)
      snprintf(ev, sizeof ev, "every TVMFFI* import is in %s", cert_release_name(0));
    else
      snprintf(ev, sizeof ev, "%s (first in %s)", newest_need, cert_release_name(lo));
    if (lo > 0) {
      snprintf(built, sizeof built, "built against >= %s, since it imports %s",
               cert_release_name(lo), newest_need);
    } else {
      snprintf(built, sizeof built,
               "which headers it was built with cannot be told from its symbols");
    }
    if (hi == n - 1) {
      rc = cert_findings_add(
          out, "", "static.releases", "", "", CERT_PASS, ev, "",
          "imports are defined from %s on (symbols only); %s; certify --releases all "
          "runs it under each release",
          cert_release_name(lo), built);
    } else {
      rc = cert_findings_add(
          out, "", "static.releases", "", "", CERT_WARN, ev, "",
          "imports are defined only from %s to %s (symbols only): later releases "
          "dropped a symbol it imports, so it was built against < %s",
          cert_release_name(lo), cert_release_name(hi), cert_release_name(hi + 1));
    }
  }
  cert_buf_free(&unknown);
  return rc;
}

/* Importing TVMFFI* without naming libtvm_ffi.so binds those references to
 * whatever runtime the host loaded globally before. */
static int check_runtime_needed(const CertElf* elf, CertFindings* out) {
  int imports_tvmffi = 0;
  for (size_t i = 0; i < elf->imports.n; ++i) {
    if (cert_starts_with(elf->imports.items[i].name, "TVMFFI")) imports_tvmffi = 1;
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

static int check_cuda_stream(const CertElf* elf, CertFindings* out) {
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
  if (check_exports(elf, out) != 0) return -1;
  if (check_export_kinds(elf, out) != 0) return -1;
  if (check_reserved(elf, out) != 0) return -1;
  if (check_runtime_needed(elf, out) != 0) return -1;
  if (check_cuda_stream(elf, out) != 0) return -1;
  if (check_releases(elf, out) != 0) return -1;
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
  int rc = check_runtime_imports(elf, &runtime, runtime_path, out);
  if (rc == 0) rc = cert_check_linking(elf, &runtime, runtime_path, "", env, out);
  cert_elf_free(&runtime);
  return rc;
}
