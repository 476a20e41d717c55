//! Reading a GPU type from a JSON file with the hardware catalog's fields, so
//! a computed profile can name hardware the catalog lacks
//! (`my_gpu.json/llama-3.1-8b`).

use std::path::Path;

use super::catalog::HardwareSpec;
use crate::error::CoreError;

impl HardwareSpec {
    /// Reads one hardware entry (the fields of `data/hardware.json`'s
    /// entries; unknown fields are errors) and checks the numbers the
    /// models divide by.
    pub fn from_file(path: &Path) -> Result<HardwareSpec, CoreError> {
        let text = crate::text_file::read_text_file(path)?;
        let h: HardwareSpec = serde_json::from_str(&text).map_err(|e| CoreError::BadFile {
            path: path.to_path_buf(),
            field: format!("line {} column {}", e.line(), e.column()),
            reason: e.to_string(),
        })?;
        let positive = [
            ("mem_bw_bytes_per_s", h.mem_bw_bytes_per_s),
            ("mem_capacity_bytes", h.mem_capacity_bytes as f64),
            ("fp16_tflops", h.fp16_tflops),
        ];
        let at_least_zero = [
            ("fp8_tflops", h.fp8_tflops),
            ("nvlink_gb_per_s", h.nvlink_gb_per_s),
            ("inter_node_gb_per_s", h.inter_node_gb_per_s),
            ("pcie_gb_per_s", h.pcie_gb_per_s),
            ("tdp_w", h.tdp_w),
            ("cost_per_gpu_hr", h.cost_per_gpu_hr),
        ];
        let bad = |field: &str, v: f64, need: &str| CoreError::BadFile {
            path: path.to_path_buf(),
            field: field.into(),
            reason: format!("{v}: must be a finite number {need}"),
        };
        for (field, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(field, v, "above 0"));
            }
        }
        for (field, v) in at_least_zero {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(field, v, "of 0 or more"));
            }
        }
        let f = h.mixed_pass_kv_factor;
        if !(f.is_finite() && (1.0..=10.0).contains(&f)) {
            return Err(bad("mixed_pass_kv_factor", f, "from 1 (no slowdown) to 10"));
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ComputedProfile;

    #[test]
    fn a_hardware_file_names_a_profile_like_the_catalog() {
        let scratch = crate::scratch::ScratchDir::new("hw");
        let dir = scratch.path();
        let path = dir.join("gpu.json");
        let h100 = HardwareSpec::find("h100").unwrap();
        std::fs::write(&path, serde_json::to_string(h100).unwrap()).unwrap();
        let from_file =
            ComputedProfile::from_key(&format!("{}/llama-3.1-8b/tp2", path.display())).unwrap();
        let builtin = ComputedProfile::from_key("h100/llama-3.1-8b/tp2").unwrap();
        assert_eq!(from_file.hardware(), builtin.hardware());
        let mut bad = serde_json::to_value(h100).unwrap();
        bad["mem_bw_bytes_per_s"] = serde_json::json!(-1.0);
        std::fs::write(&path, bad.to_string()).unwrap();
        let e = HardwareSpec::from_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("gpu.json") && e.contains("mem_bw_bytes_per_s") && e.contains("-1"),
            "{e}"
        );
        // The mixed-pass factor: 1 when absent, kept when given, 1 to 10.
        let mut with = serde_json::to_value(h100).unwrap();
        assert!(
            with.get("mixed_pass_kv_factor").is_none(),
            "1 is not written"
        );
        assert_eq!(
            HardwareSpec::find("rtx4090").unwrap().mixed_pass_kv_factor,
            1.96
        );
        with["mixed_pass_kv_factor"] = serde_json::json!(1.4);
        std::fs::write(&path, with.to_string()).unwrap();
        assert_eq!(
            HardwareSpec::from_file(&path).unwrap().mixed_pass_kv_factor,
            1.4
        );
        for v in [0.5, 11.0] {
            with["mixed_pass_kv_factor"] = serde_json::json!(v);
            std::fs::write(&path, with.to_string()).unwrap();
            let e = HardwareSpec::from_file(&path).unwrap_err().to_string();
            assert!(
                e.contains("mixed_pass_kv_factor") && e.contains("from 1"),
                "{e}"
            );
        }
        std::fs::write(&path, r#"{"name": "x"}"#).unwrap();
        let e = HardwareSpec::from_file(&path).unwrap_err().to_string();
        assert!(e.contains("gpu.json") && e.contains("missing field"), "{e}");
    }
}
