/*
 * What the *_threads_test.c programs share: a failure counter that many
 * threads may bump, a runner that starts THREADS copies of a worker and
 * waits for them, and the exit status. These programs run under TSan, where
 * Criterion's process arena cannot start, so they report by exit status.
 */
#ifndef TFFI_THREADS_TEST_SUPPORT_H_
#define TFFI_THREADS_TEST_SUPPORT_H_

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 8

static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

/* Counts a failure; prints the first ten (thread or round -1: not in one). */
static inline void fail(const char* what, long thread, long round) {
  pthread_mutex_lock(&fail_lock);
  if (failures++ < 10) fprintf(stderr, "FAIL thread %ld round %ld: %s\n", thread, round, what);
  pthread_mutex_unlock(&fail_lock);
}

/* Runs fn on THREADS threads, thread i given (void*)(intptr_t)i, and waits
 * for all of them. A thread that cannot start is a failure, not a hang. */
static inline void run_threads(void* (*fn)(void*)) {
  pthread_t th[THREADS];
  int started[THREADS] = {0};
  for (long i = 0; i < THREADS; ++i) {
    started[i] = pthread_create(&th[i], NULL, fn, (void*)(intptr_t)i) == 0;
    if (!started[i]) fail("pthread_create", i, -1);
  }
  for (int i = 0; i < THREADS; ++i)
    if (started[i]) pthread_join(th[i], NULL);
}

/* The exit status of main: 1 after any failure, else 0 with `passed`. */
static inline int threads_exit_status(const char* passed) {
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("PASS: %s on %d threads\n", passed, THREADS);
  return 0;
}

#endif
