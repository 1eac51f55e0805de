//! What selects a costmap plan: nav2_costmap_2d's cost values and NavFn's step costs, and the
//! inflation layer computed here for maps that come without costs.

use crate::error::{Error, Result};

/// nav2_costmap_2d's special values.
pub const LETHAL: u8 = 254;
/// Within the robot's radius of an obstacle: blocked.
pub const INSCRIBED: u8 = 253;
/// Unknown: blocked unless `unknown_is_free`.
pub const NO_INFORMATION: u8 = 255;
/// The largest value an inflated (non-lethal, non-inscribed) cell gets.
pub const MAX_NON_OBSTACLE: u8 = 252;

/// `unit` (moves, as the seed) or `costmap` (nav2's cell costs, least total cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostModel {
    /// Moves counted, as the seed's Lee wave.
    #[default]
    Unit,
    /// nav2's cell costs, least total cost (NavFn's).
    Costmap,
}

impl CostModel {
    /// The name parameters and flags give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unit => "unit",
            Self::Costmap => "costmap",
        }
    }
}

impl std::str::FromStr for CostModel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "unit" => Ok(Self::Unit),
            "costmap" => Ok(Self::Costmap),
            other => Err(Error::invalid(
                "cost_model",
                format!("'{other}' is not unit or costmap"),
            )),
        }
    }
}

/// The path a node sends out: `grid` (the exact least-cost cells' centres), `smooth` (costmap
/// mode: the grid path shortened along lines of sight, [`super::smooth`]), or `auto`: smooth
/// in costmap mode, grid in unit mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathShape {
    /// Smooth in costmap mode, grid in unit mode.
    #[default]
    Auto,
    /// The least-cost cells' centres.
    Grid,
    /// The grid path shortened along lines of sight (costmap mode).
    Smooth,
}

impl PathShape {
    /// Whether paths under `model` go out smooth.
    pub fn smooth(self, model: CostModel) -> bool {
        match self {
            Self::Auto => model == CostModel::Costmap,
            Self::Grid => false,
            Self::Smooth => true,
        }
    }

    /// Smooth paths are priced by the cells' costs: unit mode has none to hold them to (and
    /// an elevation map's step limits are between cells, which a line of sight does not see).
    pub fn check(self, model: CostModel) -> Result<()> {
        if self == Self::Smooth && model != CostModel::Costmap {
            return Err(Error::invalid(
                "path",
                "smooth needs cost_model costmap (grid or auto in unit mode)",
            ));
        }
        Ok(())
    }
}

/// Step costs (NavFn's names and defaults) and the inflation layer's (nav2's defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostParams {
    /// Cost of entering a free cell of value 0.
    pub neutral_cost: u32,
    /// Percent of a cell's value added to the neutral cost when entering it.
    pub cost_factor: u32,
    /// Metres: cells within it of an obstacle are 253 (inscribed), blocked.
    pub robot_radius: f64,
    /// Metres: beyond the robot radius and up to here, cells get the decaying inflation cost.
    pub inflation_radius: f64,
    /// Decay rate per metre of the inflation cost.
    pub cost_scaling_factor: f64,
    /// Whether 255 (no information) may be crossed (at its value 255's step cost).
    pub unknown_is_free: bool,
}

impl Default for CostParams {
    fn default() -> Self {
        CostParams {
            neutral_cost: 50,
            cost_factor: 80,
            robot_radius: 0.0,
            inflation_radius: 0.55,
            cost_scaling_factor: 10.0,
            unknown_is_free: false,
        }
    }
}

/// Bounds that keep every path's total far inside a u64 (2^32 cells x the dearest step).
pub const MAX_NEUTRAL_COST: u32 = 10_000;
/// The largest `cost_factor`.
pub const MAX_COST_FACTOR: u32 = 100_000;

impl CostParams {
    /// Checks every field's range; the error names the field and the value.
    pub fn validate(&self) -> Result<()> {
        if self.neutral_cost == 0 || self.neutral_cost > MAX_NEUTRAL_COST {
            return Err(Error::invalid(
                "neutral_cost",
                format!("{} is not 1..={MAX_NEUTRAL_COST}", self.neutral_cost),
            ));
        }
        if self.cost_factor > MAX_COST_FACTOR {
            return Err(Error::invalid(
                "cost_factor",
                format!("{} is above {MAX_COST_FACTOR}", self.cost_factor),
            ));
        }
        crate::lee::clearance::check_radius("robot_radius", self.robot_radius)?;
        if !(self.inflation_radius.is_finite() && self.inflation_radius >= self.robot_radius) {
            return Err(Error::invalid(
                "inflation_radius",
                format!(
                    "{} is not a finite radius at least robot_radius ({})",
                    crate::seconds::shown(self.inflation_radius),
                    crate::seconds::shown(self.robot_radius)
                ),
            ));
        }
        if !(self.cost_scaling_factor.is_finite() && self.cost_scaling_factor >= 0.0) {
            return Err(Error::invalid(
                "cost_scaling_factor",
                format!(
                    "{} is not a finite non-negative number",
                    self.cost_scaling_factor
                ),
            ));
        }
        Ok(())
    }

    /// Is a cell of value `v` blocked? (>= 253, and 255 unless unknown_is_free.)
    pub fn blocks(&self, v: u8) -> bool {
        if v == NO_INFORMATION {
            !self.unknown_is_free
        } else {
            v >= INSCRIBED
        }
    }

    /// The integer cost of entering a cell of value `v` straight (a diagonal move costs
    /// `diagonal(that)`).
    pub fn enter(&self, v: u8) -> u32 {
        self.neutral_cost + (self.cost_factor * v as u32) / 100
    }
}

/// The cost of a diagonal move into a cell whose straight entry costs `straight`.
pub fn diagonal(straight: u32) -> u32 {
    (straight as u64 * 141 / 100) as u32
}

/// nav2's translation of cost values to OccupancyGrid values (costmap_2d_publisher): 0 -> 0,
/// 253 -> 99, 254 -> 100, 255 -> -1, 1..=252 -> 1 + 97 (v - 1) / 251.
pub fn occupancy_value(v: u8) -> i8 {
    match v {
        0 => 0,
        INSCRIBED => 99,
        LETHAL => 100,
        NO_INFORMATION => -1,
        v => (1 + (97 * (v as u32 - 1)) / 251) as i8,
    }
}
