//! Quick mode: one URL from flags → one run → summary and record.

use volley::plan::RunInput;

use super::args::QuickArgs;

/// Runs quick mode; returns the exit code.
pub fn run(args: QuickArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    let (quiet, repeat, tuning) = (args.quiet, args.repeat, args.tuning);
    let until = args.repeat_until.clone();
    let shown = volley::run::Shown::from_flags(quiet, args.no_tui);
    if args.join.join.is_some() {
        return join(args, argv);
    }
    let (json, out, export) = (args.json.clone(), args.out.clone(), args.export.clone());
    let watch = args.watch.specs()?;
    let mut plan = input_from(args)?.validate()?.prepare()?;
    plan.watch.extend(watch);
    let outputs = export.add_to(super::export::records(json, &out, repeat, &plan.name));
    let flags = super::runs::RunFlags {
        repeat,
        until,
        shown,
        tuning,
    };
    super::runs::run(&plan, argv, outputs, flags)
}

/// The run input quick mode's flags describe.
pub fn input_from(a: QuickArgs) -> anyhow::Result<RunInput> {
    let mut input = RunInput::new(a.url.unwrap_or_default());
    (input.method, input.headers, input.tags) = (a.method, a.headers, a.tags);
    input.secret_headers = a.secret_headers;
    a.results.apply_quick(&mut input);
    (input.body, input.body_file) = (a.body.unwrap_or_default(), a.body_file);
    input.sse = (a.sse || a.llm.is_some()).then(|| volley::plan::file::SseFile {
        llm: a.llm,
        ..Default::default()
    });
    (input.concurrency, input.rate_per_sec) = (a.connections, a.rate);
    (input.arrivals, input.seed) = (a.arrivals, a.seed);
    (input.duration, input.requests) = (a.duration, a.requests);
    input.warmup = a.warmup.unwrap_or_default();
    input.timeout = a.timeout;
    input.connect = a.connect.options();
    input.grpc = a.grpc.input();
    input.threads = a.threads;
    (input.max_header_bytes, input.max_body_bytes) = (a.max_header_size, a.max_body_size);
    input.segment = a.segment;
    Ok(input)
}

/// Quick mode as one generator of a distributed test (`--join`).
fn join(args: QuickArgs, argv: &volley::redact::Argv) -> anyhow::Result<u8> {
    let (quiet, segment, join) = (args.quiet, args.segment, args.join.clone());
    let outputs = super::export::records(args.json.clone(), &args.out, 1, "");
    super::coordinate::refuse_with_join(&args.export, args.repeat, !args.repeat_until.is_empty())?;
    let watch = args.watch.specs()?;
    let input = input_from(args)?;
    let load = |segment| -> anyhow::Result<volley::plan::Plan> {
        let mut input = input.clone();
        input.segment = Some(segment);
        let mut plan = input.validate()?.prepare()?;
        plan.watch.extend(watch.iter().cloned());
        Ok(plan)
    };
    super::coordinate::join(&join, segment, load, outputs, argv, quiet)
}
