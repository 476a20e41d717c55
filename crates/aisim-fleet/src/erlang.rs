//! Erlang-C and Kimura's M/G/c tail approximation.

/// Relative size below which a Poisson term no longer moves the sum.
const NEGLIGIBLE: f64 = 1e-30;

/// Probability of waiting in M/M/c with `c` servers and offered load `a = λ/μ`.
/// 0 when `c ≤ 0` or `a ≤ 0`; 1 when `a/c ≥ 1`.
///
/// `C = T / (Σ_{k<c} a^k/k! + T)` with `T = a^c/c! × c/(c − a)`. Every term is
/// taken relative to the largest, `k = floor(a)`, and the walk outward stops
/// once a term falls below 1e-30 of the sum: the terms are a Poisson shape of
/// width `√a`, so the cost is `O(√a)` instead of `O(c)` (sizing a million
/// req/s stays fast) and nothing overflows. When the walk upward stops before
/// `c`, `C` is below 1e-30·c/(c − a) and reported as 0.
pub fn erlang_c(c: u64, a: f64) -> f64 {
    if c == 0 || a <= 0.0 || a.is_nan() {
        return 0.0;
    }
    let cf = c as f64;
    if a / cf >= 1.0 {
        return 1.0;
    }
    // a < c, so the peak index is at most c − 1.
    let peak = (a.floor() as u64).min(c - 1);
    let mut sum = 1.0; // the peak term
    let mut term = 1.0;
    for k in (1..=peak).rev() {
        term *= k as f64 / a; // term(k − 1) from term(k)
        sum += term;
        if term < NEGLIGIBLE * sum {
            break;
        }
    }
    let mut term = 1.0;
    for k in peak + 1..c {
        term *= a / k as f64;
        sum += term;
        if term < NEGLIGIBLE * sum {
            return 0.0;
        }
    }
    let top = term * a / cf * (cf / (cf - a));
    top / (sum + top)
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

/// The P99 of a TTFT `W + P`, seconds: `W` the wait of Kimura's tail
/// `P(W > t) = C·exp(−θt)` with `θ = 2(cμ − λ)/(1 + cv²)` (`P(W > t) = 1`
/// for `t < 0`), `P` an independent prefill time with the atoms `prefill`
/// (`(seconds, probability)`, an empty list meaning 0). The smallest `x`
/// with `Σ pr·P(W > x − p) ≤ 0.01`, found by bisection (the tail falls as
/// `x` grows) to a relative 1e-12; with no prefill it is [`p99_wait`].
/// Infinite when `ρ ≥ 1`.
pub fn p99_wait_plus(c: u64, lam: f64, mu: f64, cv2: f64, prefill: &[(f64, f64)]) -> f64 {
    let capacity = c as f64 * mu;
    if lam >= capacity {
        return f64::INFINITY;
    }
    let zero = [(0.0, 1.0)];
    let prefill = if prefill.is_empty() {
        &zero[..]
    } else {
        prefill
    };
    let pw = erlang_c(c, lam / mu);
    let theta = 2.0 * (capacity - lam) / (1.0 + cv2);
    let tail = |x: f64| -> f64 {
        prefill
            .iter()
            .map(|&(p, pr)| {
                if x < p {
                    pr
                } else {
                    pr * pw * (-theta * (x - p)).exp()
                }
            })
            .sum()
    };
    // At the longest prefill plus the wait's own P99 every term is within
    // the target, so the answer lies in [0, hi].
    let longest = prefill.iter().map(|a| a.0).fold(0.0, f64::max);
    let (mut lo, mut hi) = (0.0, longest + p99_wait(c, lam, mu, cv2));
    if tail(lo) <= 0.01 {
        return 0.0;
    }
    while hi - lo > 1e-12 * hi {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if tail(mid) <= 0.01 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The P99 of a distribution of atoms `(value, probability)` sorted by
/// value: the smallest value with at most 1 % of the probability above it.
pub fn p99_of_atoms(atoms: &[(f64, f64)]) -> f64 {
    let mut above = 1.0;
    for &(t, pr) in atoms {
        above -= pr;
        if above <= 0.01 + 1e-12 {
            return t;
        }
    }
    atoms.last().map_or(0.0, |a| a.0)
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

    proptest::proptest! {
        #[test]
        fn matches_the_erlang_b_recursion(c in 1u64..3000, rho in 0.01f64..0.999) {
            let a = rho * c as f64;
            let (got, want) = (erlang_c(c, a), erlang_c_via_b(c, a));
            proptest::prop_assert!((got - want).abs() <= 1e-12 + 1e-9 * want, "C({c}, {a}) = {got} vs {want}");
        }
    }

    #[test]
    fn the_ttft_p99_convolves_the_wait_with_the_prefill() {
        // No prefill: Kimura's P99 wait itself.
        for (c, lam, cv2) in [(10, 8.0, 1.0), (10, 9.0, 4.0), (3, 0.5, 1.0)] {
            let (a, b) = (
                p99_wait_plus(c, lam, 1.0, cv2, &[]),
                p99_wait(c, lam, 1.0, cv2),
            );
            assert!((a - b).abs() <= 1e-9 * b.max(1.0), "{a} vs {b}");
        }
        // A light load (C < 1 %): the prefill's own P99, the smallest atom
        // whose upper tail is within 1 %.
        let prefill = [(0.1, 0.5), (0.2, 0.495), (3.0, 0.005)];
        assert!((p99_wait_plus(100, 1.0, 1.0, 1.0, &prefill) - 0.2).abs() < 1e-9);
        // One atom: the P99 wait shifted by it.
        let shifted = p99_wait_plus(10, 8.0, 1.0, 1.0, &[(0.5, 1.0)]);
        assert!((shifted - 0.5 - p99_wait(10, 8.0, 1.0, 1.0)).abs() < 1e-9);
        // Two atoms: the tail at the answer is 1 %, and the answer lies
        // between the mean-prefill shortcut and the longest prefill's shift.
        let two = [(0.1, 0.9), (2.0, 0.1)];
        let (c, lam, mu, cv2) = (10, 8.0, 1.0, 1.0);
        let x = p99_wait_plus(c, lam, mu, cv2, &two);
        let (pw, theta) = (
            erlang_c(c, lam / mu),
            2.0 * (c as f64 * mu - lam) / (1.0 + cv2),
        );
        let tail: f64 = two
            .iter()
            .map(|&(p, pr)| {
                if x < p {
                    pr
                } else {
                    pr * pw * (-theta * (x - p)).exp()
                }
            })
            .sum();
        assert!((tail - 0.01).abs() < 1e-9, "{tail}");
        let w = p99_wait(c, lam, mu, cv2);
        assert!(x > w + 0.29 && x < w + 2.0, "{x} vs {w}");
        assert_eq!(p99_wait_plus(10, 10.0, 1.0, 1.0, &two), f64::INFINITY);
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
