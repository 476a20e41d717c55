//! Headless Chromium for the tests that render pages: the HTML reports
//! (files) and the service's web page (a URL).
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser: `AISIM_CHROMIUM` or Debian's `/usr/bin/chromium`. Missing,
/// the test passes on a newcomer's machine but fails where
/// `AISIM_REQUIRE_CHROMIUM=1` (CI, `.ci/run`) says it must run.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("AISIM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var("AISIM_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "AISIM_REQUIRE_CHROMIUM=1 but there is no browser at {} (apt-get install -y chromium, or set AISIM_CHROMIUM)",
        path.display()
    );
    eprintln!(
        "skipped: no browser at {} (set AISIM_REQUIRE_CHROMIUM=1 to make this fail)",
        path.display()
    );
    None
}

/// Headless Chromium on `url` with a fresh profile named `profile` in
/// `dir`, doing `action` (`--dump-dom`, `--screenshot=FILE`), with `extra`
/// flags: its stdout, its stderr (console messages logged there).
pub fn headless_url(
    browser: &Path,
    url: &str,
    action: &str,
    dir: &Path,
    profile: &str,
    extra: &[&str],
) -> (String, String) {
    let profile = dir.join(format!("profile-{profile}"));
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1000,2600",
        ])
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(action)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "chromium {action}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Console errors in a log of [`headless_url`].
pub fn console_errors(log: &str) -> usize {
    ["Uncaught", "ERROR:CONSOLE", "Refused to", "net::ERR"]
        .into_iter()
        .filter(|bad| log.contains(bad))
        .count()
}
