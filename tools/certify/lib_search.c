/* The dynamic loader's library search, as a model: certify reports a
 * DT_NEEDED entry the loader would not find before anything is loaded. */
#include "lib_search.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/vec.h"

/* The ld.so cache as `ldconfig -p` prints it, read once per process. */
typedef struct {
  char* name;
  char* path;
  int x86_64; /* "x86-64" among the flags */
} CertCacheEntry;

static CertCacheEntry* cert_cache;
static size_t cert_cache_n;
static int cert_cache_loaded;

static void cache_add(const char* line) {
  /* "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1" */
  const char* arrow = strstr(line, " => ");
  const char* paren = strchr(line, '(');
  if (arrow == NULL || paren == NULL || paren > arrow) return;
  while (*line == '\t' || *line == ' ') line++;
  const char* name_end = strchr(line, ' ');
  if (name_end == NULL || name_end > paren) return;
  static size_t cap;
  if (tffi_vec_reserve(&cert_cache, &cap, cert_cache_n + 1, sizeof *cert_cache) != 0) return;
  CertCacheEntry e;
  e.name = strndup(line, (size_t)(name_end - line));
  e.path = strdup(arrow + 4);
  e.x86_64 = strstr(paren, "x86-64") != NULL && strstr(paren, "x86-64") < arrow;
  if (e.name == NULL || e.path == NULL) {
    free(e.name);
    free(e.path);
    return;
  }
  e.path[strcspn(e.path, "\n")] = '\0';
  cert_cache[cert_cache_n++] = e;
}

static void cache_free(void) {
  for (size_t i = 0; i < cert_cache_n; ++i) {
    free(cert_cache[i].name);
    free(cert_cache[i].path);
  }
  free(cert_cache);
  cert_cache = NULL;
  cert_cache_n = 0;
}

static void cache_load(void) {
  if (cert_cache_loaded) return;
  cert_cache_loaded = 1;
  static const char* const kLdconfig[] = {"/sbin/ldconfig -p 2>/dev/null",
                                          "/usr/sbin/ldconfig -p 2>/dev/null", NULL};
  for (const char* const* cmd = kLdconfig; *cmd != NULL && cert_cache_n == 0; ++cmd) {
    FILE* p = popen(*cmd, "r");
    if (p == NULL) continue;
    char line[4096];
    while (fgets(line, sizeof line, p) != NULL) cache_add(line);
    pclose(p);
  }
  atexit(cache_free);
}

int cert_driver_stub_name(const char* needed, char* buf, size_t size) {
  static const char* const kDriver[] = {"libcuda.so", "libnvidia-ml.so", NULL};
  for (const char* const* d = kDriver; *d != NULL; ++d) {
    size_t n = strlen(*d);
    if (strncmp(needed, *d, n) != 0 || (needed[n] != '\0' && needed[n] != '.')) continue;
    snprintf(buf, size, "%s", *d);
    return 1;
  }
  return 0;
}

int cert_elf_ident(const char* path, int* machine, int* elf_class) {
  unsigned char h[20];
  /* O_NONBLOCK: a library name may point at a FIFO, which must not hang us. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  ssize_t got = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) got = read(fd, h, sizeof h);
  close(fd);
  if (got != (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0) return -1;
  *elf_class = h[EI_CLASS];
  /* e_machine sits at offset 18 in both classes, in the file's byte order. */
  *machine = h[EI_DATA] == ELFDATA2MSB ? (h[18] << 8) | h[19] : h[18] | (h[19] << 8);
  return 0;
}

static int acceptable(const char* path, int machine, int elf_class) {
  int m = 0, c = 0;
  return cert_elf_ident(path, &m, &c) == 0 && m == machine && c == elf_class;
}

static const char* multiarch(int machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64-linux-gnu";
    case EM_AARCH64: return "aarch64-linux-gnu";
    case EM_PPC64: return "powerpc64le-linux-gnu";
    default: return NULL;
  }
}

/* Expands $ORIGIN/${ORIGIN}, $LIB and $PLATFORM in one path element. */
static void expand(const char* elem, size_t len, const char* origin_file, int machine, char* out,
                   size_t outlen) {
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < len && o + 1 < outlen;) {
    const char* rest = elem + i;
    size_t left = len - i;
    const char* value = NULL;
    size_t skip = 0;
    char origin[4096];
    if (left >= 9 && memcmp(rest, "${ORIGIN}", 9) == 0)
      skip = 9;
    else if (left >= 7 && memcmp(rest, "$ORIGIN", 7) == 0)
      skip = 7;
    if (skip) {
      cert_dirname(origin_file, origin, sizeof origin);
      value = origin;
    } else if (left >= 4 && memcmp(rest, "$LIB", 4) == 0) {
      skip = 4;
      const char* arch = multiarch(machine);
      snprintf(origin, sizeof origin, "lib%s%s", arch ? "/" : "", arch ? arch : "");
      value = origin;
    } else if (left >= 9 && memcmp(rest, "$PLATFORM", 9) == 0) {
      skip = 9;
      value = machine == EM_X86_64 ? "x86_64" : machine == EM_AARCH64 ? "aarch64" : "";
    }
    if (value != NULL) {
      int n = snprintf(out + o, outlen - o, "%s", value);
      if (n < 0) break;
      o += (size_t)n < outlen - o ? (size_t)n : outlen - o - 1;
      i += skip;
    } else {
      out[o++] = elem[i++];
      out[o] = '\0';
    }
  }
}

typedef struct {
  char* out;
  size_t outlen;
  size_t used; /* of the "looked in" note */
} CertLooked;

static void add_looked(CertLooked* l, const char* what) {
  if (l->used + 1 >= l->outlen) return;
  int n = snprintf(l->out + l->used, l->outlen - l->used, "%s%s", l->used ? ", " : "", what);
  if (n > 0) l->used += (size_t)n < l->outlen - l->used ? (size_t)n : l->outlen - l->used - 1;
}

/* Tries each element of a ':'-separated list. */
static int try_list(const char* list, const char* origin_file, const char* name, int machine,
                    int elf_class, char* found, size_t foundlen) {
  for (const char* p = list; p != NULL;) {
    const char* colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    char dir[4096];
    if (len == 0) {
      snprintf(dir, sizeof dir, ".");
    } else {
      expand(p, len, origin_file, machine, dir, sizeof dir);
    }
    snprintf(found, foundlen, "%s/%s", dir, name);
    if (acceptable(found, machine, elf_class)) return 1;
    p = colon ? colon + 1 : NULL;
  }
  return 0;
}

int cert_search_library(const char* name, const CertSearchScope* scopes, size_t n_scopes,
                        int machine, int elf_class, char* out, size_t outlen) {
  char found[4096];
  char note[2048];
  CertLooked looked = {out, outlen, 0};
  if (outlen) out[0] = '\0';
  if (strchr(name, '/') != NULL) {
    if (acceptable(name, machine, elf_class)) {
      snprintf(out, outlen, "%s", name);
      return 1;
    }
    snprintf(out, outlen, "the path %s itself", name);
    return 0;
  }
  const CertSearchScope* self = n_scopes ? &scopes[0] : NULL;
  if (self != NULL && self->runpath == NULL) {
    for (size_t i = 0; i < n_scopes; ++i) {
      if (scopes[i].rpath == NULL) continue;
      if (try_list(scopes[i].rpath, scopes[i].path, name, machine, elf_class, found, sizeof found))
        goto hit;
      snprintf(note, sizeof note, "DT_RPATH %s", scopes[i].rpath);
      add_looked(&looked, note);
    }
  }
  const char* env = getenv("LD_LIBRARY_PATH");
  if (env != NULL && env[0] != '\0') {
    if (try_list(env, self ? self->path : ".", name, machine, elf_class, found, sizeof found))
      goto hit;
    add_looked(&looked, "LD_LIBRARY_PATH");
  }
  if (self != NULL && self->runpath != NULL) {
    if (try_list(self->runpath, self->path, name, machine, elf_class, found, sizeof found))
      goto hit;
    snprintf(note, sizeof note, "DT_RUNPATH %s", self->runpath);
    add_looked(&looked, note);
  }
  cache_load();
  for (size_t i = 0; i < cert_cache_n; ++i) {
    if (strcmp(cert_cache[i].name, name) != 0) continue;
    if (machine == EM_X86_64 && !cert_cache[i].x86_64) continue;
    if (acceptable(cert_cache[i].path, machine, elf_class)) {
      snprintf(found, sizeof found, "%s", cert_cache[i].path);
      goto hit;
    }
  }
  add_looked(&looked, "the ld.so cache");
  const char* arch = multiarch(machine);
  char defaults[1024];
  if (elf_class == ELFCLASS64 && arch != NULL) {
    snprintf(defaults, sizeof defaults, "/lib/%s:/usr/lib/%s:/lib64:/usr/lib64:/lib:/usr/lib", arch,
             arch);
  } else if (elf_class == ELFCLASS64) {
    snprintf(defaults, sizeof defaults, "/lib64:/usr/lib64:/lib:/usr/lib");
  } else {
    snprintf(defaults, sizeof defaults, "/lib:/usr/lib");
  }
  if (try_list(defaults, ".", name, machine, elf_class, found, sizeof found)) goto hit;
  snprintf(note, sizeof note, "the default directories %s", defaults);
  add_looked(&looked, note);
  return 0;
hit:
  snprintf(out, outlen, "%s", found);
  return 1;
}

void cert_dirname(const char* path, char* out, size_t size) {
  snprintf(out, size, "%s", path);
  char* slash = strrchr(out, '/');
  if (slash == NULL)
    snprintf(out, size, ".");
  else if (slash == out)
    slash[1] = '\0';
  else
    *slash = '\0';
}
