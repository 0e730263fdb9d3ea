#include "probe_procs.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { SWEEP_ROUNDS = 200 };

int cert_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -1; }

int cert_has_children(void) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  /* WNOWAIT: look, leave a zombie for whoever reaps it. ECHILD: none. */
  for (;;) {
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0) return 1;
    if (errno != EINTR) return 0;
  }
}

/* pid's parent and command name from /proc/<pid>/stat, or -1. */
static int read_stat(const char* pid, pid_t* ppid, char* comm, size_t comm_size) {
  char path[300], buf[512];
  snprintf(path, sizeof path, "/proc/%.255s/stat", pid);
  FILE* f = fopen(path, "re");
  if (f == NULL) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
  char* open = strchr(buf, '(');
  char* close = strrchr(buf, ')');
  if (open == NULL || close == NULL || close < open) return -1;
  snprintf(comm, comm_size, "%.*s", (int)(close - open - 1), open + 1);
  char state;
  int parent;
  if (sscanf(close + 1, " %c %d", &state, &parent) != 2) return -1;
  *ppid = parent;
  return 0;
}

static int kept(pid_t pid, const pid_t* keep, size_t n_keep) {
  for (size_t k = 0; k < n_keep; ++k) {
    if (keep[k] == pid) return 1;
  }
  return 0;
}

/* One pass over /proc: kills this process's children (but the kept ones)
 * and waits for them. Returns how many. */
static size_t sweep_once(const pid_t* keep, size_t n_keep, char* first, size_t first_size,
                         size_t seen) {
  DIR* d = opendir("/proc");
  if (d == NULL) return 0;
  pid_t self = getpid();
  size_t n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    pid_t ppid = 0;
    char comm[64];
    if (read_stat(e->d_name, &ppid, comm, sizeof comm) != 0 || ppid != self) continue;
    pid_t pid = (pid_t)atoi(e->d_name);
    if (kept(pid, keep, n_keep)) continue;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    if (seen + n == 0 && first_size > 0) snprintf(first, first_size, "%d (%s)", (int)pid, comm);
    n++;
  }
  closedir(d);
  return n;
}

size_t cert_sweep_children(const pid_t* keep, size_t n_keep, char* first, size_t first_size) {
  if (first_size > 0) first[0] = '\0';
  size_t total = 0;
  for (int round = 0; round < SWEEP_ROUNDS; ++round) {
    size_t n = sweep_once(keep, n_keep, first, first_size, total);
    total += n;
    if (n == 0) {
      /* Children killed a moment ago may still be re-parenting theirs. */
      if (n_keep == 0 && !cert_has_children()) break;
      struct timespec pause = {0, 2 * 1000 * 1000};
      nanosleep(&pause, NULL);
      n = sweep_once(keep, n_keep, first, first_size, total);
      total += n;
      if (n == 0) break;
    }
  }
  return total;
}

long cert_self_status_kb(const char* field) {
  FILE* f = fopen("/proc/self/status", "re");
  if (f == NULL) return -1;
  char line[256];
  long v = -1;
  size_t len = strlen(field);
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, field, len) == 0 && line[len] == ':') {
      v = strtol(line + len + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return v;
}
