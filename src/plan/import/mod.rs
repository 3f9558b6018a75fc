//! Plans from what users already have: a curl command line (a browser's "Copy as cURL") turned
//! into a step's request, and the starter plan `volley new` writes. The HAR and OpenAPI
//! importers belong here too.

pub mod curl;
pub mod shell;
pub mod starter;
