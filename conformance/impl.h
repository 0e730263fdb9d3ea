/*
 * The implementation under test, loaded at run time.
 *
 * The suite never links a runtime: it dlopens one (the reference by default,
 * the pip library with --config=upstream, or the path in TVMFFI_IMPL; see
 * impl_load.h, which the fuzz harnesses share) and reaches the C API through
 * `conf_api`. A symbol the library lacks gets a stand-in that skips the
 * running test naming the symbol (from any thread of the test), so a test
 * that calls it never crashes the suite; API(name) checks first, and
 * conf_api_present says which ones the library has.
 */
#ifndef CONFORMANCE_IMPL_H_
#define CONFORMANCE_IMPL_H_

#include <criterion/criterion.h>

#include "impl_load.h"

/* Skips the running test when `dlerror_text` (of a library loaded on top of
 * the implementation) says a symbol is undefined that the implementation
 * does not export: the implementation lacks it, the library is not at fault. */
void conf_impl_skip_if_unresolved(const char* dlerror_text, const char* library);

/* Fixture run before every conformance test: fails it with the dlerror()
 * text when the library did not load. */
void conf_impl_require(void);

/* Skips the running test, naming the symbol, when `fn` is NULL or the
 * stand-in of a missing function. */
void conf_impl_need(const void* fn, const char* name);

/* Skips the running test, naming the symbol, when `present` is 0. */
void conf_impl_need_present(int present, const char* name);

/*
 * For tests that feed hostile input: caps this test's address space at what
 * it uses now plus CONF_HOSTILE_HEADROOM, so an implementation that sizes an
 * allocation from the input fails (or dies) instead of exhausting the
 * machine. Each test runs in its own process: a crash fails only that test,
 * and spec/deviations.md records it. No cap under ASan, whose shadow memory
 * needs the address space.
 */
#define CONF_HOSTILE_HEADROOM (1024L * 1024 * 1024)
void conf_limit_memory(void);

/* Marks a test that feeds input some implementations crash on (`why` says
 * which); the test still runs everywhere, under the memory cap. */
#define HOSTILE_INPUT(why)                                                \
  do {                                                                    \
    cr_log_info("hostile input (%s); a crash fails this test only", why); \
    conf_limit_memory();                                                  \
  } while (0)

/* conformance_layout_guard(part, fields): a test reading an ABI struct of
 * the library under test calls it first (layout_guard.h). */
#include "layout_guard.h"

#define API(name) (conf_impl_need_present(conf_api_present.name, #name), conf_api.name)

/* Every conformance test: Test() with the load check as its fixture. */
#define TEST(suite, name, ...) Test(suite, name, .init = conf_impl_require, ##__VA_ARGS__)

#endif
