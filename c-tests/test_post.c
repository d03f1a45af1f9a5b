/* WinningPoSt, WindowPoSt and SnapDeals through the C ABI: the 2 KiB
 * fixtures of scripts/test.sh (CUZK_TEST_FIXTURES: {winning-post,window-post,
 * snap}-2k.input and .params, real parameters) proven and verified; the size
 * query; inputs that are truncated, for another proof type or another circuit
 * kind, refused. A NonInteractivePoRep C1 (porep-2k-non-interactive-c1.json,
 * with porep-2k.params) is sized by the (NULL, 0) query and by
 * cuzk_request_proof_len: 13 partitions. */
#include "common.h"

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  *len = (buf && n > 0 && fread(buf, 1, (size_t)n, f) == (size_t)n) ? (size_t)n : 0;
  fclose(f);
  return buf;
}

static struct cuzk_circuit sized_2k(uint32_t kind) {
  struct cuzk_circuit c = {kind, "2KiB", 0};
  return c;
}

int main(void) {
  struct cuzk_error err;
  const char *dir = getenv("CUZK_TEST_FIXTURES");
  struct cuzk_circuit winning = sized_2k(CUZK_CIRCUIT_WINNING_POST), window = sized_2k(CUZK_CIRCUIT_WINDOW_POST),
                      snap = sized_2k(CUZK_CIRCUIT_SNAP_DEALS);
  size_t len = 0;
  REQUIRE_OK(cuzk_proof_len(&winning, &len, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES);
  struct cuzk_circuit unknown = sized_2k(6);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_proof_len(&unknown, &len, &err), &err);
  /* A request's length: an input-less synthetic request takes the circuit's; pointers first. */
  struct cuzk_circuit chain = {CUZK_CIRCUIT_SYNTHETIC, "sha256-chain", 1000};
  len = 0;
  REQUIRE_OK(cuzk_request_proof_len(&chain, NULL, 0, &len, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_request_proof_len(&chain, NULL, 5, &len, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_request_proof_len(NULL, NULL, 0, &len, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_request_proof_len(&chain, NULL, 0, NULL, &err), &err);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_request_proof_len(&unknown, NULL, 0, &len, &err), &err);
  if (!dir) {
    printf("test_post: CUZK_TEST_FIXTURES not set (scripts/test.sh sets it): proving skipped\n");
    return finish("test_post");
  }
  make_test_dir("post");
  const char *kinds[3] = {"winning-post", "window-post", "snap"};
  struct cuzk_circuit circuits[3] = {winning, window, snap};
  uint8_t *inputs[3] = {NULL, NULL, NULL};
  size_t input_lens[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    char path[700], pce_path[600];
    snprintf(path, sizeof path, "%s/%s-2k.input", dir, kinds[i]);
    inputs[i] = read_file(path, &input_lens[i]);
    EXPECT(inputs[i] != NULL && input_lens[i] > 100);
    if (!inputs[i] || input_lens[i] <= 100) return finish("test_post");
    REQUIRE_OK(cuzk_request_proof_len(&circuits[i], inputs[i], input_lens[i], &len, &err), &err);
    EXPECT(len == CUZK_PROOF_BYTES);
    test_path(pce_path, sizeof pce_path, kinds[i]);
    struct cuzk_pce *pce = NULL;
    struct cuzk_params *params = NULL;
    REQUIRE_OK(cuzk_pce_load(&circuits[i], pce_path, 0, &pce, &err), &err);
    snprintf(path, sizeof path, "%s/%s-2k.params", dir, kinds[i]);
    REQUIRE_OK(cuzk_params_load(path, 0, &params, &err), &err);

    struct cuzk_prove_request req = request_for(circuits[i], 0);
    req.input = inputs[i];
    req.input_len = input_lens[i];
    req.backend = CUZK_BACKEND_CPU;
    len = 0;
    EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_prove(NULL, pce, params, &req, NULL, NULL, 0, &len, NULL, &err), &err);
    EXPECT(len == CUZK_PROOF_BYTES);
    uint8_t proof[CUZK_PROOF_BYTES];
    struct cuzk_timings t;
    REQUIRE_OK(cuzk_prove(NULL, pce, params, &req, NULL, proof, sizeof proof, &len, &t, &err), &err);
    EXPECT(len == CUZK_PROOF_BYTES && t.verify > 0);
    EXPECT_STATUS(CUZK_OK, cuzk_verify(params, &req, proof, len, &err), &err);
    printf("%s 2 KiB: total %.3f s (witness %.3f)\n", kinds[i], t.total, t.witness);

    /* Hostile inputs: truncated, another proof type's, empty. */
    struct cuzk_prove_request bad = req;
    bad.input_len = input_lens[i] - 1;
    EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof, sizeof proof, &len, NULL, &err), &err);
    if (i > 0) {
      bad.input = inputs[0];
      bad.input_len = input_lens[0];
      EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof, sizeof proof, &len, NULL, &err), &err);
      EXPECT(i == 2 || strstr(err.message, "winning-post") != NULL);
    }
    bad.input = NULL;
    bad.input_len = 0;
    EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof, sizeof proof, &len, NULL, &err), &err);
    cuzk_params_free(params);
    cuzk_pce_free(pce);
  }
  for (int i = 0; i < 3; i++) free(inputs[i]);

  /* A non-interactive seal has 13 partitions at 2 KiB, not the circuit's default 1. */
  struct cuzk_circuit porep = sized_2k(CUZK_CIRCUIT_POREP);
  char path[700], pce_path[600];
  size_t c1_len = 0;
  snprintf(path, sizeof path, "%s/porep-2k-non-interactive-c1.json", dir);
  uint8_t *c1 = read_file(path, &c1_len);
  EXPECT(c1 != NULL && c1_len > 100);
  test_path(pce_path, sizeof pce_path, "porep");
  struct cuzk_pce *pce = NULL;
  struct cuzk_params *params = NULL;
  REQUIRE_OK(cuzk_pce_load(&porep, pce_path, 0, &pce, &err), &err);
  snprintf(path, sizeof path, "%s/porep-2k.params", dir);
  REQUIRE_OK(cuzk_params_load(path, 0, &params, &err), &err);
  struct cuzk_prove_request req = request_for(porep, 0);
  req.input = c1;
  req.input_len = c1_len;
  len = 0;
  EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_prove(NULL, pce, params, &req, NULL, NULL, 0, &len, NULL, &err), &err);
  EXPECT(len == 13 * CUZK_PROOF_BYTES);
  len = 0;
  REQUIRE_OK(cuzk_request_proof_len(&porep, c1, c1_len, &len, &err), &err);
  EXPECT(len == 13 * CUZK_PROOF_BYTES);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_request_proof_len(&porep, c1, c1_len / 2, &len, &err), &err);
  REQUIRE_OK(cuzk_proof_len(&porep, &len, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES);
  cuzk_params_free(params);
  cuzk_pce_free(pce);
  free(c1);
  cleanup_dir();
  return finish("test_post");
}
