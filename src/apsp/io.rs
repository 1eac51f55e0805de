//! Graph files: CSV (`from,to,weight` header, 0-based ids) and DIMACS shortest-path `.gr`
//! (`p sp n m`, `a u v w` arcs, 1-based ids). Weights that all parse as integers are solved
//! exactly in i32; otherwise in f32.

use std::path::Path;

use super::graph::{Graph, Weights};
use crate::error::{Error, Result};

/// How the file numbers vertices (results are reported back the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdBase {
    /// Ids from 0 (CSV).
    Zero,
    /// Ids from 1 (DIMACS `.gr`).
    One,
}

/// Graph files claiming more vertices are refused before anything n-sized is allocated: at
/// 65,536 vertices the matrices already take 34 GB.
pub const MAX_FILE_VERTICES: u32 = 1 << 16;

/// A graph file by its extension: DIMACS `.gr`, else CSV; `vertices` overrides the count the
/// file implies. Returns how the file numbers vertices, to answer in its numbering.
pub fn read_graph(path: &Path, vertices: Option<u32>) -> Result<(Graph, IdBase)> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(name.clone(), e))?;
    let is_gr = path.extension().is_some_and(|e| e == "gr");
    if is_gr {
        parse_dimacs(&name, &text, vertices).map(|g| (g, IdBase::One))
    } else {
        parse_csv(&name, &text, vertices).map(|g| (g, IdBase::Zero))
    }
}

/// Arcs as read, with what the file calls their ends and how it numbers vertices, and the
/// line each came from, so that errors name them as the file writes them.
struct Raw {
    from: Vec<u32>,
    to: Vec<u32>,
    weights: Vec<String>,
    lines: Vec<usize>,
    ends: (&'static str, &'static str),
    base: u32,
}

impl Raw {
    fn new(ends: (&'static str, &'static str), base: u32) -> Raw {
        Raw {
            from: Vec::new(),
            to: Vec::new(),
            weights: Vec::new(),
            lines: Vec::new(),
            ends,
            base,
        }
    }

    /// The arc of `line` from its written ends and weight, ids read in the file's numbering.
    fn push(&mut self, name: &str, line: usize, ends: (&str, &str), weight: &str) -> Result<()> {
        self.from
            .push(parse_id(name, line, self.ends.0, ends.0, self.base)?);
        self.to
            .push(parse_id(name, line, self.ends.1, ends.1, self.base)?);
        self.weights.push(weight.trim().to_string());
        self.lines.push(line);
        Ok(())
    }

    /// `name:line` of arc `e`.
    fn at(&self, name: &str, e: usize) -> String {
        at(name, self.lines.get(e).copied().unwrap_or(0))
    }

    /// Every arc's ends against `n` vertices: the first beyond them, at its line, in the
    /// file's own numbering (a DIMACS file's ids start at 1, the graph's at 0).
    fn check_ids(&self, name: &str, n: u32) -> Result<()> {
        let ends = self.from.iter().zip(&self.to).enumerate();
        for (e, (&f, &t)) in ends {
            for (what, v) in [(self.ends.0, f), (self.ends.1, t)] {
                if v >= n {
                    let ids = match n {
                        0 => "the graph has no vertices".to_string(),
                        _ => format!("ids {}..={}", self.base, n as u64 - 1 + self.base as u64),
                    };
                    return Err(Error::invalid(
                        self.at(name, e),
                        format!(
                            "{what} {} is not one of the {n} vertices ({ids})",
                            v as u64 + self.base as u64
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn at(name: &str, line: usize) -> String {
    format!("{name}:{line}")
}

fn parse_id(name: &str, line: usize, what: &str, s: &str, base: u32) -> Result<u32> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| Error::invalid(at(name, line), format!("{what} '{s}' is not a vertex id")))?;
    if v < base as u64 || v - (base as u64) >= u32::MAX as u64 {
        return Err(Error::invalid(
            at(name, line),
            format!("{what} {v} is out of range (ids start at {base})"),
        ));
    }
    Ok((v - base as u64) as u32)
}

/// A CSV graph (`from,to,weight` header, 0-based ids); `name` names the file in errors.
pub fn parse_csv(name: &str, text: &str, vertices: Option<u32>) -> Result<Graph> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .map(|(_, l)| {
            l.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default();
    if header != ["from", "to", "weight"] {
        return Err(Error::invalid(
            at(name, 1),
            format!(
                "header is '{}', expected 'from,to,weight'",
                header.join(",")
            ),
        ));
    }
    let mut raw = Raw::new(("from", "to"), 0);
    for (i, l) in lines {
        let cols: Vec<&str> = l.split(',').collect();
        if cols.len() != 3 {
            return Err(Error::invalid(
                at(name, i + 1),
                format!("'{l}' does not have 3 columns"),
            ));
        }
        raw.push(name, i + 1, (cols[0], cols[1]), cols[2])?;
    }
    finish(name, raw, vertices)
}

/// A DIMACS shortest-path graph (`p sp N M`, `a U V W` lines, 1-based ids).
pub fn parse_dimacs(name: &str, text: &str, vertices: Option<u32>) -> Result<Graph> {
    let mut raw = Raw::new(("tail", "head"), 1);
    let mut declared: Option<u32> = None;
    for (i, l) in text.lines().enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first().copied() {
            None | Some("c") => {}
            Some("p") => {
                if f.len() != 4 || f[1] != "sp" {
                    return Err(Error::invalid(
                        at(name, i + 1),
                        format!("'{l}' is not 'p sp N M'"),
                    ));
                }
                declared = Some(f[2].parse().map_err(|_| {
                    Error::invalid(at(name, i + 1), format!("vertex count '{}'", f[2]))
                })?);
            }
            Some("a") if f.len() == 4 => {
                raw.push(name, i + 1, (f[1], f[2]), f[3])?;
            }
            Some(_) => {
                return Err(Error::invalid(
                    at(name, i + 1),
                    format!("'{l}' is not a c, p or 'a U V W' line"),
                ))
            }
        }
    }
    let n = vertices
        .or(declared)
        .ok_or_else(|| Error::invalid(name.to_string(), "no 'p sp N M' line and no --vertices"))?;
    finish(name, raw, Some(n))
}

fn finish(name: &str, raw: Raw, vertices: Option<u32>) -> Result<Graph> {
    // An integer literal that does not fit i32 is refused, not read as an f32 (which would
    // round 3000000001 to 3000000000 without a word).
    for (e, w) in raw.weights.iter().enumerate() {
        let digits = w.strip_prefix(['+', '-']).unwrap_or(w);
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && w.parse::<i32>().is_err()
        {
            return Err(Error::invalid(
                format!("{}: edge {e}", raw.at(name, e)),
                format!(
                    "integer weight {w} is beyond i32 (integer weights are solved exactly in \
                     i32): scale the weights down, or write them as floats ({w}.0) for f32"
                ),
            ));
        }
    }
    let ints: Option<Vec<i32>> = raw.weights.iter().map(|w| w.parse().ok()).collect();
    let weights = match ints {
        Some(w) => Weights::Int(w),
        None => Weights::Float(
            raw.weights
                .iter()
                .enumerate()
                .map(|(e, w)| {
                    w.parse::<f32>().map_err(|_| {
                        Error::invalid(
                            format!("{}: edge {e}", raw.at(name, e)),
                            format!("weight '{w}' is not a number"),
                        )
                    })
                })
                .collect::<Result<_>>()?,
        ),
    };
    let max_id = raw.from.iter().chain(&raw.to).max().map(|&v| v as u64 + 1);
    let n = match vertices {
        Some(n) => n,
        None => max_id.unwrap_or(0) as u32,
    };
    if n > MAX_FILE_VERTICES {
        return Err(Error::invalid(
            format!("{name}: vertices"),
            format!(
                "{n} is above {MAX_FILE_VERTICES}: all-pairs shortest paths keep n^2 distances \
                 and successors (8 n^2 bytes)"
            ),
        ));
    }
    raw.check_ids(name, n)?;
    let g = Graph {
        vertices: n,
        from: raw.from,
        to: raw.to,
        weights,
    };
    g.validate().map_err(|e| e.under(format!("{name}: ")))?;
    Ok(g)
}
