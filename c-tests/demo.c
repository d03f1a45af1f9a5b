/* The demo: the main job through the C ABI on a built-in circuit.
 *
 *   demo [CIRCUIT [CONSTRAINTS [DIR]]]    default: sha256-chain 65536 ./cuzk-demo-data
 *
 * Extracts the circuit's PCE (first run) or maps it, loads Groth16
 * parameters (generated from the circuit's PCE on the first run),
 * proves, verifies, and prints per-stage timings and cuzk_mem_stats. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cuzk.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, cuzk_status s, const struct cuzk_error *err) {
  fprintf(stderr, "demo: %s failed: %s\n  %s\n", what, cuzk_status_str(s), err->message);
  return 1;
}

static void print_mem(const char *when) {
  struct cuzk_mem_stats m;
  struct cuzk_error err;
  if (cuzk_mem_stats(&m, &err) != CUZK_OK) return;
  const double MiB = 1024.0 * 1024.0;
  printf("  mem %-14s rss %8.1f MiB  peak %8.1f MiB  (anon %.1f, file %.1f)  pce %.1f + mapped %.1f  srs %.1f  witness %.1f  abc %.1f  gpu %.1f MiB\n",
         when, m.rss_bytes / MiB, m.peak_rss_bytes / MiB, m.rss_anon_bytes / MiB,
         m.rss_file_bytes / MiB, m.pce_bytes / MiB, m.pce_mapped_bytes / MiB,
         m.srs_bytes / MiB, m.witness_bytes / MiB, m.abc_bytes / MiB, m.gpu_bytes / MiB);
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "sha256-chain";
  unsigned long long size = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536ULL;
  const char *dir = argc > 3 ? argv[3] : "cuzk-demo-data";
  struct cuzk_error err;
  cuzk_status s;
  uint32_t gpus = 0;
  cuzk_cuda_device_count(&gpus, NULL);
  printf("cuzk %s: %s at %llu constraints, data in %s/, %u CUDA device(s)\n",
         cuzk_version(), name, size, dir, gpus);
  if (mkdir(dir, 0755) != 0) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) { perror(dir); return 1; }
  }
  struct cuzk_circuit circuit;
  memset(&circuit, 0, sizeof circuit);
  circuit.kind = CUZK_CIRCUIT_SYNTHETIC;
  circuit.name = name;
  circuit.size = size;
  char pce_path[1024], params_path[1024];
  snprintf(pce_path, sizeof pce_path, "%s/%s-%llu.pce", dir, name, size);
  snprintf(params_path, sizeof params_path, "%s/%s-%llu.params", dir, name, size);
  print_mem("start");

  /* 1. The PCE: extracted and saved on the first run, mapped afterwards. */
  double t0 = now();
  struct cuzk_pce *pce = NULL;
  if ((s = cuzk_pce_load(&circuit, pce_path, 0, &pce, &err)) != CUZK_OK) return fail("cuzk_pce_load", s, &err);
  struct cuzk_pce_info info;
  cuzk_pce_info(pce, &info, NULL);
  printf("1. PCE %s: %llu constraints, %llu inputs, %llu aux, %llu nnz, %.1f MiB (%.2f B/nnz) in %.2fs (%s)\n",
         info.circuit_id, (unsigned long long)info.num_constraints,
         (unsigned long long)info.num_inputs, (unsigned long long)info.num_aux,
         (unsigned long long)info.nnz, info.bytes / 1048576.0,
         (double)info.bytes / (double)(info.nnz ? info.nnz : 1), now() - t0, pce_path);
  print_mem("after PCE");

  /* 2. Parameters: loaded, or generated on the first run. */
  t0 = now();
  struct cuzk_params *params = NULL;
  s = cuzk_params_load(params_path, 0, &params, &err);
  if (s == CUZK_FILE_NOT_FOUND) {
    printf("2. no parameters yet: generating them from the circuit's PCE (demo only: the seed is the trapdoor)...\n");
    fflush(stdout);
    s = cuzk_params_generate(&circuit, params_path, 0, &params, &err);
  }
  if (s != CUZK_OK) return fail("loading parameters", s, &err);
  printf("2. parameters ready in %.2fs (%s)\n", now() - t0, params_path);
  print_mem("after params");

  /* 3. Prove (verification is on by default) and verify again separately. */
  struct cuzk_prove_request req;
  memset(&req, 0, sizeof req);
  req.circuit = circuit;
  req.seed = 1;
  uint8_t proof[CUZK_PROOF_BYTES];
  size_t len = 0;
  struct cuzk_timings t;
  if ((s = cuzk_prove(NULL, pce, params, &req, NULL, proof, sizeof proof, &len, &t, &err)) != CUZK_OK) return fail("cuzk_prove", s, &err);
  printf("3. proof (%zu bytes) on %s: total %.3fs\n", len, t.backend == CUZK_BACKEND_CUDA ? "CUDA" : "CPU", t.total);
  printf("     witness %.3fs  spmv %.3fs  h %.3fs  msm: h %.3fs l %.3fs a %.3fs b_g1 %.3fs b_g2 %.3fs  assembly %.4fs  verify %.3fs\n",
         t.witness, t.spmv, t.h, t.msm_h, t.msm_l, t.msm_a, t.msm_b_g1, t.msm_b_g2, t.assembly, t.verify);
  if ((s = cuzk_verify(params, &req, proof, len, &err)) != CUZK_OK) return fail("cuzk_verify", s, &err);
  printf("4. verified: OK\n     proof: ");
  for (size_t i = 0; i < 16; i++) printf("%02x", proof[i]);
  printf("...\n");
  print_mem("after proof");
  cuzk_mem_trim(NULL);
  print_mem("after trim");

  cuzk_pce_free(pce);
  cuzk_params_free(params);
  return 0;
}
