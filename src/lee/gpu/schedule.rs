//! How bitwave orders its tile runs, as a grid starts with it (`GPU_PLANNING_LEE_SCHEDULE`)
//! or a benchmark sets it, and where the adaptive default hands a narrow wave to the queue.

/// Where the portals' tables do not fit, the adaptive schedule hands the wave to the queue
/// after this many rounds in a row that queued at most this many tiles
/// (`GPU_PLANNING_LEE_NARROW=TILES:ROUNDS` overrides both, for benchmarks). An open wave
/// grows past them within a few rounds of its start and stays wide; a maze's wave stays
/// narrow. Measured on the H100 (docs/bench-history): with 64:32,
/// 32:64 or 16:64 nav2's depot map (x10) handed some queries over and lost 4-6 % per query
/// to rounds alone; 8:64 keeps it at the rounds' time and the mazes at the queue's.
const BW_NARROW_TILES: u32 = 8;
const BW_NARROW_ROUNDS: u32 = 64;

/// (tiles, rounds) of the adaptive schedule's hand-over: the constants above or the override
/// (a value that does not parse is logged and ignored).
pub(super) fn narrow_from_env() -> (u32, u32) {
    let default = (BW_NARROW_TILES, BW_NARROW_ROUNDS);
    match crate::env::LEE_NARROW.get() {
        None => default,
        Some(v) => parse_narrow(&v).unwrap_or_else(|| {
            tracing::warn!(
                "{}: '{v}' is not TILES:ROUNDS; using {}:{}",
                crate::env::LEE_NARROW.name,
                default.0,
                default.1
            );
            default
        }),
    }
}

/// "TILES:ROUNDS" as numbers.
fn parse_narrow(v: &str) -> Option<(u32, u32)> {
    let (t, r) = v.split_once(':')?;
    Some((t.trim().parse().ok()?, r.trim().parse().ok()?))
}

/// How bitwave orders its tile runs (kernels/lee/bitwave.cu).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// The default: the portals where their tables fit the grid's cap (set where they stop
    /// beating the rounds on open maps, src/lee/gpu/portals.rs); else rounds while the wave
    /// is wide and the work queue once rounds run narrow (corridors, mazes).
    Adaptive,
    /// Rounds behind a grid barrier only: a round runs the tiles the previous one queued.
    Rounds,
    /// The work queue only: a warp takes the next queued tile as soon as it is free.
    Queue,
    /// The goal's tile, then the portals (src/lee/gpu/portals.rs) where their tables fit,
    /// else the work queue; the portals' wave in one block where its labels fit one block
    /// (src/lee/gpu/portal_block.rs), as in the default.
    Portals,
    /// The portals with their wave always on the device-wide queue (for benchmarks and tests
    /// that compare the two).
    PortalQueue,
}

impl Schedule {
    /// The schedule the grid starts with: `GPU_PLANNING_LEE_SCHEDULE` = rounds, queue, portals
    /// or portal-queue (for benchmarks that compare them); unset or adaptive, adaptive
    /// (anything else is logged).
    pub fn from_env() -> Schedule {
        let v = crate::env::LEE_SCHEDULE.get().unwrap_or_default();
        Schedule::parse(&v).unwrap_or_else(|| {
            tracing::warn!(
                "{}: '{v}' is not adaptive, rounds, queue, portals or \
                 portal-queue; using adaptive",
                crate::env::LEE_SCHEDULE.name
            );
            Schedule::Adaptive
        })
    }

    /// adaptive (or empty), rounds, queue, portals, portal-queue.
    fn parse(v: &str) -> Option<Schedule> {
        match v {
            "" | "adaptive" => Some(Schedule::Adaptive),
            "rounds" => Some(Schedule::Rounds),
            "queue" => Some(Schedule::Queue),
            "portals" => Some(Schedule::Portals),
            "portal-queue" => Some(Schedule::PortalQueue),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_and_hand_overs_parse_as_documented() {
        assert_eq!(Schedule::parse(""), Some(Schedule::Adaptive));
        assert_eq!(Schedule::parse("adaptive"), Some(Schedule::Adaptive));
        assert_eq!(Schedule::parse("rounds"), Some(Schedule::Rounds));
        assert_eq!(Schedule::parse("queue"), Some(Schedule::Queue));
        assert_eq!(Schedule::parse("portals"), Some(Schedule::Portals));
        assert_eq!(Schedule::parse("portal-queue"), Some(Schedule::PortalQueue));
        assert_eq!(Schedule::parse("regions"), None);
        assert_eq!(Schedule::parse("Queue"), None);
        assert_eq!(parse_narrow("8:64"), Some((8, 64)));
        assert_eq!(parse_narrow(" 16 : 128 "), Some((16, 128)));
        assert_eq!(parse_narrow("8"), None);
        assert_eq!(parse_narrow("8:-1"), None);
        assert_eq!(parse_narrow("x:64"), None);
    }
}
