//! A plan read and validated but not yet prepared, and its preparation: the one place the
//! target is contacted before a run (gRPC schemas fetched by server reflection).

use std::path::PathBuf;

use super::{Ctx, ReadOptions, Schemas};
use crate::error::Error;
use crate::plan::file::PlanFile;
use crate::plan::{Plan, Target};
use crate::proto::reflection;

/// What is done to a compiled plan before it is handed out: its share of the test, and quick
/// mode's record of the request as the user gave it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Finish {
    /// `--segment`, with the whole test's hash.
    pub share: Option<(crate::schedule::Segment, String)>,
    /// Quick mode: the URL and request as given.
    pub quick: Option<crate::plan::quick::QuickSource>,
}

impl Finish {
    pub(super) fn apply(self, mut plan: Plan) -> Result<Plan, Error> {
        if let Some(q) = self.quick {
            q.decorate(&mut plan);
        }
        crate::plan::segment::apply_if(plan, self.share)
    }
}

/// A plan read and validated, not yet prepared: [`Draft::prepare`] makes it runnable. Every
/// user error that can be known without the network is found before a draft exists; preparing
/// is where the target is first contacted (gRPC schemas fetched by server reflection), and the
/// one place that happens.
#[derive(Debug)]
pub struct Draft(pub(super) DraftKind);

#[derive(Debug)]
pub(super) enum DraftKind {
    /// Nothing left to fetch.
    Ready(Box<Plan>),
    /// gRPC steps whose schemas come from the target by reflection.
    Reflect(Box<Pending>),
}

/// What preparing a plan that needs reflection keeps: the file and how it was read.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) file: PlanFile,
    pub(super) text: String,
    pub(super) path: PathBuf,
    pub(super) flags: Option<&'static [&'static str]>,
    pub(super) options: ReadOptions,
    pub(super) finish: Finish,
    /// The target the schemas are fetched from.
    pub(super) target: Target,
    /// The services called, in order of first use.
    pub(super) services: Vec<String>,
}

impl Draft {
    /// Whether preparing contacts the target (gRPC server reflection).
    pub fn needs_target(&self) -> bool {
        matches!(self.0, DraftKind::Reflect(_))
    }

    /// The runnable plan: fetches the gRPC schemas the plan takes from the target by server
    /// reflection (a network call, bounded by the target's timeout), then compiles the steps
    /// against them.
    pub fn prepare(self) -> Result<Plan, Error> {
        match self.0 {
            DraftKind::Ready(plan) => Ok(*plan),
            DraftKind::Reflect(p) => p.prepare(),
        }
    }
}

impl Pending {
    fn prepare(self) -> Result<Plan, Error> {
        let ctx = Ctx {
            text: &self.text,
            path: &self.path,
            flags: self.flags,
            options: &self.options,
        };
        let services: Vec<&str> = self.services.iter().map(String::as_str).collect();
        let schema = reflection::fetch_blocking(
            self.target.connect.client_for(true),
            &self.target.host_header,
            &services,
            self.target.timeout,
        )
        .map_err(|e| ctx.reflection_error(&self.file, e))?;
        let plan = ctx.plan(&self.file, self.target, &Schemas::Known(schema))?;
        self.finish.apply(plan)
    }
}
