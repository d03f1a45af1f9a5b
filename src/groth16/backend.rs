//! Where a proof's backend stage (H and the MSMs) runs, and the one entry that runs it: the
//! inputs checked once, then the CPU or a CUDA device, then the proof assembled with r and s.

use bellperson::groth16::{Parameters, Proof, VerifyingKey};
use blstrs::{Bls12, Scalar};

use super::proof::assemble;
use super::timings::{timed, ProveTimings};
use crate::gpu::{self, SharingPolicy, Urgency};
use crate::pce::{Abc, Pce};
use crate::witness::Witness;
use crate::{Error, Result};

/// Where the H computation and the MSMs run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A GPU when one is present, else the CPU.
    Auto,
    Cpu,
    /// The CUDA device with this id.
    Cuda(u32),
}

impl Backend {
    /// Parses `auto`, `cpu`, `cuda` (device 0) or `cuda:N`.
    pub fn parse(s: &str) -> Result<Backend> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|id| id.parse().ok())
                .map(Backend::Cuda)
                .ok_or_else(|| Error::InvalidInput(format!("unknown backend {s:?}"))),
        }
    }

    /// Whether the backend takes a, b, c from the host (the CPU) or evaluates them itself, on
    /// its device, from the PCE and the witness (CUDA: they never exist in host memory).
    pub fn takes_host_abc(self) -> bool {
        !matches!(self, Backend::Cuda(_))
    }

    /// A concrete backend: `Auto` is CUDA device 0 when there is one, else the CPU (an error
    /// when the machine's GPUs could not be enumerated); a named device must exist.
    pub fn resolve(self) -> Result<Backend> {
        match self {
            Backend::Auto if gpu::usable_device_count()? > 0 => Ok(Backend::Cuda(0)),
            Backend::Auto => Ok(Backend::Cpu),
            Backend::Cuda(id) => gpu::check_device(id).map(|()| self),
            Backend::Cpu => Ok(self),
        }
    }
}

/// Proves on a resolved `backend` with the randomisers (r, s). `abc`, the host's a, b, c, is
/// for the CPU backend (which evaluates them itself when given `None`); it is consumed (it dies
/// as soon as H no longer needs it). A GPU evaluates them on its device and takes `None`. Byte-identical to `bellperson::groth16::create_proof` with the
/// same r and s, on every backend. On a GPU, a throughput stage lets critical stages on its
/// device go first at each step ([`gpu::Turn`]), as the engine's `policy` says.
#[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
#[allow(clippy::too_many_arguments)] // the paper's inputs, and where and how to run
pub fn prove(
    backend: Backend,
    urgency: Urgency,
    policy: &SharingPolicy,
    pce: &Pce,
    w: &Witness,
    abc: Option<Abc>,
    params: &Parameters<Bls12>,
    (r, s): (Scalar, Scalar),
) -> Result<(Proof<Bls12>, ProveTimings)> {
    check_inputs(backend, pce, w, abc.as_ref(), params)?;
    let mut t = ProveTimings::default();
    let parts = match backend {
        Backend::Cpu => super::cpu::proof_parts(pce, w, abc, params, &mut t)?,
        #[cfg(feature = "cuda")]
        Backend::Cuda(device) => super::cuda::proof_parts(device, urgency, policy, pce, w, params, &mut t)?,
        #[cfg(not(feature = "cuda"))]
        Backend::Cuda(device) => return Err(gpu::no_device(device)),
        Backend::Auto => return Err(Error::InvalidInput("the backend must be resolved first".into())),
    };
    let proof = timed(&mut t.assembly, || assemble(&params.vk, &parts, r, s))?;
    Ok((proof, t))
}

/// Makes `backend` ready to prove `pce`'s circuit with `params`: on a GPU, what the first
/// proof would otherwise do (`cuda::prepare`); nothing on the CPU. `ParamsMismatch`
/// when they are not `pce`'s.
#[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
pub fn prepare(backend: Backend, pce: &Pce, params: &Parameters<Bls12>, policy: &SharingPolicy) -> Result<()> {
    check_shape(pce, params)?;
    match backend {
        Backend::Cpu => Ok(()),
        #[cfg(feature = "cuda")]
        Backend::Cuda(device) => super::cuda::prepare(device, pce, params, policy),
        #[cfg(not(feature = "cuda"))]
        Backend::Cuda(device) => Err(gpu::no_device(device)),
        Backend::Auto => Err(Error::InvalidInput("the backend must be resolved first".into())),
    }
}

/// Rejects a witness, evaluation or parameter set that does not fit `pce` or `backend`.
fn check_inputs(backend: Backend, pce: &Pce, w: &Witness, abc: Option<&Abc>, params: &Parameters<Bls12>) -> Result<()> {
    pce.check_witness(w)?;
    let n = pce.num_constraints();
    match abc {
        Some(_) if !backend.takes_host_abc() => {
            return Err(Error::InvalidInput(format!("{backend:?} evaluates a, b, c on its device")))
        }
        Some(abc) if abc.a.len() != n || abc.b.len() != n || abc.c.len() != n => {
            return Err(Error::InvalidInput(format!("a, b, c must have {n} values")))
        }
        _ => {}
    }
    check_shape(pce, params)
}

/// The lengths every query must have for `pce`.
pub fn check_shape(pce: &Pce, p: &Parameters<Bls12>) -> Result<()> {
    check_vk_shape(pce, &p.vk)?;
    let d = &pce.density;
    let checks = [
        ("h", p.h.len(), pce.domain_size() - 1),
        ("l", p.l.len(), pce.num_aux),
        ("a", p.a.len(), pce.num_inputs + d.a_aux.ones),
        ("b_g1", p.b_g1.len(), d.b_input.ones + d.b_aux.ones),
        ("b_g2", p.b_g2.len(), d.b_input.ones + d.b_aux.ones),
    ];
    for (name, have, want) in checks {
        if have != want {
            return Err(Error::ParamsMismatch(format!("{name} query has {have} points, the circuit needs {want}")));
        }
    }
    Ok(())
}

/// What the verifying key alone says of the parameters' fit to `pce` (it is there at once,
/// while the queries of a load in the background are still decoding): one `ic` point per
/// public input, the ONE included.
pub fn check_vk_shape(pce: &Pce, vk: &VerifyingKey<Bls12>) -> Result<()> {
    match vk.ic.len() == pce.num_inputs {
        true => Ok(()),
        false => Err(Error::ParamsMismatch(format!(
            "vk.ic has {} points, the circuit has {} public inputs",
            vk.ic.len(),
            pce.num_inputs
        ))),
    }
}
