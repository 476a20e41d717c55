//! The layer-profile timing model: a pass's time summed from per-layer GPU
//! profiles in the CSV shape of LLMServingSim's profiler (microseconds).
//!
//! - `dense.csv` (`layer,tokens,time_us`): each layer by the tokens in the
//!   pass; `embedding` and `final_layernorm` run once per pass, `layernorm`
//!   twice per decoder layer, the others once per decoder layer.
//! - `attention.csv` (`prefill_chunk,kv_prefill,n_decode,kv_decode,time_us`):
//!   one decoder layer's attention, by prompt tokens, their mean cached
//!   context, decoders and their mean context. A pass with prompts only reads
//!   the rows without decoders, one with decoders only the rows without
//!   prefill, and a pass with both the mixed rows, interpolated over all
//!   four (measured mixed passes take 1.2 to 1.4 times the sum of their two
//!   parts: one kernel serves both); without mixed rows the two parts are
//!   summed.
//! - `per_sequence.csv` (`layer,sequences,time_us`): `lm_head` and `sampler`,
//!   once per pass, by the requests in the pass.
//!
//! Every curve is interpolated linearly between its points and extrapolated
//! along its last segment; the decoder layer count comes from the profile's
//! `meta.yaml` (`model:` naming a catalog model) or is given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::pass::{PassShape, PassTime, TimingModel};
use super::profile_csv::{read_rows, Rows};
use super::table::{bad, check_axis, interp, segment};
use crate::error::CoreError;
use crate::profile::ModelSpec;

/// One measured curve: time against one axis.
#[derive(Debug, Clone, Default)]
struct Curve {
    x: Vec<f64>,
    us: Vec<f64>,
}

impl Curve {
    fn at(&self, x: f64) -> f64 {
        interp(&self.x, &self.us, x)
    }
}

/// A time against one or more axes: a curve, or one grid of the other axes
/// per value of the first, the two around a point blended linearly (and
/// extrapolated along the end segments). Evaluating one allocates nothing.
#[derive(Debug, Clone)]
enum Grid {
    Curve(Curve),
    Nested { rows: Vec<f64>, inner: Vec<Grid> },
}

impl Grid {
    /// The time at `x` (one coordinate per axis).
    fn at(&self, x: &[f64]) -> f64 {
        match self {
            Grid::Curve(c) => c.at(x[0]),
            Grid::Nested { inner, .. } if inner.len() == 1 => inner[0].at(&x[1..]),
            Grid::Nested { rows, inner } => {
                let (i, w) = segment(rows, x[0]);
                let (a, b) = (inner[i].at(&x[1..]), inner[i + 1].at(&x[1..]));
                a + w * (b - a)
            }
        }
    }
}

/// Per-layer profiles of one GPU and model.
#[derive(Debug, Clone)]
pub struct LayerTiming {
    /// Decoder-layer curves with how many times each runs per decoder layer.
    per_layer: Vec<(Curve, f64)>,
    /// Curves run once per pass, by tokens.
    per_pass: Vec<Curve>,
    /// Curves run once per pass, by requests.
    per_sequence: Vec<Curve>,
    /// Attention by (prefill tokens, their mean cached context).
    prefill_attention: Grid,
    /// Attention by (decoders, their mean context).
    decode_attention: Grid,
    /// Attention of passes with both, by the four; `None` when the profile
    /// has no mixed rows (the two parts are then summed).
    mixed_attention: Option<Grid>,
    decoder_layers: f64,
    name: String,
}

/// Points sorted by x; a repeated x is an error naming its line.
fn curve(path: &Path, what: &str, mut points: Vec<Point>) -> Result<Curve, CoreError> {
    points.sort_by(|a, b| a.1.total_cmp(&b.1));
    for w in points.windows(2) {
        if w[0].1 == w[1].1 {
            return Err(bad(
                path,
                format!("line {}", w[1].0),
                format!(
                    "{what} at {} is measured twice (also line {})",
                    w[1].1, w[0].0
                ),
            ));
        }
    }
    let c = Curve {
        x: points.iter().map(|p| p.1).collect(),
        us: points.iter().map(|p| p.2).collect(),
    };
    check_axis(path, what, &c.x)?;
    Ok(c)
}

fn named_curves(path: &Path, rows: Rows) -> Result<BTreeMap<String, Curve>, CoreError> {
    let mut by_name: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    for (line, name, n) in rows {
        by_name.entry(name).or_default().push((line, n[0], n[1]));
    }
    by_name
        .into_iter()
        .map(|(name, points)| Ok((name.clone(), curve(path, &name, points)?)))
        .collect()
}

/// A measured point of a curve: (line, x, µs).
type Point = (usize, f64, f64);

/// A measured point of a grid: (line, coordinates, µs).
type GridPoint = (usize, Vec<f64>, f64);

/// The grid of `points` (each with as many coordinates); `None` when there
/// are none.
fn grid(path: &Path, what: &str, points: Vec<GridPoint>) -> Result<Option<Grid>, CoreError> {
    let Some(dims) = points.first().map(|p| p.1.len()) else {
        return Ok(None);
    };
    if dims == 1 {
        let points = points.into_iter().map(|(l, x, us)| (l, x[0], us)).collect();
        return curve(path, what, points).map(|c| Some(Grid::Curve(c)));
    }
    // Values are at least 0, whose bit patterns sort as the numbers do.
    let mut by_row: BTreeMap<u64, Vec<GridPoint>> = BTreeMap::new();
    for (line, x, us) in points {
        by_row
            .entry(x[0].to_bits())
            .or_default()
            .push((line, x[1..].to_vec(), us));
    }
    let mut rows = Vec::with_capacity(by_row.len());
    let mut inner = Vec::with_capacity(by_row.len());
    for (row, points) in by_row {
        rows.push(f64::from_bits(row));
        inner.extend(grid(path, what, points)?);
    }
    Ok(Some(Grid::Nested { rows, inner }))
}

/// [`grid`], which must have points.
fn required_grid(path: &Path, what: &str, points: Vec<GridPoint>) -> Result<Grid, CoreError> {
    grid(path, what, points)?.ok_or_else(|| bad(path, what, "no rows: the profile needs them"))
}

fn take(path: &Path, curves: &mut BTreeMap<String, Curve>, name: &str) -> Result<Curve, CoreError> {
    curves
        .remove(name)
        .ok_or_else(|| bad(path, name, "missing: the profile needs this layer"))
}

/// The decoder layers of the model named by `model:` in `meta.yaml` in `dir`
/// or its parent (LLMServingSim writes it one level up from `tp1/`).
fn layers_from_meta(dir: &Path) -> Result<u32, CoreError> {
    let candidates = [dir.join("meta.yaml"), dir.join("../meta.yaml")];
    let Some(meta) = candidates.iter().find(|p| p.is_file()) else {
        return Err(bad(
            dir,
            "meta.yaml",
            "not found here or one folder up: give the decoder layer count (layers:DIR,LAYERS)",
        ));
    };
    let text = crate::text_file::read_text_file(meta)?;
    let model = text
        .lines()
        .find_map(|l| l.strip_prefix("model:"))
        .map(|m| m.trim().trim_matches(['\'', '"']).to_string())
        .ok_or_else(|| {
            bad(
                meta,
                "model",
                "missing: give the decoder layer count (layers:DIR,LAYERS)",
            )
        })?;
    let short = model
        .rsplit('/')
        .next()
        .unwrap_or(&model)
        .to_ascii_lowercase();
    let spec = ModelSpec::find(&short).ok_or_else(|| {
        bad(
            meta,
            "model",
            format!("`{model}` is not in the model catalog (`aisim profiles` lists it): give the decoder layer count (layers:DIR,LAYERS)"),
        )
    })?;
    u32::try_from(spec.layers).map_err(|_| bad(meta, "model", "too many layers"))
}

impl LayerTiming {
    /// Reads the three profiles in `dir`; `decoder_layers` defaults to the
    /// catalog model named in `meta.yaml`.
    pub fn from_dir(dir: &Path, decoder_layers: Option<u32>) -> Result<LayerTiming, CoreError> {
        let decoder_layers = match decoder_layers {
            Some(0) => {
                return Err(bad(
                    dir,
                    "layers",
                    "0: the model has at least one decoder layer",
                ))
            }
            Some(n) => n,
            None => layers_from_meta(dir)?,
        };
        let dense_path = dir.join("dense.csv");
        let mut dense = named_curves(
            &dense_path,
            read_rows(&dense_path, Some("layer"), &["tokens", "time_us"])?,
        )?;
        let mut per_pass = Vec::new();
        for name in ["embedding", "final_layernorm"] {
            per_pass.push(take(&dense_path, &mut dense, name)?);
        }
        let mut per_layer = vec![(take(&dense_path, &mut dense, "layernorm")?, 2.0)];
        // Every other dense layer runs once per decoder layer.
        per_layer.extend(std::mem::take(&mut dense).into_values().map(|c| (c, 1.0)));
        let seq_path = dir.join("per_sequence.csv");
        let mut seq = named_curves(
            &seq_path,
            read_rows(&seq_path, Some("layer"), &["sequences", "time_us"])?,
        )?;
        let per_sequence = std::mem::take(&mut seq).into_values().collect();
        let attn_path = dir.join("attention.csv");
        let rows = read_rows(
            &attn_path,
            None,
            &[
                "prefill_chunk",
                "kv_prefill",
                "n_decode",
                "kv_decode",
                "time_us",
            ],
        )?;
        let (mut prefill, mut decode, mut mixed) = (Vec::new(), Vec::new(), Vec::new());
        for (line, _, n) in rows {
            match (n[0] > 0.0, n[2] > 0.0) {
                (true, false) => prefill.push((line, vec![n[0], n[1]], n[4])),
                (false, true) => decode.push((line, vec![n[2], n[3]], n[4])),
                (true, true) => mixed.push((line, n[..4].to_vec(), n[4])),
                (false, false) => {} // an empty pass takes no time
            }
        }
        Ok(LayerTiming {
            per_layer,
            per_pass,
            per_sequence,
            prefill_attention: required_grid(
                &attn_path,
                "prefill attention (prefill_chunk, kv_prefill)",
                prefill,
            )?,
            decode_attention: required_grid(
                &attn_path,
                "decode attention (n_decode, kv_decode)",
                decode,
            )?,
            mixed_attention: grid(
                &attn_path,
                "mixed attention (prefill_chunk, kv_prefill, n_decode, kv_decode)",
                mixed,
            )?,
            decoder_layers: decoder_layers as f64,
            name: format!("layers:{}", dir.display()),
        })
    }

    /// Microseconds of a pass.
    fn pass_us(&self, shape: &PassShape<'_>) -> f64 {
        let decode = shape.decode_requests as f64;
        let prefill_tokens = shape.prefill_tokens() as f64;
        let tokens = prefill_tokens + decode;
        let requests = shape.prefill.len() as f64 + decode;
        if requests == 0.0 {
            return 0.0;
        }
        let cached = if prefill_tokens > 0.0 {
            shape
                .prefill
                .iter()
                .map(|c| c.tokens as f64 * c.context_before as f64)
                .sum::<f64>()
                / prefill_tokens
        } else {
            0.0
        };
        let mean_ctx = if decode > 0.0 {
            shape.decode_context_tokens as f64 / decode
        } else {
            0.0
        };
        let attention = match (prefill_tokens > 0.0, decode > 0.0, &self.mixed_attention) {
            (true, true, Some(mixed)) => mixed.at(&[prefill_tokens, cached, decode, mean_ctx]),
            (true, true, None) => {
                self.prefill_attention.at(&[prefill_tokens, cached])
                    + self.decode_attention.at(&[decode, mean_ctx])
            }
            (true, false, _) => self.prefill_attention.at(&[prefill_tokens, cached]),
            (false, true, _) => self.decode_attention.at(&[decode, mean_ctx]),
            (false, false, _) => 0.0,
        };
        let layer: f64 = self.per_layer.iter().map(|(c, k)| k * c.at(tokens)).sum();
        let once: f64 = self.per_pass.iter().map(|c| c.at(tokens)).sum::<f64>()
            + self
                .per_sequence
                .iter()
                .map(|c| c.at(requests))
                .sum::<f64>();
        (self.decoder_layers * (layer + attention) + once).max(0.0)
    }

    /// The folder the profiles came from.
    pub fn source(&self) -> PathBuf {
        PathBuf::from(self.name.trim_start_matches("layers:"))
    }
}

impl TimingModel for LayerTiming {
    fn name(&self) -> &str {
        &self.name
    }

    fn pass_time(&self, shape: &PassShape<'_>) -> PassTime {
        PassTime::whole_pass(shape, self.pass_us(shape) * 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;
    use crate::timing::PrefillChunk;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn fixture(tag: &str) -> ScratchDir {
        let scratch = ScratchDir::new(&format!("layers-{tag}"));
        let dir = scratch.path();
        write(dir, "dense.csv", "layer,tokens,time_us\nembedding,1,1\nembedding,101,2\nfinal_layernorm,1,1\nfinal_layernorm,101,1\nlayernorm,1,1\nlayernorm,101,3\nqkv_proj,1,10\nqkv_proj,101,20\n");
        write(
            dir,
            "per_sequence.csv",
            "layer,sequences,time_us\nlm_head,1,100\nlm_head,11,200\nsampler,1,10\n",
        );
        write(dir, "attention.csv", "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n16,0,0,0,5\n16,100,0,0,7\n32,0,0,0,9\n32,100,0,0,13\n0,0,1,100,2\n0,0,1,200,3\n0,0,3,100,4\n0,0,3,200,6\n16,0,1,100,999\n");
        write(dir, "meta.yaml", "gpu: x\nmodel: meta-llama/Llama-3.1-8B\n");
        scratch
    }

    #[test]
    fn sums_the_layers_of_a_pass() {
        let scratch = fixture("sum");
        let dir = scratch.path();
        let t = LayerTiming::from_dir(dir, Some(2)).unwrap();
        // 2 decoders at mean context 150, no prefill: tokens 2, requests 2.
        let shape = PassShape {
            prefill: &[],
            decode_requests: 2,
            decode_context_tokens: 300,
            kv_capacity_tokens: 1 << 20,
        };
        // attention: rows n=1 → 2.5, n=3 → 5, at n=2 → 3.75; per layer:
        // 2 × layernorm(2) = 2 × 1.02, qkv(2) = 10.1; once: embedding 1.01,
        // final 1, lm_head(2) 110, sampler 10.
        let want = 2.0 * (3.75 + 2.0 * 1.02 + 10.1) + 1.01 + 1.0 + 110.0 + 10.0;
        let got = t.pass_time(&shape).decode_s * 1e6;
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        // A 24-token chunk over 50 cached tokens: attention 7 .. 11 at 50 cached.
        let chunk = [PrefillChunk {
            context_before: 50,
            tokens: 24,
        }];
        let p = PassShape {
            prefill: &chunk,
            decode_requests: 0,
            decode_context_tokens: 0,
            kv_capacity_tokens: 1 << 20,
        };
        let attention = (6.0 + 11.0) / 2.0;
        let want = 2.0 * (attention + 2.0 * 1.46 + 12.3) + 1.23 + 1.0 + 100.0 + 10.0;
        let got = t.pass_time(&p).prefill_s * 1e6;
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        // The layer count comes from meta.yaml's catalog model (32 layers).
        let meta = LayerTiming::from_dir(dir, None).unwrap();
        assert_eq!(meta.decoder_layers, 32.0);
    }

    #[test]
    fn a_pass_with_prompts_and_decoders_reads_the_mixed_rows() {
        let scratch = fixture("mixed");
        let dir = scratch.path();
        let chunk = [PrefillChunk {
            context_before: 0,
            tokens: 16,
        }];
        let mixed = PassShape {
            prefill: &chunk,
            decode_requests: 1,
            decode_context_tokens: 100,
            kv_capacity_tokens: 1 << 20,
        };
        // 17 tokens, 2 requests: layernorm 1.32, qkv 11.6, embedding 1.16,
        // final 1, lm_head 110, sampler 10; attention the mixed row's 999.
        let rest = 2.0 * 1.32 + 11.6;
        let once = 1.16 + 1.0 + 110.0 + 10.0;
        let t = LayerTiming::from_dir(dir, Some(1)).unwrap();
        let got = t.pass_us(&mixed);
        assert!((got - (999.0 + rest + once)).abs() < 1e-9, "{got}");
        // Without mixed rows, the prefill part (5) plus the decode part (2).
        let text = std::fs::read_to_string(dir.join("attention.csv")).unwrap();
        let unmixed: String = text
            .lines()
            .filter(|l| !l.ends_with(",999"))
            .map(|l| format!("{l}\n"))
            .collect();
        write(dir, "attention.csv", &unmixed);
        let t = LayerTiming::from_dir(dir, Some(1)).unwrap();
        let got = t.pass_us(&mixed);
        assert!((got - (5.0 + 2.0 + rest + once)).abs() < 1e-9, "{got}");
    }

    #[test]
    fn bad_profiles_name_file_line_and_field() {
        let scratch = fixture("bad");
        let dir = scratch.path();
        write(dir, "dense.csv", "layer,tokens,time_us\nembedding,1,-4\n");
        let e = LayerTiming::from_dir(dir, Some(1)).unwrap_err().to_string();
        assert!(
            e.contains("dense.csv")
                && e.contains("line 2")
                && e.contains("time_us")
                && e.contains("-4"),
            "{e}"
        );
        write(
            dir,
            "dense.csv",
            "layer,tokens,time_us\nembedding,1,4\nembedding,1,5\n",
        );
        let e = LayerTiming::from_dir(dir, Some(1)).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("twice"), "{e}");
        write(dir, "dense.csv", "layer,tokens,time_us\nembedding,1,4\n");
        let e = LayerTiming::from_dir(dir, Some(1)).unwrap_err().to_string();
        assert!(
            e.contains("final_layernorm") && e.contains("missing"),
            "{e}"
        );
        write(dir, "dense.csv", "layer,tokens\n");
        let e = LayerTiming::from_dir(dir, Some(1)).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
        let e = LayerTiming::from_dir(dir, Some(0)).unwrap_err().to_string();
        assert!(e.contains("layers"), "{e}");
    }
}
