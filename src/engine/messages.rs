//! A streaming step's messages rendered per send from its template (`seq`: the message's index
//! in its stream, from 0), for the protocol's tap ([`Messages`]): a WebSocket message as the
//! text rendered, a gRPC message encoded from the JSON rendered and framed. Rendering allocates
//! (a context and the message's bytes); a step whose message is written out does none of this.

use bytes::{BufMut, Bytes, BytesMut};

use crate::plan::Text;
use crate::plan::stream::SEQ;
use crate::plan::template::Templates;
use crate::proto::grpc::GrpcMethod;
use crate::proto::message::Messages;
use crate::proto::stream::ids::IdPath;

/// One stream's rendered messages.
pub(super) struct Rendered<'a> {
    /// The plan's templates.
    pub templates: &'a Templates,
    /// The message's template.
    pub template: &'a Text,
    /// The iteration's context.
    pub ctx: &'a minijinja::Value,
    /// The method, for a gRPC stream (its messages are protobuf).
    pub grpc: Option<&'a GrpcMethod>,
    /// Where each message's id lies, when replies are matched by id.
    pub ids: Option<&'a IdPath>,
    /// The rendered text, reused.
    pub text: Vec<u8>,
    /// A message could not be rendered (the attempt fails as `message_template`).
    pub failed: bool,
}

/// The rendered messages of `step`'s next stream, when its message is a template.
pub(super) fn rendered<'a>(
    templates: &'a Templates,
    step: &'a crate::plan::Step,
    ctx: Option<&'a minijinja::Value>,
) -> Option<Rendered<'a>> {
    let stream = step.stream.as_ref()?;
    Some(Rendered {
        templates,
        template: stream.message.as_ref()?,
        ctx: ctx?,
        grpc: step.grpc.as_deref(),
        ids: stream.spec.match_id(),
        text: Vec::new(),
        failed: false,
    })
}

impl Messages for Rendered<'_> {
    fn message(&mut self, k: u64) -> Option<(Bytes, Option<u64>)> {
        let message = self.render(k);
        self.failed |= message.is_none();
        message
    }
}

impl Rendered<'_> {
    fn render(&mut self, k: u64) -> Option<(Bytes, Option<u64>)> {
        let seq = std::collections::BTreeMap::from([(SEQ, k)]);
        let ctx = minijinja::value::merge_maps([minijinja::Value::from(seq), self.ctx.clone()]);
        self.text.clear();
        self.templates
            .render_into(self.template, &ctx, &mut self.text)
            .ok()?;
        let id = self.ids.and_then(|path| path.of_text(&self.text));
        let wire = match self.grpc {
            None => Bytes::copy_from_slice(&self.text),
            Some(method) => {
                let json = std::str::from_utf8(&self.text).ok()?;
                let message = method.encode_json(json).ok()?;
                let mut framed = BytesMut::with_capacity(5 + message.len());
                framed.put_u8(0);
                framed.put_u32(u32::try_from(message.len()).ok()?);
                framed.put_slice(&message);
                framed.freeze()
            }
        };
        Some((wire, id))
    }
}
