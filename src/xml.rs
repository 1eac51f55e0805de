//! XML from files others write (SROS2 policies, SDF worlds): parsed with roxmltree after a
//! bound on nesting: a policy nested 20,000 deep aborted the process with a stack overflow,
//! and no real policy or world nests past a few dozen.

use crate::error::{Error, Result};

/// The deepest element nesting read.
pub const MAX_DEPTH: usize = 256;

/// `text` as an XML document, or an error naming `what`: not XML, or nested deeper than
/// [`MAX_DEPTH`].
pub fn parse<'a>(what: &str, text: &'a str) -> Result<roxmltree::Document<'a>> {
    if let Some(at) = too_deep(text) {
        return Err(Error::invalid(
            what,
            format!("not read: elements nested deeper than {MAX_DEPTH} (at byte {at})"),
        ));
    }
    roxmltree::Document::parse(text).map_err(|e| Error::invalid(what, format!("not XML: {e}")))
}

/// Where the element nesting first passes [`MAX_DEPTH`], by a scan of the tags. Comments,
/// CDATA and processing instructions can only make it count deeper than the truth, so a
/// document it passes is within the bound.
fn too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    for i in 0..b.len() {
        match (b[i], b.get(i + 1)) {
            (b'<', Some(b'/')) | (b'/', Some(b'>')) => depth = depth.saturating_sub(1),
            (b'<', Some(b'?' | b'!')) => {}
            (b'<', Some(_)) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_past_the_bound_is_refused_without_parsing() {
        let deep = |n: usize| format!("{}{}", "<a>".repeat(n), "</a>".repeat(n));
        assert!(parse("policy", &deep(MAX_DEPTH)).is_ok());
        for n in [MAX_DEPTH + 1, 20_000, 200_000] {
            let e = parse("policy", &deep(n)).unwrap_err().to_string();
            assert!(
                e.contains("policy") && e.contains("nested deeper than 256"),
                "{e}"
            );
        }
        // Siblings and self-closing elements do not add up.
        let wide = format!("<r>{}</r>", "<a/><b></b>".repeat(100_000));
        assert!(parse("policy", &wide).is_ok());
        assert!(parse("policy", "<r><unclosed></r>")
            .unwrap_err()
            .to_string()
            .contains("not XML"));
    }
}
