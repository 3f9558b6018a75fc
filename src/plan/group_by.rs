//! `--group-by` and `group_by = [...]`: what responses are grouped by, parsed once when the plan
//! is read. The engine records each response in one [`GroupTable`](crate::record::group::GroupTable)
//! per selector; the record and the reports show the figures per value.

use std::fmt;

use http::HeaderName;

use super::check::{JsonPathError, json_pointer};
use crate::proto::pick::MAX_PICKED;

/// Most selectors a plan may group by (header selectors are also bounded by [`MAX_PICKED`]).
pub const MAX_GROUP_BY: usize = MAX_PICKED;

/// What responses are grouped by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupSelector {
    /// The value of a response header (`header:X-Backend`).
    Header {
        /// The name, lower case (as HTTP compares it).
        name: HeaderName,
        /// The name as written.
        written: String,
    },
    /// A field of a JSON body (`json:$.backend`; gRPC: of the response message as JSON).
    Json {
        /// The path as written.
        path: String,
        /// The same path as a JSON pointer (`/backend`).
        pointer: String,
    },
    /// The response status (`status`; gRPC: the HTTP status, normally 200).
    Status,
}

/// Why a `--group-by` selector is refused.
#[derive(Debug, thiserror::Error)]
pub enum GroupByError {
    /// Not one of the three forms.
    #[error(
        "`{0}` is not a selector: write header:NAME, json:$.path or status (e.g. header:X-Backend)"
    )]
    Unknown(String),
    /// `header:` with a name HTTP does not allow.
    #[error("`{0}`: `{1}` is not a valid header name")]
    HeaderName(String, String),
    /// `json:` with a path that does not parse.
    #[error("`{0}`: {1}")]
    JsonPath(String, JsonPathError),
    /// More selectors than the run can record.
    #[error("at most {MAX_GROUP_BY} --group-by selectors (header ones included) per run")]
    TooMany,
}

impl GroupSelector {
    /// Parses `header:NAME`, `json:$.path` (or a JSON pointer, `json:/a/0`) or `status`.
    pub fn parse(text: &str) -> Result<Self, GroupByError> {
        let text = text.trim();
        if text == "status" {
            return Ok(Self::Status);
        }
        match text.split_once(':') {
            Some(("header", name)) => {
                let name = name.trim();
                let parsed = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| GroupByError::HeaderName(text.into(), name.into()))?;
                Ok(Self::Header {
                    name: parsed,
                    written: name.into(),
                })
            }
            Some(("json", path)) if !path.trim().is_empty() => {
                let path = path.trim();
                let pointer =
                    json_pointer(path).map_err(|e| GroupByError::JsonPath(text.into(), e))?;
                Ok(Self::Json {
                    path: path.into(),
                    pointer,
                })
            }
            _ => Err(GroupByError::Unknown(text.into())),
        }
    }

    /// Whether the selector reads the body (it then needs the body captured: an allocation per
    /// response, like checks on the body).
    pub fn reads_body(&self) -> bool {
        matches!(self, Self::Json { .. })
    }
}

impl fmt::Display for GroupSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Header { written, .. } => write!(f, "header:{written}"),
            Self::Json { path, .. } => write!(f, "json:{path}"),
            Self::Status => f.write_str("status"),
        }
    }
}

/// One table of the run: a selector, and how the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupBy {
    /// What is read.
    pub selector: GroupSelector,
    /// Header selectors: the index of the header among the names the connections pick.
    pub pick: Option<usize>,
    /// Given under `[target]` (or by `--group-by`): every step's responses are grouped by it.
    pub every_step: bool,
}

/// Adds `selector` to the run's tables unless it is there; returns its index.
pub fn add_table(
    tables: &mut Vec<GroupBy>,
    selector: GroupSelector,
    every_step: bool,
) -> Result<usize, GroupByError> {
    if let Some(i) = tables.iter().position(|t| t.selector == selector) {
        tables[i].every_step |= every_step;
        return Ok(i);
    }
    if tables.len() >= MAX_GROUP_BY {
        return Err(GroupByError::TooMany);
    }
    let pick = matches!(selector, GroupSelector::Header { .. })
        .then(|| tables.iter().filter(|t| t.pick.is_some()).count());
    tables.push(GroupBy {
        selector,
        pick,
        every_step,
    });
    Ok(tables.len() - 1)
}

/// The header names the connections pick, by pick index.
pub fn pick_names(tables: &[GroupBy]) -> Vec<HeaderName> {
    tables
        .iter()
        .filter_map(|t| match &t.selector {
            GroupSelector::Header { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_once_and_print_as_written() {
        let h = GroupSelector::parse("header:X-Backend").unwrap();
        assert!(matches!(&h, GroupSelector::Header { name, .. } if name == "x-backend"));
        assert_eq!(h.to_string(), "header:X-Backend");
        let j = GroupSelector::parse("json:$.items[0].zone").unwrap();
        assert!(
            matches!(&j, GroupSelector::Json { pointer, .. } if pointer == "/items/0/zone"),
            "{j:?}"
        );
        assert!(j.reads_body());
        assert_eq!(
            GroupSelector::parse("status").unwrap(),
            GroupSelector::Status
        );
    }

    #[test]
    fn bad_selectors_say_what_is_wrong() {
        let msg = |t: &str| GroupSelector::parse(t).unwrap_err().to_string();
        assert!(msg("backend").contains("write header:NAME, json:$.path or status"));
        assert!(msg("header:").contains("is not a valid header name"));
        assert!(msg("header:X Backend").contains("`X Backend` is not a valid header name"));
        assert!(msg("json:$.a[x]").contains("json:$.a[x]"));
        assert!(msg("json:").contains("is not a selector"));
    }

    #[test]
    fn tables_are_shared_and_headers_get_pick_indices() {
        let mut t = Vec::new();
        let sel = |s: &str| GroupSelector::parse(s).unwrap();
        assert_eq!(add_table(&mut t, sel("status"), false).unwrap(), 0);
        assert_eq!(add_table(&mut t, sel("header:A"), true).unwrap(), 1);
        assert_eq!(add_table(&mut t, sel("header:B"), false).unwrap(), 2);
        assert_eq!(add_table(&mut t, sel("status"), true).unwrap(), 0);
        assert!(t[0].every_step);
        assert_eq!((t[1].pick, t[2].pick), (Some(0), Some(1)));
        assert_eq!(pick_names(&t), ["a", "b"]);
        for i in 0..5 {
            add_table(&mut t, sel(&format!("header:h{i}")), true).unwrap();
        }
        assert!(matches!(
            add_table(&mut t, sel("json:$.x"), true),
            Err(GroupByError::TooMany)
        ));
    }
}
