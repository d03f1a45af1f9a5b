/* cuzk_params_file_name: the production parameter file names of the Filecoin
 * circuits (as filecoin-proofs' parameters.json lists them), the (NULL, 0)
 * size query, a short buffer left untouched, and the refusals. */
#include "common.h"

static void expect_name(uint32_t kind, const char *size, const char *want) {
  struct cuzk_error err;
  struct cuzk_circuit c = {kind, size, 0};
  size_t len = 0;
  EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_params_file_name(&c, NULL, 0, &len, &err), &err);
  EXPECT(len == strlen(want) + 1);
  char buf[256];
  memset(buf, 'x', sizeof buf);
  EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_params_file_name(&c, buf, len - 1, &len, &err), &err);
  EXPECT(buf[0] == 'x');
  EXPECT_STATUS(CUZK_OK, cuzk_params_file_name(&c, buf, sizeof buf, &len, &err), &err);
  EXPECT(len == strlen(want) + 1 && strcmp(buf, want) == 0);
}

int main(void) {
  struct cuzk_error err;
  expect_name(CUZK_CIRCUIT_POREP, "32GiB",
              "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-"
              "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params");
  expect_name(CUZK_CIRCUIT_POREP, "2KiB",
              "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
              "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f.params");
  char buf[256];
  size_t len = 0;
  const uint32_t kinds[] = {CUZK_CIRCUIT_WINNING_POST, CUZK_CIRCUIT_WINDOW_POST, CUZK_CIRCUIT_SNAP_DEALS};
  const char *prefixes[] = {"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-",
                            "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-",
                            "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-"};
  char winning[256] = "";
  for (int i = 0; i < 3; i++) {
    struct cuzk_circuit c = {kinds[i], "32GiB", 0};
    EXPECT_STATUS(CUZK_OK, cuzk_params_file_name(&c, buf, sizeof buf, &len, &err), &err);
    EXPECT(strncmp(buf, prefixes[i], strlen(prefixes[i])) == 0);
    if (i == 0) strcpy(winning, buf);
  }
  EXPECT(strcmp(winning, buf) != 0); /* WinningPoSt's file is not WindowPoSt's */

  struct cuzk_circuit synthetic = {CUZK_CIRCUIT_SYNTHETIC, "sha256-chain", 1000};
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_params_file_name(&synthetic, buf, sizeof buf, &len, &err), &err);
  struct cuzk_circuit unknown = {CUZK_CIRCUIT_POREP, "4KiB", 0};
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_params_file_name(&unknown, buf, sizeof buf, &len, &err), &err);
  struct cuzk_circuit porep = {CUZK_CIRCUIT_POREP, "2KiB", 0};
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_file_name(NULL, buf, sizeof buf, &len, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_file_name(&porep, buf, sizeof buf, NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_file_name(&porep, NULL, sizeof buf, &len, &err), &err);
  return finish("test_params_name");
}
