//! Kubernetes manifests for a distributed test (`volley k8s`): the plan and its data files in
//! a ConfigMap, the shared token in a Secret, the coordinator as a Job behind a Service, and
//! the generators as an Indexed Job whose pod `i` runs share `i/N`.
//!
//! The command lines they start are fixed here ([`coordinator_args`], [`worker_args`]):
//!
//! ```text
//! volley coordinate PLAN --workers N --listen ADDR --out DIR --keep-for DURATION
//! volley run PLAN --join URL --segment i/N --out DIR
//! ```
//!
//! with the token in the environment (`VOLLEY_TOKEN`, from the Secret), never on a command
//! line where `ps` and the pod spec would show it.

use std::path::{Component, Path};

use serde_json::{Value, json};

mod input;
pub use input::{check_plan, quantity};

/// Port the coordinator listens on.
pub const COORDINATOR_PORT: u16 = 7070;
/// Where the ConfigMap (plan and data files) is mounted.
pub const PLAN_DIR: &str = "/etc/volley";
/// Where results are written (an emptyDir).
pub const RESULTS_DIR: &str = "/results";
/// The environment variable that carries the shared token.
pub const TOKEN_ENV: &str = "VOLLEY_TOKEN";
/// Most bytes a ConfigMap may hold (Kubernetes' limit is 1 MiB, object overhead included).
pub const CONFIGMAP_LIMIT: usize = 1_000_000;

/// What `volley k8s` was asked for.
#[derive(Debug, Clone)]
pub struct Manifests {
    /// The plan file's name inside the ConfigMap (`plan.toml`).
    pub plan_name: String,
    /// The plan's text.
    pub plan_text: String,
    /// Data files: (path relative to the plan's folder, contents).
    pub data: Vec<(String, Vec<u8>)>,
    /// Generators (the Indexed Job's completions and parallelism).
    pub workers: u32,
    /// The container image.
    pub image: String,
    /// Namespace of every object (`None`: the current one of `kubectl`).
    pub namespace: Option<String>,
    /// Name of the test: every object's name starts with it.
    pub name: String,
    /// The shared token.
    pub token: String,
    /// Each generator's CPU request (Kubernetes quantity, e.g. "2").
    pub worker_cpu: String,
    /// Each generator's memory request and limit (e.g. "1Gi").
    pub worker_memory: String,
    /// How long the coordinator keeps the merged results for `kubectl cp` (e.g. "1h").
    pub keep_for: String,
}

/// Why manifests cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum K8sError {
    /// A name Kubernetes would refuse.
    #[error(
        "`{0}` is not a valid name: lower-case letters, digits and `-`, starting with a letter, \
         at most 40 characters"
    )]
    Name(String),
    /// A data file outside the plan's folder.
    #[error(
        "data file `{0}` is outside the plan's folder: `volley k8s` ships the plan's folder, so \
         data files must be given relative to it, without `..`"
    )]
    DataPath(String),
    /// Too much for a ConfigMap.
    #[error(
        "the plan and its data files take {0} bytes, more than a ConfigMap holds (1 MiB): \
         mount them from a volume of your own"
    )]
    TooLarge(usize),
    /// No generators.
    #[error(
        "--workers must be between 1 and {}",
        crate::schedule::segment::MAX_SEGMENTS
    )]
    Workers,
    /// `--cpu` or `--memory` that Kubernetes would refuse.
    #[error(
        "`{0}` is not a Kubernetes quantity above 0: a number and an optional suffix, e.g. 2, \
         500m, 1.5, 512Mi, 1Gi, 1G (not 1GB)"
    )]
    Quantity(String),
}

/// The coordinator's command line (after `volley`).
pub fn coordinator_args(plan: &str, workers: u32, listen: &str, keep_for: &str) -> Vec<String> {
    [
        "coordinate",
        plan,
        "--workers",
        &workers.to_string(),
        "--listen",
        listen,
        "--out",
        RESULTS_DIR,
        "--keep-for",
        keep_for,
    ]
    .map(String::from)
    .to_vec()
}

/// A generator's command line (after `volley`); `segment` is `i/N` (in the manifests,
/// `$(VOLLEY_SEGMENT_INDEX)/N`, expanded by Kubernetes from the pod's completion index).
pub fn worker_args(plan: &str, join: &str, segment: &str) -> Vec<String> {
    [
        "run",
        plan,
        "--join",
        join,
        "--segment",
        segment,
        "--out",
        RESULTS_DIR,
    ]
    .map(String::from)
    .to_vec()
}

impl Manifests {
    /// The objects, in the order `kubectl apply` should create them.
    pub fn objects(&self) -> Result<Vec<Value>, K8sError> {
        if !valid_name(&self.name) {
            return Err(K8sError::Name(self.name.clone()));
        }
        if let Some(ns) = &self.namespace
            && !valid_name(ns)
        {
            return Err(K8sError::Name(ns.clone()));
        }
        if self.workers == 0 || self.workers > crate::schedule::segment::MAX_SEGMENTS {
            return Err(K8sError::Workers);
        }
        Ok(vec![
            self.config_map()?,
            self.secret(),
            self.service(),
            self.coordinator(),
            self.workers_job(),
        ])
    }

    /// The manifests as one YAML stream, with how to run the test and fetch its results.
    pub fn yaml(&self) -> Result<String, K8sError> {
        let mut out = self.instructions();
        for o in self.objects()? {
            out.push_str("---\n");
            out.push_str(&super::yaml::document(&o));
        }
        Ok(out)
    }

    /// The manifests as one JSON `List` (what `kubectl apply -f` also takes).
    pub fn json(&self) -> Result<String, K8sError> {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": self.objects()?});
        Ok(serde_json::to_string_pretty(&list).expect("JSON values serialise") + "\n")
    }

    fn ns_flag(&self) -> String {
        self.namespace
            .as_ref()
            .map_or_else(String::new, |ns| format!(" -n {ns}"))
    }

    /// Comment lines: apply, follow, fetch, clean up.
    fn instructions(&self) -> String {
        let (n, ns) = (&self.name, self.ns_flag());
        format!(
            "# volley: {plan} with {w} generators ({n})\n\
             # run:    kubectl{ns} apply -f THIS_FILE\n\
             # follow: kubectl{ns} logs -f job/{n}-coordinator\n\
             # fetch:  kubectl{ns} cp $(kubectl{ns} get pod -l job-name={n}-coordinator -o \
             jsonpath='{{.items[0].metadata.name}}'):{RESULTS_DIR} ./{n}-results\n\
             #         (the coordinator keeps the merged results for {keep} after the test)\n\
             # clean:  kubectl{ns} delete job,service,configmap,secret -l \
             app.kubernetes.io/instance={n}\n",
            plan = self.plan_name,
            w = self.workers,
            keep = self.keep_for,
        )
    }

    fn metadata(&self, suffix: &str, component: &str) -> Value {
        let mut m = json!({
            "name": format!("{}{suffix}", self.name),
            "labels": self.labels(component),
        });
        if let Some(ns) = &self.namespace {
            m["namespace"] = json!(ns);
        }
        m
    }

    fn labels(&self, component: &str) -> Value {
        json!({
            "app.kubernetes.io/name": "volley",
            "app.kubernetes.io/instance": self.name,
            "app.kubernetes.io/component": component,
        })
    }

    fn config_map(&self) -> Result<Value, K8sError> {
        let mut data = serde_json::Map::new();
        let mut binary = serde_json::Map::new();
        data.insert(self.plan_name.clone(), json!(self.plan_text));
        let mut size = self.plan_text.len();
        for (path, bytes) in &self.data {
            let key = data_key(path)?;
            size += bytes.len();
            match std::str::from_utf8(bytes) {
                Ok(text) => data.insert(key, json!(text)),
                Err(_) => binary.insert(key, json!(base64_of(bytes))),
            };
        }
        if size > CONFIGMAP_LIMIT {
            return Err(K8sError::TooLarge(size));
        }
        let mut cm = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": self.metadata("-plan", "plan"),
            "data": data,
        });
        if !binary.is_empty() {
            cm["binaryData"] = Value::Object(binary);
        }
        Ok(cm)
    }

    /// The ConfigMap as a volume: every key at its path relative to the plan.
    fn plan_volume(&self) -> Value {
        let mut items = vec![json!({"key": self.plan_name, "path": self.plan_name})];
        for (path, _) in &self.data {
            let key = data_key(path).unwrap_or_default();
            items.push(json!({"key": key, "path": path}));
        }
        json!({"name": "plan", "configMap": {"name": format!("{}-plan", self.name), "items": items}})
    }

    fn secret(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": self.metadata("-token", "token"),
            "type": "Opaque",
            "stringData": {"token": self.token},
        })
    }

    fn service(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata("-coordinator", "coordinator"),
            "spec": {
                "selector": {"job-name": format!("{}-coordinator", self.name)},
                "ports": [{"name": "coordinator", "port": COORDINATOR_PORT,
                           "targetPort": COORDINATOR_PORT, "protocol": "TCP"}],
            },
        })
    }

    fn coordinator(&self) -> Value {
        let plan = format!("{PLAN_DIR}/{}", self.plan_name);
        let listen = format!("0.0.0.0:{COORDINATOR_PORT}");
        let args = coordinator_args(&plan, self.workers, &listen, &self.keep_for);
        let mut container = self.container("coordinator", args, "500m", "512Mi");
        container["ports"] = json!([{"name": "coordinator", "containerPort": COORDINATOR_PORT}]);
        self.job("-coordinator", "coordinator", container, 1, false)
    }

    fn workers_job(&self) -> Value {
        let plan = format!("{PLAN_DIR}/{}", self.plan_name);
        let join = format!("http://{}-coordinator:{COORDINATOR_PORT}", self.name);
        let segment = format!("$(VOLLEY_SEGMENT_INDEX)/{}", self.workers);
        let args = worker_args(&plan, &join, &segment);
        let mut c = self.container("worker", args, &self.worker_cpu, &self.worker_memory);
        // Kubernetes expands $(VOLLEY_SEGMENT_INDEX) in the arguments from this variable: the
        // pod's completion index, 0 … N − 1 (as JOB_COMPLETION_INDEX).
        c["env"].as_array_mut().expect("env is a list").push(json!({
            "name": "VOLLEY_SEGMENT_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath":
                "metadata.annotations['batch.kubernetes.io/job-completion-index']"}},
        }));
        self.job("-workers", "worker", c, self.workers, true)
    }

    fn job(&self, suffix: &str, component: &str, container: Value, n: u32, indexed: bool) -> Value {
        let mut pod_spec = json!({
            "restartPolicy": "Never",
            "containers": [container],
            "volumes": [self.plan_volume(), {"name": "results", "emptyDir": {}}],
            "securityContext": {
                "runAsNonRoot": true,
                "runAsUser": 10001,
                "runAsGroup": 10001,
                "fsGroup": 10001,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
        });
        let mut spec = json!({
            "backoffLimit": 0,
            "completions": n,
            "parallelism": n,
            "template": {
                "metadata": {"labels": self.labels(component)},
                "spec": {},
            },
        });
        if indexed {
            spec["completionMode"] = json!("Indexed");
            // One generator per node where the cluster allows: generators that share a node
            // share its CPU and ports.
            pod_spec["topologySpreadConstraints"] = json!([{
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": self.labels(component)},
            }]);
        }
        spec["template"]["spec"] = pod_spec;
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": self.metadata(suffix, component),
            "spec": spec,
        })
    }

    /// A container: requests as asked, the memory limit equal to the request, no CPU limit
    /// (a throttled generator reports its own stalls as the target's latency).
    fn container(&self, name: &str, args: Vec<String>, cpu: &str, memory: &str) -> Value {
        json!({
            "name": name,
            "image": self.image,
            "args": args,
            "env": [{
                "name": TOKEN_ENV,
                "valueFrom": {"secretKeyRef": {"name": format!("{}-token", self.name),
                                                "key": "token"}},
            }],
            "resources": {
                "requests": {"cpu": cpu, "memory": memory},
                "limits": {"memory": memory},
            },
            "volumeMounts": [
                {"name": "plan", "mountPath": PLAN_DIR, "readOnly": true},
                {"name": "results", "mountPath": RESULTS_DIR},
            ],
            "securityContext": {
                "allowPrivilegeEscalation": false,
                "readOnlyRootFilesystem": true,
                "capabilities": {"drop": ["ALL"]},
            },
        })
    }
}

/// Whether `name` is a DNS-1123 label short enough for every object name made from it.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A test name from a plan file's name: `volley-` and its stem, made a valid name.
pub fn name_for(plan: &Path) -> String {
    let stem = plan.file_stem().map_or_else(
        || "plan".into(),
        |s| s.to_string_lossy().to_ascii_lowercase(),
    );
    let mut name: String = format!("volley-{stem}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    name.truncate(40);
    name.trim_end_matches('-').to_string()
}

/// The ConfigMap key of a data file: its relative path with `/` as `__` (keys hold no `/`).
fn data_key(path: &str) -> Result<String, K8sError> {
    let p = Path::new(path);
    let inside = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let key = path.trim_start_matches("./").replace('/', "__");
    let valid = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
    if !inside || !valid {
        return Err(K8sError::DataPath(path.to_string()));
    }
    Ok(key)
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The shared token from the environment (`$VOLLEY_TOKEN`), unless empty.
pub fn token_from_env() -> Option<String> {
    std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty())
}

/// A new random token: 256 bits from two v4 UUIDs, as hex.
pub fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The files a plan reads, relative to its folder, that travel with it in the ConfigMap: data
/// files, request bodies (`body_file` without templates in its path), `.proto` files and the
/// `.proto` files under `import_paths`.
pub fn shipped_files(file: &crate::plan::file::PlanFile, folder: &Path) -> Vec<String> {
    let mut files: Vec<String> = file
        .data
        .values()
        .map(|d| d.file.get_ref().clone())
        .collect();
    for sc in &file.scenarios {
        for st in &sc.steps {
            if let Some(body) = &st.body_file
                && !body.get_ref().contains("{{")
            {
                files.push(body.get_ref().clone());
            }
        }
    }
    files.extend(file.target.proto.iter().map(|p| p.get_ref().clone()));
    for dir in &file.target.import_paths {
        let mut found = Vec::new();
        protos_under(&folder.join(dir), Path::new(dir), &mut found);
        files.extend(found);
    }
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|f| seen.insert(f.trim_start_matches("./").to_string()));
    files
}

/// The `.proto` files under `dir` (as `relative/...`), recursively.
fn protos_under(dir: &Path, relative: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let (path, rel) = (e.path(), relative.join(e.file_name()));
        if path.is_dir() {
            protos_under(&path, &rel, out);
        } else if path.extension().is_some_and(|x| x == "proto") {
            out.push(rel.display().to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(workers: u32) -> Manifests {
        Manifests {
            plan_name: "plan.toml".into(),
            plan_text: "[target]\nbase_url = \"http://api:8080\"\n".into(),
            data: vec![("data/users.csv".into(), b"id\n1\n2\n".to_vec())],
            workers,
            image: "registry.example/volley:0.1.0".into(),
            namespace: Some("load".into()),
            name: "volley-plan".into(),
            token: "t0k3n".into(),
            worker_cpu: "2".into(),
            worker_memory: "1Gi".into(),
            keep_for: "1h".into(),
        }
    }

    #[test]
    fn workers_are_an_indexed_job_of_n_shares() {
        let objects = sample(8).objects().unwrap();
        let kinds: Vec<&str> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["ConfigMap", "Secret", "Service", "Job", "Job"]);
        let workers = &objects[4];
        assert_eq!(workers["spec"]["completionMode"], "Indexed");
        assert_eq!(workers["spec"]["parallelism"], 8);
        assert_eq!(workers["spec"]["completions"], 8);
        let c = &workers["spec"]["template"]["spec"]["containers"][0];
        let args: Vec<&str> = c["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "run",
                "/etc/volley/plan.toml",
                "--join",
                "http://volley-plan-coordinator:7070",
                "--segment",
                "$(VOLLEY_SEGMENT_INDEX)/8",
                "--out",
                "/results"
            ]
        );
        assert_eq!(c["resources"]["requests"]["cpu"], "2");
        assert!(
            !c.to_string().contains("t0k3n"),
            "the token only in the Secret"
        );
        assert_eq!(objects[1]["stringData"]["token"], "t0k3n");
        let cm = &objects[0];
        assert_eq!(cm["data"]["data__users.csv"], "id\n1\n2\n");
        assert!(sample(8).yaml().unwrap().contains("kubectl -n load cp "));
    }

    #[test]
    fn bad_inputs_are_refused() {
        let mut m = sample(2);
        m.data = vec![("../secret.csv".into(), Vec::new())];
        assert!(matches!(m.objects(), Err(K8sError::DataPath(_))));
        let mut m = sample(2);
        m.name = "Volley_Plan".into();
        assert!(matches!(m.objects(), Err(K8sError::Name(_))));
        let mut m = sample(0);
        m.workers = 0;
        assert!(matches!(m.objects(), Err(K8sError::Workers)));
        let mut m = sample(2);
        m.plan_text = "x".repeat(CONFIGMAP_LIMIT + 1);
        assert!(matches!(m.objects(), Err(K8sError::TooLarge(_))));
        assert_eq!(name_for(Path::new("/x/My Plan.toml")), "volley-my-plan");
    }
}
