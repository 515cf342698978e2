//! What a finding carries from the run: seen (with its counts and cost) or not seen.

use std::collections::BTreeMap;
use std::fmt::Write;

/// A finding's runtime evidence, when a log was given.
#[derive(Clone, Debug, PartialEq)]
pub enum Runtime {
    /// Dynamo logged graph breaks or recompiles at the finding ("confirmed"; for a TCF100/TCF200
    /// finding, the events it stands for).
    Seen(Observed),
    /// The run compiled the function holding the finding, and logged nothing at it: the run
    /// may not have taken that path, so the finding stays.
    NotSeen,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observed {
    pub breaks: usize,
    pub recompiles: usize,
    /// Events per rank, for a distributed run (empty for one process).
    pub per_rank: BTreeMap<u32, usize>,
    /// The compile time of the compiles that broke or recompiled here, in seconds (0 when the
    /// log does not say: text logs).
    pub compile_seconds: f64,
    /// Dynamo's reasons, each once (`Data-dependent branching [GB0170]`, `guard self.flag == True failed`).
    pub reasons: Vec<String>,
    /// For recompiles: the attributes and arguments the failed guards check (`self.flag`).
    pub guarded: Vec<String>,
    /// For recompiles of code Dynamo resumed after a graph break: that break's line. Its guards
    /// check the values the break handed over, which exist only because of the break.
    pub resumed_after: Vec<usize>,
    /// For recompiles that exist only because of a graph break (`evidence::entered`): of a frame
    /// compiled apart because its caller broke (its guards tell apart the blocks or stages one
    /// graph would hold), or of code resumed after the break. That break's innermost line.
    pub caused_by_break: Vec<BreakLine>,
}

/// A graph break's line in a checked file.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BreakLine {
    pub filename: String,
    pub line: usize,
}

impl Observed {
    pub fn events(&self) -> usize {
        self.breaks + self.recompiles
    }

    /// What the run cost here, for `--sort cost`: compile time, then the count of events.
    pub fn cost(&self) -> (f64, usize) {
        (self.compile_seconds, self.events())
    }

    /// `2 graph breaks (rank 0: 1, rank 1: 1), 1 recompile, 0.28 s compiling`.
    pub fn counts(&self) -> String {
        let mut parts = Vec::new();
        if self.breaks > 0 {
            parts.push(count(self.breaks, "graph break", "graph breaks"));
        }
        if self.recompiles > 0 {
            parts.push(count(self.recompiles, "recompile", "recompiles"));
        }
        let mut out = parts.join(", ");
        if !self.per_rank.is_empty() {
            let ranks: Vec<String> =
                self.per_rank.iter().map(|(rank, events)| format!("rank {rank}: {events}")).collect();
            let _ = write!(out, " ({})", ranks.join(", "));
        }
        if self.compile_seconds > 0.0 {
            let _ = write!(out, ", {:.2} s compiling", self.compile_seconds);
        }
        out
    }
}

fn count(number: usize, one: &str, many: &str) -> String {
    format!("{number} {}", if number == 1 { one } else { many })
}

impl Runtime {
    /// The line the text report prints under the finding.
    pub fn describe(&self, runtime_only: bool) -> String {
        match self {
            Runtime::Seen(observed) if runtime_only => format!("seen at runtime, no rule: {}", observed.counts()),
            Runtime::Seen(observed) => format!("confirmed at runtime: {}", observed.counts()),
            Runtime::NotSeen => {
                "not seen in this run (the function was compiled; this path may not have run)".to_string()
            }
        }
    }

    /// The name of the state in the machine formats: `confirmed`, `runtime-only`, `not-seen`.
    pub fn state(&self, runtime_only: bool) -> &'static str {
        match self {
            Runtime::Seen(_) if runtime_only => "runtime-only",
            Runtime::Seen(_) => "confirmed",
            Runtime::NotSeen => "not-seen",
        }
    }

    pub fn observed(&self) -> Option<&Observed> {
        match self {
            Runtime::Seen(observed) => Some(observed),
            Runtime::NotSeen => None,
        }
    }
}

/// The evidence as the JSON and SARIF formats carry it (a finding's `runtime` key, a result's
/// `properties.runtime`).
#[derive(serde::Serialize)]
pub struct RuntimeRecord<'a> {
    /// `confirmed`, `runtime-only` or `not-seen`.
    pub state: &'static str,
    pub graph_breaks: usize,
    pub recompiles: usize,
    /// Events per rank (`{"0": 1, "1": 1}`), for a distributed run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_rank: BTreeMap<u32, usize>,
    pub compile_seconds: f64,
    pub reasons: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub guarded: &'a [String],
    #[serde(skip_serializing_if = "<[usize]>::is_empty")]
    pub resumed_after: &'a [usize],
    #[serde(skip_serializing_if = "<[BreakLine]>::is_empty")]
    pub caused_by_break: &'a [BreakLine],
}

impl Runtime {
    pub fn record(&self, runtime_only: bool) -> RuntimeRecord<'_> {
        let observed = self.observed();
        RuntimeRecord {
            state: self.state(runtime_only),
            graph_breaks: observed.map_or(0, |o| o.breaks),
            recompiles: observed.map_or(0, |o| o.recompiles),
            per_rank: observed.map(|o| o.per_rank.clone()).unwrap_or_default(),
            compile_seconds: observed.map_or(0.0, |o| (o.compile_seconds * 1000.0).round() / 1000.0),
            reasons: observed.map_or(&[], |o| &o.reasons),
            guarded: observed.map_or(&[], |o| &o.guarded),
            resumed_after: observed.map_or(&[], |o| &o.resumed_after),
            caused_by_break: observed.map_or(&[], |o| &o.caused_by_break),
        }
    }
}
