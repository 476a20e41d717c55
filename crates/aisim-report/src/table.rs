//! A plain aligned text table: left-aligned text, right-aligned numbers.

use aisim_core::safe_text::terminal_safe;

/// Rows of cells under a header.
#[derive(Debug, Clone, Default)]
pub struct Table {
    title: Option<String>,
    /// Every cell left-aligned, numbers too (a column of mixed values).
    text: bool,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Whether a cell reads as a number (right-aligned).
pub fn is_numeric(cell: &str) -> bool {
    if cell == "inf" {
        return true;
    }
    let c = cell
        .trim_start_matches(['-', '+', '$'])
        .trim_end_matches(['%', 'x', 's']);
    !c.is_empty()
        && c.chars()
            .all(|ch| ch.is_ascii_digit() || ch == '.' || ch == ',' || ch == 'e' || ch == '-')
}

impl Table {
    /// A table with these column names.
    pub fn new<I, S>(header: I) -> Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Table {
            title: None,
            text: false,
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// The same table with a title line above it.
    pub fn titled(mut self, title: impl Into<String>) -> Table {
        let title = terminal_safe(&title.into()).into_owned();
        self.title = Some(title);
        self
    }

    /// The same table with every cell left-aligned as text: for columns
    /// that mix numbers and words (a spec's values).
    pub fn as_text(mut self) -> Table {
        self.text = true;
        self
    }

    /// Whether `cell` is right-aligned as a number.
    pub fn aligns_right(&self, cell: &str) -> bool {
        !self.text && is_numeric(cell)
    }

    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The column names.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The rows.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Appends a row.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        // User text (a trace path, a session id) reaches a terminal here.
        self.rows.push(
            cells
                .into_iter()
                .map(|c| terminal_safe(&c.into()).into_owned())
                .collect(),
        );
    }

    /// The table as text, each line ending in a newline.
    pub fn render(&self) -> String {
        let cols = self
            .header
            .len()
            .max(self.rows.iter().map(Vec::len).max().unwrap_or(0));
        let mut width = vec![0usize; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        if let Some(t) = &self.title {
            out.push_str(t);
            out.push('\n');
        }
        let line = |cells: &[String], out: &mut String| {
            let mut l = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = w - c.chars().count();
                if i > 0 {
                    l.push_str("  ");
                }
                // Numbers right-aligned in every column, the first too (a
                // split's GPU count, a power cut), so their digits line up.
                if self.aligns_right(c) {
                    l.push_str(&" ".repeat(pad));
                    l.push_str(c);
                } else {
                    l.push_str(c);
                    l.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&self.header, &mut out);
        let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
        line(&rule, &mut out);
        for r in &self.rows {
            line(r, &mut out);
        }
        out
    }
}

/// A number with `digits` decimals, or `-` when there is none.
pub fn opt_num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| num(x, digits))
}

/// A number for a person to read: its significant digits
/// (`aisim_core::number::rounded` at `HUMAN_DIGITS`), noise around zero as
/// `0`, `-` when there is none (NaN).
pub fn sig(v: f64) -> String {
    if v.is_nan() {
        "-".to_string()
    } else {
        aisim_core::number::rounded(v, aisim_core::number::HUMAN_DIGITS)
    }
}

/// [`sig`], or `-` when there is no value.
pub fn opt_sig(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), sig)
}

/// A number with `digits` decimals (noise around zero, under
/// `aisim_core::number::NOISE`, is 0: never `-0.000`).
pub fn num(v: f64, digits: usize) -> String {
    if v.abs() < aisim_core::number::NOISE {
        format!("{:.digits$}", 0.0)
    } else if v.is_nan() {
        "-".to_string()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{v:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_left_and_numbers_right() {
        let mut t = Table::new(["name", "value"]).titled("T");
        t.row(["a", "1.5"]);
        t.row(["longer", "10.25"]);
        assert_eq!(
            t.render(),
            "T\nname    value\n------  -----\na         1.5\nlonger  10.25\n"
        );
        let mut first = Table::new(["cut", "kW"]);
        first.row(["5%", "1.0"]);
        first.row(["10%", "12.5"]);
        assert_eq!(first.render(), "cut  kW\n---  ----\n 5%   1.0\n10%  12.5\n");
        assert_eq!(num(f64::INFINITY, 1), "inf");
        assert_eq!(num(2.0 / 3.0, 3), "0.667");
        assert_eq!(num(-1.4e-17, 3), "0.000", "noise is 0, not -0.000");
        assert_eq!(num(-0.0004, 3), "-0.000", "a value is kept");
        assert_eq!(sig(0.1 + 0.2 - 0.3), "0");
        assert_eq!(sig(2.390_000_224_147_084_6), "2.39");
        assert_eq!(sig(f64::NAN), "-");
        assert_eq!(opt_sig(None), "-");
    }
}
