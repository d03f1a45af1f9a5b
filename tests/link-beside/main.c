/* One program linked with libcuzk.a and another Rust staticlib (its own
 * runtime, blst 0.3.14): both libraries work, each with its own blst and its
 * own unwinder. Built and run by scripts/link-beside.sh.
 *
 *   link-beside DIR   (DIR: a scratch folder for an aggregation SRS file) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "cuzk.h"
#include "other.h"

/* G1's generator, compressed (the BLS12-381 standard encoding). */
static const uint8_t G1_GENERATOR[48] = {
    0x97, 0xf1, 0xd3, 0xa7, 0x31, 0x97, 0xd7, 0x94, 0x26, 0x95, 0x63, 0x8c,
    0x4f, 0xa9, 0xac, 0x0f, 0xc3, 0x68, 0x8c, 0x4f, 0x97, 0x74, 0xb9, 0x05,
    0xa1, 0x4e, 0x3a, 0x3f, 0x17, 0x1b, 0xac, 0x58, 0x6c, 0x55, 0xe8, 0x3f,
    0xf9, 0x7a, 0x1a, 0xef, 0xfb, 0x3a, 0xf0, 0x0a, 0xdb, 0x22, 0xc6, 0xbb};

static int failed = 0, checks = 0;
#define CHECK(cond, what)                                                      \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      failed++;                                                                \
      fprintf(stderr, "link-beside: %s failed (%s:%d)\n", what, __FILE__,      \
              __LINE__);                                                       \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  /* The other library first, then cuzk, then the other again: neither's
   * runtime or blst is disturbed by the other's use. */
  uint8_t g1[48] = {0};
  CHECK(other_g1_generator(g1) == 1 && memcmp(g1, G1_GENERATOR, 48) == 0,
        "other: blst 0.3.14 compresses G1's generator");
  CHECK(other_panic_caught() == 1, "other: its own panic is caught");

  const char *v = cuzk_version();
  CHECK(v && strcmp(v, CUZK_VERSION) == 0, "cuzk_version equals the header's");
  /* An aggregation SRS generated, written and read back: blst's scalar
   * multiplications, point encoding and subgroup checks inside cuzk. */
  char path[4096];
  snprintf(path, sizeof path, "%s/agg.srs", argv[1]);
  struct cuzk_error err;
  struct cuzk_agg_srs *srs = NULL;
  cuzk_status s = cuzk_agg_srs_generate(path, 2, 7, &srs, &err);
  CHECK(s == CUZK_OK && srs, "cuzk_agg_srs_generate");
  if (s != CUZK_OK) fprintf(stderr, "  %s: %s\n", cuzk_status_str(s), err.message);
  cuzk_agg_srs_free(srs);
  srs = NULL;
  s = cuzk_agg_srs_load(path, 2, &srs, &err);
  CHECK(s == CUZK_OK && srs, "cuzk_agg_srs_load");
  cuzk_agg_srs_free(srs);
  /* cuzk's unwinder: a panic inside the library comes back as a status. */
  CHECK(cuzk_debug_panic(&err) == CUZK_PANIC, "cuzk: its own panic is caught");

  CHECK(other_bls_sign_verify(3) == 1, "other: a BLS signature verifies");
  CHECK(other_panic_caught() == 1, "other: its own panic is caught again");

  printf("link-beside (C): %d checks, %d failed\n", checks, failed);
  return failed ? 1 : 0;
}
