//! Reading volley's own sources, for the tests that keep its shape (`tests/architecture.rs`,
//! `tests/seams.rs`).

use std::path::{Path, PathBuf};

/// `src/` of this checkout.
pub fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, into `out`.
pub fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text with comments, string and character literals blanked out (newlines kept), so that
/// braces inside them do not count.
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let blank = |s: &[u8], out: &mut String| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < b.len() {
        let end = if b[i..].starts_with(b"//") {
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n)
        } else if b[i..].starts_with(b"/*") {
            text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2)
        } else if b[i] == b'r'
            && matches!(b.get(i + 1), Some(b'"' | b'#'))
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
        {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let open = i + 1 + hashes + 1;
            text[open..]
                .find(&close)
                .map_or(b.len(), |n| open + n + close.len())
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if b[i] == b'\'' && (b.get(i + 1) == Some(&b'\\') || b.get(i + 2) == Some(&b'\'')) {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'\'' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        let end = end.min(b.len());
        blank(&b[i..end], &mut out);
        i = end;
    }
    out
}
