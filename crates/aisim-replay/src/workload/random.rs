//! Sampling from the seeded generator: uniforms, normal, exponential, gamma.
//! Written here (rather than pulling in a distributions crate) because four
//! short, well-known algorithms are all we need.

use rand_core::RngCore;
use rand_pcg::Pcg64;

/// Uniform in the open interval (0, 1).
pub fn uniform01(rng: &mut Pcg64) -> f64 {
    loop {
        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if u > 0.0 {
            return u;
        }
    }
}

/// Uniform integer in `lo..=hi`.
pub fn uniform_int(rng: &mut Pcg64, lo: u64, hi: u64) -> u64 {
    let span = hi - lo + 1;
    // Rejection sampling removes modulo bias.
    let zone = u64::MAX - u64::MAX % span;
    loop {
        let v = rng.next_u64();
        if v < zone {
            return lo + v % span;
        }
    }
}

/// Standard normal (Box–Muller).
pub fn standard_normal(rng: &mut Pcg64) -> f64 {
    let (u1, u2) = (uniform01(rng), uniform01(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Exponential with the given rate.
pub fn exponential(rng: &mut Pcg64, rate: f64) -> f64 {
    -uniform01(rng).ln() / rate
}

/// Gamma with `shape` and `scale` (Marsaglia–Tsang; shape < 1 by boosting).
pub fn gamma(rng: &mut Pcg64, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let u = uniform01(rng);
        return gamma(rng, shape + 1.0, scale) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = uniform01(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v * scale;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var)
    }

    #[test]
    fn gamma_and_normal_moments() {
        let mut rng = Pcg64::seed_from_u64(1);
        for shape in [0.25, 1.0, 4.0] {
            let xs: Vec<f64> = (0..200_000).map(|_| gamma(&mut rng, shape, 2.0)).collect();
            let (m, v) = moments(&xs);
            assert!(
                (m / (shape * 2.0) - 1.0).abs() < 0.02,
                "shape {shape} mean {m}"
            );
            assert!(
                (v / (shape * 4.0) - 1.0).abs() < 0.05,
                "shape {shape} var {v}"
            );
        }
        let xs: Vec<f64> = (0..200_000).map(|_| standard_normal(&mut rng)).collect();
        let (m, v) = moments(&xs);
        assert!(m.abs() < 0.01 && (v - 1.0).abs() < 0.02);
        assert!((0..1000).all(|_| (3..=5).contains(&uniform_int(&mut rng, 3, 5))));
    }
}
