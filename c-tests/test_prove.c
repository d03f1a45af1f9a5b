/* The happy path (load PCE, generate/load params, prove, verify, mem stats)
 * and every error path that needs files: missing, truncated, corrupt and
 * foreign files, unknown circuits, short buffers and misaligned pointers,
 * double loads; a PCE read or mapped, and a read one proving on after its
 * file was truncated and rewritten. */
#include "common.h"

#include <sys/stat.h>
#include <unistd.h>

#define CIRCUIT "mimc-chain"
#define SIZE 2000

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* The bytes of `src` (malloc'd, the caller frees them) and their count in *n. */
static char *read_all(const char *src, long *n) {
  FILE *f = fopen(src, "rb");
  if (!f) { perror(src); exit(1); }
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)*n);
  if (!buf || fread(buf, 1, (size_t)*n, f) != (size_t)*n) { perror(src); exit(1); }
  fclose(f);
  return buf;
}

/* Copies the first `keep` bytes of `src` to `dst`; returns src's size. */
static long copy_prefix(const char *src, const char *dst, long keep) {
  long n;
  char *buf = read_all(src, &n);
  if (keep < 0 || keep > n) keep = n;
  write_file(dst, buf, (size_t)keep);
  free(buf);
  return n;
}

/* Copies `src` to `dst` with its last byte's lowest bit flipped. */
static void copy_flipping_last_bit(const char *src, const char *dst) {
  long n;
  char *buf = read_all(src, &n);
  buf[n - 1] ^= 1;
  write_file(dst, buf, (size_t)n);
  free(buf);
}

int main(void) {
  struct cuzk_error err;
  char pce_path[600], params_path[600], path[600];
  make_test_dir("prove");
  test_path(pce_path, sizeof pce_path, "m.pce");
  test_path(params_path, sizeof params_path, "m.params");
  struct cuzk_circuit circuit = synthetic(CIRCUIT, SIZE);

  /* --- PCE: extract on first load, same instance on the second. */
  struct cuzk_pce *pce = NULL, *again = NULL;
  REQUIRE_OK(cuzk_pce_load(&circuit, pce_path, 0, &pce, &err), &err);
  EXPECT(err.status == CUZK_OK && err.message[0] == '\0');
  FILE *saved = fopen(pce_path, "rb");
  EXPECT(saved != NULL); /* extracted and saved */
  if (saved) fclose(saved);
  REQUIRE_OK(cuzk_pce_load(&circuit, pce_path, 0, &again, &err), &err);
  struct cuzk_pce_info a, b;
  REQUIRE_OK(cuzk_pce_info(pce, &a, &err), &err);
  REQUIRE_OK(cuzk_pce_info(again, &b, &err), &err);
  EXPECT(a.instance == b.instance);
  EXPECT(a.num_constraints >= SIZE / 2 && a.nnz > a.num_constraints);
  EXPECT(strncmp(a.circuit_id, "mimc-chain-", 11) == 0);
  printf("pce %s: %llu constraints, %llu nnz, %llu bytes\n", a.circuit_id,
         (unsigned long long)a.num_constraints, (unsigned long long)a.nnz,
         (unsigned long long)a.bytes);
  cuzk_pce_free(again);
  /* A freed handle is refused by every call, and freeing it again is harmless (under ASan:
   * no use after free, no double free). */
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_pce_info(again, &b, &err), &err);
  EXPECT(strstr(err.message, "pce") != NULL);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_pce_unload(again, &err), &err);
  cuzk_pce_free(again);
  REQUIRE_OK(cuzk_pce_info(pce, &b, &err), &err);

  /* --- Parameters: missing, then generated, then loaded (same file). */
  struct cuzk_params *params = NULL, *params2 = NULL;
  EXPECT_STATUS(CUZK_FILE_NOT_FOUND, cuzk_params_load(params_path, 0, &params, &err), &err);
  REQUIRE_OK(cuzk_params_generate(&circuit, params_path, 42, &params, &err), &err);
  REQUIRE_OK(cuzk_params_load(params_path, 0, &params2, &err), &err);

  /* --- Prove (zeroed request: auto backend, verify on) and verify. */
  struct cuzk_prove_request req = request_for(circuit, 7);
  uint8_t proof[CUZK_PROOF_BYTES];
  size_t len = 0;
  struct cuzk_timings t;
  memset(proof, 0, sizeof proof);
  REQUIRE_OK(cuzk_prove(NULL, pce, params, &req, NULL, proof, sizeof proof, &len, &t, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES);
  EXPECT(t.total > 0 && t.verify > 0 && t.witness > 0 && t.msm_h >= 0);
  EXPECT(t.total >= t.witness + t.spmv + t.verify);
  EXPECT(t.backend == CUZK_BACKEND_CPU || t.backend == CUZK_BACKEND_CUDA);
  printf("proof: total %.3fs (witness %.3f, spmv %.3f, h %.3f, msm h %.3f l %.3f a %.3f b1 %.3f b2 %.3f, verify %.3f)\n",
         t.total, t.witness, t.spmv, t.h, t.msm_h, t.msm_l, t.msm_a, t.msm_b_g1, t.msm_b_g2, t.verify);
  EXPECT_STATUS(CUZK_OK, cuzk_verify(params2, &req, proof, len, &err), &err);

  /* Skipping verification is explicit. */
  struct cuzk_prove_request fast = req;
  fast.skip_verify = 1;
  fast.backend = CUZK_BACKEND_CPU;
  uint8_t proof2[CUZK_PROOF_BYTES];
  EXPECT_STATUS(CUZK_OK, cuzk_prove(NULL, pce, params, &fast, NULL, proof2, sizeof proof2, &len, &t, &err), &err);
  EXPECT(t.verify == 0.0);
  EXPECT(memcmp(proof, proof2, sizeof proof) != 0); /* fresh r, s */
  EXPECT_STATUS(CUZK_OK, cuzk_verify(params, &req, proof2, len, &err), &err);

  /* --- Short buffers: refused up front, needed size reported. */
  len = 0;
  EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_prove(NULL, pce, params, &req, NULL, NULL, 0, &len, NULL, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES);
  len = 0;
  uint8_t small[CUZK_PROOF_BYTES - 1];
  memset(small, 0xab, sizeof small);
  EXPECT_STATUS(CUZK_BUFFER_TOO_SMALL, cuzk_prove(NULL, pce, params, &req, NULL, small, sizeof small, &len, NULL, &err), &err);
  EXPECT(len == CUZK_PROOF_BYTES && small[0] == 0xab);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_prove(NULL, pce, params, &req, NULL, NULL, 192, &len, NULL, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_prove(NULL, pce, params, &req, NULL, proof2, 192, NULL, NULL, &err), &err);

  /* --- Misaligned pointers: refused before any work, nothing written. */
  _Alignas(16) unsigned char scratch[sizeof(struct cuzk_timings) + 16];
  uint8_t untouched[CUZK_PROOF_BYTES];
  memset(untouched, 0xab, sizeof untouched);
  len = 7;
  struct cuzk_timings *odd_timings = (struct cuzk_timings *)(void *)(scratch + 1);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &req, NULL, untouched, sizeof untouched, &len, odd_timings, &err), &err);
  EXPECT(strstr(err.message, "timings") != NULL);
  size_t *odd_len = (size_t *)(void *)(scratch + 1);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &req, NULL, untouched, sizeof untouched, odd_len, NULL, &err), &err);
  /* Handles are tokens: anything else (here a stack address) is not one, and is never read. */
  const struct cuzk_cancel *odd_cancel = (const struct cuzk_cancel *)(const void *)(scratch + 1);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_prove(NULL, pce, params, &req, odd_cancel, untouched, sizeof untouched, &len, NULL, &err), &err);
  const struct cuzk_engine *odd_engine = (const struct cuzk_engine *)(const void *)(scratch + 1);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_prove(odd_engine, pce, params, &req, NULL, untouched, sizeof untouched, &len, NULL, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_prove(NULL, (const struct cuzk_pce *)(const void *)params, params, &req, NULL, untouched, sizeof untouched, &len, NULL, &err), &err);
  EXPECT(len == 7 && untouched[0] == 0xab && untouched[CUZK_PROOF_BYTES - 1] == 0xab);

  /* --- Verification failures. */
  struct cuzk_prove_request other_seed = request_for(circuit, 8);
  EXPECT_STATUS(CUZK_VERIFICATION_FAILED, cuzk_verify(params, &other_seed, proof, sizeof proof, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_verify(params, &req, proof, 191, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_verify(params, &req, NULL, 192, &err), &err);
  uint8_t garbage[CUZK_PROOF_BYTES];
  memset(garbage, 0x5a, sizeof garbage);
  EXPECT_STATUS(CUZK_MALFORMED_PROOF, cuzk_verify(params, &req, garbage, sizeof garbage, &err), &err);

  /* --- Bad requests. */
  struct cuzk_prove_request bad = req;
  bad.reserved[0] = 1;
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof2, 192, &len, NULL, &err), &err);
  bad = req;
  bad.backend = 77;
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof2, 192, &len, NULL, &err), &err);
  bad = req;
  bad.backend = CUZK_BACKEND_CUDA;
  bad.device = 64;
  EXPECT_STATUS(CUZK_NO_SUCH_DEVICE, cuzk_prove(NULL, pce, params, &bad, NULL, proof2, 192, &len, NULL, &err), &err);
  bad = req;
  bad.input = (const uint8_t *)"{}";
  bad.input_len = 2;
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_prove(NULL, pce, params, &bad, NULL, proof2, 192, &len, NULL, &err), &err);
  bad = request_for(synthetic(CIRCUIT, 50000), 1);
  EXPECT_STATUS(CUZK_CIRCUIT_MISMATCH, cuzk_prove(NULL, pce, params, &bad, NULL, proof2, 192, &len, NULL, &err), &err);
  bad = request_for(synthetic("nope", 50000), 1);
  EXPECT_STATUS(CUZK_UNKNOWN_CIRCUIT, cuzk_prove(NULL, pce, params, &bad, NULL, proof2, 192, &len, NULL, &err), &err);

  /* --- Parameters of another circuit: refused before proving. */
  struct cuzk_circuit small_circuit = synthetic(CIRCUIT, 300);
  struct cuzk_params *wrong = NULL;
  test_path(path, sizeof path, "small.params");
  REQUIRE_OK(cuzk_params_generate(&small_circuit, path, 1, &wrong, &err), &err);
  EXPECT_STATUS(CUZK_PARAMS_MISMATCH, cuzk_prove(NULL, pce, wrong, &req, NULL, proof2, 192, &len, NULL, &err), &err);
  EXPECT_STATUS(CUZK_VERIFICATION_FAILED, cuzk_verify(wrong, &req, proof, sizeof proof, &err), &err);
  cuzk_params_free(wrong);

  /* --- Corrupt and truncated parameter files. */
  test_path(path, sizeof path, "garbage.params");
  write_file(path, "not parameters", 14);
  struct cuzk_params *p = NULL;
  EXPECT_STATUS(CUZK_BAD_PARAMS_FILE, cuzk_params_load(path, 0, &p, &err), &err);
  test_path(path, sizeof path, "truncated.params");
  copy_prefix(params_path, path, 1000);
  EXPECT_STATUS(CUZK_BAD_PARAMS_FILE, cuzk_params_load(path, 0, &p, &err), &err);
  EXPECT(p == NULL);
  /* In the background too: the layout is checked before the load returns. */
  EXPECT_STATUS(CUZK_BAD_PARAMS_FILE, cuzk_params_load(path, CUZK_PARAMS_LOAD_BACKGROUND, &p, &err), &err);
  EXPECT(p == NULL);
  /* A point off its curve (the last byte of the last point flipped): a background load
   * returns, then cuzk_params_wait and the proof report it; the handle stays safe to free. */
  test_path(path, sizeof path, "offcurve.params");
  copy_flipping_last_bit(params_path, path);
  REQUIRE_OK(cuzk_params_load(path, CUZK_PARAMS_LOAD_BACKGROUND | CUZK_PARAMS_LOAD_NO_CACHE, &p, &err), &err);
  EXPECT_STATUS(CUZK_BAD_PARAMS_FILE, cuzk_params_wait(p, &err), &err);
  EXPECT_STATUS(CUZK_BAD_PARAMS_FILE, cuzk_prove(NULL, pce, p, &req, NULL, proof2, sizeof proof2, &len, NULL, &err), &err);
  cuzk_params_free(p);
  p = NULL;
  REQUIRE_OK(cuzk_params_wait(params2, &err), &err);
  EXPECT_STATUS(CUZK_NULL_ARGUMENT, cuzk_params_wait(NULL, &err), &err);
  /* Not a regular file: refused at once, not waited on. */
  test_path(path, sizeof path, "fifo.params");
  unlink(path);
  EXPECT(mkfifo(path, 0600) == 0);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_params_load(path, 0, &p, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_params_load(path, CUZK_PARAMS_LOAD_NO_CACHE, &p, &err), &err);
  unlink(path);

  /* --- Memory statistics see the resident PCE and SRS. */
  struct cuzk_mem_stats m;
  EXPECT_STATUS(CUZK_OK, cuzk_mem_trim(&err), &err); /* the buffers kept from the last proof */
  EXPECT_STATUS(CUZK_OK, cuzk_mem_stats(&m, &err), &err);
  EXPECT(m.srs_bytes > 0 && m.pce_bytes + m.pce_mapped_bytes > 0);
  EXPECT(m.witness_bytes == 0 && m.abc_bytes == 0); /* nothing in flight, nothing kept */
  printf("mem: rss %llu peak %llu anon %llu file %llu pce %llu pce_mapped %llu srs %llu\n",
         (unsigned long long)m.rss_bytes, (unsigned long long)m.peak_rss_bytes,
         (unsigned long long)m.rss_anon_bytes, (unsigned long long)m.rss_file_bytes,
         (unsigned long long)m.pce_bytes, (unsigned long long)m.pce_mapped_bytes,
         (unsigned long long)m.srs_bytes);

  /* --- PCE files: a foreign file (another circuit's) and a truncated one.
   * Unload first so the registry consults the file again. */
  EXPECT_STATUS(CUZK_OK, cuzk_pce_unload(pce, &err), &err);
  /* The handle still works after the registry let go. */
  EXPECT_STATUS(CUZK_OK, cuzk_prove(NULL, pce, params, &fast, NULL, proof2, sizeof proof2, &len, NULL, &err), &err);
  struct cuzk_circuit other = synthetic(CIRCUIT, 5000);
  struct cuzk_pce *q = NULL;
  EXPECT_STATUS(CUZK_BAD_PCE_FILE, cuzk_pce_load(&other, pce_path, 0, &q, &err), &err);
  test_path(path, sizeof path, "truncated.pce");
  long full = copy_prefix(pce_path, path, -1);
  copy_prefix(pce_path, path, full / 2);
  EXPECT_STATUS(CUZK_BAD_PCE_FILE, cuzk_pce_load(&circuit, path, 0, &q, &err), &err);
  test_path(path, sizeof path, "garbage.pce");
  write_file(path, "garbage", 7);
  EXPECT_STATUS(CUZK_BAD_PCE_FILE, cuzk_pce_load(&circuit, path, CUZK_PCE_LOAD_SKIP_CHECKSUMS, &q, &err), &err);
  EXPECT(q == NULL);
  /* Not a regular file: refused at once, not waited on. */
  struct cuzk_circuit fresh = synthetic(CIRCUIT, 4321);
  test_path(path, sizeof path, "fifo.pce");
  unlink(path);
  EXPECT(mkfifo(path, 0600) == 0);
  EXPECT_STATUS(CUZK_INVALID_ARGUMENT, cuzk_pce_load(&fresh, path, 0, &q, &err), &err);
  EXPECT(q == NULL);
  unlink(path);
  /* An unwritable path: the PCE is extracted and kept on the heap (the node
   * keeps working; the registry logs that it could not save it). */
  EXPECT_STATUS(CUZK_OK, cuzk_pce_load(&circuit, "/nonexistent-cuzk-dir/sub/x.pce", 0, &q, &err), &err);
  struct cuzk_pce_info heap;
  EXPECT_STATUS(CUZK_OK, cuzk_pce_info(q, &heap, &err), &err);
  EXPECT(heap.heap_bytes > 0 && heap.nnz == a.nnz);
  EXPECT_STATUS(CUZK_OK, cuzk_pce_unload(q, &err), &err);
  cuzk_pce_free(q);
  q = NULL;
  /* Mapped on request: only the dictionary on the heap, the rest counted as
   * mapped. */
  REQUIRE_OK(cuzk_pce_load(&circuit, pce_path, CUZK_PCE_LOAD_MAP, &q, &err), &err);
  struct cuzk_pce_info mapped;
  REQUIRE_OK(cuzk_pce_info(q, &mapped, &err), &err);
  EXPECT(mapped.nnz == a.nnz && mapped.heap_bytes < mapped.bytes);
  EXPECT_STATUS(CUZK_OK, cuzk_mem_stats(&m, &err), &err);
  EXPECT(m.pce_mapped_bytes >= mapped.bytes - mapped.heap_bytes);
  EXPECT_STATUS(CUZK_OK, cuzk_prove(NULL, q, params, &fast, NULL, proof2, sizeof proof2, &len, NULL, &err), &err);
  EXPECT_STATUS(CUZK_OK, cuzk_pce_unload(q, &err), &err);
  cuzk_pce_free(q);
  q = NULL;
  /* By default the file is read: every byte on the heap, counted as the
   * PCE's. */
  REQUIRE_OK(cuzk_pce_load(&circuit, pce_path, 0, &q, &err), &err);
  struct cuzk_pce_info c;
  REQUIRE_OK(cuzk_pce_info(q, &c, &err), &err);
  EXPECT(c.nnz == a.nnz && c.num_constraints == a.num_constraints);
  EXPECT(c.instance != a.instance); /* a new instance after the unload */
  EXPECT(c.heap_bytes == c.bytes && a.heap_bytes == a.bytes);
  EXPECT_STATUS(CUZK_OK, cuzk_mem_stats(&m, &err), &err);
  EXPECT(m.pce_bytes >= a.bytes + c.bytes); /* `pce` still holds the first instance */
  EXPECT_STATUS(CUZK_OK, cuzk_prove(NULL, q, params, &fast, NULL, proof2, sizeof proof2, &len, NULL, &err), &err);
  /* The file changes under the loaded PCE: truncated, then rewritten in
   * place with other bytes (as `cp other.pce m.pce` does). A mapped PCE
   * would fault (SIGBUS) or change under the prover; a read one does not
   * depend on its file any more. */
  EXPECT(truncate(pce_path, 0) == 0);
  unsigned char *other_bytes = malloc((size_t)full);
  EXPECT(other_bytes != NULL);
  if (other_bytes) {
    memset(other_bytes, 0x5a, (size_t)full);
    write_file(pce_path, other_bytes, (size_t)full);
    free(other_bytes);
  }
  struct cuzk_prove_request after = request_for(circuit, 11);
  EXPECT_STATUS(CUZK_OK, cuzk_prove(NULL, q, params, &after, NULL, proof2, sizeof proof2, &len, NULL, &err), &err);
  EXPECT_STATUS(CUZK_OK, cuzk_verify(params2, &after, proof2, len, &err), &err);

  cuzk_pce_free(q);
  cuzk_pce_free(pce);
  cuzk_params_free(params);
  cuzk_params_free(params2);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_verify(params, &after, proof2, len, &err), &err);
  EXPECT_STATUS(CUZK_INVALID_HANDLE, cuzk_prove(NULL, pce, params2, &after, NULL, proof2, sizeof proof2, &len, NULL, &err), &err);
  cuzk_params_free(params);
  cleanup_dir();
  return finish("test_prove");
}
