/* The API surface that needs no proving: version, statuses, the panic
 * boundary, every NULL and bad-argument path, memory statistics. */
#include "common.h"

static void test_version(void) {
  EXPECT(strcmp(cuzk_version(), CUZK_VERSION) == 0);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", CUZK_VERSION_MAJOR,
           CUZK_VERSION_MINOR, CUZK_VERSION_PATCH);
  EXPECT(strcmp(want, CUZK_VERSION) == 0);
}

static void test_status_strings(void) {
  EXPECT(strncmp(cuzk_status_str(CUZK_OK), "CUZK_OK", 7) == 0);
  EXPECT(strncmp(cuzk_status_str(CUZK_PANIC), "CUZK_PANIC", 10) == 0);
  EXPECT(strcmp(cuzk_status_str(4242), "unknown cuzk_status") == 0);
  EXPECT(sizeof(cuzk_status) == 4);
}

static void test_panic_boundary(void) {
  struct cuzk_error err;
  EXPECT_STATUS(CUZK_PANIC, cuzk_debug_panic(&err), &err);
  EXPECT(strstr(err.message, "deliberate test panic") != NULL);
  EXPECT_STATUS(CUZK_PANIC, cuzk_debug_panic(NULL), (struct cuzk_error *)NULL);
  /* The library is still usable after a caught panic. */
  struct cuzk_mem_stats m;
  EXPECT_STATUS(CUZK_OK, cuzk_mem_stats(&m, &err), &err);
  EXPECT(err.message[0] == '\0');
}

static void test_nulls_and_bad_arguments(void) {
  struct cuzk_error err;
  struct cuzk_circuit ok = synthetic("mimc-chain", 1000);
  struct cuzk_pce *pce = NULL;
  struct cuzk_params *params = NULL;
  const char *nowhere = "/nonexistent-cuzk-dir/x.pce";

  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_load(NULL, nowhere, 0, &pce, &err), &err);
  EXPECT(strstr(err.message, "circuit") != NULL);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_load(&ok, NULL, 0, &pce, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_load(&ok, nowhere, 0, NULL, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_pce_load(&ok, "", 0, &pce, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_pce_load(&ok, nowhere, 0x80, &pce, &err), &err);
  /* A NULL err is allowed: the status alone comes back. */
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_load(NULL, nowhere, 0, &pce, NULL), (struct cuzk_error *)NULL);

  struct cuzk_circuit unknown = synthetic("no-such-circuit", 1000);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_pce_load(&unknown, nowhere, 0, &pce, &err), &err);
  EXPECT(strstr(err.message, "sha256-chain") != NULL); /* lists what exists */
  struct cuzk_circuit zeroed;
  memset(&zeroed, 0, sizeof zeroed);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_pce_load(&zeroed, nowhere, 0, &pce, &err), &err);
  struct cuzk_circuit no_name = synthetic(NULL, 1000);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_load(&no_name, nowhere, 0, &pce, &err), &err);
  struct cuzk_circuit not_utf8 = synthetic("\xff\xfe", 1000);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_pce_load(&not_utf8, nowhere, 0, &pce, &err), &err);
  struct cuzk_circuit empty = synthetic("mimc-chain", 0);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_pce_load(&empty, nowhere, 0, &pce, &err), &err);
  struct cuzk_circuit huge = synthetic("mimc-chain", (uint64_t)1 << 40);
  EXPECT_STATUS(CUZK_TOO_LARGE, cuzk_pce_load(&huge, nowhere, 0, &pce, &err), &err);
  struct cuzk_circuit porep;
  memset(&porep, 0, sizeof porep);
  porep.kind = CUZK_CIRCUIT_POREP;
  porep.name = "32GiB";
  size_t plen = 0;
  cuzk_status ps = cuzk_proof_len(&porep, &plen, &err);
  /* 10 partitions of 192 bytes; a build without the porep feature says so. */
  EXPECT(ps == CUZK_UNSUPPORTED || (ps == CUZK_OK && plen == 10 * CUZK_PROOF_BYTES));
  porep.name = "3KiB";
  ps = cuzk_pce_load(&porep, nowhere, 0, &pce, &err);
  EXPECT(ps == CUZK_UNSUPPORTED || ps == CUZK_UNKNOWN_CIRCUIT);
  EXPECT(pce == NULL); /* out-params untouched on failure */

  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_load(NULL, 0, &params, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_load("/x", 0, NULL, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_params_load("/x", 0x10, &params, &err), &err);
  EXPECT_STATUS(CUZK_FILE_NOT_FOUND, cuzk_params_load("/nonexistent-cuzk-dir/p.params", 0, &params, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_generate(NULL, "/x", 1, &params, &err), &err);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_params_generate(&unknown, "/x", 1, &params, &err), &err);
  EXPECT(params == NULL);

  uint8_t proof[CUZK_PROOF_BYTES];
  size_t len = 0;
  struct cuzk_prove_request req = request_for(ok, 1);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_prove(NULL, NULL, NULL, &req, NULL, proof, sizeof proof, &len, NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_verify(NULL, &req, proof, sizeof proof, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_info(NULL, NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_pce_unload(NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_unload(NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_mem_stats(NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_cuda_device_count(NULL, &err), &err);

  /* Misaligned pointers are refused, never dereferenced. */
  _Alignas(16) unsigned char scratch[sizeof(struct cuzk_engine_config) + 16];
  memset(scratch, 0, sizeof scratch);
  const struct cuzk_engine *odd_engine = (const struct cuzk_engine *)(const void *)(scratch + 1);
  struct cuzk_engine_stats st;
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_engine_stats(odd_engine, &st, &err), &err);
  EXPECT(strstr(err.message, "engine") != NULL);
  struct cuzk_engine *engine = NULL;
  const struct cuzk_engine_config *odd_config = (const struct cuzk_engine_config *)(const void *)(scratch + 1);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_engine_new(odd_config, &engine, &err), &err);
  EXPECT(engine == NULL);
  struct cuzk_device_stats *odd_stats = (struct cuzk_device_stats *)(void *)(scratch + 1);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_engine_devices(NULL, odd_stats, 1, &len, &err), &err);

  /* Freeing NULL is a no-op. */
  cuzk_pce_free(NULL);
  cuzk_params_free(NULL);
}

static void test_mem_stats(void) {
  struct cuzk_error err;
  struct cuzk_mem_stats m;
  memset(&m, 0xff, sizeof m);
  EXPECT_STATUS(CUZK_OK, cuzk_mem_stats(&m, &err), &err);
  EXPECT(m.rss_bytes > 0 && m.rss_bytes < ((uint64_t)1 << 40));
  EXPECT(m.peak_rss_bytes >= m.rss_bytes);
  EXPECT(m.witness_bytes == 0 && m.abc_bytes == 0);
  EXPECT(m.peak_reset_supported <= 1);
  cuzk_status s = cuzk_mem_reset_peak(&err);
  EXPECT(s == CUZK_OK || (s == CUZK_UNSUPPORTED && err.message[0] != '\0'));
  EXPECT_STATUS(CUZK_OK, cuzk_mem_trim(&err), &err);
  EXPECT_STATUS(CUZK_OK, cuzk_mem_trim(NULL), (struct cuzk_error *)NULL);
  uint32_t gpus = 99;
  EXPECT_STATUS(CUZK_OK, cuzk_cuda_device_count(&gpus, &err), &err);
  EXPECT(gpus < 99);
}

int main(void) {
  test_version();
  test_status_strings();
  test_panic_boundary();
  test_nulls_and_bad_arguments();
  test_mem_stats();
  return finish("test_api");
}
