/* Helpers shared by the C tests: status checks that print the error detail,
 * and a private temporary directory per test program. Uses only cuzk.h. */
#ifndef CUZK_TEST_COMMON_H
#define CUZK_TEST_COMMON_H

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk.h"

static int failures = 0;
static inline int status_differs(const struct cuzk_error *e, cuzk_status s) {
  return e && e->status != s;
}
static inline const char *detail_of(const struct cuzk_error *e) {
  return e ? e->message : "(none)";
}
static int checks = 0;

/* Expect `call` to return `want`; print the status text and detail if not. */
#define EXPECT_STATUS(want, call, errp)                                        \
  do {                                                                         \
    cuzk_status got_ = (call);                                                 \
    checks++;                                                                  \
    if (got_ != (cuzk_status)(want)) {                                         \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: %s\n  want %s\n  got  %s\n  detail: %s\n",       \
              __FILE__, __LINE__, #call, cuzk_status_str((uint32_t)(want)),    \
              cuzk_status_str(got_), detail_of(errp));     \
    } else if (status_differs((errp), got_)) {                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: err->status %u != returned %u\n", __FILE__,      \
              __LINE__, (unsigned)(errp)->status, (unsigned)got_);             \
    }                                                                          \
  } while (0)

#define EXPECT(cond)                                                           \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
    }                                                                          \
  } while (0)

/* Abort the program when a step every later check depends on fails. */
#define REQUIRE_OK(call, errp)                                                 \
  do {                                                                         \
    cuzk_status got_ = (call);                                                 \
    if (got_ != CUZK_OK) {                                                     \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__,        \
              #call, cuzk_status_str(got_), (errp)->message);                  \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* A fresh directory under $TMPDIR (or /tmp), removed by cleanup_dir(). */
static char test_dir[512];

static inline void make_test_dir(const char *tag) {
  const char *base = getenv("TMPDIR");
  snprintf(test_dir, sizeof test_dir, "%s/cuzk-ctest-%s-XXXXXX",
           base && *base ? base : "/tmp", tag);
  if (!mkdtemp(test_dir)) {
    perror("mkdtemp");
    exit(1);
  }
}

static inline void test_path(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", test_dir, name);
}

static inline void cleanup_dir(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", test_dir);
}

static inline struct cuzk_circuit synthetic(const char *name, uint64_t size) {
  struct cuzk_circuit c;
  memset(&c, 0, sizeof c);
  c.kind = CUZK_CIRCUIT_SYNTHETIC;
  c.name = name;
  c.size = size;
  return c;
}

static inline struct cuzk_prove_request request_for(struct cuzk_circuit c, uint64_t seed) {
  struct cuzk_prove_request r;
  memset(&r, 0, sizeof r); /* zero: auto backend, verify on */
  r.circuit = c;
  r.seed = seed;
  return r;
}

static inline int finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, checks, failures);
  return failures ? 1 : 0;
}

#endif
