//! Real C1 outputs made on the spot: add_piece → PC1 → PC2 → C1 through filecoin-proofs-api,
//! in a scratch directory. Used by tests and benchmarks instead of committed fixtures.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use filecoin_proofs_api::seal::{self, SealCommitPhase1Output, SealCommitPhase2Output, SealPreCommitPhase2Output};
use filecoin_proofs_api::{
    PaddedBytesAmount, PieceInfo, RegisteredAggregationProof, RegisteredSealProof, SectorId, UnpaddedBytesAmount,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::circuits::porep::{PorepSize, SealVariant};
use crate::{Error, Result};

/// The prover id filecoin-ffi derives from a miner (actor) id: the payload of the ID address
/// `f0<id>`, i.e. the unsigned LEB128 varint of the id, zero-padded to 32 bytes
/// (miner 1000 → `e8 07 00 …`).
pub fn prover_id_from_miner(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            break;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
    out
}

/// The SDR parent-cache directory this process uses, fixed on the first [`make_c1`] call.
static PARENT_CACHE: OnceLock<PathBuf> = OnceLock::new();
/// PC1 writes the parent cache under a lock of its own; this keeps concurrent fixture runs in one
/// process from racing on the directory's creation and removal.
static SEAL_LOCK: Mutex<()> = Mutex::new(());

fn parent_cache_dir(scratch_dir: &Path) -> PathBuf {
    PARENT_CACHE
        .get_or_init(|| match std::env::var_os("FIL_PROOFS_PARENT_CACHE") {
            Some(dir) => PathBuf::from(dir),
            None => {
                let dir = scratch_dir.join("filecoin-parents");
                // filecoin-proofs reads its settings once (a lazy_static) on first use, so this
                // must happen before any call into it; later calls keep this directory.
                std::env::set_var("FIL_PROOFS_PARENT_CACHE", &dir);
                dir
            }
        })
        .clone()
}

fn io(what: &str, p: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let what = format!("{what} {}", p.display());
    move |e| Error::Io(format!("{what}: {e}"))
}

/// A failed filecoin-proofs-api step of a fixture, as an error naming it.
pub(crate) fn fil(step: &'static str) -> impl FnOnce(anyhow::Error) -> Error {
    move |e| Error::InvalidInput(format!("{step} failed: {e:#}"))
}

/// Makes a real C1 output (JSON bytes of `SealCommitPhase1Output`) of the seal proof `variant`
/// for a `sector` of 2 KiB or 8 MiB (512 MiB works too but takes tens of minutes and ~5 GB of
/// disk; 32/64 GiB are refused) by sealing `seed`-derived random data in `scratch_dir` (created
/// if missing; the sector files go in a `sector-<size>-<seed>` subdirectory, the variant named
/// in it unless interactive, that is removed afterwards). A synthetic seal makes its synthetic proofs after PC2 and clears them
/// after C1, as a node does.
///
/// Everything derives from `seed`: piece data, ticket, interactive seed, sector id; the miner is
/// f01000, its prover id built as filecoin-ffi does ([`prover_id_from_miner`]). Same seed, same
/// bytes.
///
/// Process state: unless `FIL_PROOFS_PARENT_CACHE` is already set, the first call sets it to
/// `<scratch_dir>/filecoin-parents` (filecoin-proofs reads its settings once, lazily), so tests
/// never write to `/var/tmp`. Setting an environment variable is not synchronised with other
/// threads reading the environment: call this first in a process, or set the variable yourself.
/// Parameter files are never read.
pub fn make_c1(sector: PorepSize, variant: SealVariant, scratch_dir: &Path, seed: u64) -> Result<SealedC1> {
    let s = SealedSector::with_variant(sector, variant, scratch_dir, seed)?;
    let pieces = std::slice::from_ref(&s.piece);
    if variant == SealVariant::Synthetic {
        seal::generate_synth_proofs(&s.cache, &s.sealed, s.prover_id, s.sector_id, s.ticket, s.pc2.clone(), pieces)
            .map_err(fil("generate_synth_proofs"))?;
    }
    let c1 = seal::seal_commit_phase1(
        &s.cache,
        &s.sealed,
        s.prover_id,
        s.sector_id,
        s.ticket,
        s.chain_seed,
        s.pc2.clone(),
        pieces,
    )
    .map_err(fil("seal_commit_phase1"))?;
    if variant == SealVariant::Synthetic {
        seal::clear_synthetic_proofs(&s.cache).map_err(fil("clear_synthetic_proofs"))?;
    }
    let bytes = serde_json::to_vec(&c1).map_err(|e| Error::InvalidInput(format!("encoding C1: {e}")))?;
    Ok(SealedC1 { bytes, prover_id: s.prover_id, sector_id: s.sector_id })
}

/// A C1 output made here, with what its verifier needs beside it.
#[derive(Debug, Clone)]
pub struct SealedC1 {
    /// The JSON bytes of the `SealCommitPhase1Output`: what `cuzk_prove` takes.
    pub bytes: Vec<u8>,
    pub prover_id: [u8; 32],
    pub sector_id: SectorId,
}

impl SealedC1 {
    /// filecoin-proofs-api's own verdict on `proof`, cuzk's output for this C1 (every
    /// partition's proof in order, as `seal_commit_phase2_circuit_proofs` returns them):
    /// `verify_seal` of it, or for a non-interactive seal of its SnarkPack v2 aggregate, made by
    /// `aggregate_seal_commit_proofs` as `seal_commit_phase2` makes it (which reads the
    /// aggregation SRS `v28-fil-inner-product-v1.srs` from `FIL_PROOFS_PARAMETER_CACHE`). The
    /// verifying key is read from there too (`v28-<param cache identifier>.vk`).
    pub fn filecoin_verify(&self, proof: &[u8]) -> Result<bool> {
        let c1: SealCommitPhase1Output =
            serde_json::from_slice(&self.bytes).map_err(|e| Error::InvalidInput(format!("C1: {e}")))?;
        let rp = c1.registered_proof;
        let proof = match PorepSize::from_registered_proof(rp)?.1 {
            SealVariant::NonInteractive => seal::aggregate_seal_commit_proofs(
                rp,
                RegisteredAggregationProof::SnarkPackV2,
                &[c1.comm_r],
                &[c1.seed],
                &[SealCommitPhase2Output { proof: proof.to_vec() }],
            )
            .map_err(fil("aggregate_seal_commit_proofs"))?,
            _ => proof.to_vec(),
        };
        seal::verify_seal(rp, c1.comm_r, c1.comm_d, self.prover_id, self.sector_id, c1.ticket, c1.seed, &proof)
            .map_err(fil("verify_seal"))
    }
}

/// A sector sealed (add_piece → PC1 → PC2) in a scratch directory, kept until dropped: what C1,
/// PoSt vanilla proofs and SnapDeals start from.
pub struct SealedSector {
    pub size: PorepSize,
    pub sector_id: SectorId,
    pub prover_id: [u8; 32],
    pub ticket: [u8; 32],
    pub chain_seed: [u8; 32],
    pub piece: PieceInfo,
    pub pc2: SealPreCommitPhase2Output,
    /// The sector's cache directory (trees, p_aux, t_aux) and its sealed replica.
    pub cache: PathBuf,
    pub sealed: PathBuf,
    work: PathBuf,
}

impl Drop for SealedSector {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.work);
    }
}

impl SealedSector {
    /// Seals `seed`-derived random data into a `sector` of 2 KiB or 8 MiB with the interactive
    /// V1_1 proof (see [`make_c1`]) in `scratch_dir/sector-<size>-<seed>`, removed when the value
    /// is dropped.
    pub fn new(sector: PorepSize, scratch_dir: &Path, seed: u64) -> Result<SealedSector> {
        Self::with_variant(sector, SealVariant::Interactive, scratch_dir, seed)
    }

    /// As [`new`](Self::new), sealed with the registered proof of `variant`.
    pub fn with_variant(
        sector: PorepSize,
        variant: SealVariant,
        scratch_dir: &Path,
        seed: u64,
    ) -> Result<SealedSector> {
        if matches!(sector, PorepSize::GiB32 | PorepSize::GiB64) {
            return Err(Error::InvalidInput(format!(
                "make_c1: sealing a {sector} sector needs hundreds of GB of disk and hours; \
             only 2KiB, 8MiB and 512MiB are supported (a sparse sector's C1 is made at any size: \
             `oracles::sparse`, `cuzk-bench c1 --sparse`)"
            )));
        }
        fs::create_dir_all(scratch_dir).map_err(io("creating", scratch_dir))?;
        let parents = parent_cache_dir(scratch_dir);
        let _guard = SEAL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        fs::create_dir_all(&parents).map_err(io("creating", &parents))?;

        let work = scratch_dir.join(match variant {
            SealVariant::Interactive => format!("sector-{}-{seed}", sector.short_name()),
            other => format!("sector-{}-{other:?}-{seed}", sector.short_name()),
        });
        if work.exists() {
            fs::remove_dir_all(&work).map_err(io("clearing", &work))?;
        }
        let cache = work.join("cache");
        fs::create_dir_all(&cache).map_err(io("creating", &cache))?;
        let result = seal_in(sector, sector.registered_proof_of(variant), &work, &cache, seed);
        if result.is_err() {
            let _ = fs::remove_dir_all(&work);
        }
        result
    }
}

fn seal_in(sector: PorepSize, rp: RegisteredSealProof, work: &Path, cache: &Path, seed: u64) -> Result<SealedSector> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6375_7a6b_5f63_3121);
    let unpadded: UnpaddedBytesAmount = PaddedBytesAmount(sector.sector_bytes()).into();

    // The piece: random bytes, one piece filling the sector.
    let piece_path = work.join("piece");
    {
        let mut f = File::create(&piece_path).map_err(io("creating", &piece_path))?;
        let mut left = u64::from(unpadded) as usize;
        let mut buf = vec![0u8; 1 << 20];
        while left > 0 {
            let n = left.min(buf.len());
            rng.fill_bytes(&mut buf[..n]);
            f.write_all(&buf[..n]).map_err(io("writing", &piece_path))?;
            left -= n;
        }
    }
    let mut ticket = [0u8; 32];
    rng.fill_bytes(&mut ticket);
    let mut chain_seed = [0u8; 32];
    rng.fill_bytes(&mut chain_seed);
    chain_seed[0] |= 1; // never all zero
    let sector_id = SectorId::from(1 + rng.next_u64() % 1_000_000);
    let prover_id = prover_id_from_miner(1000);

    let staged = work.join("staged");
    let sealed = work.join("sealed");
    let piece_file = File::open(&piece_path).map_err(io("opening", &piece_path))?;
    let staged_file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&staged)
        .map_err(io("creating", &staged))?;
    let (piece, _) = seal::add_piece(rp, piece_file, staged_file, unpadded, &[]).map_err(fil("add_piece"))?;
    // PC1 wants the sealed file to exist already.
    File::create(&sealed).map_err(io("creating", &sealed))?;

    let pc1 = seal::seal_pre_commit_phase1(
        rp,
        cache,
        &staged,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        std::slice::from_ref(&piece),
    )
    .map_err(fil("seal_pre_commit_phase1"))?;
    let pc2 = seal::seal_pre_commit_phase2(pc1, cache, &sealed).map_err(fil("seal_pre_commit_phase2"))?;
    Ok(SealedSector {
        size: sector,
        sector_id,
        prover_id,
        ticket,
        chain_seed,
        piece,
        pc2,
        cache: cache.to_path_buf(),
        sealed,
        work: work.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128_prover_id() {
        let p = prover_id_from_miner(1000);
        assert_eq!(&p[..3], &[0xe8, 0x07, 0x00]);
        assert_eq!(prover_id_from_miner(0)[0], 0);
        assert_eq!(&prover_id_from_miner(127)[..2], &[0x7f, 0]);
        assert_eq!(&prover_id_from_miner(128)[..3], &[0x80, 0x01, 0]);
        assert_eq!(
            &prover_id_from_miner(u64::MAX)[..11],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0]
        );
    }
}
