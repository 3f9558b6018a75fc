//! `volley merge` (the shares' records → one results folder) and `volley k8s` (manifests).

use std::path::{Path, PathBuf};

use clap::Args;
use volley::distributed::k8s::{Manifests, name_for};
use volley::distributed::merge::{Input, merge};
use volley::run::output::ResultsFolder;

/// `volley merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The records of the shares (`run.json`, or the results folder holding it), one per share
    /// of the test (`--segment 0/N` … `N-1/N`).
    #[arg(required = true, value_name = "RECORD")]
    pub records: Vec<PathBuf>,
    /// The merged results folder (run.json, summary.txt, report.md, report.html); created, and
    /// refused if it holds a run.json already.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// No summary on stdout.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// `volley k8s`.
#[derive(Debug, Args)]
pub struct K8sArgs {
    /// The plan file; its data files travel with it (paths relative to its folder).
    pub plan: PathBuf,
    /// Generators: the Indexed Job's pods, each running one share of the test.
    #[arg(long, value_name = "N")]
    pub workers: u32,
    /// The container image with volley (see the Dockerfile).
    #[arg(long)]
    pub image: String,
    /// Namespace of every object (default: kubectl's current one).
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// Name of the test, the prefix of every object's name (default: volley-<plan name>).
    #[arg(long)]
    pub name: Option<String>,
    /// CPU each generator requests (a Kubernetes quantity).
    #[arg(long, default_value = "2", value_parser = volley::distributed::k8s::quantity)]
    pub cpu: String,
    /// Memory each generator requests (and is limited to).
    #[arg(long, default_value = "1Gi", value_parser = volley::distributed::k8s::quantity)]
    pub memory: String,
    /// How long the coordinator keeps the merged results for `kubectl cp` after the test.
    #[arg(long, default_value = "1h", value_name = "DURATION", value_parser = volley::plan::flags::duration_text)]
    pub keep_for: String,
    /// The shared token (default: $VOLLEY_TOKEN, else a random one).
    #[arg(long)]
    pub token: Option<String>,
    /// Print a JSON `List` instead of YAML.
    #[arg(long)]
    pub json: bool,
}

/// Merges the shares' records; returns the exit code of the merged run.
pub fn merge_run(a: MergeArgs) -> anyhow::Result<u8> {
    let mut inputs = Vec::with_capacity(a.records.len());
    for path in &a.records {
        let file = if path.is_dir() {
            path.join("run.json")
        } else {
            path.clone()
        };
        let record = volley::record::read_record(&file)?;
        inputs.push(Input {
            source: file.display().to_string(),
            record,
        });
    }
    let merged = merge(&inputs, false).map_err(|e| volley::Error::invalid("records", e))?;
    let mut outputs = volley::run::Outputs::none().with(ResultsFolder::exact(&a.out));
    super::export::start(&mut outputs, None, "volley merge")?;
    Ok(super::finish(&merged, &mut outputs, a.quiet).1)
}

/// Prints the manifests of a distributed test.
pub fn k8s(a: K8sArgs) -> anyhow::Result<u8> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|cause| volley::Error::File {
            action: volley::error::FileAction::Read,
            path: path.to_path_buf(),
            cause,
        })
    };
    let plan_text = String::from_utf8(read(&a.plan)?).map_err(|_| {
        volley::Error::invalid("plan", format!("{} is not UTF-8 text", a.plan.display()))
    })?;
    let file = volley::plan::read::parse(&plan_text, &a.plan)?;
    volley::distributed::k8s::check_plan(&plan_text, &a.plan, a.workers)?;
    let folder = a.plan.parent().unwrap_or(Path::new("."));
    let mut data = Vec::new();
    for relative in volley::distributed::k8s::shipped_files(&file, folder) {
        let bytes = read(&folder.join(&relative))?;
        data.push((relative, bytes));
    }
    let token = a
        .token
        .or_else(volley::distributed::k8s::token_from_env)
        .unwrap_or_else(volley::distributed::k8s::random_token);
    let manifests = Manifests {
        plan_name: "plan.toml".into(),
        plan_text,
        data,
        workers: a.workers,
        image: a.image,
        namespace: a.namespace,
        name: a.name.unwrap_or_else(|| name_for(&a.plan)),
        token,
        worker_cpu: a.cpu,
        worker_memory: a.memory,
        keep_for: a.keep_for,
    };
    let text = if a.json {
        manifests.json()
    } else {
        manifests.yaml()
    }
    .map_err(|e| volley::Error::invalid("manifests", e))?;
    super::emit(&text, None)?;
    Ok(super::EXIT_OK)
}
