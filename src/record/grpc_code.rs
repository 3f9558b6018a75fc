//! [`GrpcCode`]: the gRPC status codes, as counted in the record.

use super::error_kind::ErrorKind;

/// A gRPC status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum GrpcCode {
    /// Success.
    Ok = 0,
    /// The call was cancelled (usually by the caller).
    Cancelled = 1,
    /// An error without a better code (also: any code this client does not know).
    Unknown = 2,
    /// The request was malformed.
    InvalidArgument = 3,
    /// The deadline passed before the call completed.
    DeadlineExceeded = 4,
    /// The entity asked for does not exist.
    NotFound = 5,
    /// The entity to create exists already.
    AlreadyExists = 6,
    /// The caller may not do this.
    PermissionDenied = 7,
    /// A quota or resource ran out (rate limit, memory).
    ResourceExhausted = 8,
    /// The system is not in a state where this call can run.
    FailedPrecondition = 9,
    /// Aborted, usually by a concurrency conflict.
    Aborted = 10,
    /// Past the valid range.
    OutOfRange = 11,
    /// The method is not implemented or not known.
    Unimplemented = 12,
    /// An internal error of the server.
    Internal = 13,
    /// The service is unavailable for now (overload, shutting down).
    Unavailable = 14,
    /// Unrecoverable data loss.
    DataLoss = 15,
    /// The caller is not authenticated.
    Unauthenticated = 16,
}

impl GrpcCode {
    /// Number of codes.
    pub const COUNT: usize = 17;

    /// Every code, by number.
    pub const ALL: [GrpcCode; Self::COUNT] = [
        Self::Ok,
        Self::Cancelled,
        Self::Unknown,
        Self::InvalidArgument,
        Self::DeadlineExceeded,
        Self::NotFound,
        Self::AlreadyExists,
        Self::PermissionDenied,
        Self::ResourceExhausted,
        Self::FailedPrecondition,
        Self::Aborted,
        Self::OutOfRange,
        Self::Unimplemented,
        Self::Internal,
        Self::Unavailable,
        Self::DataLoss,
        Self::Unauthenticated,
    ];

    /// The code for a number; numbers beyond 16 are `Unknown`, as the gRPC spec says.
    pub fn from_u32(code: u32) -> Self {
        Self::ALL
            .get(code as usize)
            .copied()
            .unwrap_or(Self::Unknown)
    }

    /// The number.
    pub fn as_u32(self) -> u32 {
        self as u32
    }

    /// The canonical name, e.g. `UNAVAILABLE`: the key of gRPC status tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Cancelled => "CANCELLED",
            Self::Unknown => "UNKNOWN",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Self::NotFound => "NOT_FOUND",
            Self::AlreadyExists => "ALREADY_EXISTS",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Aborted => "ABORTED",
            Self::OutOfRange => "OUT_OF_RANGE",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Internal => "INTERNAL",
            Self::Unavailable => "UNAVAILABLE",
            Self::DataLoss => "DATA_LOSS",
            Self::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// How a call ending with this code counts: `None` for OK; caller-side codes count as
    /// [`ErrorKind::GrpcClientError`], server-side ones as [`ErrorKind::GrpcServerError`] (like
    /// HTTP's 4xx and 5xx).
    pub fn error_kind(self) -> Option<ErrorKind> {
        match self {
            Self::Ok => None,
            Self::Cancelled
            | Self::InvalidArgument
            | Self::NotFound
            | Self::AlreadyExists
            | Self::PermissionDenied
            | Self::FailedPrecondition
            | Self::OutOfRange
            | Self::Unauthenticated => Some(ErrorKind::GrpcClientError),
            Self::Unknown
            | Self::DeadlineExceeded
            | Self::ResourceExhausted
            | Self::Aborted
            | Self::Unimplemented
            | Self::Internal
            | Self::Unavailable
            | Self::DataLoss => Some(ErrorKind::GrpcServerError),
        }
    }

    /// The code of a response that has no `grpc-status` but an HTTP error status (the mapping of
    /// the gRPC spec, "HTTP to gRPC Status Code Mapping").
    pub fn from_http_status(status: u16) -> Self {
        match status {
            400 => Self::Internal,
            401 => Self::Unauthenticated,
            403 => Self::PermissionDenied,
            404 => Self::Unimplemented,
            429 | 502 | 503 | 504 => Self::Unavailable,
            _ => Self::Unknown,
        }
    }
}
