//! Where filecoin-proofs keeps a PoSt circuit's parameters.

use storage_proofs_core::parameter_cache::parameter_id;

use super::circuit::param_cache_identifier;
use super::post_type::PostType;
use crate::Result;

/// The file name filecoin-proofs gives `t`'s parameters in its parameter cache
/// (`v28-proof-of-spacetime-fallback-….params`, by its own `parameter_id`): one file per kind and
/// sector size, WindowPoSt `V1` and `V1_2` sharing theirs.
pub fn params_file_name(t: PostType) -> Result<String> {
    Ok(parameter_id(&param_cache_identifier(t)?))
}
