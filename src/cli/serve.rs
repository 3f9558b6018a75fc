//! `volley serve`: the built-in target in the foreground.

use std::net::SocketAddr;

use volley::target::{Capacity, TargetConfig};

use super::args::ServeArgs;

/// Runs the target until SIGINT/SIGTERM.
pub fn run(a: ServeArgs) -> anyhow::Result<u8> {
    let capacity = match (a.capacity, a.service_time) {
        (Some(0), _) => {
            return Err(volley::Error::Invalid {
                what: "--capacity".into(),
                why: "must be at least 1 worker".into(),
            }
            .into());
        }
        (Some(workers), Some(service_time)) => Some(Capacity {
            workers,
            service_time,
        }),
        _ => None,
    };
    let threads = match a.threads {
        Some(0) => {
            return Err(volley::Error::Invalid {
                what: "--threads".into(),
                why: "must be at least 1".into(),
            }
            .into());
        }
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    volley::target::serve_forever(
        TargetConfig {
            bind: SocketAddr::new(a.bind, a.port),
            threads,
            capacity,
        },
        a.tls.then_some(a.ca_file.as_path()),
    )
    .map_err(volley::Error::from)?;
    Ok(super::EXIT_OK)
}
