//! How a scenario's VUs behave like users: a step's `think` (a duration or a distribution of
//! them), a scenario's `pace` and its cookie jar.

use std::time::Duration;

use super::Ctx;
use crate::error::Error;
use crate::plan::Profile;
use crate::plan::cookies::CookieJar;
use crate::plan::file::{ScenarioFile, StepFile, ThinkDistribution, ThinkFile};
use crate::plan::think::Think;

const THINK_HINT: &str = "think = \"100ms\", { uniform = [\"50ms\", \"150ms\"] }, \
                          { exponential = \"100ms\" } or { normal = [\"100ms\", \"20ms\"] }";

impl Ctx<'_> {
    /// The step's think time: none, fixed, or a distribution, its durations checked.
    pub(super) fn think(&self, st: &StepFile) -> Result<Think, Error> {
        let Some(spanned) = &st.think else {
            return Ok(Think::None);
        };
        let bad = |why: String| self.at_key(spanned, "think", why, Some(THINK_HINT));
        let d =
            |text: &str| super::parse_duration(text).map_err(|why| bad(format!("`{text}`: {why}")));
        let think = match spanned.get_ref() {
            ThinkFile::Fixed(text) => Think::Fixed(d(text)?),
            ThinkFile::Drawn(ThinkDistribution {
                uniform,
                exponential,
                normal,
            }) => match (uniform, exponential, normal) {
                (Some([lo, hi]), None, None) => {
                    let (lo, hi) = (d(lo)?, d(hi)?);
                    if hi < lo {
                        return Err(bad("uniform bounds go up: [low, high]".into()));
                    }
                    Think::Uniform(lo, hi)
                }
                (None, Some(mean), None) => Think::Exponential(d(mean)?),
                (None, None, Some([mean, sd])) => Think::Normal(d(mean)?, d(sd)?),
                _ => return Err(bad("give one distribution".into())),
            },
        };
        Ok(think)
    }

    /// The scenario's `pace`, for the closed model only.
    pub(super) fn pace(
        &self,
        sf: &ScenarioFile,
        profile: &Profile,
    ) -> Result<Option<Duration>, Error> {
        let Some(text) = &sf.pace else {
            return Ok(None);
        };
        if profile.is_open() {
            return Err(self.at(
                text,
                "`pace` spaces a VU's iterations in the closed model; an open profile's \
                 iterations already fall due on its schedule",
                Some("use a VU profile (constant-vus, ramping-vus, …) or drop `pace`"),
            ));
        }
        Ok(Some(self.duration(text, false)?).filter(|d| !d.is_zero()))
    }

    /// The scenario's cookie jar: on (emptied per iteration) unless it says otherwise; never in
    /// quick mode, which has no sessions.
    pub(super) fn cookies(&self, sf: &ScenarioFile) -> Result<CookieJar, Error> {
        if self.flags.is_some() {
            return Ok(CookieJar::Off);
        }
        let Some(value) = &sf.cookies else {
            return Ok(CookieJar::default());
        };
        CookieJar::parse(value.get_ref()).ok_or_else(|| {
            self.at(
                value,
                format!("cookies = {} is not a cookie jar mode", value.get_ref()),
                Some(
                    "cookies = true or \"iteration\" (a jar per VU, emptied per iteration), \
                     \"vu\" (kept across iterations) or false (none)",
                ),
            )
        })
    }
}
