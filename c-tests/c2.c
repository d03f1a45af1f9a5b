/* c2: a PoRep C2 as a C host runs it, checked by filecoin-proofs' verify_seal.
 *
 *   c2 C1_JSON PCE PARAMS MINER SECTOR [PROOFS]
 *
 * Loads the PCE of the C1's sector size (extracting it into PCE when the file
 * is absent) and the parameter file PARAMS (decoded, no cache written beside
 * it), proves the C1 output (seal_commit_phase1's JSON) PROOFS times (default
 * 1) on the default engine, each partition verified against PARAMS' key, then
 * has filecoin-proofs' verify_seal (cuzk_verify_seal) accept the last proof
 * for sector SECTOR of miner f0MINER and refuse it for sector SECTOR + 1.
 * verify_seal reads its verifying key from a private parameter cache made
 * here: PARAMS' key (the file's prefix) and a link to PARAMS, under
 * filecoin-proofs' names, so test parameters work as Filecoin's do. Prints each proof's stages and cuzk_mem_stats; exits 0 only
 * when every check passes. */
#define _XOPEN_SOURCE 700
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuzk.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, cuzk_status s, const struct cuzk_error *err) {
  fprintf(stderr, "c2: %s failed: %s\n  %s\n", what, cuzk_status_str(s), err->message);
  return 1;
}

/* The whole file at path, NUL-terminated; NULL (reported) on failure. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); return NULL; }
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
    buf[n] = 0;
    *len = (size_t)n;
  } else {
    fprintf(stderr, "c2: cannot read %s\n", path);
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

/* The 32 numbers of the C1's top-level `"key":[...]` (it is the key's last
 * occurrence: the vanilla proofs come first). */
static bool json_bytes32(const char *json, const char *key, uint8_t out[32]) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":[", key);
  const char *at = NULL;
  for (const char *p = strstr(json, pat); p; p = strstr(p + 1, pat)) at = p;
  if (!at) return false;
  const char *p = at + strlen(pat);
  for (int i = 0; i < 32; i++) {
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || v > 255 || *end != (i == 31 ? ']' : ',')) return false;
    out[i] = (uint8_t)v;
    p = end + 1;
  }
  return true;
}

/* The registered proof's name: `"registered_proof":"<name>"`. */
static bool registered_proof(const char *json, char *out, size_t cap) {
  const char *pat = "\"registered_proof\":\"";
  const char *p = strstr(json, pat);
  if (!p) return false;
  p += strlen(pat);
  const char *q = strchr(p, '"');
  if (!q || (size_t)(q - p) >= cap) return false;
  memcpy(out, p, (size_t)(q - p));
  out[q - p] = 0;
  return true;
}

/* The sector size in a seal proof's name: `StackedDrg<size>V1...`. */
static bool sector_size(const char *proof_name, char *out, size_t cap) {
  const char *prefix = "StackedDrg";
  if (strncmp(proof_name, prefix, strlen(prefix)) != 0) return false;
  const char *p = proof_name + strlen(prefix), *v = strstr(p, "V1");
  if (!v || v == p || (size_t)(v - p) >= cap) return false;
  memcpy(out, p, (size_t)(v - p));
  out[v - p] = 0;
  return true;
}

/* filecoin-ffi's prover id of miner f0<id>: the ID address's payload, an unsigned LEB128. */
static void prover_id_of(uint64_t miner, uint8_t out[32]) {
  memset(out, 0, 32);
  int i = 0;
  do {
    uint8_t b = miner & 0x7f;
    miner >>= 7;
    out[i++] = b | (miner ? 0x80 : 0);
  } while (miner);
}

/* A private parameter cache holding PARAMS' verifying key under filecoin-proofs' name
 * (the .params name with .vk) and a link to PARAMS under its own name (filecoin-proofs
 * looks for both), set as FIL_PROOFS_PARAMETER_CACHE. bellperson's
 * Parameters::write begins with the key: 864 bytes of points, a big-endian u32 count of
 * IC points, 96 bytes each. */
static bool vk_cache(const struct cuzk_circuit *circuit, const char *params, char *dir, size_t cap) {
  char name[256];
  size_t len = 0;
  struct cuzk_error err;
  snprintf(dir, cap, "%s/cuzk-c2-vk-XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (cuzk_params_file_name(circuit, name, sizeof name, &len, &err) != CUZK_OK || !mkdtemp(dir)) return false;
  FILE *in = fopen(params, "rb");
  if (!in) return false;
  uint8_t head[868];
  bool ok = fread(head, 1, sizeof head, in) == sizeof head;
  size_t n = ok ? 868 + 96 * (size_t)((uint32_t)head[864] << 24 | (uint32_t)head[865] << 16 | (uint32_t)head[866] << 8 | head[867]) : 0;
  uint8_t *vk = ok ? malloc(n) : NULL;
  ok = vk && fseek(in, 0, SEEK_SET) == 0 && fread(vk, 1, n, in) == n;
  fclose(in);
  char path[1024];
  snprintf(path, sizeof path, "%s/%.*s.vk", dir, (int)(len - strlen(".params")), name);
  FILE *out = ok ? fopen(path, "wb") : NULL;
  ok = out && fwrite(vk, 1, n, out) == n;
  if (out) ok = fclose(out) == 0 && ok;
  free(vk);
  char target[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  ok = ok && realpath(params, target) && symlink(target, path) == 0;
  return ok && setenv("FIL_PROOFS_PARAMETER_CACHE", dir, 1) == 0;
}

static void print_mem(void) {
  struct cuzk_mem_stats m;
  if (cuzk_mem_stats(&m, NULL) != CUZK_OK) return;
  const double GiB = 1024.0 * 1024.0 * 1024.0;
  printf("  mem: rss %.2f GiB, peak %.2f GiB; pce %.2f GiB, srs %.2f GiB, witness %.2f GiB, gpu %.2f GiB\n",
         m.rss_bytes / GiB, m.peak_rss_bytes / GiB, m.pce_bytes / GiB, m.srs_bytes / GiB,
         m.witness_bytes / GiB, m.gpu_bytes / GiB);
}

int main(int argc, char **argv) {
  if (argc < 6 || argc > 7) {
    fprintf(stderr, "usage: c2 C1_JSON PCE PARAMS MINER SECTOR [PROOFS]\n");
    return 2;
  }
  const char *c1_path = argv[1], *pce_path = argv[2], *params_path = argv[3];
  uint64_t miner = strtoull(argv[4], NULL, 10), sector = strtoull(argv[5], NULL, 10);
  int proofs = argc > 6 ? atoi(argv[6]) : 1;
  size_t c1_len = 0;
  char *c1 = read_file(c1_path, &c1_len);
  if (!c1) return 1;
  char size[32], proof_name[64];
  struct cuzk_sealed_sector sealed;
  memset(&sealed, 0, sizeof sealed);
  sealed.sector_id = sector;
  if (!registered_proof(c1, proof_name, sizeof proof_name) || !sector_size(proof_name, size, sizeof size) ||
      !json_bytes32(c1, "comm_r", sealed.comm_r) || !json_bytes32(c1, "comm_d", sealed.comm_d) ||
      !json_bytes32(c1, "ticket", sealed.ticket) || !json_bytes32(c1, "seed", sealed.seed)) {
    fprintf(stderr, "c2: %s is not a C1 output (registered_proof, comm_r, comm_d, ticket, seed)\n", c1_path);
    return 1;
  }
  struct cuzk_circuit circuit = {CUZK_CIRCUIT_POREP, size, 0};
  struct cuzk_error err;
  cuzk_status s;
  uint32_t gpus = 0;
  cuzk_cuda_device_count(&gpus, NULL);
  printf("cuzk %s: %s C1 (%zu bytes), sector %llu of f0%llu, %u CUDA device(s)\n", cuzk_version(), proof_name,
         c1_len, (unsigned long long)sector, (unsigned long long)miner, gpus);

  double t0 = now();
  struct cuzk_pce *pce = NULL;
  if ((s = cuzk_pce_load(&circuit, pce_path, 0, &pce, &err)) != CUZK_OK) return fail("cuzk_pce_load", s, &err);
  printf("PCE ready in %.2f s (%s)\n", now() - t0, pce_path);
  t0 = now();
  struct cuzk_params *params = NULL;
  if ((s = cuzk_params_load(params_path, CUZK_PARAMS_LOAD_NO_CACHE, &params, &err)) != CUZK_OK)
    return fail("cuzk_params_load", s, &err);
  printf("parameters loaded in %.2f s (%s)\n", now() - t0, params_path);
  print_mem();

  struct cuzk_prove_request req;
  memset(&req, 0, sizeof req);
  req.circuit = circuit;
  req.input = (const uint8_t *)c1;
  req.input_len = c1_len;
  size_t cap = 0, len = 0;
  if ((s = cuzk_request_proof_len(&circuit, req.input, req.input_len, &cap, &err)) != CUZK_OK)
    return fail("cuzk_request_proof_len", s, &err);
  uint8_t *proof = malloc(cap);
  if (!proof) return 1;
  for (int i = 1; i <= proofs; i++) {
    struct cuzk_timings t;
    t0 = now();
    if ((s = cuzk_prove(NULL, pce, params, &req, NULL, proof, cap, &len, &t, &err)) != CUZK_OK)
      return fail("cuzk_prove", s, &err);
    printf("C2 %d/%d: %zu bytes in %.2f s on %s (last partition: witness %.2f s, spmv %.3f s, h %.3f s, "
           "msm h %.3f s, verify %.3f s)\n",
           i, proofs, len, now() - t0, t.backend == CUZK_BACKEND_CUDA ? "CUDA" : "the CPU", t.witness, t.spmv, t.h,
           t.msm_h, t.verify);
    print_mem();
  }

  char dir[512];
  if (!vk_cache(&circuit, params_path, dir, sizeof dir)) {
    fprintf(stderr, "c2: cannot write %s's verifying key into a parameter cache\n", params_path);
    return 1;
  }
  uint8_t prover[32];
  prover_id_of(miner, prover);
  const uint8_t(*prover_id)[32] = (const uint8_t(*)[32])prover;
  bool valid = false, other = true;
  if ((s = cuzk_verify_seal(proof_name, prover_id, &sealed, proof, len, &valid, &err)) != CUZK_OK)
    return fail("cuzk_verify_seal", s, &err);
  sealed.sector_id = sector + 1;
  if ((s = cuzk_verify_seal(proof_name, prover_id, &sealed, proof, len, &other, &err)) != CUZK_OK)
    return fail("cuzk_verify_seal (next sector)", s, &err);
  printf("filecoin-proofs' verify_seal: sector %llu %s, sector %llu %s\n", (unsigned long long)sector,
         valid ? "verified" : "REFUSED", (unsigned long long)sector + 1, other ? "ACCEPTED" : "refused");
  char rm[600];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  if (system(rm) != 0) fprintf(stderr, "c2: could not remove %s\n", dir);
  free(proof);
  free(c1);
  cuzk_pce_free(pce);
  cuzk_params_free(params);
  return valid && !other ? 0 : 1;
}
