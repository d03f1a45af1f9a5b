//! A C1 output's first reading, streamed: the registered proof's name, and the first thing in
//! the vanilla proofs that would make Filecoin's hashers panic — found without building the
//! JSON document, so that a hostile C1's junk costs no memory beyond its own bytes.
//!
//! Every value is read through `deserialize_any`, as `serde_json::Value` reads it: a C1 is
//! refused for exactly the JSON (nesting, numbers, strings) that reading it into a `Value` refused.

use std::collections::BTreeMap;
use std::fmt;

use blstrs::Scalar;
use ff::PrimeField;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The fields read first: the proof type, so that an unknown or unsupported one gets its own
/// message, and what in the vanilla proofs would panic Filecoin's code, checked before it sees
/// them.
#[derive(Deserialize)]
pub(super) struct Head {
    pub registered_proof: Name,
    #[serde(default)]
    pub vanilla_proofs: Malformed,
}

/// `registered_proof`: a name, or what stood there instead.
pub(super) enum Name {
    Name(String),
    /// Not a string: the value, shown as JSON, or its kind for an array or object.
    Other(String),
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a registered proof's name")
    }
    fn visit_str<E>(self, v: &str) -> Result<Name, E> {
        Ok(Name::Name(v.to_owned()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Name, E> {
        Ok(Name::Other(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Name, E> {
        Ok(Name::Other(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Name, E> {
        Ok(Name::Other(serde_json::Value::from(v).to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Name, E> {
        Ok(Name::Other(serde_json::Value::from(v).to_string()))
    }
    fn visit_unit<E>(self) -> Result<Name, E> {
        Ok(Name::Other("null".into()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Name, A::Error> {
        while seq.next_element_seed(Scan::quiet())?.is_some() {}
        Ok(Name::Other("an array".into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Name, A::Error> {
        while map.next_key::<String>()?.is_some() {
            map.next_value_seed(Scan::quiet())?;
        }
        Ok(Name::Other("an object".into()))
    }
}

/// What in the vanilla proofs would make Filecoin's hashers panic, said (`None`: nothing): a
/// hash value (an array of 32 bytes) that is not a canonical scalar (every hash in a vanilla
/// proof is a field element: Poseidon's, or SHA-256's trimmed to 254 bits), or a Merkle path
/// step whose sibling count is not that of a PoRep tree (arity 2 or 8) or whose index is past
/// its siblings. The first such thing met walking the document, an object's fields in key
/// order (its last value for a repeated key), an array's items in order.
#[derive(Default)]
pub(super) struct Malformed(pub Option<String>);

impl<'de> Deserialize<'de> for Malformed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let at = Path::Root("vanilla_proofs");
        Ok(Malformed(Scan { at: &at, quiet: false }.deserialize(d)?.error))
    }
}

/// Where a value is in the document, said only when something is wrong there.
enum Path<'a> {
    Root(&'static str),
    Index(&'a Path<'a>, usize),
    Key(&'a Path<'a>, &'a str),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            Path::Index(up, i) => write!(f, "{up}[{i}]"),
            Path::Key(up, k) => write!(f, "{up}.{k}"),
        }
    }
}

/// What a value's parent needs of it.
#[derive(Default)]
struct Scanned {
    error: Option<String>,
    /// The value as an unsigned integer (`Value::as_u64`).
    number: Option<u64>,
    /// Its length, if an array.
    len: Option<usize>,
}

/// Reads one value at `at`; `quiet`: only its syntax matters (a sibling before it already said
/// what is wrong).
struct Scan<'a> {
    at: &'a Path<'a>,
    quiet: bool,
}

impl Scan<'static> {
    fn quiet() -> Self {
        const NOWHERE: Path<'static> = Path::Root("");
        Scan { at: &NOWHERE, quiet: true }
    }
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = Scanned;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scanned, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = Scanned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Scanned, E> {
        Ok(Scanned::default())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scanned, E> {
        Ok(Scanned { number: Some(v), ..Scanned::default() })
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scanned, E> {
        Ok(Scanned { number: u64::try_from(v).ok(), ..Scanned::default() })
    }
    fn visit_f64<E>(self, _: f64) -> Result<Scanned, E> {
        Ok(Scanned::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Scanned, E> {
        Ok(Scanned::default())
    }
    fn visit_unit<E>(self) -> Result<Scanned, E> {
        Ok(Scanned::default())
    }

    /// 32 bytes are a hash, checked; anything else holds its items' first error.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scanned, A::Error> {
        let (mut bytes, mut len, mut all_bytes, mut error) = ([0u8; 32], 0, true, None);
        loop {
            let at = Path::Index(self.at, len);
            let quiet = self.quiet || error.is_some();
            let Some(item) = seq.next_element_seed(Scan { at: &at, quiet })? else { break };
            match item.number.and_then(|n| u8::try_from(n).ok()) {
                Some(b) if len < 32 => bytes[len] = b,
                Some(_) => {}
                None => all_bytes = false,
            }
            error = error.or(item.error);
            len += 1;
        }
        let error = match self.quiet {
            true => None,
            false if all_bytes && len == 32 => Scalar::from_repr_vartime(bytes)
                .is_none()
                .then(|| format!("the hash at {} is not a canonical BLS12-381 scalar", self.at)),
            false => error,
        };
        Ok(Scanned { error, number: None, len: Some(len) })
    }

    /// A Merkle path step's siblings and index checked, then its fields' errors in key order.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scanned, A::Error> {
        let (mut hashes, mut index) = (None, None);
        // Only the keys whose (last) value has an error.
        let mut errors = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = {
                let at = Path::Key(self.at, &key);
                map.next_value_seed(Scan { at: &at, quiet: self.quiet })?
            };
            match key.as_str() {
                "hashes" => hashes = value.len,
                "index" => index = value.number,
                _ => {}
            }
            match value.error {
                Some(e) => errors.insert(key, e),
                None => errors.remove(&key),
            };
        }
        let step = || {
            hashes.and_then(|n| match index {
                _ if ![1, 7].contains(&n) => Some(format!(
                    "the Merkle path step at {} has {n} siblings (PoRep trees have arity 2 or 8)",
                    self.at
                )),
                Some(i) if i > n as u64 => {
                    Some(format!("the Merkle path step at {} has index {i}, past its {n} siblings", self.at))
                }
                _ => None,
            })
        };
        let error = match self.quiet {
            true => None,
            false => step().or_else(|| errors.into_values().next()),
        };
        Ok(Scanned { error, number: None, len: None })
    }
}
