//! The two weight types and the arithmetic every variant shares, so that the CPU references and
//! the kernels (kernels/apsp.cu, `op` and `relax`) make bit-identical decisions.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A distance type the solvers run on: `i32` (exact) or `f32`.
pub trait Weight:
    Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + DeviceRepr + ValidAsZeroBits + 'static
{
    /// Stored "unreached".
    const INF: Self;
    /// A vertex's distance to itself.
    const ZERO: Self;
    /// NVRTC define selecting this type in kernels/apsp.cu.
    const KERNEL_FLOAT: bool;
    /// How a stored value is read as an operand (see kernels/apsp.cu).
    fn operand(self) -> Self;
    /// Sum of two operands; never wraps for operands of in-range graphs.
    fn add(a: Self, b: Self) -> Self;
    /// Whether a stored value is a real distance (after a solve, before [`Weight::finish`]).
    fn reached(self) -> bool;
    /// The value reported for a stored one: `INF` for everything unreached.
    fn finish(self) -> Self {
        if self.reached() {
            self
        } else {
            Self::INF
        }
    }
    /// As f64 (`INF` as +inf).
    fn to_f64(self) -> f64;
    /// An edge's weight as the start matrix holds it: a zero is +0 (a float's -0 weight
    /// would otherwise come out as a distance of -0 on one side and 0 on the other,
    /// depending on which of equal parallel edges came first; kernels/apsp.cu `lower`).
    fn canonical(self) -> Self {
        self
    }
}

/// Stored "unreached" for i32 (also the largest operand).
pub const INT_INF: i32 = 0x3fff_ffff;
/// Stored i32 values at or above this are unreached; finite path lengths stay below it.
pub const INT_REACH_LIMIT: i32 = 0x2000_0000;
/// The smallest i32 operand (reached only when a negative cycle drives values down).
pub const INT_LOW: i32 = -0x4000_0000;

impl Weight for i32 {
    const INF: i32 = INT_INF;
    const ZERO: i32 = 0;
    const KERNEL_FLOAT: bool = false;
    #[inline(always)]
    fn operand(self) -> i32 {
        if self >= INT_REACH_LIMIT {
            INT_INF
        } else {
            self.max(INT_LOW)
        }
    }
    #[inline(always)]
    fn add(a: i32, b: i32) -> i32 {
        // Operands lie in [INT_LOW, INT_INF], so the sum fits; wrapping_add mirrors the GPU
        // should that reasoning ever be wrong, instead of panicking in debug builds.
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn reached(self) -> bool {
        self < INT_REACH_LIMIT
    }
    fn to_f64(self) -> f64 {
        if self.reached() {
            self as f64
        } else {
            f64::INFINITY
        }
    }
}

impl Weight for f32 {
    const INF: f32 = f32::INFINITY;
    const ZERO: f32 = 0.0;
    const KERNEL_FLOAT: bool = true;
    #[inline(always)]
    fn operand(self) -> f32 {
        self
    }
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn reached(self) -> bool {
        self < f32::INFINITY
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn canonical(self) -> f32 {
        if self == 0.0 {
            0.0
        } else {
            self
        }
    }
}

/// The relaxation of kernels/apsp.cu: strict `<`, the successor follows the distance.
#[inline(always)]
pub fn relax<T: Weight>(d: &mut T, h: &mut u32, a: T, b: T, ha: u32) {
    let c = T::add(a, b);
    if c < *d {
        *d = c;
        *h = ha;
    }
}
