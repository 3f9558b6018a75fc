//! What `volley k8s` checks before it prints anything: the plan, read as the generators will
//! read it, and the resource flags Kubernetes would refuse.

use std::path::Path;

use super::K8sError;

/// `text` if it is a Kubernetes quantity above 0 (`--cpu`, `--memory`): a decimal number and
/// one of the suffixes m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent (`1e3`).
pub fn quantity(text: &str) -> Result<String, K8sError> {
    let bad = || K8sError::Quantity(text.to_string());
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let exponent = suffix
        .strip_prefix(['e', 'E'])
        .is_some_and(|e| e.trim_start_matches(['+', '-']).parse::<u8>().is_ok());
    let suffixes = ["", "m", "k", "M", "G", "T", "P", "E"];
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let known = exponent || suffixes.contains(&suffix) || binary.contains(&suffix);
    if !known || value <= 0.0 {
        return Err(bad());
    }
    Ok(text.to_string())
}

/// Reads plan `text` (from `path`) as the generators will, each its share of `workers`, and as
/// `volley check` would, but without leaving this machine: host names are not resolved (a
/// cluster's names resolve only inside it) and gRPC schemas taken by reflection are not
/// fetched. Reads the first share and the last, the smallest (a division's remainder goes to
/// the first shares), so a share left with nothing to run is found.
pub fn check_plan(text: &str, path: &Path, workers: u32) -> Result<(), crate::Error> {
    let workers_error = || crate::Error::invalid("--workers", K8sError::Workers);
    let last = workers.checked_sub(1).ok_or_else(workers_error)?;
    for index in [0, last] {
        let segment = crate::schedule::Segment::new(index, workers).map_err(|_| workers_error())?;
        let options = crate::plan::read::ReadOptions {
            segment: Some(segment),
            resolve: unresolved,
            ..Default::default()
        };
        crate::plan::read::read_str(text, path, &options)?;
    }
    Ok(())
}

/// A host name's stand-in address: resolved only where the test runs.
fn unresolved(
    _host: &str,
    port: u16,
) -> Result<std::net::SocketAddr, crate::plan::read::ResolveError> {
    Ok(std::net::SocketAddr::from(([0, 0, 0, 0], port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_quantities_are_told_from_other_text() {
        for good in [
            "2", "500m", "0.5", ".5", "1.5Gi", "512Mi", "1G", "2k", "1e3", "1E-2",
        ] {
            assert_eq!(quantity(good).as_deref(), Ok(good), "{good}");
        }
        for bad in ["", "0", "0.0", "-1", "abc", "1GB", "1ki", "2 Gi", "1e", "m"] {
            assert!(quantity(bad).is_err(), "{bad}");
        }
    }
}
