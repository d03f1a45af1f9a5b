//! Where filecoin-proofs keeps a size's parameters, and its verifying keys. The `.params` files
//! themselves are read by `params::read_params` (bellperson's format).

use std::io::Read;
use std::path::Path;

use bellperson::groth16::VerifyingKey;
use blstrs::Bls12;
use storage_proofs_core::parameter_cache::parameter_id;

use super::circuit::param_cache_identifier;
use super::sizes::PorepSize;
use crate::{Error, Result};

/// The file name filecoin-proofs gives `size`'s parameters in its parameter cache
/// (`v28-<param cache identifier>.params`, by its own `parameter_id`); the `.vk` file has the
/// same stem.
pub fn params_file_name(size: PorepSize) -> Result<String> {
    Ok(parameter_id(&param_cache_identifier(size)?))
}

/// Reads a Filecoin `.vk` file (bellperson `VerifyingKey::write` format).
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey<Bls12>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .map_err(|e| Error::Io(format!("reading verifying key {}: {e}", path.display())))?;
    VerifyingKey::read(&buf[..]).map_err(|e| Error::Io(format!("parsing verifying key {}: {e}", path.display())))
}
