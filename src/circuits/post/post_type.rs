//! What a PoSt circuit is (its kind and sector size, [`PostType`]) and what it implies: the
//! registered proof, the partition count, filecoin-proofs' public parameters. The circuit and
//! the request both build on it, so it sits below them.

use std::fmt;

use filecoin_proofs::{PoStConfig, PoStType};
use filecoin_proofs_api::RegisteredPoStProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback;

use crate::circuits::filecoin::guarded;
use crate::circuits::porep::PorepSize;
use crate::{Error, Result};

/// Which PoSt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PostKind {
    /// One sector, 66 challenges, one partition: the block-production proof with a deadline.
    Winning,
    /// Many sectors, 10 challenges each, one partition per `sectors_per_partition` sectors.
    Window,
}

/// A PoSt circuit: its kind and sector size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PostType {
    pub kind: PostKind,
    pub size: PorepSize,
}

impl PostType {
    /// The registered proof of this circuit that filecoin-proofs-api 19.1 registers now:
    /// `StackedDrgWinning<size>V1`, `StackedDrgWindow<size>V1_2`.
    pub fn registered_proof(self) -> RegisteredPoStProof {
        use RegisteredPoStProof::*;
        match (self.kind, self.size) {
            (PostKind::Winning, PorepSize::KiB2) => StackedDrgWinning2KiBV1,
            (PostKind::Winning, PorepSize::MiB8) => StackedDrgWinning8MiBV1,
            (PostKind::Winning, PorepSize::MiB512) => StackedDrgWinning512MiBV1,
            (PostKind::Winning, PorepSize::GiB32) => StackedDrgWinning32GiBV1,
            (PostKind::Winning, PorepSize::GiB64) => StackedDrgWinning64GiBV1,
            (PostKind::Window, PorepSize::KiB2) => StackedDrgWindow2KiBV1_2,
            (PostKind::Window, PorepSize::MiB8) => StackedDrgWindow8MiBV1_2,
            (PostKind::Window, PorepSize::MiB512) => StackedDrgWindow512MiBV1_2,
            (PostKind::Window, PorepSize::GiB32) => StackedDrgWindow32GiBV1_2,
            (PostKind::Window, PorepSize::GiB64) => StackedDrgWindow64GiBV1_2,
        }
    }

    /// The circuit a registered proof is proven with. WindowPoSt `V1` and `V1_2` share it
    /// (and its parameters); they differ in how challenges are drawn, which the request's
    /// public inputs follow.
    pub fn of_registered_proof(rp: RegisteredPoStProof) -> PostType {
        let cfg = rp.as_v1_config();
        let kind = match cfg.typ {
            PoStType::Winning => PostKind::Winning,
            PoStType::Window => PostKind::Window,
        };
        let size = PorepSize::from_sector_bytes(u64::from(cfg.sector_size))
            .unwrap_or_else(|_| unreachable!("every registered PoSt proof has a supported sector size"));
        PostType { kind, size }
    }

    /// `winning-post-2KiB`, `window-post-32GiB`.
    pub fn label(self) -> String {
        match self.kind {
            PostKind::Winning => format!("winning-post-{}", self.size),
            PostKind::Window => format!("window-post-{}", self.size),
        }
    }

    /// Sectors one partition circuit proves (WindowPoSt: 2, 2,349 at 32 GiB, 2,300 at 64 GiB;
    /// WinningPoSt: 66 copies of its one sector, one challenge each).
    pub fn sectors_per_partition(self) -> usize {
        with_shape!(self.size, public_params_for, self.registered_proof())
            .map(|pp| pp.sector_count)
            .unwrap_or_else(|_| unreachable!("the registered proofs' public parameters build"))
    }

    /// Partitions (Groth16 proofs) of a request with `sectors` vanilla proofs for all
    /// partitions: `ceil(sectors / sectors_per_partition)` for WindowPoSt, 1 for WinningPoSt.
    pub fn partitions_for(self, sectors: usize) -> usize {
        match self.kind {
            PostKind::Winning => 1,
            PostKind::Window => sectors.div_ceil(self.sectors_per_partition()).max(1),
        }
    }
}

impl fmt::Display for PostType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

pub(super) fn config(rp: RegisteredPoStProof) -> PoStConfig {
    rp.as_v1_config()
}

/// The circuit's public parameters for `rp` (the sector and challenge counts of one
/// partition circuit, and the API version its challenges follow).
pub(super) fn public_params_for<Tree: 'static + MerkleTreeTrait>(
    rp: RegisteredPoStProof,
) -> Result<fallback::PublicParams> {
    let cfg = config(rp);
    guarded("building PoSt public parameters", Error::InvalidInput, || match cfg.typ {
        PoStType::Winning => filecoin_proofs::parameters::winning_post_public_params::<Tree>(&cfg),
        PoStType::Window => filecoin_proofs::parameters::window_post_public_params::<Tree>(&cfg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_proofs_name_their_circuit() {
        for size in PorepSize::ALL {
            for kind in [PostKind::Winning, PostKind::Window] {
                let t = PostType { kind, size };
                assert_eq!(PostType::of_registered_proof(t.registered_proof()), t);
            }
        }
        let w = PostType::of_registered_proof(RegisteredPoStProof::StackedDrgWindow32GiBV1);
        assert_eq!(w, PostType { kind: PostKind::Window, size: PorepSize::GiB32 });
        assert_eq!((w.sectors_per_partition(), w.partitions_for(2349), w.partitions_for(2350)), (2349, 1, 2));
        let win = PostType { kind: PostKind::Winning, size: PorepSize::KiB2 };
        assert_eq!(
            (win.sectors_per_partition(), win.partitions_for(1), win.label()),
            (66, 1, "winning-post-2KiB".into())
        );
    }
}
