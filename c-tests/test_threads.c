/* Several pthreads at once: concurrent first loads of one PCE (one
 * extraction, one instance), concurrent parameter loads, proofs and
 * verifications, and memory statistics read while proofs run. */
#include "common.h"

#include <pthread.h>

#define THREADS 6
#define PROOFS_PER_THREAD 2
#define CIRCUIT "mimc-chain"
#define SIZE 3000

static char pce_path[600], params_path[600];
static volatile int proving_done = 0;

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
    if (cuzk_prove(pce, params, &req, proof, sizeof proof, &len, &t, &err) != CUZK_OK ||
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
  cleanup_dir();
  return finish("test_threads");
}
