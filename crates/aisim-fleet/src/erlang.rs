//! Erlang-C and Kimura's M/G/c tail approximation.

/// `ln(exp(a) + exp(b))` without overflow.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// Probability of waiting in M/M/c with `c` servers and offered load `a = λ/μ`.
/// 0 when `c ≤ 0` or `a ≤ 0`; 1 when `a/c ≥ 1`. Computed in log space, so
/// thousands of servers neither overflow nor lose precision.
pub fn erlang_c(c: u64, a: f64) -> f64 {
    if c == 0 || a <= 0.0 {
        return 0.0;
    }
    let cf = c as f64;
    if a / cf >= 1.0 {
        return 1.0;
    }
    let ln_a = a.ln();
    // ln Σ_{k<c} a^k / k!
    let mut ln_sum = f64::NEG_INFINITY;
    let mut ln_term = 0.0; // k = 0
    for k in 0..c {
        if k > 0 {
            ln_term += ln_a - (k as f64).ln();
        }
        ln_sum = log_add(ln_sum, ln_term);
    }
    // ln [a^c / c! × c / (c − a)]
    let ln_top = ln_term + ln_a - cf.ln() + (cf / (cf - a)).ln();
    (ln_top - log_add(ln_sum, ln_top)).exp()
}

/// Kimura's P99 of the wait in M/G/c: `P(W > t) ≈ C·exp(−2(cμ − λ)t / (1 + cv²))`,
/// so `ln(C / 0.01)·(1 + cv²) / (2(cμ − λ))`; 0 when `C ≤ 0.01`, infinite when
/// `ρ = λ/(cμ) ≥ 1`. Seconds when `λ`, `μ` are per second.
pub fn p99_wait(c: u64, lam: f64, mu: f64, cv2: f64) -> f64 {
    let capacity = c as f64 * mu;
    if lam >= capacity {
        return f64::INFINITY;
    }
    let pw = erlang_c(c, lam / mu);
    if pw <= 0.01 {
        return 0.0;
    }
    (pw / 0.01).ln() * (1.0 + cv2) / (2.0 * (capacity - lam))
}

/// Mean wait in M/M/c: `C / (cμ − λ)`.
pub fn mean_wait_mmc(c: u64, lam: f64, mu: f64) -> f64 {
    let capacity = c as f64 * mu;
    if lam >= capacity {
        return f64::INFINITY;
    }
    erlang_c(c, lam / mu) / (capacity - lam)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Erlang B by its stable recursion, for comparison.
    fn erlang_c_via_b(c: u64, a: f64) -> f64 {
        let mut b = 1.0;
        for k in 1..=c {
            b = a * b / (k as f64 + a * b);
        }
        let rho = a / c as f64;
        b / (1.0 - rho * (1.0 - b))
    }

    #[test]
    fn check_values() {
        assert!((erlang_c(10, 8.0) - 0.409180).abs() < 5e-7);
        assert!((erlang_c(100, 80.0) - 0.019646).abs() < 5e-7);
        assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(erlang_c(0, 1.0), 0.0);
        assert_eq!(erlang_c(5, 0.0), 0.0);
        assert_eq!(erlang_c(5, 5.0), 1.0);
        for (c, lam, cv2, want) in [
            (10, 8.0, 1.0, 1.855785),
            (10, 9.0, 1.0, 4.202798),
            (10, 9.0, 4.0, 10.506994),
        ] {
            let got = p99_wait(c, lam, 1.0, cv2);
            assert!(
                (got / want - 1.0).abs() < 1e-6,
                "p99_wait({c}, {lam}, 1, {cv2}) = {got}"
            );
        }
        assert_eq!(p99_wait(10, 10.0, 1.0, 1.0), f64::INFINITY);
    }

    #[test]
    fn large_systems_stay_finite_and_accurate() {
        let c = 5000;
        let a = 0.9 * c as f64;
        let v = erlang_c(c, a);
        assert!(v.is_finite() && v > 0.0 && v < 1.0);
        assert!((v / erlang_c_via_b(c, a) - 1.0).abs() < 1e-9, "{v}");
    }
}
