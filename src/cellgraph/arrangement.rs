//! The constraints: l symmetric 4x4 matrices, kept as their 10 unique coefficients.

use crate::error::{Error, Result};

/// Monomials of q = (x, y, z, w) in the order of the coefficients a00 a01 a02 a03 a11 a12 a13
/// a22 a23 a33, and the weight of each in q^T A q (off-diagonal terms appear twice).
pub const WEIGHTS: [f64; 10] = [1.0, 2.0, 2.0, 2.0, 1.0, 2.0, 2.0, 1.0, 2.0, 1.0];

/// Constraints on unit quaternions q, each a symmetric 4 x 4 matrix A: a sample's bit for
/// a constraint is set where q^T A q >= 0, and its vector of bits names its cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrangement {
    /// Upper triangles row by row, 10 per constraint.
    pub coefficients: Vec<[f64; 10]>,
}

impl Arrangement {
    /// From the 10 unique coefficients per matrix (the QuadricArrangement message's layout).
    pub fn from_unique(count: usize, coefficients: &[f64]) -> Result<Arrangement> {
        if coefficients.len() != 10 * count {
            return Err(Error::invalid(
                "coefficients",
                format!(
                    "{} values for {count} constraints (10 each: {} expected)",
                    coefficients.len(),
                    10 * count
                ),
            ));
        }
        if let Some(i) = coefficients.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                format!("coefficients[{i}]"),
                format!("{} is not finite", coefficients[i]),
            ));
        }
        Ok(Arrangement {
            coefficients: coefficients
                .chunks_exact(10)
                .map(|c| c.try_into().unwrap_or([0.0; 10]))
                .collect(),
        })
    }

    /// From full (l, 4, 4) matrices, which must be symmetric (exactly).
    pub fn from_full(count: usize, m: &[f64]) -> Result<Arrangement> {
        if m.len() != 16 * count {
            return Err(Error::invalid(
                "constraints",
                format!("{} values for {count} 4x4 matrices", m.len()),
            ));
        }
        let mut unique = Vec::with_capacity(10 * count);
        for (i, a) in m.chunks_exact(16).enumerate() {
            // A NaN is never equal to itself: named as what it is before symmetry is asked.
            if let Some(j) = a.iter().position(|v| !v.is_finite()) {
                return Err(Error::invalid(
                    format!("constraints[{i}][{}][{}]", j / 4, j % 4),
                    format!("{} is not finite", a[j]),
                ));
            }
            for r in 0..4 {
                for c in r..4 {
                    if a[r * 4 + c] != a[c * 4 + r] {
                        return Err(Error::invalid(
                            format!("constraints[{i}]"),
                            format!(
                                "not symmetric: [{r}][{c}] = {} but [{c}][{r}] = {}",
                                a[r * 4 + c],
                                a[c * 4 + r]
                            ),
                        ));
                    }
                    unique.push(a[r * 4 + c]);
                }
            }
        }
        Self::from_unique(count, &unique)
    }

    /// The number of constraints l.
    pub fn len(&self) -> usize {
        self.coefficients.len()
    }

    /// Whether there are no constraints.
    pub fn is_empty(&self) -> bool {
        self.coefficients.is_empty()
    }

    /// Words of 64 bits per cell.
    pub fn words(&self) -> usize {
        self.len().div_ceil(64).max(1)
    }

    /// A random arrangement (coefficients uniform in [-1, 1)), deterministic per seed.
    pub fn random(count: usize, seed: u64) -> Arrangement {
        let mut rng = crate::rng::XorShift::new(seed ^ 0xa77a_4e3e);
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        Arrangement {
            coefficients: (0..count)
                .map(|_| std::array::from_fn(|_| unit()))
                .collect(),
        }
    }
}

/// q^T A q in one fixed order of f64 operations, the same on every backend:
/// sum over t of (c_t * m_t) * weight_t, t = 0..9, with m the monomials of q.
#[inline]
pub fn form(c: &[f64; 10], m: &[f64; 10]) -> f64 {
    let mut v = 0.0;
    for t in 0..10 {
        v += (c[t] * m[t]) * WEIGHTS[t];
    }
    v
}

/// The monomials xx xy xz xw yy yz yw zz zw ww of a quaternion (x, y, z, w); q and -q give the
/// same values exactly.
#[inline]
pub fn monomials(q: &[f64; 4]) -> [f64; 10] {
    let [x, y, z, w] = *q;
    [
        x * x,
        x * y,
        x * z,
        x * w,
        y * y,
        y * z,
        y * w,
        z * z,
        z * w,
        w * w,
    ]
}
