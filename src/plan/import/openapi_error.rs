//! Why an OpenAPI document cannot become a plan (`--from-openapi`).

/// Why an OpenAPI document cannot become a plan: it cannot be read or parsed, is not OpenAPI
/// 3, has no usable server URL, something in it is malformed (said with its place,
/// `paths./pet.put.requestBody`), or the operations asked for are not in it.
#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file as given.
        file: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is neither YAML nor JSON.
    #[error("{file}: not YAML or JSON: {source}")]
    Syntax {
        /// The file as given.
        file: String,
        /// Where and why the parser stopped.
        source: serde_norway::Error,
    },
    /// Not an OpenAPI 3 document.
    #[error(
        "{file}: not an OpenAPI 3 document ({found}); Swagger 2.0 documents can be converted \
         with e.g. swagger2openapi"
    )]
    Version {
        /// The file as given.
        file: String,
        /// What its version key says.
        found: String,
    },
    /// Something in the document is not what OpenAPI has there.
    #[error("{file}: {at}: {why}")]
    Shape {
        /// The file as given.
        file: String,
        /// Where, as a path into the document (`paths./pet.get.parameters[0]`).
        at: String,
        /// What is wrong.
        why: String,
    },
    /// No server URL to send to.
    #[error("{file}: {why}; pass --base-url http://host:port")]
    NoServer {
        /// The file as given.
        file: String,
        /// What the document has.
        why: String,
    },
    /// `--base-url` is not an http(s) URL.
    #[error("--base-url: {0}")]
    BaseUrl(String),
    /// `--operations` named operations the document does not have.
    #[error("{file}: no operation with operationId {unknown}; it has: {known}")]
    UnknownOperations {
        /// The file as given.
        file: String,
        /// The ids not found, comma-separated.
        unknown: String,
        /// The ids it has, comma-separated.
        known: String,
    },
    /// The document has no operations.
    #[error("{file}: no operations under `paths`")]
    NoOperations {
        /// The file as given.
        file: String,
    },
    /// The `--params` CSV file cannot be read.
    #[error("--params {file}: {why}")]
    Params {
        /// The file as given.
        file: String,
        /// Why.
        why: String,
    },
}
