//! Where in an input file something is: `path:line:col` from a byte span, as the plan and suite
//! readers report every error.

use std::ops::Range;
use std::path::Path;

/// `path:line:col` of the start of `span` in `text` (lines and columns from 1, columns counted in
/// characters), or the path alone when there is no span.
pub fn at(path: &Path, text: &str, span: Option<Range<usize>>) -> String {
    match span {
        Some(span) => {
            let before = &text[..floor_char_boundary(text, span.start)];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("{}:{line}:{col}", path.display())
        }
        None => path.display().to_string(),
    }
}

/// The largest char boundary ≤ `i` (spans from a parser always are one; this only guards).
fn floor_char_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "a = 1\nnamé = \"x\"\n";
        let p = Path::new("f.toml");
        assert_eq!(at(p, text, Some(0..1)), "f.toml:1:1");
        let x = text.find('"').unwrap();
        assert_eq!(at(p, text, Some(x..x + 3)), "f.toml:2:8");
        assert_eq!(at(p, text, Some(999..1000)), "f.toml:3:1");
        assert_eq!(at(p, text, None), "f.toml");
    }
}
