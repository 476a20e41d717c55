//! The two deterministic minimizers calibration runs in turn: a bounded
//! Nelder–Mead search, robust far from the answer where a replay's score
//! jumps as batches change, then a Levenberg–Marquardt polish on the
//! residuals, which converges tightly once the score is smooth around the
//! answer (Nelder–Mead alone stalls a few % off on weakly coupled
//! coefficients).

use super::FidelityError;

/// A point of the search and its score.
pub type Point = (Vec<f64>, f64);

/// What the minimizers need of a problem: bounds, first steps, residuals.
pub trait Problem {
    /// Moves `x` inside the bounds.
    fn clamp(&self, x: &mut [f64]);
    /// Nelder–Mead's first step along coordinate `k`.
    fn step(&self, k: usize) -> f64;
    /// The residuals at `x` (the score is their sum of squares); each call
    /// is one evaluation.
    fn residuals(&mut self, x: &[f64]) -> Result<Vec<f64>, FidelityError>;
}

/// Sum of squares.
pub fn score(r: &[f64]) -> f64 {
    r.iter().map(|v| v * v).sum()
}

/// Bounded Nelder–Mead (reflection 1, expansion 2, contraction ½, shrink ½)
/// from `start`, at most `budget` evaluations; returns the best point.
pub fn nelder_mead(p: &mut dyn Problem, start: Point, budget: u32) -> Result<Point, FidelityError> {
    let d = start.0.len();
    let mut used = 0u32;
    let eval = |p: &mut dyn Problem, x: &mut Vec<f64>, used: &mut u32| {
        p.clamp(x);
        *used += 1;
        p.residuals(x).map(|r| score(&r))
    };
    let mut simplex: Vec<Point> = vec![start.clone()];
    for k in 0..d {
        let mut x = start.0.clone();
        x[k] += p.step(k);
        let v = eval(p, &mut x, &mut used)?;
        simplex.push((x, v));
    }
    while used < budget {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (lo, hi) = (simplex[0].1, simplex[d].1);
        let spread = simplex
            .iter()
            .flat_map(|q| q.0.iter().zip(&simplex[0].0).map(|(a, b)| (a - b).abs()))
            .fold(0.0, f64::max);
        if hi - lo < 1e-12 || spread < 1e-7 {
            break;
        }
        let centroid: Vec<f64> = (0..d)
            .map(|k| simplex[..d].iter().map(|q| q.0[k]).sum::<f64>() / d as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&simplex[d].0)
                .map(|(c, w)| c + t * (c - w))
                .collect()
        };
        let mut r = along(1.0);
        let fr = eval(p, &mut r, &mut used)?;
        if fr < simplex[0].1 {
            let mut e = along(2.0);
            let fe = eval(p, &mut e, &mut used)?;
            simplex[d] = if fe < fr { (e, fe) } else { (r, fr) };
        } else if fr < simplex[d - 1].1 {
            simplex[d] = (r, fr);
        } else {
            let t = if fr < simplex[d].1 { 0.5 } else { -0.5 };
            let mut c = along(t);
            let fc = eval(p, &mut c, &mut used)?;
            if fc < simplex[d].1.min(fr) {
                simplex[d] = (c, fc);
            } else {
                let best = simplex[0].0.clone();
                for q in simplex.iter_mut().skip(1) {
                    let mut x: Vec<f64> =
                        q.0.iter()
                            .zip(&best)
                            .map(|(a, b)| b + 0.5 * (a - b))
                            .collect();
                    let v = eval(p, &mut x, &mut used)?;
                    *q = (x, v);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(simplex.swap_remove(0))
}

/// A score this small is a fit to rounding (relative errors of 10⁻⁹).
const SCORE_FLOOR: f64 = 1e-18;
/// Rejected steps in a row (damping ×4 each) before the polish stops: the
/// last one is 4¹⁰ times more cautious than the first.
const MAX_REJECTED: u32 = 10;

/// Forward-difference step of the Jacobian, in search coordinates (log
/// space: a relative change of 10⁻⁴ of a coefficient).
const JACOBIAN_STEP: f64 = 1e-4;

/// Levenberg–Marquardt from `start` (Marquardt's scaling by the diagonal
/// of JᵀJ, damping ×¼ on success and ×4 on failure), at most `budget`
/// evaluations; only steps that lower the score are taken, so the result
/// is never worse than `start`.
pub fn levenberg_marquardt(
    p: &mut dyn Problem,
    start: Point,
    budget: u32,
) -> Result<Point, FidelityError> {
    let d = start.0.len();
    let mut used = 0u32;
    let (mut x, mut r) = {
        used += 1;
        let r = p.residuals(&start.0)?;
        (start.0, r)
    };
    let mut f = score(&r);
    let mut lambda = 1e-3;
    'outer: while used + (d as u32) < budget && f > SCORE_FLOOR {
        // Jacobian columns; a step that the bounds block goes backwards.
        let mut jac: Vec<Vec<f64>> = Vec::with_capacity(d);
        for k in 0..d {
            let mut xh = x.clone();
            xh[k] += JACOBIAN_STEP;
            p.clamp(&mut xh);
            if xh[k] == x[k] {
                xh[k] -= JACOBIAN_STEP;
                p.clamp(&mut xh);
            }
            let h = xh[k] - x[k];
            used += 1;
            let rh = p.residuals(&xh)?;
            jac.push(if h == 0.0 || rh.len() != r.len() {
                vec![0.0; r.len()]
            } else {
                rh.iter().zip(&r).map(|(a, b)| (a - b) / h).collect()
            });
        }
        let jtj: Vec<Vec<f64>> = (0..d)
            .map(|i| (0..d).map(|j| dot(&jac[i], &jac[j])).collect())
            .collect();
        let jtr: Vec<f64> = (0..d).map(|i| dot(&jac[i], &r)).collect();
        for _ in 0..MAX_REJECTED {
            if used >= budget {
                break 'outer;
            }
            let mut a = jtj.clone();
            for (i, row) in a.iter_mut().enumerate() {
                row[i] += lambda * jtj[i][i].max(1e-12);
            }
            let Some(delta) = solve(a, jtr.iter().map(|v| -v).collect()) else {
                lambda *= 4.0;
                continue;
            };
            let mut xn: Vec<f64> = x.iter().zip(&delta).map(|(a, b)| a + b).collect();
            p.clamp(&mut xn);
            used += 1;
            let rn = p.residuals(&xn)?;
            let fnew = score(&rn);
            if fnew < f {
                let gain = f - fnew;
                let moved = xn
                    .iter()
                    .zip(&x)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                (x, r, f) = (xn, rn, fnew);
                lambda = (lambda / 4.0).max(1e-12);
                if gain <= 1e-12 * f.max(1e-300) || moved < 1e-9 {
                    break 'outer;
                }
                continue 'outer;
            }
            lambda *= 4.0;
        }
        break;
    }
    Ok((x, f))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves `a·x = b` by Gaussian elimination with partial pivoting; `None`
/// when `a` is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        // A NaN pivot counts as singular too.
        if a[pivot][col].abs().is_nan() || a[pivot][col].abs() <= 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (done, rest) = a.split_at_mut(col + 1);
        let pivot_row = &done[col];
        for (row, r) in rest.iter_mut().enumerate() {
            let m = r[col] / pivot_row[col];
            for (x, p) in r[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= m * p;
            }
            b[col + 1 + row] -= m * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rosenbrock's valley as residuals, bounded to ±5.
    struct Rosenbrock;

    impl Problem for Rosenbrock {
        fn clamp(&self, x: &mut [f64]) {
            for v in x {
                *v = v.clamp(-5.0, 5.0);
            }
        }
        fn step(&self, _: usize) -> f64 {
            0.5
        }
        fn residuals(&mut self, x: &[f64]) -> Result<Vec<f64>, FidelityError> {
            Ok(vec![10.0 * (x[1] - x[0] * x[0]), 1.0 - x[0]])
        }
    }

    #[test]
    fn the_polish_finds_the_minimum_the_simplex_approaches() {
        let start = (vec![-1.2, 1.0], 24.2);
        let nm = nelder_mead(&mut Rosenbrock, start, 200).unwrap();
        let lm = levenberg_marquardt(&mut Rosenbrock, nm.clone(), 200).unwrap();
        assert!(lm.1 <= nm.1);
        assert!(lm.1 < 1e-16, "{lm:?}");
        assert!((lm.0[0] - 1.0).abs() < 1e-8 && (lm.0[1] - 1.0).abs() < 1e-8);
    }

    #[test]
    fn linear_systems_are_solved_and_singular_ones_refused() {
        let x = solve(vec![vec![0.0, 2.0], vec![4.0, 1.0]], vec![2.0, 9.0]).unwrap();
        assert_eq!(x, vec![2.0, 1.0]);
        assert_eq!(
            solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]),
            None
        );
    }
}
