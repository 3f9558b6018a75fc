//! Which headers of a plan are secret: the usual ones, `[target] secret_headers` and
//! `--secret-header`; and which plan variables feed them, so that `--set NAME=VALUE` is
//! redacted in the recorded command line too.

use super::Ctx;
use crate::error::Error;
use crate::plan::file::PlanFile;
use crate::plan::header::is_header_name;
use crate::redact::Secrets;

impl Ctx<'_> {
    pub(super) fn secrets(
        &self,
        f: &PlanFile,
        vars: &std::collections::BTreeMap<String, String>,
    ) -> Result<Secrets, Error> {
        let marked = f.target.secret_headers.as_ref();
        if let Some(list) = marked {
            if let Some(bad) = list.get_ref().iter().find(|n| !is_header_name(n)) {
                return Err(self.at(
                    list,
                    format!("`{bad}` is not a header name"),
                    Some("secret_headers = [\"X-Api-Key\"]"),
                ));
            }
        }
        if let Some(bad) = self
            .options
            .secret_headers
            .iter()
            .find(|n| !is_header_name(n))
        {
            return Err(Error::Invalid {
                what: "--secret-header".into(),
                why: format!("`{bad}` is not a header name"),
            });
        }
        let mut secrets = Secrets::new(
            marked
                .map(|l| l.get_ref().as_slice())
                .unwrap_or_default()
                .iter()
                .chain(&self.options.secret_headers),
        );
        // A variable (the plan's or --set's) a secret header's template mentions is a secret itself (a token given
        // with --set). Mentioning is textual: redacting one value too many is harmless.
        let sources: Vec<&str> = f
            .scenarios
            .iter()
            .flat_map(|sc| &sc.steps)
            .flat_map(|st| &st.headers)
            .filter(|(name, _)| secrets.is_secret(name))
            .map(|(_, value)| value.get_ref().as_str())
            .collect();
        for var in vars.keys() {
            if sources.iter().any(|s| s.contains(var.as_str())) {
                secrets.add_var(var);
            }
        }
        Ok(secrets)
    }
}
