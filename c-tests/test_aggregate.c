/* SnarkPack aggregation through the C ABI: a generated aggregation SRS,
 * proofs made here standing in for three 2 KiB interactive seal proofs (one
 * partition each; aggregation does not check what a proof proves), the sizes
 * cuzk_aggregate_len says, the (NULL, 0) size query, identical bytes for the
 * same inputs, different ones for another version, and refusals: NULLs, an
 * unknown registered proof or version, a proof of the wrong length or not a
 * point, an SRS loaded for too few proofs, a freed handle. Whether filecoin-
 * proofs' verifier accepts cuzk's aggregates is tests/seal_variants.rs's. */
#include "common.h"

#define RP "StackedDrg2KiBV1_1"

int main(void) {
  struct cuzk_error err;
  char pce_path[600], params_path[600], srs_path[600];
  make_test_dir("aggregate");
  test_path(pce_path, sizeof pce_path, "m.pce");
  test_path(params_path, sizeof params_path, "m.params");
  test_path(srs_path, sizeof srs_path, "agg.srs");
  struct cuzk_circuit circuit = synthetic("mimc-chain", 1000);
  struct cuzk_pce *pce = NULL;
  struct cuzk_params *params = NULL;
  REQUIRE_OK(cuzk_pce_load(&circuit, pce_path, 0, &pce, &err), &err);
  REQUIRE_OK(cuzk_params_generate(&circuit, params_path, 3, &params, &err), &err);
  uint8_t proofs[3][CUZK_PROOF_BYTES];
  struct cuzk_seal_proof seals[3];
  for (int i = 0; i < 3; i++) {
    struct cuzk_prove_request req = request_for(circuit, (uint64_t)i + 1);
    size_t len = 0;
    REQUIRE_OK(cuzk_prove(NULL, pce, params, &req, NULL, proofs[i], CUZK_PROOF_BYTES, &len, NULL, &err), &err);
    seals[i].proof = proofs[i];
    seals[i].proof_len = CUZK_PROOF_BYTES;
    memset(seals[i].comm_r, 10 + i, 32);
    memset(seals[i].seed, 20 + i, 32);
  }

  /* --- Sizes: three single-partition seals pad to four proofs. */
  size_t n = 0, bytes = 0;
  REQUIRE_OK(cuzk_aggregate_len(RP, 3, &n, &bytes, &err), &err);
  EXPECT(n == 4 && bytes > 4000);
  size_t ni = 0;
  REQUIRE_OK(cuzk_aggregate_len("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", 2, &ni, NULL, &err), &err);
  EXPECT(ni == 32);
  /* The size query refuses what cuzk_aggregate refuses: at most 65 NonInteractivePoRep seals. */
  REQUIRE_OK(cuzk_aggregate_len("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", 65, &ni, NULL, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT,
                cuzk_aggregate_len("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", 66, &ni, NULL, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate_len("StackedDrg2KiBV7", 3, &n, NULL, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate_len(RP, 0, &n, NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_aggregate_len(NULL, 3, &n, NULL, &err), &err);

  /* --- The SRS: generated, then loaded for fewer proofs, and refusals. */
  struct cuzk_agg_srs *srs = NULL, *small = NULL, *none = NULL;
  REQUIRE_OK(cuzk_agg_srs_generate(srs_path, 4, 9, &srs, &err), &err);
  REQUIRE_OK(cuzk_agg_srs_load(srs_path, 2, &small, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_agg_srs_load(srs_path, 3, &none, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_agg_srs_load(srs_path, 16, &none, &err), &err);
  EXPECT_STATUS(CUZK_BAD_PARAMS_FILE, cuzk_agg_srs_load(params_path, 2, &none, &err), &err);
  EXPECT(none == NULL);

  /* --- Aggregates: the size query, then twice the same bytes, and v1 differs. */
  size_t len = 0;
  EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_aggregate(srs, RP, seals, 3, CUZK_SNARKPACK_V2, NULL, 0, &len, &err), &err);
  EXPECT(len == bytes);
  uint8_t *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  REQUIRE_OK(cuzk_aggregate(srs, RP, seals, 3, CUZK_SNARKPACK_V2, a, bytes, &len, &err), &err);
  EXPECT(len == bytes);
  REQUIRE_OK(cuzk_aggregate(srs, RP, seals, 3, CUZK_SNARKPACK_V2, b, bytes, &len, &err), &err);
  EXPECT(memcmp(a, b, bytes) == 0);
  REQUIRE_OK(cuzk_aggregate(srs, RP, seals, 3, CUZK_SNARKPACK_V1, c, bytes, &len, &err), &err);
  EXPECT(memcmp(a, c, bytes) != 0);

  /* --- Refusals, each before anything is written. */
  memset(c, 0xab, bytes);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate(srs, RP, seals, 3, 0, c, bytes, &len, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate(srs, RP, seals, 3, 3, c, bytes, &len, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate(srs, "nope", seals, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate(small, RP, seals, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  EXPECT(strstr(err.message, "at most 2") != NULL);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_aggregate(srs, RP, NULL, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_aggregate(srs, RP, seals, 3, CUZK_SNARKPACK_V2, c, bytes, NULL, &err), &err);
  struct cuzk_seal_proof bad[3] = {seals[0], seals[1], seals[2]};
  bad[1].proof_len = CUZK_PROOF_BYTES - 1;
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_aggregate(srs, RP, bad, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  uint8_t garbage[CUZK_PROOF_BYTES];
  memset(garbage, 0x5a, sizeof garbage);
  bad[1].proof_len = CUZK_PROOF_BYTES;
  bad[1].proof = garbage;
  EXPECT_STATUS(CUZK_MALFORMED_PROOF, cuzk_aggregate(srs, RP, bad, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  bad[1].proof = NULL;
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_aggregate(srs, RP, bad, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  EXPECT(c[0] == 0xab && c[bytes - 1] == 0xab);

  /* --- A freed handle is refused; freeing twice or NULL is harmless. */
  cuzk_agg_srs_free(srs);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_aggregate(srs, RP, seals, 3, CUZK_SNARKPACK_V2, c, bytes, &len, &err), &err);
  cuzk_agg_srs_free(srs);
  cuzk_agg_srs_free(small);
  cuzk_agg_srs_free(NULL);
  free(a);
  free(b);
  free(c);
  cuzk_params_free(params);
  cuzk_pce_free(pce);
  cleanup_dir();
  return finish("test_aggregate");
}
