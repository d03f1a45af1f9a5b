/* WinningPoSt and WindowPoSt through the C ABI: the 2 KiB fixtures of
 * scripts/test.sh (CUZK_TEST_POST_DIR: {winning,window}-post-2k.input and
 * .params, real parameters) proven and verified; the size query; inputs that
 * are truncated, for another proof type or another circuit kind, refused. */
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

static struct cuzk_circuit post(uint32_t kind) {
  struct cuzk_circuit c = {kind, "2KiB", 0};
  return c;
}

int main(void) {
  struct cuzk_error err;
  const char *dir = getenv("CUZK_TEST_POST_DIR");
  struct cuzk_circuit winning = post(CUZK_CIRCUIT_WINNING_POST), window = post(CUZK_CIRCUIT_WINDOW_POST);
  size_t len = 0;
  REQUIRE_OK(cuzk_proof_len(&winning, &len, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES);
  struct cuzk_circuit unknown = post(6);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_proof_len(&unknown, &len, &err), &err);
  if (!dir) {
    printf("test_post: CUZK_TEST_POST_DIR not set (scripts/test.sh sets it): proving skipped\n");
    return finish("test_post");
  }
  make_test_dir("post");
  const char *kinds[2] = {"winning", "window"};
  struct cuzk_circuit circuits[2] = {winning, window};
  uint8_t *inputs[2] = {NULL, NULL};
  size_t input_lens[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    char path[700], pce_path[600];
    snprintf(path, sizeof path, "%s/%s-post-2k.input", dir, kinds[i]);
    inputs[i] = read_file(path, &input_lens[i]);
    EXPECT(inputs[i] != NULL && input_lens[i] > 100);
    if (!inputs[i] || input_lens[i] <= 100) return finish("test_post");
    test_path(pce_path, sizeof pce_path, kinds[i]);
    struct cuzk_pce *pce = NULL;
    struct cuzk_params *params = NULL;
    REQUIRE_OK(cuzk_pce_load(&circuits[i], pce_path, 0, &pce, &err), &err);
    snprintf(path, sizeof path, "%s/%s-post-2k.params", dir, kinds[i]);
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
    printf("%s PoSt 2 KiB: total %.3f s (witness %.3f)\n", kinds[i], t.total, t.witness);

    /* Hostile inputs: truncated, another proof type's, empty. */
    struct cuzk_prove_request bad = req;
    bad.input_len = input_lens[i] - 1;
    EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof, sizeof proof, &len, NULL, &err), &err);
    if (i == 1) {
      bad.input = inputs[0];
      bad.input_len = input_lens[0];
      EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof, sizeof proof, &len, NULL, &err), &err);
      EXPECT(strstr(err.message, "winning-post") != NULL);
    }
    bad.input = NULL;
    bad.input_len = 0;
    EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof, sizeof proof, &len, NULL, &err), &err);
    cuzk_params_free(params);
    cuzk_pce_free(pce);
  }
  free(inputs[0]);
  free(inputs[1]);
  cleanup_dir();
  return finish("test_post");
}
