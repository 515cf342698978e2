//! The summary a person reads first: per compiled frame (a user function, its resume functions
//! included, all ranks together), how many graphs, graph breaks and recompiles the run had and
//! what compiling it cost, worst first, with the finding tcfix has for each event: tlparse's index
//! page, plus the fix.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::frames::{FrameRef, user_function};
use super::join::Joined;
use super::runtime_rule::RUNTIME_RULES;
use super::{EventKind, Evidence};
use crate::fix::Safety;
use crate::rules::RULES;

/// One compiled frame's account.
#[derive(Debug, Default)]
pub struct Frame {
    /// `models/net.py:13` (the checked file when the log's path maps to one).
    pub place: String,
    pub function: String,
    pub compiles: usize,
    pub graphs: usize,
    pub breaks: usize,
    pub recompiles: usize,
    pub seconds: f64,
    /// `(file, line, code)` of the findings its events joined, each once (`file` as shown; a
    /// break inside a library function joins the finding at the call in the checked file).
    pub findings: Vec<(String, usize, &'static str)>,
    /// Events in no checked file: `path:line`.
    pub outside: Vec<String>,
    /// Why a compile of it failed (`fail_type: fail_reason`), each once.
    pub failures: Vec<String>,
}

/// The whole run: its frames, worst first, and its totals.
#[derive(Debug, Default)]
pub struct Summary {
    pub frames: Vec<Frame>,
    pub logs: usize,
    pub ranks: Vec<u32>,
    pub torch: Vec<String>,
    /// Whether the logs record compiles (a trace does; a text log has only the events).
    pub compiles_known: bool,
    /// Graph breaks and recompiles read, and how many of them lie in the checked files.
    pub events: usize,
    pub placed: usize,
    /// A warning per checked file the logs show other code of (`stale`).
    pub stale: Vec<String>,
}

/// A frame: the file as shown, the function's first line, its name.
type FrameKey = (String, usize, String);

/// Build the summary. `shown[i]` is how the i-th checked file given to `join` is displayed.
pub fn summarise(evidence: &Evidence, joined: &Joined, shown: &[String]) -> Summary {
    let mut frames: BTreeMap<FrameKey, Frame> = BTreeMap::new();
    // A frame is the function in the checked file when the join placed it, else the names the
    // log gives (a file outside the checked paths).
    let key_of = |place: Option<&FrameRef>, file: &str, line: usize, name: &str| match place {
        Some(place) => (shown[place.file].clone(), place.first_line, place.qualname.clone()),
        None => (file.to_string(), line, user_function(name).to_string()),
    };
    let mut by_frame_id: BTreeMap<(usize, Option<u32>, u64), FrameKey> = BTreeMap::new();
    for (compile, place) in evidence.compiles.iter().zip(&joined.compiles) {
        let key = key_of(place.as_ref(), &compile.co_filename, compile.co_firstlineno, &compile.co_name);
        if let Some(frame_id) = compile.frame_id {
            by_frame_id.insert((compile.log, compile.rank, frame_id), key.clone());
        }
        let frame = frames.entry(key).or_default();
        frame.compiles += 1;
        frame.graphs += usize::from(compile.graph);
        frame.seconds += compile.seconds;
        if let Some(failure) = &compile.failure
            && !frame.failures.contains(failure)
        {
            frame.failures.push(failure.clone());
        }
    }
    let (mut events, mut placed_events) = (0, 0);
    for (event, placed) in evidence.events.iter().zip(&joined.events) {
        if placed.duplicate {
            continue;
        }
        events += 1;
        placed_events += usize::from(placed.at.is_some());
        let innermost = event.frames.first();
        let key = match (&placed.frame, event.frame_id.and_then(|id| by_frame_id.get(&(event.log, event.rank, id)))) {
            (Some(place), _) => key_of(Some(place), "", 0, ""),
            (None, Some(key)) => key.clone(),
            (None, None) => match innermost {
                Some(logged) => key_of(None, &logged.file, logged.line, &logged.function),
                None => continue,
            },
        };
        let frame = frames.entry(key).or_default();
        match event.kind {
            EventKind::GraphBreak => frame.breaks += 1,
            EventKind::Recompile => frame.recompiles += 1,
        }
        match placed.at {
            Some((file, line)) => {
                for code in &placed.codes {
                    let finding = (shown[file].clone(), line, *code);
                    if !frame.findings.contains(&finding) {
                        frame.findings.push(finding);
                    }
                }
            }
            None => {
                if let Some(logged) = innermost {
                    let outside = format!("{}:{}", logged.file, logged.line);
                    if !frame.outside.contains(&outside) {
                        frame.outside.push(outside);
                    }
                }
            }
        }
    }
    for ((file, line, function), frame) in frames.iter_mut() {
        frame.place = format!("{file}:{line}");
        frame.function = function.clone();
    }
    let mut frames: Vec<Frame> = frames.into_values().collect();
    frames.sort_by(|a, b| {
        b.seconds.total_cmp(&a.seconds).then((b.breaks + b.recompiles).cmp(&(a.breaks + a.recompiles)))
    });
    frames.iter_mut().for_each(|frame| frame.findings.sort());
    let mut ranks: Vec<u32> =
        evidence.compiles.iter().filter_map(|c| c.rank).chain(evidence.events.iter().filter_map(|e| e.rank)).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let compiles_known = !evidence.compiles.is_empty();
    Summary {
        frames,
        logs: evidence.logs.len(),
        ranks,
        torch: evidence.torch_versions.clone(),
        compiles_known,
        events,
        placed: placed_events,
        stale: Vec::new(),
    }
}

impl Summary {
    /// A warning when the run's events all lie outside the checked files: a log of another
    /// project, or the wrong paths checked.
    pub fn warning(&self) -> Option<String> {
        (self.events > 0 && self.placed == 0).then(|| {
            format!(
                "none of the {} graph breaks and recompiles in the logs is in the checked files: check the paths \
                 the run used (its files are matched by their trailing path components)",
                self.events
            )
        })
    }

    /// The text form, printed above the findings.
    pub fn text(&self) -> String {
        let (breaks, recompiles, seconds, graphs) = self.totals();
        let mut out =
            format!("Runtime evidence ({}): {}\n", self.source(), self.counts(graphs, breaks, recompiles, seconds));
        for frame in &self.frames {
            let counts = self.counts(frame.graphs, frame.breaks, frame.recompiles, frame.seconds);
            let _ = writeln!(out, "  {} {}: {counts}", frame.place, frame.function);
            for (file, line, code) in &frame.findings {
                let same_file = frame.place.strip_prefix(file.as_str()).is_some_and(|rest| rest.starts_with(':'));
                let at = if same_file { format!("line {line}") } else { format!("{file}:{line}") };
                let _ = writeln!(out, "      {at}: {code} {}", fix_of(code));
            }
            for place in &frame.outside {
                let _ = writeln!(out, "      {place}: not in the checked files");
            }
            for failure in &frame.failures {
                let _ = writeln!(out, "      compile failed: {}", crate::diagnostic::snippet(failure));
            }
        }
        out
    }

    /// The Markdown form: a table, worst frame first.
    pub fn markdown(&self) -> String {
        let (breaks, recompiles, seconds, graphs) = self.totals();
        let mut out = format!(
            "### Runtime evidence\n\n{}: {}.\n\n\
             | Frame | Graphs | Breaks | Recompiles | Compile time | Findings |\n|---|---:|---:|---:|---:|---|\n",
            self.source(),
            self.counts(graphs, breaks, recompiles, seconds)
        );
        for frame in &self.frames {
            let findings: Vec<String> =
                frame.findings.iter().map(|(file, line, code)| format!("{code} (`{file}:{line}`)")).collect();
            let (graphs, time) = match self.compiles_known {
                true => (frame.graphs.to_string(), format!("{:.2} s", frame.seconds)),
                false => ("?".to_string(), "?".to_string()),
            };
            let _ = writeln!(
                out,
                "| `{}` `{}` | {graphs} | {} | {} | {time} | {} |",
                frame.place,
                frame.function,
                frame.breaks,
                frame.recompiles,
                findings.join(", ")
            );
        }
        out.push('\n');
        out
    }

    /// `5 graphs, 2 graph breaks, 1 recompile, 0.55 s compiling`; graphs and time only when the
    /// log records compiles (a text log does not).
    fn counts(&self, graphs: usize, breaks: usize, recompiles: usize, seconds: f64) -> String {
        let mut parts = Vec::new();
        if self.compiles_known {
            parts.push(format!("{graphs} {}", plural(graphs, "graph")));
        }
        parts.push(format!("{breaks} graph {}", plural(breaks, "break")));
        parts.push(format!("{recompiles} {}", plural(recompiles, "recompile")));
        if self.compiles_known {
            parts.push(format!("{seconds:.2} s compiling"));
        }
        parts.join(", ")
    }

    fn totals(&self) -> (usize, usize, f64, usize) {
        let sum = |field: fn(&Frame) -> usize| self.frames.iter().map(field).sum::<usize>();
        (sum(|f| f.breaks), sum(|f| f.recompiles), self.frames.iter().map(|f| f.seconds).sum(), sum(|f| f.graphs))
    }

    /// `1 log, torch 2.15.0` / `2 logs, ranks 0-1, torch 2.15.0`.
    fn source(&self) -> String {
        let mut parts = vec![format!("{} {}", self.logs, plural(self.logs, "log"))];
        if !self.ranks.is_empty() {
            let ranks: Vec<String> = self.ranks.iter().map(u32::to_string).collect();
            parts.push(format!("{} {}", plural(self.ranks.len(), "rank"), ranks.join(", ")));
        }
        if !self.torch.is_empty() {
            parts.push(format!("torch {}", self.torch.join(", ")));
        }
        parts.join(", ")
    }
}

/// What tcfix offers for a code: the rule's name and fix, or that no rule explains it.
fn fix_of(code: &str) -> String {
    if let Some(rule) = RULES.iter().find(|rule| rule.code == code) {
        let fix = if rule.fixes.contains(&Safety::Safe) {
            "fix: `--apply`"
        } else if rule.fixes.contains(&Safety::Unsafe) {
            "fix: `--apply --unsafe-fixes`"
        } else {
            "no automatic fix"
        };
        return format!("{}: {} ({fix})", rule.name, rule.summary);
    }
    match RUNTIME_RULES.iter().find(|rule| rule.code == code) {
        Some(rule) => format!("{}: no rule explains it (see the finding for Dynamo's reason)", rule.name),
        None => String::new(),
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { noun.to_string() } else { format!("{noun}s") }
}
