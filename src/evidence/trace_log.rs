//! The TORCH_TRACE log (what tlparse reads): each event is a glog line, `V1123 19:53:36.338000
//! 6942 torch/_dynamo/utils.py:2473] {"kind": {...}, "frame_id": 0, "frame_compile_id": 0, ...}`,
//! and an event with `has_payload` is followed by its payload, one tab-indented line per line.
//!
//! Of the many event kinds, these matter here: the `dynamo_graph_break_reason` and
//! `recompile_reasons` artifacts, `compilation_metrics` (one per compile: code object, time,
//! whether it made a graph), and `dynamo_start` (the stack a compile started from, its file names
//! interned by `str` events); the `torch_version` artifact says who wrote the log. Everything else
//! is skipped without parsing its JSON, which keeps a 100 MB trace quick to read.

use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use rustc_hash::FxHashMap as HashMap;

use super::{Compile, Event, EventKind, Evidence, FrameStart, LoggedFrame, Origin, Problem, dynamo_message};

/// The fields of an event line that say which frame and process it belongs to.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    artifact: Option<Artifact>,
    #[serde(default)]
    compilation_metrics: Option<Metrics>,
    #[serde(default)]
    dynamo_start: Option<Start>,
    /// An interned file name (`{"str": ["/w/m.py", 4]}`), which `dynamo_start` names by number.
    #[serde(default, rename = "str")]
    interned: Option<(String, u64)>,
    #[serde(default)]
    rank: Option<u32>,
    #[serde(default)]
    frame_id: Option<u64>,
    #[serde(default)]
    frame_compile_id: Option<u64>,
}

#[derive(Deserialize)]
struct Artifact {
    name: String,
}

#[derive(Deserialize)]
struct Start {
    #[serde(default)]
    stack: Vec<StackEntry>,
}

#[derive(Deserialize)]
struct StackEntry {
    line: usize,
    name: String,
    filename: u64,
}

#[derive(Deserialize)]
struct Metrics {
    #[serde(default)]
    co_name: Option<String>,
    #[serde(default)]
    co_filename: Option<String>,
    #[serde(default)]
    co_firstlineno: Option<usize>,
    #[serde(default)]
    entire_frame_compile_time_s: Option<f64>,
    #[serde(default)]
    graph_op_count: Option<u64>,
    #[serde(default)]
    fail_type: Option<String>,
    #[serde(default)]
    fail_reason: Option<String>,
}

/// The event kinds read; any other line is only checked for the envelope's shape.
const WANTED: &[&str] = &["artifact", "compilation_metrics", "dynamo_start", "str"];

/// Read one log file into `evidence`. Errors only when the file cannot be read or holds no
/// Dynamo event at all (a foreign file); bad lines become problems.
pub fn read(log: &Path, evidence: &mut Evidence) -> Result<()> {
    let cannot = || format!("{}: cannot read the trace", log.display());
    let file = std::fs::File::open(log).with_context(cannot)?;
    // Read a line at a time: a trace of a long job is large, and most of it is skipped.
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut reading = Reading {
        log,
        log_index: evidence.logs.len(),
        rank_in_name: rank_in_file_name(log),
        problems_before: evidence.problems.len(),
        events_seen: 0,
        text_log_lines: false,
        pending: None,
        files: HashMap::default(),
    };
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).with_context(cannot)? == 0 {
            break;
        }
        number += 1;
        let ends = line.last() == Some(&b'\n');
        if ends {
            line.pop();
        }
        reading.line(&line, number, ends, evidence);
    }
    reading.finish_pending(evidence);
    if reading.events_seen == 0 {
        // Every line of a foreign file is a problem: say it once, for the file.
        evidence.problems.truncate(reading.problems_before);
        bail!("{}", foreign(log, reading.text_log_lines));
    }
    evidence.logs.push(log.to_path_buf());
    Ok(())
}

/// One log being read.
struct Reading<'a> {
    log: &'a Path,
    log_index: usize,
    rank_in_name: Option<u32>,
    problems_before: usize,
    events_seen: usize,
    /// Whether an early line is tagged like TORCH_LOGS text (for the hint when no event is found).
    text_log_lines: bool,
    /// An artifact read, waiting for its payload lines.
    pending: Option<Pending>,
    /// The log's interned file names, by number.
    files: HashMap<u64, String>,
}

struct Pending {
    name: String,
    envelope: Envelope,
    origin: Origin,
    payload: String,
}

impl Reading<'_> {
    fn line(&mut self, raw: &[u8], number: usize, ends: bool, evidence: &mut Evidence) {
        if raw.first() == Some(&b'\t') {
            // A payload line: kept for the artifact waiting for it, else skipped.
            if let Some(pending) = &mut self.pending {
                pending.payload.push_str(&String::from_utf8_lossy(&raw[1..]));
                pending.payload.push('\n');
            }
            return;
        }
        self.finish_pending(evidence);
        if raw.is_empty() {
            return;
        }
        if number <= 200 && !self.text_log_lines {
            let line = String::from_utf8_lossy(raw);
            self.text_log_lines = line.contains("[__graph_breaks]") || line.contains("[__recompiles]");
        }
        let Some(json) = event_json(raw) else {
            problem(evidence, self.log, number, not_an_event(raw));
            return;
        };
        self.events_seen += 1;
        if !first_key(json).is_some_and(|kind| WANTED.contains(&kind)) {
            return;
        }
        let mut envelope: Envelope = match std::str::from_utf8(json)
            .map_err(|err| err.to_string())
            .and_then(|text| serde_json::from_str(text).map_err(|err| err.to_string()))
        {
            Ok(envelope) => envelope,
            Err(err) => {
                let why = if ends { "corrupt event" } else { "truncated event (the log ends mid-line)" };
                problem(evidence, self.log, number, format!("{why}, skipped: {err}"));
                return;
            }
        };
        let origin = Origin { log: self.log.to_path_buf(), line: number };
        if let Some((file, number)) = envelope.interned.take() {
            self.files.insert(number, file);
        } else if let Some(start) = &envelope.dynamo_start {
            self.start(start, &envelope, number, evidence);
        } else if let Some(metrics) = &envelope.compilation_metrics {
            let rank = envelope.rank.or(self.rank_in_name);
            let mut compile = compile(metrics, rank, envelope.frame_id, envelope.frame_compile_id);
            compile.log = self.log_index;
            evidence.compiles.push(compile);
        } else if let Some(name) = envelope.artifact.as_ref().map(|artifact| artifact.name.clone()) {
            self.pending = Some(Pending { name, envelope, origin, payload: String::new() });
        }
    }

    /// Where a compile started: its stack, with the interned file names spelled out.
    fn start(&self, start: &Start, envelope: &Envelope, line: usize, evidence: &mut Evidence) {
        let (Some(frame_id), Some(frame_compile_id)) = (envelope.frame_id, envelope.frame_compile_id) else { return };
        let stack = start
            .stack
            .iter()
            .map(|entry| LoggedFrame {
                file: self.files.get(&entry.filename).cloned().unwrap_or_default(),
                line: entry.line,
                function: entry.name.clone(),
            })
            .collect();
        let rank = envelope.rank.or(self.rank_in_name);
        evidence.starts.push(FrameStart { log: self.log_index, line, rank, frame_id, frame_compile_id, stack });
    }

    /// The artifact waiting for its payload, now that it has all of it.
    fn finish_pending(&mut self, evidence: &mut Evidence) {
        let Some(Pending { name, envelope, origin, payload }) = self.pending.take() else { return };
        let rank = envelope.rank.or(self.rank_in_name);
        let event = |kind, frames, reason, gb_code, guarded| Event {
            kind,
            log: self.log_index,
            rank,
            thread: None,
            frame_id: envelope.frame_id,
            frame_compile_id: envelope.frame_compile_id,
            frames,
            reason,
            gb_code,
            guarded,
            origin,
        };
        match name.as_str() {
            "dynamo_graph_break_reason" => {
                evidence.quoted.extend(super::stale::quoted_lines(&payload));
                let message = dynamo_message::graph_break(&payload);
                evidence.events.push(event(
                    EventKind::GraphBreak,
                    message.frames,
                    message.reason,
                    message.gb_code,
                    None,
                ));
            }
            "recompile_reasons" => {
                evidence.quoted.extend(super::stale::quoted_lines(&payload));
                let message = dynamo_message::recompile(&recompile_text(&payload));
                evidence.events.push(event(EventKind::Recompile, message.frames, message.guard, None, message.guarded));
            }
            "torch_version" => {
                if let Some(version) = serde_json::from_str::<serde_json::Value>(&payload)
                    .ok()
                    .and_then(|value| value.get("pytorch_version")?.as_str().map(str::to_string))
                {
                    evidence.note_version(&version);
                }
            }
            _ => {}
        }
    }
}

/// The JSON object of an event line: after the glog prefix's `] `.
fn event_json(line: &[u8]) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // The prefix is short; an event's object starts right after it.
    let end = line.windows(3).take(400).position(|window| window == b"] {")?;
    Some(&line[end + 2..])
}

/// `{"artifact": ...` -> `artifact`, without parsing the object.
fn first_key(json: &[u8]) -> Option<&str> {
    let rest = json.strip_prefix(b"{\"")?;
    let end = rest.iter().position(|byte| *byte == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// A `recompile_reasons` payload is a JSON list of failures when there are several, and the
/// failure's plain text when there is one.
fn recompile_text(payload: &str) -> String {
    match serde_json::from_str::<Vec<String>>(payload) {
        Ok(failures) => failures.join("\n"),
        Err(_) => payload.to_string(),
    }
}

fn compile(metrics: &Metrics, rank: Option<u32>, frame_id: Option<u64>, frame_compile_id: Option<u64>) -> Compile {
    Compile {
        log: 0,
        rank,
        frame_id,
        frame_compile_id,
        co_name: metrics.co_name.clone().unwrap_or_default(),
        co_filename: metrics.co_filename.clone().unwrap_or_default(),
        co_firstlineno: metrics.co_firstlineno.unwrap_or_default(),
        seconds: metrics.entire_frame_compile_time_s.unwrap_or_default(),
        graph: metrics.graph_op_count.is_some(),
        failure: metrics.fail_type.as_ref().map(|kind| match &metrics.fail_reason {
            Some(reason) => format!("{kind}: {reason}"),
            None => kind.clone(),
        }),
    }
}

/// `dedicated_log_torch_trace_rank_1_az3xpudl.log` -> 1.
fn rank_in_file_name(log: &Path) -> Option<u32> {
    let name = log.file_name()?.to_str()?;
    let rest = &name[name.find("rank_")? + "rank_".len()..];
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

fn problem(evidence: &mut Evidence, log: &Path, line: usize, message: String) {
    evidence.problems.push(Problem { log: log.to_path_buf(), line: Some(line), message });
}

fn not_an_event(line: &[u8]) -> String {
    let shown: String = String::from_utf8_lossy(line).chars().take(60).collect();
    format!("not a trace event, skipped: `{shown}`")
}

/// Why a file is no TORCH_TRACE log, with a hint when it is the other kind of log.
fn foreign(log: &Path, text_log_lines: bool) -> String {
    if text_log_lines {
        format!(
            "{}: this is TORCH_LOGS text output, not a TORCH_TRACE log: read it with `--torch-logs {}`",
            log.display(),
            log.display()
        )
    } else {
        format!(
            "{}: not a TORCH_TRACE log (no line is a Dynamo event `... ] {{\"...\": ...}}`); write one with \
             `TORCH_TRACE=DIR python ...`",
            log.display()
        )
    }
}
