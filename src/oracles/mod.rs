//! Test oracles, for the tests and cuzk-bench only (feature `oracles`; the `libcuzk.a` hosts
//! link carries none): bellperson's prover state rewritten ([`mod@reference`]), and real Filecoin
//! inputs made on the spot with filecoin-proofs' own API, with its own verdicts on proofs:
//! sealed sectors' C1 outputs of every seal variant ([`porep`]), PoSt vanilla proofs
//! ([`post`]) and SnapDeals inputs ([`snap`]); and C1 outputs of sparse sectors of production
//! size, which filecoin-proofs accepts ([`sparse`]).

#[cfg(feature = "porep")]
pub mod porep;
#[cfg(feature = "porep")]
pub mod post;
pub mod reference;
#[cfg(feature = "porep")]
pub mod snap;
#[cfg(feature = "porep")]
pub mod sparse;
