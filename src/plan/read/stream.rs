//! A streaming step's `sse = { … }` → [`StreamStep`], each error located.

use std::time::Duration;

use super::Ctx;
use super::values::parse_duration;
use crate::error::Error;
use crate::plan::file::{SloFile, StepFile};
use crate::plan::stream::StreamStep;
use crate::proto::stream::Spec;
use crate::proto::stream::sse::{SseSpec, llm};
use crate::record::model::StreamSlo;

impl Ctx<'_> {
    /// The step's stream, when it is a streaming step.
    pub(super) fn step_stream(&self, st: &StepFile) -> Result<Option<StreamStep>, Error> {
        let Some(sse) = &st.sse else {
            return Ok(None);
        };
        let file = sse.get_ref();
        if st.grpc.is_some() {
            return Err(self.at(
                sse,
                "a gRPC step cannot be an SSE stream",
                Some("drop `sse`, or make the step an HTTP request with a `path`"),
            ));
        }
        let llm = match file.llm.as_deref() {
            None => None,
            Some(name) => Some(
                llm::Api::ALL
                    .iter()
                    .copied()
                    .find(|a| a.name() == name)
                    .ok_or_else(|| {
                        self.at(
                            sse,
                            format!("unknown llm API `{name}`"),
                            Some("llm = \"openai\""),
                        )
                    })?,
            ),
        };
        if file.max_messages == Some(0) {
            return Err(self.at(
                sse,
                "sse.max_messages is 0: the stream would end before its first message",
                Some("max_messages = 100, or leave it out to read every message"),
            ));
        }
        let slo = self.slo(sse, file.slo.as_ref(), llm.is_some())?;
        let spec = SseSpec {
            done: match file.done.as_deref() {
                None => SseSpec::default().done,
                Some("") => None,
                Some(text) => Some(text.as_bytes().into()),
            },
            max_messages: file.max_messages,
            llm,
        };
        Ok(Some(StreamStep {
            spec: Spec::Sse(spec),
            slo,
        }))
    }

    /// The objectives of `sse.slo`, in ms.
    fn slo<T>(
        &self,
        at: &toml::Spanned<T>,
        slo: Option<&SloFile>,
        llm: bool,
    ) -> Result<StreamSlo, Error> {
        let Some(slo) = slo else {
            return Ok(StreamSlo::default());
        };
        if slo.tpot.is_some() && !llm {
            return Err(self.at(
                at,
                "sse.slo.tpot (time per output token) needs LLM mode",
                Some("sse = { llm = \"openai\", slo = { tpot = \"50ms\" } }"),
            ));
        }
        let ms = |key: &str, text: &Option<String>| -> Result<Option<f64>, Error> {
            let Some(text) = text else { return Ok(None) };
            let d: Duration = parse_duration(text)
                .map_err(|e| self.at(at, format!("sse.slo.{key}: {e}"), None))?;
            if d.is_zero() {
                return Err(self.at(
                    at,
                    format!("sse.slo.{key} is 0: no stream could meet it"),
                    None,
                ));
            }
            Ok(Some(d.as_secs_f64() * 1e3))
        };
        Ok(StreamSlo {
            ttft_ms: ms("ttft", &slo.ttft)?,
            tpot_ms: ms("tpot", &slo.tpot)?,
            e2e_ms: ms("e2e", &slo.e2e)?,
        })
    }
}
