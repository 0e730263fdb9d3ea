#include "fuzz/impl_api.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Does the file carry libFuzzer's inline counters or guards (what
 * -fsanitize=fuzzer-no-link or -fsanitize-coverage=... compiles in)?
 * 1 yes, 0 no, -1 unreadable. */
static int has_coverage(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  int found = -1;
  elf_version(EV_CURRENT);
  Elf* e = elf_begin(fd, ELF_C_READ, NULL);
  size_t names;
  if (e != NULL && elf_getshdrstrndx(e, &names) == 0) {
    found = 0;
    for (Elf_Scn* s = elf_nextscn(e, NULL); s != NULL && !found; s = elf_nextscn(e, s)) {
      GElf_Shdr sh;
      const char* name = gelf_getshdr(s, &sh) ? elf_strptr(e, names, sh.sh_name) : NULL;
      found = name && (strcmp(name, "__sancov_cntrs") == 0 || strcmp(name, "__sancov_guards") == 0);
    }
  }
  if (e != NULL) elf_end(e);
  close(fd);
  return found;
}

void fuzz_impl_init(const char* harness, const char* const* needed) {
  if (conf_impl_load() != 0) {
    fprintf(stderr, "fuzz %s: cannot load %s: %s\n", harness, conf_impl_path(),
            conf_impl_load_error());
    exit(1);
  }
  for (const char* const* n = needed; n && *n; ++n) {
    if (dlsym(conf_impl_handle(), *n) == NULL) {
      fprintf(stderr, "fuzz %s: %s does not export %s, which this harness calls\n", harness,
              conf_impl_path(), *n);
      exit(1);
    }
  }
  fprintf(stderr, "fuzz %s: implementation under test: %s (TVMFFIGetVersion %s%s)\n", harness,
          conf_impl_path(), conf_impl_version(),
          conf_impl_is_reference() ? ", the bundled reference" : "");
  int cov = has_coverage(conf_impl_path());
  if (cov == 1) {
    fprintf(stderr, "fuzz %s: coverage: from the implementation (built with fuzzer-no-link)\n",
            harness);
  } else {
    fprintf(stderr,
            "fuzz %s: coverage: blind: %s has no libFuzzer instrumentation; only the harness's "
            "own branches guide the search (fuzz/build_upstream.sh builds an instrumented "
            "upstream)\n",
            harness, conf_impl_path());
  }
}
