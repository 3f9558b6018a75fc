//! A search step's plan and the settings' words.

use super::*;

#[test]
fn the_validation_measures_its_whole_length_whatever_the_precision_asked() {
    let text = "[target]\nbase_url = \"http://127.0.0.1:8080\"\n\
                [precision]\np50 = \"3%\"\n\
                [[scenario]]\nname = \"s\"\n\
                [scenario.load]\nprofile = \"constant-vus\"\nvus = 2\nduration = \"10s\"\n\
                [[scenario.step]]\nname = \"get\"\npath = \"/\"\n";
    let base =
        crate::plan::read::read_str(text, std::path::Path::new("t.toml"), &Default::default())
            .and_then(|d| d.prepare())
            .unwrap();
    assert_eq!(base.precision.len(), 1);
    let s = Settings {
        slo_text: "p99<50ms".into(),
        slo: slo::parse("p99<50ms").unwrap(),
        model: LoadModel::Open,
        budget: Duration::from_secs(60),
        step: Duration::from_secs(6),
        warmup: Duration::from_secs(1),
        start: None,
        max: None,
        max_in_flight: 1000,
        resolution: RESOLUTION,
        validation_steps: VALIDATION_STEPS,
        threads: Some(1),
    };
    // A step stops once precise; the validation, 3 steps long, does not.
    assert_eq!(at_level(&base, 100.0, &s, false).precision, base.precision);
    let validation = at_level(&base, 100.0, &s, true);
    assert!(validation.precision.is_empty());
    assert_eq!(
        validation.scenarios[0].profile.duration(),
        Some(Duration::from_secs(19))
    );
    // Nor does a validation one step long (it stopped once precise before).
    let one = Settings {
        validation_steps: 1,
        ..s
    };
    assert!(at_level(&base, 100.0, &one, true).precision.is_empty());
    // The banner says the bracket and the validation; 0.8 s steps leave both unjudged.
    let (step, resolution) = (Duration::from_millis(800), 0.07);
    let short = Settings {
        step,
        resolution,
        ..one
    };
    assert!(short.banner(&base).contains(", to 7%, validation 1 step"));
    let unjudged = short.steady_unjudged().unwrap();
    assert!(unjudged.contains("nor is the validation run, 1 step, long enough"));
}
