//! `volley k8s` manifests validated offline against the Kubernetes OpenAPI schemas of two
//! Kubernetes versions, with PyPI's `kubernetes-validate` (it bundles the schemas; `.ci/run`
//! installs it). Skipped, saying so, where the validator is not installed.

mod common;

use std::path::Path;
use std::process::Command;

use common::{run_volley, temp_dir};

/// The Kubernetes versions the manifests must validate against: an older supported one and a
/// recent one (Indexed Jobs are stable in both).
const VERSIONS: [&str; 2] = ["1.29.0", "1.36.0"];

fn validator() -> Option<Command> {
    let ok = Command::new("kubernetes-validate")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| Command::new("kubernetes-validate"))
}

/// Writes a plan with a data file (text) and a request body (binary); returns its path.
fn plan(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    // A row for each of the 30 VUs (mode = "unique").
    let rows: String = (1..=30).map(|id| format!("{id}\n")).collect();
    std::fs::write(dir.join("data/users.csv"), format!("id\n{rows}")).unwrap();
    std::fs::write(dir.join("data/blob.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    let plan = dir.join("checkout.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://shop.example:8080\"\n\
         [data.users]\nfile = \"data/users.csv\"\nmode = \"unique\"\n\
         [[scenario]]\nname = \"s\"\n[scenario.load]\n\
         profile = \"constant-vus\"\nvus = 30\nduration = \"1m\"\n\
         [[scenario.step]]\nname = \"a\"\npath = \"/{{ data.users.id }}\"\n\
         [[scenario.step]]\nname = \"b\"\nmethod = \"POST\"\npath = \"/blob\"\n\
         body_file = \"data/blob.bin\"\n",
    )
    .unwrap();
    plan.display().to_string()
}

#[test]
fn manifests_validate_against_two_kubernetes_versions() {
    let dir = temp_dir("k8s");
    let plan = plan(&dir);
    let (code, yaml, stderr) = run_volley(&[
        "k8s",
        &plan,
        "--workers",
        "3",
        "--image",
        "ghcr.io/example/volley:0.1.0",
        "--namespace",
        "load",
        "--token",
        "not-a-real-token",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    // What the validator cannot see: the shape the issue asks for.
    for needle in [
        "kind: \"ConfigMap\"",
        "kind: \"Secret\"",
        "kind: \"Service\"",
        "completionMode: \"Indexed\"",
        "parallelism: 3",
        "job-completion-index",
        "--segment",
        "$(VOLLEY_SEGMENT_INDEX)/3",
        "kubectl -n load cp",
    ] {
        assert!(yaml.contains(needle), "no `{needle}` in:\n{yaml}");
    }
    assert!(
        !yaml.contains("--token"),
        "the token travels in the environment, never on a command line:\n{yaml}"
    );
    let file = dir.join("manifests.yaml");
    std::fs::write(&file, &yaml).unwrap();

    let Some(_) = validator() else {
        eprintln!(
            "SKIPPED: kubernetes-validate is not installed (pip install kubernetes-validate; \
             .ci/run does); the manifests were not checked against the Kubernetes schemas"
        );
        return;
    };
    for version in VERSIONS {
        let out = validator()
            .unwrap()
            .args(["--strict", "--kubernetes-version", version])
            .arg(&file)
            .output()
            .expect("kubernetes-validate runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "Kubernetes {version}: {text}\n{yaml}");
        // One line per object: ConfigMap, Secret, Service, two Jobs, all valid.
        assert_eq!(
            text.matches("passed for resource").count(),
            5,
            "Kubernetes {version}: {text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn request_bodies_and_proto_files_travel_in_the_config_map() {
    let dir = temp_dir("k8s-files");
    std::fs::create_dir_all(dir.join("bodies")).unwrap();
    std::fs::create_dir_all(dir.join("protos/deps")).unwrap();
    std::fs::write(dir.join("bodies/order.json"), "{\"sku\": 1}").unwrap();
    std::fs::write(
        dir.join("protos/deps/common.proto"),
        "syntax = \"proto3\";\npackage deps;\nmessage Empty {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("protos/shop.proto"),
        "syntax = \"proto3\";\npackage shop;\nimport \"deps/common.proto\";\n\
         service Shop { rpc Ping(deps.Empty) returns (deps.Empty); }\n",
    )
    .unwrap();
    let plan = dir.join("shop.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://shop.example:8080\"\n\
         proto = [\"protos/shop.proto\"]\nimport_paths = [\"protos\"]\n\
         [[scenario]]\nname = \"s\"\n[scenario.load]\n\
         profile = \"constant-vus\"\nvus = 3\nduration = \"1m\"\n\
         [[scenario.step]]\nname = \"order\"\nmethod = \"POST\"\npath = \"/orders\"\n\
         body_file = \"bodies/order.json\"\n",
    )
    .unwrap();
    let (code, json, stderr) = run_volley(&[
        "k8s",
        plan.to_str().unwrap(),
        "--workers",
        "2",
        "--image",
        "volley:dev",
        "--token",
        "t",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let list: serde_json::Value = serde_json::from_str(&json).unwrap();
    let data = &list["items"][0]["data"];
    assert_eq!(data["bodies__order.json"], "{\"sku\": 1}");
    assert!(
        data["protos__shop.proto"]
            .as_str()
            .unwrap()
            .contains("service Shop")
    );
    assert!(
        data["protos__deps__common.proto"].as_str().is_some(),
        "{data}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Dockerfile cannot be built here (no Docker daemon, no registry: see its header), so what
/// can be checked without building it is: it builds the binary from what it copies, and the
/// image is the one the manifests run (entrypoint, binary, user, port, writable folder).
#[test]
fn the_dockerfile_makes_the_image_the_manifests_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docker = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    let has = |line: &str| docker.lines().any(|l| l.trim() == line);
    // Said where it is described: untested, and why.
    assert!(
        docker.contains("UNTESTED") && docker.contains("no Docker daemon"),
        "the Dockerfile's header says it is untested and why"
    );
    let docs = std::fs::read_to_string(root.join("docs/distributed.md")).unwrap();
    assert!(docs.contains("**The Dockerfile is untested**"));
    // The build: the binary of Cargo.toml's [[bin]], from the files the COPY lines bring in.
    assert!(docker.contains("cargo build --release --locked --bin volley"));
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(cargo.contains("[[bin]]\nname = \"volley\"\npath = \"src/main.rs\""));
    for copied in [
        "COPY Cargo.toml Cargo.lock ./",
        "COPY src ./src",
        "COPY proto ./proto",
    ] {
        assert!(has(copied), "{copied}");
    }
    // Every file the sources include at compile time is under src/ or proto/.
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (at, _) in text.match_indices("include_str!(\"") {
                let rel = text[at + 14..].split('"').next().unwrap();
                let included = path.parent().unwrap().join(rel).canonicalize().unwrap();
                assert!(
                    included.starts_with(root.join("src").canonicalize().unwrap())
                        || included.starts_with(root.join("proto").canonicalize().unwrap()),
                    "{}: includes {} which the Dockerfile does not copy",
                    path.display(),
                    included.display()
                );
            }
        }
    }
    // The image the manifests run.
    for line in [
        "COPY --from=build /src/target/release/volley /usr/local/bin/volley",
        "ENTRYPOINT [\"volley\"]",
        "USER 10001:10001",
        "WORKDIR /results",
        "EXPOSE 7070",
    ] {
        assert!(has(line), "no `{line}` in the Dockerfile");
    }
    let dir = temp_dir("k8s-image");
    let plan = plan(&dir);
    let (code, yaml, stderr) = run_volley(&[
        "k8s",
        &plan,
        "--workers",
        "2",
        "--image",
        "volley:dev",
        "--token",
        "t",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    for needle in [
        "runAsUser: 10001",
        "runAsGroup: 10001",
        "runAsNonRoot: true",
        "containerPort: 7070",
        "mountPath: \"/results\"",
        "readOnlyRootFilesystem: true",
        "- \"coordinate\"",
        "- \"run\"",
        "image: \"volley:dev\"",
    ] {
        assert!(yaml.contains(needle), "no `{needle}` in:\n{yaml}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `volley k8s` refuses what `volley check` would, without resolving the target's host (a
/// cluster's names resolve only inside it), and refuses resource flags Kubernetes would.
#[test]
fn a_plan_or_flags_kubernetes_would_fail_on_are_refused_here() {
    let dir = temp_dir("k8s-refused");
    let plan = plan(&dir);
    let text = std::fs::read_to_string(&plan).unwrap();
    let k8s = |plan: &str, more: &[&str]| {
        let mut args = vec!["k8s", plan, "--workers", "3", "--image", "volley:0.1"];
        args.extend_from_slice(more);
        run_volley(&args)
    };
    // Each broken plan: what it is, and what the error says.
    let broken = [
        (
            "/{{ data.users.id }}",
            "/{{ data.users.idd }}",
            "broken.toml:14:8",
        ),
        ("vus = 30", "vus = 2", "share 2/3 gets no VU"),
        (
            "http://shop.example:8080",
            "ftp://shop.example:8080",
            "broken.toml:2:12",
        ),
        ("vus = 30", "vsu = 30", "did you mean `vus`?"),
    ];
    for (from, to, says) in broken {
        let path = dir.join("broken.toml");
        std::fs::write(&path, text.replace(from, to)).unwrap();
        let (code, yaml, stderr) = k8s(path.to_str().unwrap(), &[]);
        assert_eq!(code, Some(2), "{to}: {stderr}");
        assert!(yaml.is_empty(), "{to}: no manifests: {yaml}");
        assert!(stderr.contains(says), "{to}: expected `{says}` in {stderr}");
    }
    for (flag, value) in [
        ("--cpu", "abc"),
        ("--memory", "1GB"),
        ("--keep-for", "soon"),
    ] {
        let (code, _, stderr) = k8s(&plan, &[flag, value]);
        assert_eq!(code, Some(2), "{flag} {value}: {stderr}");
        assert!(
            stderr.contains(&format!("'{value}' for '{flag}")),
            "{stderr}"
        );
    }
    let (code, yaml, stderr) = k8s(&plan, &["--cpu", "500m", "--memory", "1.5Gi"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        yaml.contains("cpu: \"500m\"") && yaml.contains("memory: \"1.5Gi\""),
        "{yaml}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
