//! Summary of an occupancy grid as the runtime node reports it; also the exact fingerprint the
//! interop tests compare across DDS implementations.

use crate::error::{Error, Result};
use crate::ros::msg::nav_msgs::OccupancyGrid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MapSummary {
    pub free: u32,
    pub occupied: u32,
    pub unknown: u32,
    pub checksum: u64,
}

/// FNV-1a, 64 bit: tiny, and easy to reproduce in any language.
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Counts cells; refuses a grid whose data length is not width x height.
pub fn summarise(map: &OccupancyGrid, occupied_threshold: i8) -> Result<MapSummary> {
    let (w, h) = (map.info.width as u64, map.info.height as u64);
    if map.data.len() as u64 != w * h {
        return Err(Error::invalid(
            "map.data",
            format!(
                "length {} differs from width x height = {w} x {h} = {}",
                map.data.len(),
                w * h
            ),
        ));
    }
    let mut s = MapSummary::default();
    for &v in &map.data {
        match v {
            v if v < 0 => s.unknown += 1,
            v if v >= occupied_threshold => s.occupied += 1,
            _ => s.free += 1,
        }
    }
    s.checksum = fnv1a64(map.data.iter().map(|&v| v as u8));
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cells_and_rejects_bad_lengths() {
        let mut m = OccupancyGrid::default();
        m.info.width = 2;
        m.info.height = 2;
        m.data = vec![-1, 0, 64, 100];
        let s = summarise(&m, 65).unwrap();
        assert_eq!((s.free, s.occupied, s.unknown), (2, 1, 1));
        assert_eq!(s.checksum, fnv1a64([0xff, 0, 64, 100]));
        m.data.pop();
        let e = summarise(&m, 65).unwrap_err().to_string();
        assert!(e.contains("map.data") && e.contains("length 3"), "{e}");
    }

    #[test]
    fn fnv1a64_matches_the_published_vectors() {
        assert_eq!(fnv1a64([]), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(*b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(*b"foobar"), 0x85944171f73967e8);
    }
}
