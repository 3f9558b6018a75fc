//! Ladder presets from report 002: smoke, full and saturation.

use std::time::Duration;

/// One preset phase: VUs held for a duration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PresetPhase {
    /// VUs.
    pub vus: u32,
    /// How long, before `--time-scale`.
    pub duration: Duration,
}

const fn phase(vus: u32, secs: u64) -> PresetPhase {
    PresetPhase {
        vus,
        duration: Duration::from_secs(secs),
    }
}

/// The phases of a named preset, if it exists.
pub fn preset(name: &str) -> Option<&'static [PresetPhase]> {
    const SMOKE: &[PresetPhase] = &[phase(10, 30)];
    const FULL: &[PresetPhase] = &[
        phase(10, 120),
        phase(50, 120),
        phase(100, 120),
        phase(200, 300),
    ];
    const SATURATION: &[PresetPhase] = &[
        phase(10, 120),
        phase(50, 120),
        phase(100, 120),
        phase(200, 120),
        phase(500, 120),
        phase(1000, 120),
        phase(2000, 120),
    ];
    match name {
        "smoke" => Some(SMOKE),
        "full" => Some(FULL),
        "saturation" => Some(SATURATION),
        _ => None,
    }
}

/// The preset names.
pub const NAMES: [&str; 3] = ["smoke", "full", "saturation"];
