//! Where filecoin-proofs keeps a SnapDeals circuit's parameters.

use storage_proofs_core::parameter_cache::parameter_id;

use super::circuit::param_cache_identifier;
use crate::circuits::porep::PorepSize;
use crate::Result;

/// The file name filecoin-proofs gives the parameters of `size`'s update circuit in its parameter
/// cache (`v28-empty-sector-update-merkletree-….params`, by its own `parameter_id`).
pub fn params_file_name(size: PorepSize) -> Result<String> {
    Ok(parameter_id(&param_cache_identifier(size)?))
}
