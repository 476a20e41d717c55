//! # aisim-report: presentation
//!
//! Renders aisim's results as terminal tables, JSON and self-contained HTML
//! (`html`). It holds no simulation
//! logic: every number it prints was computed by a crate below it.
//!
//! ```
//! use aisim_report::table::Table;
//! let mut t = Table::new(["profile", "W ms"]);
//! t.row(["a100", "8.000"]);
//! assert!(t.render().contains("a100"));
//! ```

#![warn(missing_docs)]

pub mod cache_lab;
pub mod compare;
pub mod fidelity;
pub mod fleet;
pub mod html;
pub mod job;
pub mod profiles;
pub mod replay;
pub mod saturate;
pub mod seeds;
pub mod sweep;
pub mod table;

/// Pretty JSON of any serializable report, with a trailing newline.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("reports serialize");
    s.push('\n');
    s
}
