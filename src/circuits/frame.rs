//! The framing of Filecoin request inputs (PoSt, SnapDeals): fixed fields and length-prefixed
//! byte strings, little-endian, read front to back with every length checked against what is
//! left, so no count can ask for more memory than the input holds.

use crate::{Error, Result};

pub(crate) struct Reader<'a> {
    rest: &'a [u8],
    /// Names the input in errors ("PoSt input: …").
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { rest: bytes, what }
    }

    pub fn bad(&self, m: impl std::fmt::Display) -> Error {
        Error::InvalidInput(format!("{}: {m}", self.what))
    }

    pub fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(self.bad(format!("truncated in {field} (needs {n} more bytes, {} left)", self.rest.len())));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    pub fn u32(&mut self, field: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4, field)?.try_into().unwrap_or_default()))
    }

    pub fn u64(&mut self, field: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8, field)?.try_into().unwrap_or_default()))
    }

    pub fn bytes32(&mut self, field: &str) -> Result<[u8; 32]> {
        Ok(self.take(32, field)?.try_into().unwrap_or_default())
    }

    /// A count of items of at least `unit` bytes each, that must fit in what is left.
    pub fn len(&mut self, field: &str, unit: usize) -> Result<usize> {
        let n = self.u64(field)?;
        match usize::try_from(n).ok().filter(|n| n.saturating_mul(unit) <= self.rest.len()) {
            Some(n) => Ok(n),
            None => Err(self.bad(format!("{field} is {n}, more than the {} bytes left can hold", self.rest.len()))),
        }
    }

    /// A registered proof's name (its length, then ASCII), parsed as filecoin-proofs-api's
    /// serde names it.
    pub fn proof_name<T: serde::de::DeserializeOwned>(&mut self, kind: &str) -> Result<T> {
        let n = self.u32("the proof name's length")? as usize;
        let name = std::str::from_utf8(self.take(n, "the proof name")?)
            .map_err(|_| self.bad("the registered proof's name is not UTF-8"))?;
        serde_json::from_value(serde_json::Value::String(name.into()))
            .map_err(|_| self.bad(format!("unknown registered {kind} proof {name:?}")))
    }

    /// `count` length-prefixed byte strings.
    pub fn blobs(&mut self, count: usize, item: &str) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let n = self.len(&format!("{item} {i}'s length"), 1)?;
            out.push(self.take(n, item)?.to_vec());
        }
        Ok(out)
    }

    /// Nothing may follow `last`.
    pub fn end(&self, last: &str) -> Result<()> {
        match self.rest.is_empty() {
            true => Ok(()),
            false => Err(self.bad(format!("{} bytes follow {last}", self.rest.len()))),
        }
    }
}

/// Writes what [`Reader`] reads.
pub(crate) fn put_name(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
}

pub(crate) fn put_blobs(out: &mut Vec<u8>, blobs: &[Vec<u8>]) {
    out.extend_from_slice(&(blobs.len() as u64).to_le_bytes());
    for b in blobs {
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    }
}

/// A registered proof's serde name.
pub(crate) fn name_of<T: serde::Serialize>(proof: T) -> String {
    serde_json::to_value(proof).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}
