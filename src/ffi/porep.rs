//! Filecoin PoRep C2 behind the ABI: one request is a whole C1 output; its
//! partitions go through the engine at once (each reserving its own
//! footprint) and come back as `seal_commit_phase2`'s bytes, 192 per
//! partition in partition order. Without the `porep` feature every entry is
//! `CUZK_UNSUPPORTED`.

#[cfg(feature = "porep")]
pub use with_porep::*;
#[cfg(not(feature = "porep"))]
pub use without_porep::*;

#[cfg(feature = "porep")]
mod with_porep {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Instant;

    use bellperson::groth16::Parameters;
    use blstrs::Bls12;

    use crate::circuits::porep::{self, PorepC1, PorepSize};
    use crate::engine::{CancelToken, Engine, ProofRequest, ProveOptions, Timings};
    use crate::ffi::status::{cuzk_status::*, Failure, FfiResult};
    use crate::groth16::proof_bytes;
    use crate::pce::{registry, Pce};
    use crate::Error;

    fn size(sector: &str) -> FfiResult<PorepSize> {
        PorepSize::from_name(sector).map_err(|e| Failure::new(CUZK_UNKNOWN_CIRCUIT, e.to_string()))
    }

    /// The id of the sector size's partition circuit (names the proof and
    /// parameter version, so a PCE of another size or version is refused).
    pub fn circuit_id(sector: &str) -> FfiResult<String> {
        Ok(porep::circuit_id(size(sector)?)?)
    }

    pub fn partitions(sector: &str) -> FfiResult<usize> {
        Ok(size(sector)?.partitions())
    }

    /// Loads the PoRep PCE from `path`, or extracts it from the blank circuit
    /// (no C1 needed) and saves it there.
    pub fn load_pce(sector: &str, path: &Path, verify: bool) -> FfiResult<(Arc<Pce>, String)> {
        let size = size(sector)?;
        let id = porep::circuit_id(size)?;
        let pce = registry::load_or_extract(&id, path, verify, move || porep::extract_pce(size))?;
        Ok((pce, id))
    }

    /// Proves every partition of the C1 output `input` and returns the
    /// concatenated proofs with the partitions' stage times summed.
    #[allow(clippy::too_many_arguments)]
    pub fn prove(
        engine: &Engine,
        pce: &Pce,
        params: &Parameters<Bls12>,
        sector: &str,
        input: &[u8],
        opts: ProveOptions,
        priority: u8,
        cancel: &CancelToken,
    ) -> FfiResult<(Vec<u8>, Timings)> {
        let start = Instant::now();
        let c1 = PorepC1::parse_for(input, size(sector)?)?;
        // Cancelled by the caller, or by the first partition that fails.
        let stop = cancel.child();
        let outcomes: Vec<crate::Result<_>> = std::thread::scope(|s| {
            let partition = |k: usize| {
                let (c1, stop) = (&c1, stop.clone());
                move || {
                    let r = c1.circuit(k).and_then(|circuit| {
                        engine.prove(ProofRequest {
                            pce,
                            params,
                            circuit,
                            public_inputs: Some(c1.public_inputs(k)?),
                            opts,
                            priority,
                            cancel: stop.clone(),
                            observer: None,
                        })
                    });
                    if r.is_err() {
                        stop.cancel();
                    }
                    r
                }
            };
            let running: Vec<_> = (0..c1.num_partitions()).map(|k| s.spawn(partition(k))).collect();
            running
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|p| {
                        Err(Error::Synthesis(format!("a partition panicked: {}", crate::error::panic_text(&*p))))
                    })
                })
                .collect()
        });
        // The first real failure, not the cancels it caused in its siblings.
        if let Some(e) = outcomes.iter().filter_map(|r| r.as_ref().err()).find(|e| **e != Error::Cancelled) {
            return Err(e.clone().into());
        }
        let mut bytes = Vec::with_capacity(outcomes.len() * porep::PARTITION_PROOF_LEN);
        let mut sum = Timings::default();
        for outcome in outcomes {
            let (proof, t) = outcome?;
            bytes.extend_from_slice(&proof_bytes(&proof));
            sum.add(&t);
        }
        sum.total = start.elapsed().as_secs_f64();
        Ok((bytes, sum))
    }

    /// Verifies a seal proof for the C1 output `input`, each partition
    /// against its public inputs, as filecoin-proofs verifies a seal.
    pub fn verify(params: &Parameters<Bls12>, sector: &str, input: &[u8], proof: &[u8]) -> FfiResult<()> {
        let c1 = PorepC1::parse_for(input, size(sector)?)?;
        porep::verify_c1_proof(&c1, &params.vk, proof).map_err(|e| match e {
            Error::InvalidInput(m) => Failure::new(CUZK_MALFORMED_PROOF, m),
            other => other.into(),
        })
    }
}

#[cfg(not(feature = "porep"))]
mod without_porep {
    use std::path::Path;
    use std::sync::Arc;

    use bellperson::groth16::Parameters;
    use blstrs::Bls12;

    use crate::engine::{CancelToken, Engine, ProveOptions, Timings};
    use crate::ffi::status::{cuzk_status::*, Failure, FfiResult};
    use crate::pce::Pce;

    fn unsupported() -> Failure {
        Failure::new(CUZK_UNSUPPORTED, "PoRep circuits need the `porep` feature, which this build lacks")
    }

    pub fn circuit_id(_: &str) -> FfiResult<String> {
        Err(unsupported())
    }

    pub fn partitions(_: &str) -> FfiResult<usize> {
        Err(unsupported())
    }

    pub fn load_pce(_: &str, _: &Path, _: bool) -> FfiResult<(Arc<Pce>, String)> {
        Err(unsupported())
    }

    #[allow(clippy::too_many_arguments)]
    pub fn prove(
        _: &Engine,
        _: &Pce,
        _: &Parameters<Bls12>,
        _: &str,
        _: &[u8],
        _: ProveOptions,
        _: u8,
        _: &CancelToken,
    ) -> FfiResult<(Vec<u8>, Timings)> {
        Err(unsupported())
    }

    pub fn verify(_: &Parameters<Bls12>, _: &str, _: &[u8], _: &[u8]) -> FfiResult<()> {
        Err(unsupported())
    }
}
