//! Plans from what users already have: a curl command line (a browser's "Copy as cURL") turned
//! into a step's request and the starter plan `volley new` writes; a HAR recording (a
//! browser's or a proxy's) and an OpenAPI document, each turned into a plan of many steps. Every
//! importer writes plan text that `volley check` accepts, through [`text`].

pub mod curl;
pub mod har;
pub mod openapi;
pub mod shell;
pub mod starter;
pub mod text;
