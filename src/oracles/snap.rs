//! SnapDeals requests made on the spot, as a node makes them: a sector sealed here, new data
//! encoded into it (`empty_sector_update_encode_into`) and its partition proofs generated
//! (`generate_partition_proofs`) through filecoin-proofs-api.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use filecoin_proofs_api::{seal, update, PaddedBytesAmount, UnpaddedBytesAmount};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::porep::{fil, SealedSector};
use crate::circuits::porep::PorepSize;
use crate::circuits::snap::{registered_proof, SnapInput};
use crate::{Error, Result};

fn io(e: std::io::Error) -> Error {
    Error::Io(format!("SnapDeals fixture: {e}"))
}

/// A SnapDeals request for a `size` sector (2 KiB or 8 MiB) sealed in `scratch_dir`, its new
/// data derived from `seed` (see `porep::make_c1` for the process state this touches).
pub fn make_snap_input(size: PorepSize, scratch_dir: &Path, seed: u64) -> Result<SnapInput> {
    let old = SealedSector::new(size, scratch_dir, seed)?;
    let work = scratch_dir.join(format!("snap-{}-{seed}", size.short_name()));
    let made = encode_and_prove(size, &old, &work, seed);
    let _ = fs::remove_dir_all(&work);
    made
}

fn encode_and_prove(size: PorepSize, old: &SealedSector, work: &Path, seed: u64) -> Result<SnapInput> {
    let rp = registered_proof(size);
    let (new_cache, staged, new_replica) = (work.join("cache"), work.join("staged"), work.join("replica"));
    fs::create_dir_all(&new_cache).map_err(io)?;
    let unpadded: UnpaddedBytesAmount = PaddedBytesAmount(size.sector_bytes()).into();
    let mut data = vec![0u8; u64::from(unpadded) as usize];
    ChaCha8Rng::seed_from_u64(seed ^ 0x736e_6170).fill_bytes(&mut data);
    let piece_path = work.join("piece");
    File::create(&piece_path).and_then(|mut f| f.write_all(&data)).map_err(io)?;
    let staged_file =
        OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&staged).map_err(io)?;
    let (piece, _) =
        seal::add_piece(old.size.registered_proof(), File::open(&piece_path).map_err(io)?, staged_file, unpadded, &[])
            .map_err(fil("add_piece"))?;
    let sealed_len = fs::metadata(&old.sealed).map_err(io)?.len();
    File::create(&new_replica).and_then(|f| f.set_len(sealed_len)).map_err(io)?;
    let encoded = update::empty_sector_update_encode_into(
        rp,
        &new_replica,
        &new_cache,
        &old.sealed,
        &old.cache,
        &staged,
        std::slice::from_ref(&piece),
    )
    .map_err(fil("empty_sector_update_encode_into"))?;
    let comm_r_old = old.pc2.comm_r;
    let proofs = update::generate_partition_proofs(
        rp,
        comm_r_old,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &old.sealed,
        &old.cache,
        &new_replica,
        &new_cache,
    )
    .map_err(fil("generate_partition_proofs"))?;
    Ok(SnapInput {
        proof: rp,
        comm_r_old,
        comm_r_new: encoded.comm_r_new,
        comm_d_new: encoded.comm_d_new,
        partitions: proofs.into_iter().map(|p| p.0).collect(),
    })
}

/// filecoin-proofs-api's own verdict (`verify_empty_sector_update_proof`) on `proof` for the
/// request `input`. The verifying key must be where filecoin-proofs looks
/// (`v28-<param cache identifier>.vk` in `FIL_PROOFS_PARAMETER_CACHE`).
pub fn filecoin_verify(input: &[u8], proof: &[u8]) -> Result<bool> {
    let i = SnapInput::decode(input)?;
    update::verify_empty_sector_update_proof(i.proof, proof, i.comm_r_old, i.comm_r_new, i.comm_d_new)
        .map_err(fil("filecoin-proofs verification"))
}
