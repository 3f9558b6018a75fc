//! A streaming step's `sse = { … }`, or a streaming gRPC method and its `grpc_stream = { … }`,
//! → [`StreamStep`], each error located.

use std::time::Duration;

use super::Ctx;
use super::values::parse_duration;
use crate::error::Error;
use crate::plan::check::json_pointer;
use crate::plan::file::{GrpcStreamFile, SloFile, StepFile, WsFile};
use crate::plan::stream::StreamStep;
use crate::plan::{Body, Target, Text};
use crate::proto::grpc::GrpcMethod;
use crate::proto::stream::Spec;
use crate::proto::stream::grpc::{GrpcStreamSpec, Pace, ReplyIds};
use crate::proto::stream::ids::IdPath;
use crate::proto::stream::sse::{SseSpec, llm};
use crate::proto::stream::ws::WsSpec;
use crate::record::model::StreamSlo;

/// Most messages a streaming request side sends (each stream's are held by the connection until
/// its window lets them go).
const MAX_SENDS: u64 = 1_000_000;

/// A gRPC step's stream key.
const KEY: &str = "grpc_stream";

impl Ctx<'_> {
    /// The step's stream, when it is a streaming step: an SSE stream, or a call of a streaming
    /// gRPC `method` (none: not a gRPC step, or its schema is not known yet).
    pub(super) fn step_stream(
        &self,
        st: &StepFile,
        method: Option<&GrpcMethod>,
    ) -> Result<Option<StreamStep>, Error> {
        if let Some(ws) = &st.websocket {
            return self.ws_stream(st, ws).map(Some);
        }
        let Some(sse) = &st.sse else {
            return self.grpc_stream(st, method);
        };
        let file = sse.get_ref();
        if st.grpc.is_some() {
            return Err(self.at(
                sse,
                "a gRPC step cannot be an SSE stream",
                Some("drop `sse`, or make the step an HTTP request with a `path`"),
            ));
        }
        if let Some(g) = &st.grpc_stream {
            return Err(self.at(
                g,
                "`grpc_stream` is for gRPC steps; this step is an SSE stream",
                Some("drop `grpc_stream`"),
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
        let slo = self.slo(sse, file.slo.as_ref(), llm.is_some(), "sse")?;
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
            message: None,
        }))
    }

    /// A WebSocket step's stream (its message comes from the body: [`Self::upgrade`]).
    fn ws_stream(&self, st: &StepFile, ws: &toml::Spanned<WsFile>) -> Result<StreamStep, Error> {
        let file = ws.get_ref();
        let err = |what: &str, hint: &str| Err(self.at(ws, what, Some(hint)));
        if st.sse.is_some() || st.grpc.is_some() || st.grpc_stream.is_some() {
            return err(
                "a WebSocket step is neither SSE nor gRPC",
                "drop `sse`, `grpc` and `grpc_stream`, or `websocket`",
            );
        }
        if st
            .method
            .as_ref()
            .is_some_and(|m| !m.get_ref().eq_ignore_ascii_case("GET"))
        {
            return err(
                "a WebSocket opens with a GET (the upgrade); its body is the message",
                "drop `method`",
            );
        }
        let as_grpc = GrpcStreamFile {
            count: file.count,
            interval: file.interval.clone(),
            echo: file.echo,
            max_messages: file.max_messages,
            match_id: file.match_id.clone(),
            slo: None,
        };
        let paced = self.paced(ws, &as_grpc, (true, true), "websocket")?;
        let mut spec = WsSpec::new(Default::default(), file.binary);
        spec.count = paced.count;
        spec.pace = paced.pace;
        spec.max_messages = paced.max_messages;
        spec.match_id = self.match_path(ws, &as_grpc, true, "websocket")?;
        Ok(StreamStep {
            spec: Spec::Ws(spec),
            slo: self.slo(ws, file.slo.as_ref(), false, "websocket")?,
            message: None,
        })
    }

    /// What a streaming step's request needs: its sends within the request timeout, and the
    /// upgrade of a protocol that takes over the connection ([`Self::upgrade`]).
    pub(super) fn stream_request(
        &self,
        st: &StepFile,
        stream: &mut Option<StreamStep>,
        headers: &mut Vec<(String, Text)>,
        body: &mut Body,
        target: &Target,
    ) -> Result<(), Error> {
        if let Some(s) = stream
            && s.spec.send_span() >= target.timeout
        {
            return Err(self.at(
                &st.name,
                format!(
                    "step `{}` sends its messages over {} (interval × (count − 1)), not within the request timeout of {}: every stream would time out",
                    st.name.get_ref(),
                    humantime::format_duration(s.spec.send_span()),
                    humantime::format_duration(target.timeout)
                ),
                Some("raise [target] timeout, or send fewer messages or closer together"),
            ));
        }
        let protocol = target.connect.client.protocol();
        self.upgrade(st, stream, headers, body, protocol)?;
        self.per_message(st, stream, body)
    }

    /// A streaming request side whose message is a template renders it per message (with
    /// `seq`): the template leaves the request for the stream (a gRPC request keeps an empty
    /// message, never sent). Replies matched by id need such a template: a message sent as
    /// written carries one id every time.
    fn per_message(
        &self,
        st: &StepFile,
        stream: &mut Option<StreamStep>,
        body: &mut Body,
    ) -> Result<(), Error> {
        let Some(s) = stream.as_mut().filter(|s| s.spec.streams_request()) else {
            return Ok(());
        };
        if let Body::Text(t @ Text::Template(_)) | Body::Json(t @ Text::Template(_)) = body {
            s.message = Some(t.clone());
            *body = match s.spec {
                Spec::Grpc(_) => Body::Json(Text::Static("{}".into())),
                _ => Body::Empty,
            };
        }
        if s.spec.match_id().is_some() && s.message.is_none() {
            let at = st.websocket.as_ref().map(|w| w.span());
            let at = at.or(st.grpc_stream.as_ref().map(|g| g.span()));
            return Err(self.err(
                at,
                "`match` needs a message template that gives each message its id; this message is sent as written, with one id every time",
                Some("json = { id = \"{{ seq }}\", … }"),
            ));
        }
        Ok(())
    }

    /// A stream that upgrades its connection (WebSocket): its upgrade headers join the
    /// request's, and the body leaves the request to be the stream's message (a template's,
    /// rendered per message, by [`Self::per_message`]). It needs HTTP/1.1, and a text frame's
    /// body in UTF-8.
    fn upgrade(
        &self,
        st: &StepFile,
        stream: &mut Option<StreamStep>,
        headers: &mut Vec<(String, Text)>,
        body: &mut Body,
        protocol: crate::proto::client::Protocol,
    ) -> Result<(), Error> {
        let Some(StreamStep {
            spec: Spec::Ws(spec),
            ..
        }) = stream
        else {
            return Ok(());
        };
        let at = st.websocket.as_ref().expect("a WebSocket step has the key");
        if protocol.multiplexes() {
            return Err(self.at(
                at,
                format!(
                    "a WebSocket upgrades an HTTP/1.1 connection; this target speaks {} (WebSocket over HTTP/2 or HTTP/3, RFC 8441 and 9220, is not supported)",
                    protocol.name()
                ),
                Some("protocol = \"http1\" in [target]"),
            ));
        }
        let message = match std::mem::replace(body, Body::Empty) {
            Body::Empty => bytes::Bytes::new(),
            Body::Bytes(b) => b,
            Body::Text(Text::Static(t)) | Body::Json(Text::Static(t)) => t.into_bytes().into(),
            // Rendered per message ([`Self::per_message`]).
            templated @ (Body::Text(_) | Body::Json(_)) => {
                *body = templated;
                bytes::Bytes::new()
            }
        };
        if !spec.binary && std::str::from_utf8(&message).is_err() {
            return Err(self.at(
                at,
                "a text frame's message must be UTF-8; this body is not",
                Some("websocket = { binary = true }"),
            ));
        }
        spec.message = message;
        let upgrade = spec.upgrade_headers().into_iter();
        headers.extend(upgrade.map(|(n, v)| (n, Text::Static(v))));
        Ok(())
    }

    /// A gRPC step's stream: a call of a streaming method, as `grpc_stream` says.
    fn grpc_stream(
        &self,
        st: &StepFile,
        method: Option<&GrpcMethod>,
    ) -> Result<Option<StreamStep>, Error> {
        let Some(method) = method else {
            return match (&st.grpc_stream, &st.grpc) {
                (Some(g), None) => Err(self.at(
                    g,
                    "`grpc_stream` needs a gRPC step",
                    Some("grpc = \"package.Service/Method\" (a streaming method)"),
                )),
                // The schema comes from the target (reflection): checked once it has come.
                (Some(g), Some(_)) => {
                    self.paced(g, g.get_ref(), (true, true), KEY)?;
                    self.match_path(g, g.get_ref(), true, KEY).map(|_| None)
                }
                (None, _) => Ok(None),
            };
        };
        let (client, server) = (method.client_streaming(), method.server_streaming());
        let default = toml::Spanned::new(0..0, GrpcStreamFile::default());
        let file = match (&st.grpc_stream, client || server) {
            (None, false) => return Ok(None),
            (Some(g), false) => {
                return Err(self.at(
                    g,
                    format!("{} is a unary method: it has no stream", method.full_name()),
                    Some("drop `grpc_stream`, or call a streaming method"),
                ));
            }
            (Some(g), true) => g,
            // Quick mode and plans without the key: the defaults.
            (None, true) => &default,
        };
        let mut spec = self.paced(file, file.get_ref(), (client, server), KEY)?;
        let path = self.match_path(file, file.get_ref(), client && server, KEY)?;
        spec.match_id = path.map(|path| ReplyIds {
            path,
            method: std::sync::Arc::new(method.clone()),
        });
        let slo = self.slo(file, file.get_ref().slo.as_ref(), false, "grpc_stream")?;
        Ok(Some(StreamStep {
            spec: Spec::Grpc(spec),
            slo,
            message: None,
        }))
    }

    /// `grpc_stream`'s (or `websocket`'s, `key`) options for a stream whose sides stream as
    /// `(client, server)` say.
    fn paced<T>(
        &self,
        at: &toml::Spanned<T>,
        f: &GrpcStreamFile,
        (client, server): (bool, bool),
        key: &str,
    ) -> Result<GrpcStreamSpec, Error> {
        let err = |what: String, hint: &str| Err(self.at(at, what, Some(hint)));
        if !client && (f.count.is_some() || f.interval.is_some() || f.echo) {
            return err(
                format!(
                    "{KEY}.count, interval and echo pace a streaming request side; this method's client sends one message"
                ),
                "drop them (a server-streaming call sends its one message and reads the replies)",
            );
        }
        if f.echo && !server {
            return err(
                format!(
                    "{KEY}.echo waits for the reply to each message; a client-streaming method replies once"
                ),
                "interval = \"10ms\" to pace the messages instead",
            );
        }
        if f.echo && f.interval.is_some() {
            return err(
                format!("{key} has both `echo` and `interval`: pick one pace"),
                "echo = true (each after its reply) or interval = \"10ms\"",
            );
        }
        if f.count == Some(0) || f.max_messages == Some(0) {
            return err(
                format!("{key}.count and max_messages are at least 1"),
                "count = 10",
            );
        }
        if f.count.is_some_and(|n| n > MAX_SENDS) {
            return err(
                format!("{key}.count is at most {MAX_SENDS} messages a stream"),
                "count = 10000",
            );
        }
        let every = match &f.interval {
            None => Duration::ZERO,
            Some(text) => parse_duration(text)
                .map_err(|e| self.at(at, format!("{key}.interval: {e}"), None))?,
        };
        Ok(GrpcStreamSpec {
            client_streams: client,
            server_streams: server,
            count: f.count.unwrap_or(1),
            pace: if f.echo {
                Pace::AfterReply
            } else {
                Pace::Every(every)
            },
            max_messages: f.max_messages,
            match_id: None,
        })
    }

    /// `match`: the JSON path of the id replies share with the messages they answer, for a
    /// stream whose replies are round trips (`round_trips`).
    fn match_path<T>(
        &self,
        at: &toml::Spanned<T>,
        f: &GrpcStreamFile,
        round_trips: bool,
        key: &str,
    ) -> Result<Option<IdPath>, Error> {
        let Some(path) = &f.match_id else {
            return Ok(None);
        };
        if !round_trips {
            return Err(self.at(
                at,
                format!(
                    "{key}.match pairs replies with the messages they answer; this method's replies are not round trips"
                ),
                Some("drop `match` (it is for bidirectional streams)"),
            ));
        }
        let pointer = json_pointer(path)
            .map_err(|e| self.at(at, format!("{key}.match: {e}"), Some("match = \"$.id\"")))?;
        Ok(Some(IdPath::new(pointer)))
    }

    /// The objectives of `sse.slo` or `grpc_stream.slo`, in ms.
    fn slo<T>(
        &self,
        at: &toml::Spanned<T>,
        slo: Option<&SloFile>,
        llm: bool,
        key: &str,
    ) -> Result<StreamSlo, Error> {
        let Some(slo) = slo else {
            return Ok(StreamSlo::default());
        };
        if slo.tpot.is_some() && !llm {
            return Err(self.at(
                at,
                format!("{key}.slo.tpot (time per output token) needs LLM mode (SSE)"),
                Some("sse = { llm = \"openai\", slo = { tpot = \"50ms\" } }"),
            ));
        }
        let ms = |name: &str, text: &Option<String>| -> Result<Option<f64>, Error> {
            let Some(text) = text else { return Ok(None) };
            let d: Duration = parse_duration(text)
                .map_err(|e| self.at(at, format!("{key}.slo.{name}: {e}"), None))?;
            if d.is_zero() {
                return Err(self.at(
                    at,
                    format!("{key}.slo.{name} is 0: no stream could meet it"),
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
