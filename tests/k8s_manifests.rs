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

/// Writes a plan with a text and a binary data file; returns its path.
fn plan(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/users.csv"), "id\n1\n2\n3\n").unwrap();
    std::fs::write(dir.join("data/blob.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    let plan = dir.join("checkout.toml");
    std::fs::write(
        &plan,
        "[target]\nbase_url = \"http://shop.example:8080\"\n\
         [data.users]\nfile = \"data/users.csv\"\nmode = \"unique\"\n\
         [data.blob]\nfile = \"data/blob.bin\"\n\
         [[scenario]]\nname = \"s\"\n[scenario.load]\n\
         profile = \"constant-vus\"\nvus = 30\nduration = \"1m\"\n\
         [[scenario.step]]\nname = \"a\"\npath = \"/{{ data.users.id }}\"\n",
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
