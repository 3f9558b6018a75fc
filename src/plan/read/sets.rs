//! `--set NAME=VALUE` (a suite target's `vars`, `volley ab --plan` variants) must name a variable
//! the plan has: one its `[vars]` defines or a template reads. A name it has neither way is a typo
//! whose value would go nowhere, and the run would measure the plan unchanged.

use std::collections::BTreeSet;

use super::Ctx;
use crate::error::Error;
use crate::plan::file::PlanFile;
use crate::plan::set_key::SetKey;
use crate::plan::template::{Templates, has_template_syntax};

impl Ctx<'_> {
    /// The first `--set` of a variable that neither `[vars]` defines nor a template of the plan
    /// (`templates`, compiled; and `base_url`) reads, refused with the variables the plan has.
    pub(super) fn sets_read(&self, f: &PlanFile, templates: &Templates) -> Result<(), Error> {
        let url = f.target.base_url.get_ref();
        let mut url_templates = Templates::new(Default::default(), Default::default());
        if has_template_syntax(url) {
            let _ = url_templates.text(url, &BTreeSet::new());
        }
        let read = |name: &str| {
            let reads = |t: &Templates| t.read_vars().any(|n| n == name);
            f.vars.contains_key(name) || reads(templates) || reads(&url_templates)
        };
        let Some(name) = self.options.sets.iter().find_map(|(key, _)| match key {
            SetKey::Var(name) if !read(name) => Some(name),
            _ => None,
        }) else {
            return Ok(());
        };
        let has: BTreeSet<&str> = f
            .vars
            .keys()
            .map(String::as_str)
            .chain(templates.read_vars())
            .chain(url_templates.read_vars())
            .collect();
        let has: Vec<&str> = has.into_iter().collect();
        let has = if has.is_empty() {
            "it has none ([vars] is empty and no template reads vars.NAME)".to_string()
        } else {
            format!("its variables: {}", has.join(", "))
        };
        Err(Error::Invalid {
            what: format!("--set {name}"),
            why: format!(
                "the plan has no variable `{name}`: [vars] does not define it and no template \
                 reads vars.{name}, so its value would change nothing; {has}"
            ),
        })
    }
}
