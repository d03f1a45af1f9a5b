//! Sparse sectors (feature `oracles`): production-size (32 and 64 GiB) inputs that
//! filecoin-proofs accepts, made in seconds from sectors of which only what the proofs open
//! exists. The PoRep partition circuit, like filecoin-proofs' vanilla verifier, checks only
//! what the vanilla proofs open: each challenged node's labels recomputed from its parents'
//! labels, the columns against comm_c, the data against comm_d, the replica against
//! comm_r_last. A sector of all-zero data whose challenged labels are computed as SDR
//! computes them from parent labels drawn from a seed, in sparse Merkle trees of the
//! production shapes, answers all of it ([`make_sparse_c1`]). A PoSt opens its challenged
//! leaves of tree_r_last alone ([`make_sparse_post`]); a SnapDeals proof, piecewise constant
//! replicas and data ([`make_sparse_snap`]).

mod c1;
mod labels;
mod post;
mod snap;
mod tree;

pub use c1::make_sparse_c1;
pub use post::make_sparse_post;
pub use snap::make_sparse_snap;
pub use tree::SparseTree;
