//! What the Filecoin circuit kinds (PoRep, PoSt, SnapDeals) share: the tree-shape dispatch
//! (`with_shape!`, `by_shape!`), the soundness checks their inputs pass before
//! filecoin-proofs sees them, and filecoin-proofs' errors and panics turned into cuzk errors.

use blstrs::Scalar;

use crate::{Error, Result};

/// Calls `$f::<Tree>($args)` with the tree shape filecoin-proofs uses for sector size `$size`
/// (a [`porep::PorepSize`]): the seal and PoSt trees of a sector are the same shape.
macro_rules! with_shape {
    ($size:expr, $f:ident $(, $arg:expr)* $(,)?) => {{
        use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
        use $crate::circuits::porep::PorepSize;
        match $size {
            PorepSize::KiB2 | PorepSize::MiB8 | PorepSize::MiB512 => $f::<SectorShapeBase>($($arg),*),
            PorepSize::GiB32 => $f::<SectorShapeSub8>($($arg),*),
            PorepSize::GiB64 => $f::<SectorShapeTop2>($($arg),*),
        }
    }};
}

/// Implements the shape-erasing trait `$trait` for the three tree shapes: `$method` puts a
/// `$shaped<Shape>` into its variant of `$erased` (`Base`, `Sub8`, `Top2`) and that through
/// `$wrap`. The one place a shape-generic Filecoin value becomes a shape-erased one.
macro_rules! erase_shapes {
    ($trait:ident::$method:ident($shaped:ident) -> $out:ty { $erased:ident, $wrap:expr }) => {
        erase_shapes!(@one $trait, $method, $shaped, $out, $erased, $wrap, SectorShapeBase, Base);
        erase_shapes!(@one $trait, $method, $shaped, $out, $erased, $wrap, SectorShapeSub8, Sub8);
        erase_shapes!(@one $trait, $method, $shaped, $out, $erased, $wrap, SectorShapeTop2, Top2);
    };
    (@one $trait:ident, $method:ident, $shaped:ident, $out:ty, $erased:ident, $wrap:expr, $shape:ident, $variant:ident) => {
        impl $trait for filecoin_proofs::constants::$shape {
            fn $method(x: $shaped<Self>) -> $out {
                ($wrap)($erased::$variant(x))
            }
        }
    };
}

/// `$e` with `$s` bound to the payload of whichever tree-shape variant of enum `$enum`
/// (`Base`, `Sub8`, `Top2`) `$x` is: the one dispatch of the shape-erased Filecoin types.
macro_rules! by_shape {
    ($enum:ident, $x:expr, $s:ident => $e:expr) => {
        match $x {
            $enum::Base($s) => $e,
            $enum::Sub8($s) => $e,
            $enum::Top2($s) => $e,
        }
    };
}

/// A 32-byte value that is a canonical BLS12-381 scalar (every hash Filecoin's trees hold).
pub(crate) fn canonical(bytes: &[u8]) -> bool {
    use ff::PrimeField;
    <[u8; 32]>::try_from(bytes).is_ok_and(|b| Scalar::from_repr_vartime(b).is_some())
}

/// A Merkle proof Filecoin's hashers can take without panicking: every step has the siblings
/// of an arity-2 or arity-8 node (1 or 7) and its index among them, and every value (siblings,
/// leaf, root) is a canonical scalar.
pub(crate) fn merkle_proof_sound<P: storage_proofs_core::merkle::MerkleProofTrait>(p: &P) -> bool {
    let (leaf, root) = (p.leaf(), p.root());
    let path = p.path();
    let steps = path.iter().all(|(siblings, index)| matches!(siblings.len(), 1 | 7) && *index <= siblings.len());
    let mut values = path.iter().flat_map(|(siblings, _)| siblings).chain([&leaf, &root]);
    steps && values.all(|d| canonical(d.as_ref()))
}

/// `Ok` when `k` names one of `n` partitions, else `InvalidInput` from `what`'s request.
pub(crate) fn check_partition_index(k: usize, n: usize, what: &str) -> Result<()> {
    match k < n {
        true => Ok(()),
        false => Err(Error::InvalidInput(format!("{what}: partition {k} out of range: this request has {n}"))),
    }
}

/// Runs `f`, turning an error or a panic inside filecoin-proofs into a cuzk error.
pub(crate) fn guarded<T>(what: &str, make: fn(String) -> Error, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(make(format!("{what}: {e:#}"))),
        Err(p) => Err(make(format!("{what}: panicked: {}", crate::error::panic_text(&*p)))),
    }
}
