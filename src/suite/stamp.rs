//! The time stamps of a suite: its results folder's name and its record's times.

use std::time::SystemTime;

use crate::report::stamped_name;

/// `<name>-<UTC time>`, e.g. `capacity-20260102T030405Z`.
pub(super) fn folder_name(name: &str, at: SystemTime) -> String {
    stamped_name(name, &rfc3339(at))
}

/// RFC 3339 with milliseconds, UTC.
pub(super) fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_safe_and_stamped() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_767_323_045_678);
        assert_eq!(folder_name("my suite", at), "my_suite-20260102T030405Z");
    }
}
