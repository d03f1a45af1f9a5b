//! SnarkPack's Fiat–Shamir transcript, as bellperson writes it: SHA-256 over `snarkpack-v1`, a
//! tag, then each element in its bincode (v1, fixed-int) encoding — points compressed, scalars
//! and `Gt` as little-endian limbs, byte slices with a u64 length. A challenge is the first
//! digest (a counter appended each try) that read as a scalar, top bit cleared, is neither 0
//! nor 1.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use serde::Serialize;
use sha2::{Digest, Sha256};

pub(super) struct Transcript(Sha256);

impl Transcript {
    pub fn new(tag: &str) -> Self {
        let mut h = Sha256::new();
        h.update(b"snarkpack-v1");
        h.update(tag.as_bytes());
        Transcript(h)
    }

    pub fn write<S: Serialize + ?Sized>(mut self, el: &S) -> Self {
        // Encoding these types into a Vec cannot fail.
        self.0.update(bincode::serialize(el).expect("bincode of a point, scalar or bytes"));
        self
    }

    pub fn challenge(mut self) -> Scalar {
        let mut counter: u64 = 0;
        loop {
            counter += 1;
            self.0.update(counter.to_be_bytes());
            let mut repr: [u8; 32] = self.0.clone().finalize().into();
            repr[31] &= 0x7f;
            if let Some(c) = Scalar::from_repr_vartime(repr) {
                if c != Scalar::ONE && !bool::from(c.is_zero()) {
                    return c;
                }
            }
        }
    }
}
