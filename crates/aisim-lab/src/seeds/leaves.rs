//! A report's figures by name: every number (or `null`) of the sections
//! `--seeds` summarizes, keyed by its JSON path, in the report's own order.
//! Reading the serialized report, not its fields, makes every figure added
//! to those sections part of the summary with nothing else to change.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The report's top-level fields whose figures vary with the seed: outcome
/// counts, latency, throughput, cache, concurrency, multi-turn gaps and the
/// duration (not the spec, the workload notes, per-pool or per-worker rows,
/// nor `host`, which is not deterministic).
pub const SECTIONS: [&str; 8] = [
    "outcomes",
    "latency",
    "latency_offered",
    "throughput",
    "cache",
    "concurrency",
    "sessions",
    "duration_s",
];

/// The key of a figure at `path`: the path with `latency.` dropped, so
/// `latency.ttft_ms.p99` is `ttft_ms.p99` and the others keep their section
/// (`latency_offered.ttft_ms.p99`, `throughput.request_rps`).
fn key_of(path: &str) -> String {
    path.strip_prefix("latency.").unwrap_or(path).to_string()
}

/// The figures of `report_json` (a serialized `ReplayReport`), in order:
/// numbers as they are, `null` as `None`; strings, booleans and arrays are
/// not figures.
pub fn figures(report_json: &str) -> Result<Vec<(String, Option<f64>)>, serde_json::Error> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_str(report_json);
    Top { out: &mut out }.deserialize(&mut de)?;
    Ok(out)
}

/// The report object: only `SECTIONS` are read.
struct Top<'a> {
    out: &'a mut Vec<(String, Option<f64>)>,
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a replay report")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if SECTIONS.contains(&key.as_str()) {
                map.next_value_seed(Leaves {
                    path: key,
                    out: &mut *self.out,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// A value at `path`: a number or `null` is a figure, an object is walked.
struct Leaves<'a> {
    path: String,
    out: &'a mut Vec<(String, Option<f64>)>,
}

impl Leaves<'_> {
    fn push(self, v: Option<f64>) {
        self.out.push((key_of(&self.path), v));
    }
}

impl<'de> DeserializeSeed<'de> for Leaves<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Leaves<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a report section")
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.push(Some(v as f64));
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.push(Some(v as f64));
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.push(Some(v));
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.push(None);
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(Leaves {
                path: format!("{}.{key}", self.path),
                out: &mut *self.out,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_keep_the_report_order_and_skip_what_is_not_a_number() {
        let json = r#"{"schema_version": 1, "spec": {"seed": 42},
            "outcomes": {"offered": 3, "completed": 2},
            "latency": {"ttft_ms": {"count": 2, "mean": 1.5, "p99": null}},
            "latency_offered": {"ttft_ms": {"p99": null}},
            "throughput": {"request_rps": 0.25, "note": "x", "ok": true, "rows": [1, 2]},
            "pools": [{"workers": 1}], "duration_s": 8.0, "host": {"wall_s": 0.1}}"#;
        let got = figures(json).unwrap();
        let want: Vec<(String, Option<f64>)> = [
            ("outcomes.offered", Some(3.0)),
            ("outcomes.completed", Some(2.0)),
            ("ttft_ms.count", Some(2.0)),
            ("ttft_ms.mean", Some(1.5)),
            ("ttft_ms.p99", None),
            ("latency_offered.ttft_ms.p99", None),
            ("throughput.request_rps", Some(0.25)),
            ("duration_s", Some(8.0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(got, want);
    }
}
