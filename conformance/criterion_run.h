/*
 * The two ways a conformance binary runs its tests, and the report both
 * write. main.c is Criterion's runner: a fresh worker process per test.
 * fork_runner.c, linked in only under --define=criterion_workers=fork (the
 * valgrind config), runs each test in a child forked from the runner, so a
 * memory checker starts once per binary instead of once per test.
 */
#ifndef CONFORMANCE_CRITERION_RUN_H_
#define CONFORMANCE_CRITERION_RUN_H_

#include <stdio.h>
#include <criterion/criterion.h>
#include <criterion/stats.h>

/* The JUnit XML every conformance binary writes (XML_OUTPUT_FILE). */
void conf_write_junit(FILE* f, struct criterion_global_stats* stats);

/* Runs TESTS in forked children and writes the XML to XML (may be NULL).
 * Returns 1 when every test that ran passed. Defined by fork_runner.c;
 * main.c holds a weak reference and uses Criterion's runner without it. */
int conf_run_in_forks(struct criterion_test_set* tests, const char* xml);

#endif
