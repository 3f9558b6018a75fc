//! `volley new [URL]` and `volley new --from-curl 'curl …'`: a commented starter plan (one
//! scenario with a ramp, one step with a check, two thresholds) that `volley check` accepts.

use std::path::PathBuf;

use clap::Args;

use volley::plan::import::curl::{self, CurlRequest};
use volley::plan::import::starter::{DEFAULT_URL, starter_plan};

/// `volley new`.
#[derive(Debug, Args)]
#[command(
    after_help = "Then: volley check plan.toml (validates it and shows the request it \
                        sends), volley run plan.toml."
)]
pub struct NewArgs {
    /// The URL the plan's step requests [default: http://127.0.0.1:8080/, where `volley serve`
    /// listens].
    #[arg(value_name = "URL", conflicts_with = "from_curl")]
    pub url: Option<String>,
    /// A curl command line to turn into the step (method, URL, headers, body), e.g. a browser's
    /// "Copy as cURL": --from-curl "$(xclip -o)" or --from-curl 'curl https://host/ -H …'.
    #[arg(long, value_name = "'curl …'")]
    pub from_curl: Option<String>,
    /// Where to write the plan; `-` writes it to stdout.
    #[arg(short = 'o', long, value_name = "PATH", default_value = "plan.toml")]
    pub output: PathBuf,
    /// Overwrite the file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Writes the starter plan; returns the exit code.
pub fn run(a: NewArgs) -> anyhow::Result<u8> {
    let invalid = |what: &str, why: String| volley::Error::Invalid {
        what: what.into(),
        why,
    };
    let request = match (&a.from_curl, &a.url) {
        (Some(command), _) => {
            curl::parse(command).map_err(|why| invalid("--from-curl", why.to_string()))?
        }
        (None, url) => {
            let url = url.as_deref().unwrap_or(DEFAULT_URL);
            CurlRequest::get(url).map_err(|why| invalid("URL", why.to_string()))?
        }
    };
    let text = starter_plan(&request, a.from_curl.as_deref());
    for note in &request.notes {
        eprintln!("note: {note}");
    }
    if a.output.as_os_str() == "-" {
        super::to_stdout(text.as_bytes())?;
        return Ok(super::EXIT_OK);
    }
    if a.output.exists() && !a.force {
        return Err(invalid(
            "--output",
            format!(
                "{} exists; pass --force to overwrite it, or -o another path",
                a.output.display()
            ),
        )
        .into());
    }
    volley::record::write_atomically(&a.output, text.as_bytes())?;
    let shown = a.output.display();
    eprintln!("wrote {shown}: one scenario ramping to 10 VUs over 35 s, one step, two thresholds");
    eprintln!("next:  volley check {shown}    # validates it and shows the request; sends nothing");
    eprintln!("       volley run {shown}      # --time-scale 0.1 runs it ten times shorter");
    Ok(super::EXIT_OK)
}
