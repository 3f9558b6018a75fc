//! Replies matched to the messages they answer by an id both carry at one JSON path (a step's
//! `match = "$.id"`), for servers that answer out of order or push messages of their own: each
//! message's id is read when it is rendered, each reply's as it arrives, and a reply is the
//! round trip of the unanswered message with its id. Ids are compared by a 64-bit hash of their
//! text (a string's content, any other value's JSON), so `"7"` and `7` are the same id.

use std::hash::{Hash, Hasher};

/// Where the id lies in a message, as a JSON pointer (RFC 6901).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdPath {
    pointer: String,
}

impl IdPath {
    /// The path whose JSON pointer is `pointer` (`/id` for `$.id`).
    pub fn new(pointer: String) -> Self {
        Self { pointer }
    }

    /// The id `json` (a message's text) carries; none when it is not JSON or has none there.
    pub fn of_text(&self, json: &[u8]) -> Option<u64> {
        let value: serde_json::Value = serde_json::from_slice(json).ok()?;
        self.of_value(&value)
    }

    /// The id `value` carries; none when it has none at the path (or a JSON `null`).
    pub fn of_value(&self, value: &serde_json::Value) -> Option<u64> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        match value.pointer(&self.pointer)? {
            serde_json::Value::Null => return None,
            serde_json::Value::String(s) => s.hash(&mut hasher),
            other => other.to_string().hash(&mut hasher),
        }
        Some(hasher.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_at_the_path_strings_and_numbers_alike() {
        let path = IdPath::new("/meta/id".into());
        let a = path.of_text(br#"{"meta": {"id": "7"}, "x": 1}"#);
        let b = path.of_text(br#"{"meta": {"id": 7}}"#);
        assert!(a.is_some());
        assert_eq!(a, b);
        assert_ne!(a, path.of_text(br#"{"meta": {"id": 8}}"#));
        assert_eq!(path.of_text(br#"{"meta": {"id": null}}"#), None);
        assert_eq!(path.of_text(b"not json"), None);
        assert_eq!(path.of_text(br#"{"id": 7}"#), None);
    }
}
