//! Named values in the order written, as a JSON object (serde_json's own
//! map sorts its keys): a report's figures, a sweep's axes.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serializer};

/// Writes `pairs` as a map, in their order.
pub fn serialize_pairs<S: Serializer, V: serde::Serialize>(
    pairs: &[(String, V)],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// Reads a map into pairs in the order written; a name given twice is an
/// error naming it.
pub fn deserialize_pairs<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
    d: D,
) -> Result<Vec<(String, V)>, D::Error> {
    struct InOrder<V>(PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for InOrder<V> {
        type Value = Vec<(String, V)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a table of names and values")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out: Vec<(String, V)> = Vec::new();
            while let Some((k, v)) = map.next_entry::<String, V>()? {
                if out.iter().any(|(seen, _)| *seen == k) {
                    return Err(serde::de::Error::custom(format!("`{k}` is given twice")));
                }
                out.push((k, v));
            }
            Ok(out)
        }
    }
    d.deserialize_map(InOrder(PhantomData))
}
