/*
 * Replays fuzz inputs without libFuzzer: every file named on the command
 * line, and every regular file inside every directory named there, goes to
 * LLVMFuzzerTestOneInput once, in sorted order so failures reproduce.
 *
 * This is what turns the committed corpora into ordinary tests: `bazel test`
 * runs it under the default toolchain and under --config=asan, so a crash
 * that was fixed once stays fixed. Arguments that start with '-' are
 * libFuzzer flags (the harness binaries carry -dict=...) and are skipped.
 * A run that replays nothing fails: an empty corpus would otherwise pass
 * without testing anything.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

/* Feeds one file. The input gets its own exact-size heap buffer so that
 * ASan sees a read one byte past the end. Returns 0 or -1 (unreadable). */
static int replay_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  size_t cap = 4096, size = 0;
  uint8_t* buf = malloc(cap);
  size_t got;
  while (buf != NULL && (got = fread(buf + size, 1, cap - size, f)) > 0) {
    size += got;
    if (size == cap) {
      uint8_t* grown = realloc(buf, cap * 2);
      if (grown == NULL) break;
      buf = grown;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf == NULL) return -1;
  uint8_t* exact = malloc(size ? size : 1);
  if (exact == NULL) {
    free(buf);
    return -1;
  }
  memcpy(exact, buf, size);
  free(buf);
  fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  return 0;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Replays the regular files of `dir`, sorted by name. Returns how many. */
static long replay_dir(const char* dir, int* failed) {
  DIR* d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "replay: cannot open directory %s\n", dir);
    *failed = 1;
    return 0;
  }
  char** names = NULL;
  size_t count = 0, cap = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue; /* ".", "..", and editor droppings */
    if (count == cap) {
      cap = cap ? cap * 2 : 64;
      char** grown = realloc(names, cap * sizeof(*names));
      if (grown == NULL) break;
      names = grown;
    }
    names[count++] = strdup(e->d_name);
  }
  closedir(d);
  if (count) qsort(names, count, sizeof(*names), compare_names);
  long replayed = 0;
  for (size_t i = 0; i < count; i++) {
    size_t len = strlen(dir) + strlen(names[i]) + 2;
    char* path = malloc(len);
    snprintf(path, len, "%s/%s", dir, names[i]);
    struct stat st;
    /* stat follows the runfiles symlinks to the committed files. */
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      if (replay_file(path) == 0)
        replayed++;
      else
        *failed = 1;
    }
    free(path);
    free(names[i]);
  }
  free(names);
  return replayed;
}

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  long replayed = 0;
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-') continue;
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      failed = 1;
    } else if (S_ISDIR(st.st_mode)) {
      replayed += replay_dir(argv[i], &failed);
    } else if (replay_file(argv[i]) == 0) {
      replayed++;
    } else {
      failed = 1;
    }
  }
  fprintf(stderr, "replay: %ld inputs replayed\n", replayed);
  if (replayed == 0) {
    fprintf(stderr, "replay: nothing replayed; give corpus files or directories\n");
    return 1;
  }
  return failed;
}
