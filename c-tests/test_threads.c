/* Several pthreads at once: concurrent first loads of one PCE (one
 * extraction, one instance), concurrent parameter loads, proofs and
 * verifications, and memory statistics read while proofs run; then the same
 * threads on an engine whose budget holds two proofs, with a cancelled
 * request beside them. */
#include "common.h"

#include <pthread.h>

#define THREADS 6
#define PROOFS_PER_THREAD 2
#define CIRCUIT "mimc-chain"
#define SIZE 3000

static char pce_path[600], params_path[600];
static volatile int proving_done = 0;
/* NULL: the default engine (first round); then an engine with a small budget. */
static struct cuzk_engine *engine = NULL;

struct result {
  int failures;
  uint64_t instance;
};

static void *prover(void *arg) {
  struct result *r = arg;
  struct cuzk_error err;
  struct cuzk_circuit circuit = synthetic(CIRCUIT, SIZE);
  struct cuzk_pce *pce = NULL;
  struct cuzk_params *params = NULL;
  if (cuzk_pce_load(&circuit, pce_path, 0, &pce, &err) != CUZK_OK ||
      cuzk_params_load(params_path, 0, &params, &err) != CUZK_OK) {
    fprintf(stderr, "thread load: %s\n", err.message);
    r->failures++;
    cuzk_pce_free(pce);
    return NULL;
  }
  struct cuzk_pce_info info;
  if (cuzk_pce_info(pce, &info, &err) == CUZK_OK) r->instance = info.instance;
  for (int i = 0; i < PROOFS_PER_THREAD; i++) {
    struct cuzk_prove_request req = request_for(circuit, (uint64_t)(size_t)r * 31 + (uint64_t)i);
    uint8_t proof[CUZK_PROOF_BYTES];
    size_t len = 0;
    struct cuzk_timings t;
    if (cuzk_prove(engine, pce, params, &req, NULL, proof, sizeof proof, &len, &t, &err) != CUZK_OK ||
        cuzk_verify(params, &req, proof, len, &err) != CUZK_OK) {
      fprintf(stderr, "thread prove: %s: %s\n", cuzk_status_str(err.status), err.message);
      r->failures++;
    }
  }
  cuzk_params_free(params);
  cuzk_pce_free(pce);
  return NULL;
}

static void *watcher(void *arg) {
  int *bad = arg;
  struct cuzk_error err;
  while (!proving_done) {
    struct cuzk_mem_stats m;
    if (cuzk_mem_stats(&m, &err) != CUZK_OK || m.rss_bytes == 0) (*bad)++;
  }
  return NULL;
}

int main(void) {
  struct cuzk_error err;
  make_test_dir("threads");
  test_path(pce_path, sizeof pce_path, "t.pce");
  test_path(params_path, sizeof params_path, "t.params");
  struct cuzk_circuit circuit = synthetic(CIRCUIT, SIZE);
  struct cuzk_params *params = NULL;
  REQUIRE_OK(cuzk_params_generate(&circuit, params_path, 9, &params, &err), &err);
  cuzk_params_free(params); /* the cache keeps them resident */

  pthread_t threads[THREADS], watch;
  struct result results[THREADS];
  int watcher_bad = 0;
  memset(results, 0, sizeof results);
  EXPECT(pthread_create(&watch, NULL, watcher, &watcher_bad) == 0);
  for (int i = 0; i < THREADS; i++) EXPECT(pthread_create(&threads[i], NULL, prover, &results[i]) == 0);
  for (int i = 0; i < THREADS; i++) EXPECT(pthread_join(threads[i], NULL) == 0);
  proving_done = 1;
  EXPECT(pthread_join(watch, NULL) == 0);

  for (int i = 0; i < THREADS; i++) {
    EXPECT(results[i].failures == 0);
    EXPECT(results[i].instance != 0 && results[i].instance == results[0].instance);
  }
  EXPECT(watcher_bad == 0);
  printf("%d threads x %d proofs: all verified, one PCE instance\n", THREADS, PROOFS_PER_THREAD);

  /* Round two: an engine whose budget holds exactly two proofs. */
  struct cuzk_pce *pce = NULL;
  REQUIRE_OK(cuzk_pce_load(&circuit, pce_path, 0, &pce, &err), &err);
  uint64_t footprint = 0;
  REQUIRE_OK(cuzk_engine_footprint(NULL, pce, &footprint, &err), &err);
  struct cuzk_engine_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.flags = CUZK_ENGINE_CPU_ONLY;
  cfg.budget_bytes = 2 * footprint;
  /* Absurd thread counts are refused at once, not started. */
  cfg.synthesis_threads = 100000;
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_engine_new(&cfg, &engine, &err), &err);
  cfg.synthesis_threads = 2;
  cfg.workers_per_device = 100000;
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_engine_new(&cfg, &engine, &err), &err);
  cfg.workers_per_device = 0;
  cfg.flags = CUZK_ENGINE_CPU_ONLY | 0x80; /* unknown flag */
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_engine_new(&cfg, &engine, &err), &err);
  /* This engine leaves the process's malloc as it is. */
  cfg.flags = CUZK_ENGINE_CPU_ONLY | CUZK_ENGINE_KEEP_MALLOC;
  REQUIRE_OK(cuzk_engine_new(&cfg, &engine, &err), &err);
  memset(results, 0, sizeof results);
  for (int i = 0; i < THREADS; i++) EXPECT(pthread_create(&threads[i], NULL, prover, &results[i]) == 0);
  /* A request whose token is triggered before it could run holds nothing. */
  struct cuzk_cancel *cancel = NULL;
  REQUIRE_OK(cuzk_cancel_new(&cancel, &err), &err);
  REQUIRE_OK(cuzk_cancel_trigger(cancel, &err), &err);
  REQUIRE_OK(cuzk_params_load(params_path, 0, &params, &err), &err);
  struct cuzk_prove_request req = request_for(circuit, 5);
  uint8_t proof[CUZK_PROOF_BYTES];
  size_t len = 0;
  EXPECT_STATUS(CUZK_CANCELLED, cuzk_prove(engine, pce, params, &req, cancel, proof, sizeof proof, &len, NULL, &err), &err);
  for (int i = 0; i < THREADS; i++) EXPECT(pthread_join(threads[i], NULL) == 0);
  for (int i = 0; i < THREADS; i++) EXPECT(results[i].failures == 0);
  struct cuzk_engine_stats st;
  REQUIRE_OK(cuzk_engine_stats(engine, &st, &err), &err);
  EXPECT(st.budget_bytes == 2 * footprint && st.budget_peak <= st.budget_bytes && st.budget_used == 0);
  EXPECT(st.budget_peak > footprint); /* two really ran at once */
  struct cuzk_device_stats dev;
  size_t ndev = 0;
  REQUIRE_OK(cuzk_engine_devices(engine, &dev, 1, &ndev, &err), &err);
  EXPECT(ndev == 1 && dev.backend == CUZK_BACKEND_CPU && dev.proofs == THREADS * PROOFS_PER_THREAD && dev.failures == 0);
  printf("engine: budget %llu B (2 proofs), peak %llu B, %llu proofs, busy %.2f s; cancelled request refused\n",
         (unsigned long long)st.budget_bytes, (unsigned long long)st.budget_peak,
         (unsigned long long)dev.proofs, dev.busy_seconds);
  cuzk_cancel_free(cancel);
  cuzk_engine_free(engine);
  cuzk_params_free(params);
  cuzk_pce_free(pce);
  cleanup_dir();
  return finish("test_threads");
}
