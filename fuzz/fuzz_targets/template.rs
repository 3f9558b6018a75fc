//! Plan templates: the template text and the variables it renders with, through compilation
//! (syntax, undefined variables) and rendering with every built-in function.
//!
//! Input, as text (so seeds are easy to write): the template, then a NUL byte, then variables,
//! one `NAME=VALUE` a line; a name starting with `$` is an extracted variable (known to the
//! compiler, in the context as a string), any other name a plan variable (`vars.NAME`). A
//! template starting `json:` is compiled as a JSON body (the rest must be JSON; its string
//! leaves are templates). Without a NUL byte there are no variables.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use libfuzzer_sys::fuzz_target;
use minijinja::Value;
use volley::plan::Templates;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (source, var_lines) = text.split_once('\0').unwrap_or((text, ""));
    let mut vars = BTreeMap::new();
    let mut known = BTreeSet::new();
    let mut extracted = BTreeMap::new();
    for line in var_lines.lines() {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        match name.strip_prefix('$') {
            Some(name) => {
                known.insert(name.to_string());
                extracted.insert(name.to_string(), Value::from(value));
            }
            None => {
                vars.insert(name.to_string(), value.to_string());
            }
        }
    }
    let mut templates = Templates::new(vars, BTreeMap::new());
    let compiled = match source.strip_prefix("json:") {
        Some(json) => match serde_json::from_str::<serde_json::Value>(json) {
            Ok(value) => templates.json(&value, &known),
            Err(_) => return,
        },
        None => templates.text(source, &known),
    };
    let Ok(compiled) = compiled else {
        return;
    };
    let ctx = templates.context(u32::MAX - 1, u64::MAX, "fuzz", &extracted);
    let _ = templates.render(&compiled, &ctx);
    let ctx = templates.context(0, 0, "", &extracted);
    let mut out = Vec::new();
    let _ = templates.render_into(&compiled, &ctx, &mut out);
});
