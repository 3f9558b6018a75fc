//! Values a response made that later requests send back (an id in a path, a token in a
//! header): each becomes a variable extracted from the first response that held it and a
//! template where it is used.
//!
//! Only unambiguous matches: a value is offered by the first response holding it (a JSON
//! field whose name looks like an identifier, or a string of 8 characters or more without
//! spaces), unless a request had sent it before (then it is the client's own data); a value
//! that response holds in more than one field is not turned into a variable, and a note says
//! so. Matches are whole values: a path segment, a query value, a header value (or what follows
//! its auth scheme), a JSON leaf.

use std::collections::{HashMap, HashSet};

use crate::plan::import::text::{identifier, unique};

/// Names a variable cannot take: the built-in template variables and functions, and the
/// template language's own words.
const RESERVED: &[&str] = &[
    "vu",
    "iteration",
    "scenario",
    "vars",
    "env",
    "data",
    "rand_int",
    "choice",
    "uuid",
    "timestamp",
    "counter",
    "true",
    "false",
    "none",
    "loop",
    "range",
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
];

/// Where a response holds a value.
#[derive(Debug)]
struct Offer {
    /// The step whose response it is.
    step: usize,
    step_name: String,
    /// What that request was about (`tasks`), for naming `id`s.
    resource: String,
    /// The JSON pointers holding it in that response.
    at: Vec<String>,
    /// The field name (of the first pointer).
    key: String,
    /// Whether it was a number.
    number: bool,
}

/// The values offered by responses so far, and the variables made of them.
#[derive(Debug)]
pub(super) struct Reuse {
    /// Every value a request has sent.
    sent: HashSet<String>,
    offers: HashMap<String, Offer>,
    /// Value → (variable, whether the response had a number).
    vars: HashMap<String, (String, bool)>,
    names: Vec<String>,
    /// Values found ambiguous and said so.
    ambiguous: HashSet<String>,
    /// Per step: the variables its response gives (name, JSON pointer).
    pub extracts: Vec<Vec<(String, String)>>,
    /// What was turned into a variable, and what was not because it was ambiguous.
    pub notes: Vec<String>,
}

impl Reuse {
    /// For a recording of `steps` steps.
    pub fn new(steps: usize) -> Self {
        Self {
            sent: HashSet::new(),
            offers: HashMap::new(),
            vars: HashMap::new(),
            names: RESERVED.iter().map(|s| s.to_string()).collect(),
            ambiguous: HashSet::new(),
            extracts: vec![Vec::new(); steps],
            notes: Vec::new(),
        }
    }

    /// The variable (and whether its value was a number) for `token`, used at `site` of step
    /// `user`, when an earlier response made it unambiguously; the first use makes it.
    pub fn var_for(&mut self, token: &str, user: &str, site: &str) -> Option<(String, bool)> {
        if let Some(v) = self.vars.get(token) {
            return Some(v.clone());
        }
        let offer = self.offers.get(token)?;
        if offer.at.len() > 1 {
            if self.ambiguous.insert(token.to_string()) {
                self.notes.push(format!(
                    "{user}: {site} sends a value the response of {} holds in {} fields ({}): \
                     ambiguous, left as recorded",
                    offer.step_name,
                    offer.at.len(),
                    offer.at.join(", ")
                ));
            }
            return None;
        }
        let var = unique(var_name(&offer.key, &offer.resource), &mut self.names);
        self.extracts[offer.step].push((var.clone(), offer.at[0].clone()));
        self.notes.push(format!(
            "{user}: {site} sends {} of the response of {}: extracted there as `{var}`, \
             sent as {{{{ {var} }}}}",
            offer.at[0], offer.step_name
        ));
        let made = (var, offer.number);
        self.vars.insert(token.to_string(), made.clone());
        Some(made)
    }

    /// A value a request sent: from now on it is not offered by a response.
    pub fn sent(&mut self, token: &str) {
        if !self.sent.contains(token) {
            self.sent.insert(token.to_string());
        }
    }

    /// The values the response of step `step` offers.
    pub fn offer(
        &mut self,
        step: usize,
        step_name: &str,
        resource: &str,
        json: &serde_json::Value,
    ) {
        let mut leaves = Vec::new();
        collect(json, "", "", &mut leaves);
        for (pointer, key, token, number) in leaves {
            if self.sent.contains(&token) || self.vars.contains_key(&token) {
                continue;
            }
            match self.offers.get_mut(&token) {
                Some(o) if o.step == step => o.at.push(pointer),
                Some(_) => {}
                None => {
                    self.offers.insert(
                        token,
                        Offer {
                            step,
                            step_name: step_name.to_string(),
                            resource: resource.to_string(),
                            at: vec![pointer],
                            key,
                            number,
                        },
                    );
                }
            }
        }
    }
}

/// Whether a field name looks like it holds an identifier or a token.
fn id_like(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("id")
        || ["token", "key", "uuid", "session", "nonce"]
            .iter()
            .any(|w| k.contains(w))
}

/// The candidate leaves of `v` at `pointer` (field `key`): (pointer, key, value, is a number).
fn collect(
    v: &serde_json::Value,
    pointer: &str,
    key: &str,
    out: &mut Vec<(String, String, String, bool)>,
) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, item) in map {
                let escaped = k.replace('~', "~0").replace('/', "~1");
                collect(item, &format!("{pointer}/{escaped}"), k, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, &format!("{pointer}/{i}"), key, out);
            }
        }
        Value::Number(n) if (n.is_i64() || n.is_u64()) && id_like(key) => {
            out.push((pointer.to_string(), key.to_string(), n.to_string(), true));
        }
        Value::String(s) => {
            let long = s.len() >= 8 && s.len() <= 4096 && !s.contains(char::is_whitespace);
            if long || (id_like(key) && !s.is_empty() && !s.contains(char::is_whitespace)) {
                out.push((pointer.to_string(), key.to_string(), s.clone(), false));
            }
        }
        _ => {}
    }
}

/// A variable's name: the field's (`token`), an `id` named after its resource (`task_id`).
fn var_name(key: &str, resource: &str) -> String {
    let key = identifier(key);
    let name = if key == "id" && !resource.is_empty() {
        let singular = match resource.strip_suffix('s') {
            Some(s) if s.len() >= 3 && !s.ends_with('s') => s,
            _ => resource,
        };
        format!("{singular}_id")
    } else if key.is_empty() {
        "value".to_string()
    } else {
        key
    };
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v_{name}")
    } else {
        name
    }
}
