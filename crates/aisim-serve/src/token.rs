//! The service's token: read from `--token-file` or `AISIM_TOKEN`, and
//! compared in constant time (a wrong guess takes as long as any other).

use std::path::Path;

use crate::error::ServeError;

/// A token, at least [`MIN_TOKEN_BYTES`] long.
pub struct Token(Vec<u8>);

/// Shortest token taken, bytes.
pub const MIN_TOKEN_BYTES: usize = 16;

impl Token {
    /// A token from its text (surrounding whitespace dropped); `from` names
    /// where it came from in an error.
    pub fn new(text: &str, from: &str) -> Result<Token, ServeError> {
        let t = text.trim();
        if t.len() < MIN_TOKEN_BYTES || t.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ServeError::Config(format!(
                "{from}: a token is {MIN_TOKEN_BYTES} characters or more, without spaces (say: head -c 24 /dev/urandom | base64)"
            )));
        }
        Ok(Token(t.as_bytes().to_vec()))
    }

    /// The token in `path`.
    pub fn from_file(path: &Path) -> Result<Token, ServeError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ServeError::Config(format!("--token-file {}: {e}", path.display())))?;
        Token::new(&text, &format!("--token-file {}", path.display()))
    }

    /// Whether `given` is the token, in time that depends on its length only.
    pub fn matches(&self, given: &str) -> bool {
        let g = given.as_bytes();
        let mut diff = (g.len() ^ self.0.len()) as u64;
        for (i, b) in self.0.iter().enumerate() {
            diff |= u64::from(b ^ g.get(i).copied().unwrap_or(0));
        }
        diff == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_matches() {
        let t = Token::new("  0123456789abcdef\n", "test").unwrap();
        assert!(t.matches("0123456789abcdef"));
        for wrong in [
            "",
            "0123456789abcde",
            "0123456789abcdeg",
            "0123456789abcdef0",
        ] {
            assert!(!t.matches(wrong), "{wrong}");
        }
        assert!(Token::new("short", "test").is_err());
        assert!(Token::new("0123456789 abcdef", "test").is_err());
    }
}
