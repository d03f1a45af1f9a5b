//! Writing a parameter set as bellperson's `Parameters::write` does (the format `file.rs`
//! reads), its points encoded by every core: at 100M+ constraints the file holds half a
//! billion points, which one thread takes minutes to encode.

use std::io::Write;
use std::path::Path;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G2Affine};
use group::UncompressedEncoding;
use rayon::prelude::*;

use super::srs::params_bytes;
use crate::Result;

/// Points encoded at once before they are written (96 MiB in G1).
const BATCH: usize = 1 << 20;

/// A `u32` big-endian count, then the points uncompressed.
fn points<P>(f: &mut impl Write, points: &[P]) -> std::io::Result<()>
where
    P: UncompressedEncoding + Sync,
    P::Uncompressed: AsRef<[u8]>,
{
    let len = u32::try_from(points.len()).map_err(|_| std::io::Error::other("over 2^32 points in a query"))?;
    f.write_all(&len.to_be_bytes())?;
    let size = std::mem::size_of::<P::Uncompressed>();
    let mut buf = vec![0u8; BATCH.min(points.len()) * size];
    for batch in points.chunks(BATCH) {
        let bytes = &mut buf[..batch.len() * size];
        bytes
            .par_chunks_mut(size)
            .zip(batch.par_iter())
            .for_each(|(b, p)| b.copy_from_slice(p.to_uncompressed().as_ref()));
        f.write_all(bytes)?;
    }
    Ok(())
}

/// Writes `params` to `path` whole or not at all ([`crate::files::write_atomically`]), byte
/// for byte what bellperson's `Parameters::write` writes.
pub fn write_params(params: &Parameters<Bls12>, path: &Path) -> Result<()> {
    crate::files::write_atomically(path, params_bytes(params), |f| {
        let mut f = std::io::BufWriter::with_capacity(1 << 22, f);
        let vk = &params.vk;
        let g1 = |f: &mut std::io::BufWriter<_>, p: &G1Affine| f.write_all(p.to_uncompressed().as_ref());
        let g2 = |f: &mut std::io::BufWriter<_>, p: &G2Affine| f.write_all(p.to_uncompressed().as_ref());
        g1(&mut f, &vk.alpha_g1)?;
        g1(&mut f, &vk.beta_g1)?;
        g2(&mut f, &vk.beta_g2)?;
        g2(&mut f, &vk.gamma_g2)?;
        g1(&mut f, &vk.delta_g1)?;
        g2(&mut f, &vk.delta_g2)?;
        points(&mut f, &vk.ic)?;
        for q in [&params.h, &params.l, &params.a, &params.b_g1] {
            points(&mut f, q)?;
        }
        points(&mut f, &params.b_g2)?;
        f.flush()
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bellperson::groth16::VerifyingKey;
    use blstrs::{G1Projective, G2Projective};
    use group::{Curve, Group};
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;

    #[test]
    fn the_bytes_of_bellpersons_write() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let mut g1 =
            |n: usize| -> Vec<G1Affine> { (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect() };
        let (alpha_g1, beta_g1, delta_g1, ic, h, l, a, b_g1) =
            (g1(1)[0], g1(1)[0], g1(1)[0], g1(3), g1(7), g1(5), g1(4), g1(2));
        let mut g2 =
            |n: usize| -> Vec<G2Affine> { (0..n).map(|_| G2Projective::random(&mut rng).to_affine()).collect() };
        let (beta_g2, gamma_g2, delta_g2, b_g2) = (g2(1)[0], g2(1)[0], g2(1)[0], g2(2));
        let params = Parameters::<Bls12> {
            vk: VerifyingKey { alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic },
            h: Arc::new(h),
            l: Arc::new(l),
            a: Arc::new(a),
            b_g1: Arc::new(b_g1),
            b_g2: Arc::new(b_g2),
        };
        let dir = std::env::temp_dir().join(format!("cuzk-encode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.params");
        write_params(&params, &path).unwrap();
        let mut theirs = Vec::new();
        params.write(&mut theirs).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), theirs);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
