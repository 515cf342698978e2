//! Runtime evidence: what torch.compile actually did in a run, read from Dynamo's own logs
//! (`TORCH_TRACE` directories, `TORCH_LOGS="graph_breaks,recompiles"` text), mapped to the checked
//! files and joined to the findings. Static analysis guesses where the graph breaks; the log says.
//!
//! Reading never fails on a bad line: unknown event kinds are skipped, a corrupt line becomes a
//! [`Problem`] with its position and the rest of the log is still read. Only a file that is no
//! Dynamo log at all (or cannot be read) is an error.

pub mod attach;
pub mod dynamo_message;
pub mod entered;
pub mod frames;
pub mod join;
pub mod observed;
pub mod paths;
pub mod runtime_rule;
pub mod stale;
pub mod summary;
pub mod text_log;
pub mod trace_log;

use std::path::{Path, PathBuf};

pub use attach::attach;
pub use join::{CheckedFile, Joined, join};
pub use observed::{Observed, Runtime};

/// The torch versions whose logs tcfix was tested on (major.minor).
pub const TESTED_TORCH: &[&str] = &["2.15"];

/// A graph break or a recompile, as Dynamo logged it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    GraphBreak,
    Recompile,
}

/// A place in user code, as the log names it (a path from the machine that ran it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoggedFrame {
    pub file: String,
    pub line: usize,
    pub function: String,
}

/// One graph break or recompile.
#[derive(Clone, Debug)]
pub struct Event {
    pub kind: EventKind,
    /// The log it was read from (index into `Evidence::logs`): frame ids count per process.
    pub log: usize,
    /// The process that logged it in a distributed run; `None` for a single process.
    pub rank: Option<u32>,
    /// In a text log, which several processes may share: glog's thread id of the lines.
    pub thread: Option<String>,
    /// Dynamo's frame id and that frame's compile number (`[3/1]`): 0 is the first compile,
    /// more is a recompile.
    pub frame_id: Option<u64>,
    pub frame_compile_id: Option<u64>,
    /// The user frames, innermost first: the break's line and the frames that called it, or the
    /// source line a failed guard came from.
    pub frames: Vec<LoggedFrame>,
    /// Dynamo's reason in one line ("Data-dependent branching", "self.flag == True").
    pub reason: String,
    /// The graph-break code Dynamo's message links to (`GB0170`).
    pub gb_code: Option<String>,
    /// For a recompile: the name the failed guard checks (`self.flag`, `x`).
    pub guarded: Option<String>,
    /// Where in which log it was read, for messages.
    pub origin: Origin,
}

/// The Python stack a frame was entered from when Dynamo started compiling it (`dynamo_start`),
/// outermost first: the callers' current lines, the frame itself last (at its first line).
#[derive(Clone, Debug)]
pub struct FrameStart {
    pub log: usize,
    /// Its line in the log: frame ids start again in each phase a log holds (`torch._dynamo.reset`),
    /// so a compile's events go with the start nearest them.
    pub line: usize,
    pub rank: Option<u32>,
    pub frame_id: u64,
    pub frame_compile_id: u64,
    pub stack: Vec<LoggedFrame>,
}

/// `log:line`.
#[derive(Clone, Debug)]
pub struct Origin {
    pub log: PathBuf,
    pub line: usize,
}

/// One compile of one frame, from a `compilation_metrics` event.
#[derive(Clone, Debug)]
pub struct Compile {
    /// The log it was read from (index into `Evidence::logs`).
    pub log: usize,
    pub rank: Option<u32>,
    pub frame_id: Option<u64>,
    pub frame_compile_id: Option<u64>,
    /// The code object compiled: `forward`, or a resume function `torch_dynamo_resume_in_forward_at_15`.
    pub co_name: String,
    pub co_filename: String,
    pub co_firstlineno: usize,
    /// `entire_frame_compile_time_s`.
    pub seconds: f64,
    /// Whether it produced a graph (`graph_op_count` set).
    pub graph: bool,
    /// `fail_type` / `fail_reason`, when the compile failed.
    pub failure: Option<String>,
}

/// A line or file that could not be read as evidence; the rest was read.
#[derive(Clone, Debug)]
pub struct Problem {
    pub log: PathBuf,
    /// 1-based; `None` for the whole file.
    pub line: Option<usize>,
    pub message: String,
}

/// Everything read from the logs of one run (all its ranks).
#[derive(Debug, Default)]
pub struct Evidence {
    pub events: Vec<Event>,
    pub compiles: Vec<Compile>,
    /// Where each compile of a trace started (text logs have none).
    pub starts: Vec<FrameStart>,
    /// Corrupt or truncated lines, skipped.
    pub problems: Vec<Problem>,
    /// `pytorch_version` as the trace states it ("2.15.0+cu132"); one entry per distinct value.
    pub torch_versions: Vec<String>,
    /// The log files read.
    pub logs: Vec<PathBuf>,
    /// Why a named log could not be read at all (missing, foreign): errors, the rest is read.
    pub unreadable: Vec<String>,
    /// The user lines the logs' tracebacks quote, to tell a log of other code (`stale`).
    pub quoted: Vec<stale::QuotedLine>,
}

impl Evidence {
    /// Read `--trace` paths: TORCH_TRACE directories (every `*.log` in them: one per rank) or
    /// single log files. A path that holds no Dynamo log goes to `unreadable`; corrupt lines
    /// to `problems`.
    pub fn read_traces(&mut self, paths: &[PathBuf]) {
        for path in paths {
            let logs = match trace_files(path) {
                Ok(logs) => logs,
                Err(err) => {
                    self.unreadable.push(format!("{err:#}"));
                    continue;
                }
            };
            for log in logs {
                if let Err(err) = trace_log::read(&log, self) {
                    self.unreadable.push(format!("{err:#}"));
                }
            }
        }
    }

    /// Read `--torch-logs`: the text `TORCH_LOGS="graph_breaks,recompiles"` writes to stderr
    /// (`log` names it in messages: the file, or `-` for standard input).
    pub fn read_torch_logs(&mut self, log: &Path, text: &[u8]) {
        if let Err(err) = text_log::read(log, text, self) {
            self.unreadable.push(format!("{err:#}"));
        }
    }

    /// Whether any log was read.
    pub fn is_empty(&self) -> bool {
        self.logs.is_empty()
    }

    /// Warnings about versions: one for each version outside [`TESTED_TORCH`].
    pub fn version_warnings(&self) -> Vec<String> {
        self.torch_versions
            .iter()
            .filter(|version| !TESTED_TORCH.iter().any(|tested| minor_version(version) == *tested))
            .map(|version| {
                format!(
                    "the trace was written by torch {version}; tcfix reads logs of torch {} (others may name events differently)",
                    TESTED_TORCH.join(", ")
                )
            })
            .collect()
    }

    pub(crate) fn note_version(&mut self, version: &str) {
        if !self.torch_versions.iter().any(|known| known == version) {
            self.torch_versions.push(version.to_string());
        }
    }
}

/// "2.15.0+cu132" -> "2.15".
fn minor_version(version: &str) -> String {
    version.split(['.', '+']).take(2).collect::<Vec<_>>().join(".")
}

/// The log files a `--trace` path names: itself, or the `*.log` files of a directory.
fn trace_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    use anyhow::Context;
    if !path.is_dir() {
        if !path.exists() {
            anyhow::bail!("{}: no such trace file or directory", path.display());
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let entries =
        std::fs::read_dir(path).with_context(|| format!("{}: cannot read the trace directory", path.display()))?;
    let mut logs: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|file| file.is_file() && file.extension().is_some_and(|ext| ext == "log"))
        .collect();
    logs.sort();
    if logs.is_empty() {
        anyhow::bail!(
            "{}: no `.log` files: a TORCH_TRACE directory holds one `dedicated_log_torch_trace_*.log` per process \
             (run with `TORCH_TRACE={} python ...`)",
            path.display(),
            path.display()
        );
    }
    Ok(logs)
}
