//! A table of already-formatted cells, rendered as Markdown, plain text, or (through the HTML
//! template, which reads its fields) HTML. Reports build their tables once and lay them out per
//! format.

use serde::Serialize;

/// A table with a title, headers and rows of formatted cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// Section title ("Status codes").
    pub title: String,
    /// A sentence under the title (what the figures mean), if any.
    pub note: Option<String>,
    /// Column headers.
    pub headers: Vec<String>,
    /// Per column: right-aligned (numbers) or not (text).
    pub right: Vec<bool>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table. Header names starting with `<` are text columns (left-aligned; the `<` is
    /// dropped); the others are numeric (right-aligned).
    pub fn new(title: &str, headers: &[&str]) -> Self {
        Self {
            title: title.into(),
            note: None,
            headers: headers
                .iter()
                .map(|h| h.trim_start_matches('<').to_string())
                .collect(),
            right: headers.iter().map(|h| !h.starts_with('<')).collect(),
            rows: Vec::new(),
        }
    }

    /// Sets the note under the title.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// Appends a row (padded or cut to the header count).
    pub fn push<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// GitHub-flavoured Markdown: `### title`, the note, the table. Text is escaped
    /// ([`md_text`]); pipes in cells too.
    pub fn to_markdown(&self, heading: &str) -> String {
        let mut o = format!("{heading} {}\n\n", md_text(&self.title));
        if let Some(note) = &self.note {
            o.push_str(&md_text(note));
            o.push_str("\n\n");
        }
        let esc = |s: &str| md_text(s).replace('|', "\\|").replace('\n', " ");
        o.push('|');
        for h in &self.headers {
            o.push_str(&format!(" {} |", esc(h)));
        }
        o.push_str("\n|");
        for &r in &self.right {
            o.push_str(if r { "---:|" } else { ":---|" });
        }
        o.push('\n');
        for row in &self.rows {
            o.push('|');
            for cell in row {
                o.push_str(&format!(" {} |", esc(cell)));
            }
            o.push('\n');
        }
        o.push('\n');
        o
    }

    /// Plain text with aligned columns, the title on its own line and rows indented.
    pub fn to_text(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                std::iter::once(&self.headers[c])
                    .chain(self.rows.iter().map(|r| &r[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let mut l = String::from(" ");
            for (c, cell) in cells.iter().enumerate() {
                let pad = widths[c] - cell.chars().count();
                l.push_str(if c == 0 { " " } else { "  " });
                if self.right[c] {
                    l.push_str(&" ".repeat(pad));
                    l.push_str(cell);
                } else {
                    l.push_str(cell);
                    if c + 1 < cells.len() {
                        l.push_str(&" ".repeat(pad));
                    }
                }
            }
            l.trim_end().to_string() + "\n"
        };
        let mut o = format!("{}\n", self.title);
        if let Some(note) = &self.note {
            o.push_str(&format!("  ({note})\n"));
        }
        o.push_str(&line(&self.headers));
        for row in &self.rows {
            o.push_str(&line(row));
        }
        o.push('\n');
        o
    }
}

/// Text for a Markdown report with HTML's special characters as entities (`<` → `&lt;`, `>`,
/// `&`): text from the record holds what the target and the user wrote (a grouped header's
/// value, a URL, a scenario's name), and Markdown passes raw HTML through (`<script>`, `<img
/// src=…>`) to whatever renders it. Markdown's own syntax (backticks, `**`) is kept.
pub fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("Status codes", &["<Status", "Count", "<Meaning"]);
        t.push(["200", "1,234", "OK"]);
        t.push(["500", "5", "a|b"]);
        t.with_note("all responses")
    }

    #[test]
    fn markdown_aligns_and_escapes() {
        assert_eq!(
            sample().to_markdown("##"),
            "## Status codes\n\nall responses\n\n| Status | Count | Meaning |\n|:---|---:|:---|\n\
             | 200 | 1,234 | OK |\n| 500 | 5 | a\\|b |\n\n"
        );
    }

    #[test]
    fn text_aligns_columns() {
        assert_eq!(
            sample().to_text(),
            "Status codes\n  (all responses)\n  Status  Count  Meaning\n  200     1,234  OK\n  \
             500         5  a|b\n\n"
        );
    }

    #[test]
    fn short_rows_are_padded() {
        let mut t = Table::new("t", &["<a", "b"]);
        t.push(["x"]);
        assert_eq!(t.rows[0], vec!["x".to_string(), String::new()]);
    }
}
