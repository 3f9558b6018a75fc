//! Why a curl command line cannot become a request (`--from-curl`).

use super::super::shell::ShellError;
use super::NO_FILES;

/// Why a curl command line cannot become a request: its shell quoting, an option volley does
/// not take, a value that is missing or malformed, or something that would be read from a file.
#[derive(Debug, thiserror::Error)]
pub enum CurlError {
    /// The line could not be split into words.
    #[error(transparent)]
    Shell(#[from] ShellError),
    /// Windows cmd's `^"…^"` quoting.
    #[error("this is Windows cmd quoting (^\"…^\"); copy the request \"as cURL (bash)\" instead")]
    WindowsQuoting,
    /// No words at all.
    #[error("the curl command is empty")]
    Empty,
    /// The first word (shown) is not `curl`.
    #[error(
        "the command starts with `{0}`, not curl: pass a whole curl command line, e.g. \
         --from-curl \"curl 'https://host/path' -H 'Accept: */*'\""
    )]
    NotCurl(String),
    /// An option (as written) that --from-curl does not know.
    #[error(
        "curl option `{0}` is not supported by --from-curl (it may change the request in a way \
         a plan cannot express); remove it, or write that part of the plan by hand"
    )]
    Unsupported(String),
    /// An option (as written) that takes a value came last.
    #[error("`{0}` needs a value")]
    NeedsValue(String),
    /// A known option that is refused, and why.
    #[error("curl option `{arg}` is not supported: {why}")]
    Refused {
        /// The option as written.
        arg: String,
        /// Why volley does not take it.
        why: &'static str,
    },
    /// Two URLs: the first and the second.
    #[error("more than one URL (`{0}` and `{1}`): a step sends one request")]
    TwoUrls(String, String),
    /// `-d @file` (the option and its value).
    #[error(
        "`{0}` reads the body from a file; {NO_FILES} (body_file is read as it is, byte for byte)"
    )]
    BodyFile(String),
    /// `--data-urlencode name@file` (the option and its value).
    #[error("`{0}` reads the data from a file; {NO_FILES}")]
    DataFile(String),
    /// `-b file` (the option and its value).
    #[error("`{0}` names a cookie file; {NO_FILES} (or pass the cookies as -b 'name=value')")]
    CookieFile(String),
    /// `-m` with a value that is not a positive number (the option and its value).
    #[error("`{0}`: not a number of seconds")]
    NotSeconds(String),
    /// `-H @file` (the value).
    #[error("`-H {0}` reads headers from a file; {NO_FILES}")]
    HeaderFile(String),
    /// A header without a colon.
    #[error("header `{0}` is not `Name: value`")]
    HeaderShape(String),
    /// A header whose name is empty or not printable ASCII.
    #[error("header `{0}` has no valid name")]
    HeaderName(String),
    /// No URL among the words.
    #[error("the curl command has no URL")]
    NoUrl,
    /// `-u USER` alone.
    #[error("`-u USER` without a password makes curl prompt for one; write -u 'USER:PASSWORD'")]
    NoPassword,
    /// The URL as written does not parse.
    #[error("`{0}` is not a valid URL: {1}")]
    BadUrl(String, url::ParseError),
    /// An http(s) URL without a host.
    #[error("`{0}` has no host")]
    NoHost(String),
    /// A scheme other than http and https (the URL, the scheme).
    #[error("`{0}`: scheme `{1}` is not http or https")]
    Scheme(String, String),
}
