//! The TORCH_TRACE log (what tlparse reads): each event is a glog line, `V1123 19:53:36.338000
//! 6942 torch/_dynamo/utils.py:2473] {"kind": {...}, "frame_id": 0, "frame_compile_id": 0, ...}`,
//! and an event with `has_payload` is followed by its payload, one tab-indented line per line.
//!
//! Of the many event kinds, three matter here: the `dynamo_graph_break_reason` and
//! `recompile_reasons` artifacts, and `compilation_metrics` (one per compile: code object, time,
//! whether it made a graph); the `torch_version` artifact says who wrote the log. Everything else
//! is skipped without parsing its JSON, which keeps a 100 MB trace quick to read.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::{Compile, Event, EventKind, Evidence, Origin, Problem, dynamo_message};

/// The fields of an event line that say which frame and process it belongs to.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    artifact: Option<Artifact>,
    #[serde(default)]
    compilation_metrics: Option<Metrics>,
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
const WANTED: &[&str] = &["artifact", "compilation_metrics"];

/// Read one log file into `evidence`. Errors only when the file cannot be read or holds no
/// Dynamo event at all (a foreign file); bad lines become problems.
pub fn read(log: &Path, evidence: &mut Evidence) -> Result<()> {
    let bytes = std::fs::read(log).with_context(|| format!("{}: cannot read the trace", log.display()))?;
    let rank_in_name = rank_in_file_name(log);
    let log_index = evidence.logs.len();
    let lines: Vec<&[u8]> = bytes.split(|byte| *byte == b'\n').collect();
    let ends_cleanly = bytes.last().is_none_or(|byte| *byte == b'\n');
    let mut events_seen = 0usize;
    let problems_before = evidence.problems.len();
    let mut index = 0;
    while index < lines.len() {
        let raw = lines[index];
        let number = index + 1;
        index += 1;
        if raw.is_empty() || raw[0] == b'\t' {
            // An empty line, or the payload of an event not read.
            continue;
        }
        let Some(json) = event_json(raw) else {
            problem(evidence, log, number, not_an_event(raw));
            continue;
        };
        events_seen += 1;
        let kind = first_key(json);
        // Payload lines follow the event; gather them only for the events read.
        let payload_end = (index..lines.len()).find(|&at| !lines[at].starts_with(b"\t")).unwrap_or(lines.len());
        let payload_lines = &lines[index..payload_end];
        index = payload_end;
        if !kind.is_some_and(|kind| WANTED.contains(&kind)) {
            continue;
        }
        let envelope: Envelope = match std::str::from_utf8(json)
            .map_err(|err| err.to_string())
            .and_then(|text| serde_json::from_str(text).map_err(|err| err.to_string()))
        {
            Ok(envelope) => envelope,
            Err(err) => {
                let last = number == lines.len() || (number == lines.len() - 1 && lines[number].is_empty());
                let why =
                    if last && !ends_cleanly { "truncated event (the log ends mid-line)" } else { "corrupt event" };
                problem(evidence, log, number, format!("{why}, skipped: {err}"));
                continue;
            }
        };
        let rank = envelope.rank.or(rank_in_name);
        let origin = Origin { log: log.to_path_buf(), line: number };
        if let Some(metrics) = envelope.compilation_metrics {
            let mut compile = compile(metrics, rank, envelope.frame_id, envelope.frame_compile_id);
            compile.log = log_index;
            evidence.compiles.push(compile);
            continue;
        }
        let Some(artifact) = envelope.artifact else { continue };
        let payload = payload(payload_lines);
        match artifact.name.as_str() {
            "dynamo_graph_break_reason" => {
                let message = dynamo_message::graph_break(&payload);
                evidence.events.push(Event {
                    kind: EventKind::GraphBreak,
                    log: log_index,
                    rank,
                    thread: None,
                    frame_id: envelope.frame_id,
                    frame_compile_id: envelope.frame_compile_id,
                    frames: message.frames,
                    reason: message.reason,
                    gb_code: message.gb_code,
                    guarded: None,
                    origin,
                });
            }
            "recompile_reasons" => {
                let message = dynamo_message::recompile(&recompile_text(&payload));
                evidence.events.push(Event {
                    kind: EventKind::Recompile,
                    log: log_index,
                    rank,
                    thread: None,
                    frame_id: envelope.frame_id,
                    frame_compile_id: envelope.frame_compile_id,
                    frames: message.frames,
                    reason: message.guard,
                    gb_code: None,
                    guarded: message.guarded,
                    origin,
                });
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
    if events_seen == 0 {
        // Every line of a foreign file is a problem: say it once, for the file.
        evidence.problems.truncate(problems_before);
        bail!("{}", foreign(log, &lines));
    }
    evidence.logs.push(log.to_path_buf());
    Ok(())
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

/// A payload's lines, each without its leading tab.
fn payload(lines: &[&[u8]]) -> String {
    let mut text = String::new();
    for line in lines {
        text.push_str(&String::from_utf8_lossy(&line[1..]));
        text.push('\n');
    }
    text
}

/// A `recompile_reasons` payload is a JSON list of failures when there are several, and the
/// failure's plain text when there is one.
fn recompile_text(payload: &str) -> String {
    match serde_json::from_str::<Vec<String>>(payload) {
        Ok(failures) => failures.join("\n"),
        Err(_) => payload.to_string(),
    }
}

fn compile(metrics: Metrics, rank: Option<u32>, frame_id: Option<u64>, frame_compile_id: Option<u64>) -> Compile {
    Compile {
        log: 0,
        rank,
        frame_id,
        frame_compile_id,
        co_name: metrics.co_name.unwrap_or_default(),
        co_filename: metrics.co_filename.unwrap_or_default(),
        co_firstlineno: metrics.co_firstlineno.unwrap_or_default(),
        seconds: metrics.entire_frame_compile_time_s.unwrap_or_default(),
        graph: metrics.graph_op_count.is_some(),
        failure: metrics.fail_type.map(|kind| match metrics.fail_reason {
            Some(reason) => format!("{kind}: {reason}"),
            None => kind,
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
fn foreign(log: &Path, lines: &[&[u8]]) -> String {
    let text_log = lines.iter().take(200).any(|line| {
        let line = String::from_utf8_lossy(line);
        line.contains("[__graph_breaks]") || line.contains("[__recompiles]")
    });
    if text_log {
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
