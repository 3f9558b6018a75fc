//! `volley serve`: the built-in target in the foreground.

use std::net::SocketAddr;

use volley::server::{Backends, Capacity, Faults, Stall, TargetConfig};

use super::command_args::ServeArgs;

/// Runs the target until SIGINT, SIGTERM or SIGHUP.
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
    if a.close_after_requests == Some(0) {
        return Err(volley::Error::Invalid {
            what: "--close-after-requests".into(),
            why: "must be at least 1".into(),
        }
        .into());
    }
    let stall = match (a.stall, a.stall_every) {
        (Some(duration), Some(every)) => {
            Some(
                Stall::new(duration, every).map_err(|why| volley::Error::Invalid {
                    what: "--stall".into(),
                    why: why.to_string(),
                })?,
            )
        }
        _ => None,
    };
    let faults = Faults {
        close_after_requests: a.close_after_requests,
        close_after: a.close_after,
        stall,
    };
    let config = TargetConfig {
        bind: SocketAddr::new(a.bind, a.port),
        threads,
        capacity,
    };
    let backends = a
        .backends
        .map(|n| Backends::new(n, &a.backend_delay))
        .transpose()
        .map_err(|why| volley::Error::Invalid {
            what: "--backends".into(),
            why: why.to_string(),
        })?;
    let ca_file = (a.tls || a.http3).then_some(a.ca_file.as_path());
    volley::server::serve_forever(config, ca_file, a.http3, faults, backends)?;
    Ok(super::EXIT_OK)
}
