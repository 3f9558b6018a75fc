//! `volley new [URL]` and `volley new --from-curl 'curl …'`: a commented starter plan (one
//! scenario with a ramp, one step with a check, two thresholds) that `volley check` accepts;
//! `--from-har` and `--from-openapi`: a plan of many steps (plan::import decides everything).

use std::path::PathBuf;

use clap::Args;

use volley::plan::import::curl::{self, CurlRequest};
use volley::plan::import::starter::{DEFAULT_URL, starter};
use volley::plan::import::{har, openapi};

/// `volley new`.
#[derive(Debug, Args)]
#[command(
    after_help = "Then: volley check plan.toml (validates it and shows the request it \
                        sends), volley run plan.toml."
)]
pub struct NewArgs {
    /// The URL the plan's step requests [default: http://127.0.0.1:8080/, where `volley serve`
    /// listens].
    #[arg(value_name = "URL", conflicts_with_all = ["from_curl", "from_har", "from_openapi"])]
    pub url: Option<String>,
    /// A curl command line to turn into the step (method, URL, headers, body), e.g. a browser's
    /// "Copy as cURL": --from-curl "$(xclip -o)" or --from-curl 'curl https://host/ -H …'.
    #[arg(long, value_name = "'curl …'", conflicts_with_all = ["from_har", "from_openapi"])]
    pub from_curl: Option<String>,
    /// A HAR recording (a browser's or a proxy's): one step per request, static assets left
    /// out, secrets read from the environment, reused values extracted.
    #[arg(long, value_name = "FILE", conflicts_with = "from_openapi")]
    pub from_har: Option<PathBuf>,
    /// An OpenAPI 3 document (YAML or JSON): one step per operation, with example bodies and
    /// parameters and a check of the documented success statuses.
    #[arg(long, value_name = "FILE")]
    pub from_openapi: Option<PathBuf>,
    /// With --from-har or --from-openapi: the target's URL, instead of the recorded origin or
    /// the document's first server.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// With --from-har: keep static assets (images, scripts, stylesheets, fonts).
    #[arg(long, requires = "from_har")]
    pub include: bool,
    /// With --from-openapi: only these operations (operationIds), in this order.
    #[arg(
        long,
        value_name = "ID,…",
        value_delimiter = ',',
        requires = "from_openapi"
    )]
    pub operations: Vec<String>,
    /// With --from-openapi: a CSV file; a parameter named like one of its columns is read from
    /// it (a row per iteration).
    #[arg(long, value_name = "CSV", requires = "from_openapi")]
    pub params: Option<PathBuf>,
    /// Where to write the plan; `-` writes it to stdout.
    #[arg(short = 'o', long, value_name = "PATH", default_value = "plan.toml")]
    pub output: PathBuf,
    /// Overwrite the file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Writes the plan; returns the exit code.
pub fn run(a: NewArgs) -> anyhow::Result<u8> {
    let imported = if let Some(file) = &a.from_har {
        let options = har::HarOptions {
            base_url: a.base_url.clone(),
            include_static: a.include,
        };
        har::import(file, &options).map_err(|e| volley::Error::invalid("--from-har", e))?
    } else if let Some(file) = &a.from_openapi {
        let options = openapi::OpenApiOptions {
            base_url: a.base_url.clone(),
            operations: a.operations.clone(),
            params: a.params.clone(),
            plan: a.output.clone(),
        };
        openapi::import(file, &options).map_err(|e| volley::Error::invalid("--from-openapi", e))?
    } else if let Some(command) = &a.from_curl {
        let request = curl::parse(command).map_err(|e| volley::Error::invalid("--from-curl", e))?;
        starter(request, Some(command))
    } else {
        let url = a.url.as_deref().unwrap_or(DEFAULT_URL);
        starter(
            CurlRequest::get(url).map_err(|e| volley::Error::invalid("URL", e))?,
            None,
        )
    };
    for note in &imported.notes {
        eprintln!("note: {note}");
    }
    let text = imported.text;
    if a.output.as_os_str() == "-" {
        super::to_stdout(text.as_bytes())?;
        return Ok(super::EXIT_OK);
    }
    if a.output.exists() && !a.force {
        let why = format!(
            "{} exists; pass --force to overwrite it, or -o another path",
            a.output.display()
        );
        return Err(volley::Error::invalid("--output", why).into());
    }
    volley::record::write_atomically(&a.output, text.as_bytes())?;
    let shown = a.output.display();
    eprintln!("wrote {shown}: {}", imported.summary);
    eprintln!("next:  volley check {shown}    # validates it and shows the request; sends nothing");
    eprintln!("       volley run {shown}      # --time-scale 0.1 runs it ten times shorter");
    Ok(super::EXIT_OK)
}
