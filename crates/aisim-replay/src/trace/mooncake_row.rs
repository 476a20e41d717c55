//! A scanner for the one row shape real Mooncake traces use,
//! `{"timestamp": 0, "input_length": 40160, "output_length": 6, "hash_ids": [0, 1]}`
//! (keys in any order, any JSON whitespace): several times faster than
//! deserialising, and it allocates only the id list, once, at its size.
//!
//! It accepts only what it can read exactly as `serde_json` would: the four
//! keys, each once; integer timestamps (a fraction or exponent could round
//! differently), lengths that fit 32 bits, ids that fit 64, numbers without
//! sign or leading zeros. Anything else answers `None` and the row takes the
//! general path, which reads every shape and names what is wrong.

/// The four fields of a canonical row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CanonicalRow {
    pub timestamp_ms: f64,
    pub input_length: u32,
    pub output_length: u32,
    pub hash_ids: Vec<u64>,
}

struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        self.skip_ws();
        (self.s.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// A key among the four (no escapes).
    fn key(&mut self) -> Option<usize> {
        self.eat(b'"')?;
        let start = self.i;
        while *self.s.get(self.i)? != b'"' {
            self.i += 1;
        }
        let key = &self.s[start..self.i];
        self.i += 1;
        ["timestamp", "input_length", "output_length", "hash_ids"]
            .iter()
            .position(|k| k.as_bytes() == key)
    }

    /// An unsigned integer without leading zeros, or `None` (also on overflow
    /// and when a fraction, exponent or other character follows the digits).
    #[inline]
    fn integer(&mut self) -> Option<u64> {
        self.skip_ws();
        let rest = &self.s[self.i..];
        let (mut v, mut n) = (0u64, 0usize);
        for &d in rest {
            let x = d.wrapping_sub(b'0');
            if x > 9 {
                break;
            }
            // 19 digits always fit 64 bits; from the 20th on, check.
            v = if n < 19 {
                v * 10 + x as u64
            } else {
                v.checked_mul(10)?.checked_add(x as u64)?
            };
            n += 1;
        }
        let leading_zero = n > 1 && rest[0] == b'0';
        let followed_ok = !matches!(rest.get(n), Some(b'.' | b'e' | b'E'));
        self.i += n;
        (n > 0 && !leading_zero && followed_ok).then_some(v)
    }

    fn ids(&mut self, out: &mut Vec<u64>) -> Option<()> {
        self.eat(b'[')?;
        self.skip_ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Some(());
        }
        loop {
            out.push(self.id()?);
            match *self.s.get(self.i)? {
                // The usual separator, `, `, without the general skip.
                b',' if self.s.get(self.i + 1) == Some(&b' ') => self.i += 2,
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => {
                    self.skip_ws();
                    match *self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
        }
    }

    /// `integer`, for the ids of a list (most of a row's bytes): up to
    /// eight digits read at once from the eight bytes ahead (SWAR); longer
    /// numbers, and the last bytes of a line, take `integer`.
    #[inline]
    fn id(&mut self) -> Option<u64> {
        self.skip_ws();
        let Some(ahead) = self.s.get(self.i..self.i + 8) else {
            return self.integer();
        };
        let x = u64::from_le_bytes(ahead.try_into().expect("eight bytes"));
        let digits = x.wrapping_sub(0x3030_3030_3030_3030);
        // A byte's high bit: below '0' (borrowing) or above '9' (carrying).
        // Borrows and carries run into later bytes only from a non-digit,
        // so the first one found is the first non-digit.
        let non_digit = (digits | x.wrapping_add(0x4646_4646_4646_4646)) & 0x8080_8080_8080_8080;
        let n = (non_digit.trailing_zeros() / 8) as usize;
        if n == 0 || n == 8 {
            return self.integer(); // not a number, or eight digits and maybe more
        }
        // The digits in the high bytes, zeros (leading) below: then eight
        // digits' arithmetic, two by two, four by four, all eight.
        let mut v = digits << (8 * (8 - n));
        v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
        v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
        v = (v * 10_000 + (v >> 32)) & 0xffff_ffff;
        let leading_zero = n > 1 && ahead[0] == b'0';
        let followed_ok = !matches!(ahead[n], b'.' | b'e' | b'E');
        self.i += n;
        (!leading_zero && followed_ok).then_some(v)
    }
}

/// Reads a canonical row; `scratch` is a reusable buffer for the ids.
pub(crate) fn parse(text: &str, scratch: &mut Vec<u64>) -> Option<CanonicalRow> {
    let mut sc = Scanner {
        s: text.as_bytes(),
        i: 0,
    };
    let mut seen = [false; 4];
    let (mut ts, mut input, mut output) = (0u64, 0u64, 0u64);
    scratch.clear();
    sc.eat(b'{')?;
    loop {
        let k = sc.key()?;
        if std::mem::replace(&mut seen[k], true) {
            return None; // a repeated key: the general path decides
        }
        sc.eat(b':')?;
        match k {
            0 => ts = sc.integer()?,
            1 => input = sc.integer()?,
            2 => output = sc.integer()?,
            _ => sc.ids(scratch)?,
        }
        sc.skip_ws();
        match *sc.s.get(sc.i)? {
            b',' => sc.i += 1,
            b'}' => {
                sc.i += 1;
                break;
            }
            _ => return None,
        }
    }
    sc.skip_ws();
    if sc.i != sc.s.len() || !seen[0] || !seen[1] || !seen[2] {
        return None;
    }
    Some(CanonicalRow {
        timestamp_ms: ts as f64,
        input_length: u32::try_from(input).ok()?,
        output_length: u32::try_from(output).ok()?,
        hash_ids: scratch.as_slice().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `serde_json` reads from a row with these four fields, if it is
    /// one this scanner must accept.
    fn by_serde(text: &str) -> Option<CanonicalRow> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Row {
            timestamp: f64,
            input_length: u32,
            output_length: u32,
            hash_ids: Option<Vec<u64>>,
        }
        let r: Row = serde_json::from_str(text).ok()?;
        Some(CanonicalRow {
            timestamp_ms: r.timestamp,
            input_length: r.input_length,
            output_length: r.output_length,
            hash_ids: r.hash_ids.unwrap_or_default(),
        })
    }

    #[test]
    fn an_id_read_eight_bytes_at_once_is_the_integer_read_digit_by_digit() {
        let mut x = 3u64;
        for digits in 1..=21 {
            for _ in 0..50 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let mut number: String = (0..digits)
                    .map(|k| char::from(b'0' + ((x >> (k % 60)) % 10) as u8))
                    .collect();
                if x.is_multiple_of(3) {
                    number.replace_range(0..1, "0"); // a leading zero
                }
                for after in ["", ",", ", 7]", "]", " ", ".5", "e3", "E3", "x", "\u{e9}"] {
                    for pad in ["", "        "] {
                        let text = format!("{number}{after}{pad}");
                        let mut a = Scanner {
                            s: text.as_bytes(),
                            i: 0,
                        };
                        let mut b = Scanner {
                            s: text.as_bytes(),
                            i: 0,
                        };
                        let (fast, plain) = (a.id(), b.integer());
                        assert_eq!(fast, plain, "{text:?}");
                        if fast.is_some() {
                            assert_eq!(a.i, b.i, "{text:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn accepts_exactly_what_it_reads_as_serde_does() {
        let rows = [
            r#"{"timestamp": 0, "input_length": 40160, "output_length": 6, "hash_ids": [0, 1, 2]}"#,
            "{\"hash_ids\":[],\"output_length\":1,\"input_length\":2,\"timestamp\":1022025}\r\n",
            " {\t\"timestamp\" :  7 ,\n \"input_length\":1, \"output_length\":0 , \"hash_ids\": [ 18446744073709551615 ] } ",
            r#"{"timestamp": 5, "input_length": 4294967295, "output_length": 1, "hash_ids": [3]}"#,
        ];
        let mut scratch = Vec::new();
        for row in rows {
            let ours = parse(row, &mut scratch);
            assert!(ours.is_some(), "{row}");
            assert_eq!(ours, by_serde(row), "{row}");
        }
    }

    #[test]
    fn declines_what_it_cannot_read_exactly() {
        let rows = [
            r#"{"timestamp": 1.5, "input_length": 1, "output_length": 1, "hash_ids": [1]}"#,
            r#"{"timestamp": 1e3, "input_length": 1, "output_length": 1, "hash_ids": [1]}"#,
            r#"{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [1]}"#,
            r#"{"timestamp": 01, "input_length": 1, "output_length": 1, "hash_ids": [1]}"#,
            r#"{"timestamp": 1, "input_length": 4294967296, "output_length": 1, "hash_ids": [1]}"#,
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [18446744073709551616]}"#,
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1.0]}"#,
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1,]}"#,
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "session_id": "a"}"#,
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "input_length": 2}"#,
            r#"{"timestamp": 1, "input_length": 1}"#,
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1} x"#,
            r#"{"timestamp": 1, "input_length": "1", "output_length": 1}"#,
            r#"{"time\u0073tamp": 1, "input_length": 1, "output_length": 1}"#,
            r#"{"timestamp": null, "input_length": 1, "output_length": 1}"#,
            "",
            "[]",
        ];
        let mut scratch = Vec::new();
        for row in rows {
            assert_eq!(parse(row, &mut scratch), None, "{row}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// And it does read every canonical row.
        #[test]
        fn the_scanner_reads_every_canonical_row(
            ts in any::<u64>(), input in any::<u32>(), output in any::<u32>(),
            ids in proptest::collection::vec(any::<u64>(), 0..8), order in 0usize..24,
        ) {
            let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
            let mut fields = vec![
                format!("\"timestamp\": {ts}"),
                format!("\"input_length\": {input}"),
                format!("\"output_length\": {output}"),
                format!("\"hash_ids\": [{}]", ids.join(", ")),
            ];
            // One of the 24 orders of the four keys.
            let (mut k, mut perm) = (order, Vec::new());
            while !fields.is_empty() {
                let n = fields.len();
                perm.push(fields.remove(k % n));
                k /= n;
            }
            let text = format!("{{{}}}", perm.join(", "));
            let mut scratch = Vec::new();
            let ours = parse(&text, &mut scratch);
            prop_assert!(ours.is_some(), "{}", text);
            prop_assert_eq!(ours, by_serde(&text), "{}", text);
        }
    }
}
