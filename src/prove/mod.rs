//! `tcfix prove -- CMD ARGS...`: the fixes, proven on the user's own run. The command runs under
//! `TORCH_TRACE` in the working tree as it is, then in a copy of it with the fixes applied (the
//! user's tree is only read); both traces are joined to the findings as `--trace` joins them
//! (`crate::evidence`), and the report says, per compiled frame, what changed.

pub mod command;
pub mod compare;
pub mod copy;
pub mod report;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::config::Config;
use crate::discover::discover;
use crate::evidence::Evidence;
use crate::project::{FileReport, FixMode, run, run_texts};
use crate::rules::{CommandLine, Settings, names_a_rule};
use command::{Failed, Launch};
use compare::{Comparison, Tolerance};
use copy::Copy;
use report::{Proof, RunAccount};

/// What `tcfix prove` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub command: Vec<String>,
    /// The files and directories whose hazards are fixed (default: the current directory).
    pub paths: Vec<PathBuf>,
    pub unsafe_fixes: bool,
    pub select: Vec<String>,
    pub ignore: Vec<String>,
    pub config: Option<PathBuf>,
    pub isolated: bool,
    pub timeout: Option<Duration>,
    pub keep: bool,
    /// Compare what the command saved to `$TCFIX_PROVE_OUTPUT` in the two runs.
    pub compare_output: bool,
    pub python: String,
    pub tolerance: Tolerance,
}

/// The environment variable naming the trace directory, as torch reads it.
const TORCH_TRACE: &str = "TORCH_TRACE";
/// The environment variable naming the file the command saves its outputs to.
pub const OUTPUT_VARIABLE: &str = "TCFIX_PROVE_OUTPUT";

/// Why the proof could not be made: the run that failed (or none), the reason, stderr's tail.
#[derive(Debug)]
pub struct NotProven {
    pub run: &'static str,
    pub failed: Failed,
    /// Where the fixed copy was left (`--keep`), to look at what the fixes did.
    pub kept: Option<PathBuf>,
}

/// Run the command before and after the fixes and account for the difference.
pub fn prove(options: &Options, cwd: &Path) -> Result<std::result::Result<Proof, NotProven>> {
    if options.command.is_empty() {
        bail!("no command to prove the fixes with: `tcfix prove -- python train.py`");
    }
    let config = Arc::new(Config::discover(cwd, options.config.as_deref(), options.isolated, names_a_rule)?);
    let command_line =
        CommandLine { select: options.select.clone(), ignore: options.ignore.clone(), min_severity: None };
    let settings = Settings::from_config(&config, &command_line);
    let files = python_files(options, &config)?;
    let mut copy = Copy::of_working_tree(cwd)?;
    let fixed = fix_in_copy(&files, &settings, options.unsafe_fixes, &copy)?;
    let kept = options.keep.then(|| keep(&mut copy, &fixed)).transpose()?;
    let scratch = copy.scratch();
    let before = match run_once(options, "before", &copy.root, cwd, &scratch) {
        Ok(run) => run,
        Err(failed) => return Ok(Err(NotProven { run: "before the fixes", failed, kept: kept.map(|k| k.0) })),
    };
    let after_cwd = copy.map(cwd)?;
    let after = match run_once(options, "after", &copy.dir, &after_cwd, &scratch) {
        Ok(run) => run,
        Err(failed) => return Ok(Err(NotProven { run: "after the fixes", failed, kept: kept.map(|k| k.0) })),
    };
    let before_reports = run(&files, &settings, None, FixMode::Report, None);
    let after_reports = reports_of_fixed(&files, &fixed, &settings, &copy)?;
    let mut proof = Proof::new(options.command.clone(), options.unsafe_fixes);
    proof.before = RunAccount::of(&before.evidence, before_reports, &settings, &copy.root, before.seconds);
    proof.after = RunAccount::of(&after.evidence, after_reports, &settings, &copy.dir, after.seconds);
    proof.account_for(&fixed);
    proof.warnings.extend(ran_the_users_tree(&after.evidence, &copy));
    if options.compare_output {
        proof.outputs = Some(compare::compare(&options.python, &before.output, &after.output, options.tolerance));
    }
    proof.kept = kept.map(|(dir, patch)| report::Kept { dir, patch });
    Ok(Ok(proof))
}

/// The checked files, as `tcfix PATHS` walks them (the configuration's `exclude` too).
fn python_files(options: &Options, config: &Config) -> Result<Vec<PathBuf>> {
    let paths = if options.paths.is_empty() { vec![PathBuf::from(".")] } else { options.paths.clone() };
    let discovered = discover(&paths);
    if let Some((path, reason)) = discovered.errors.first() {
        bail!("{}: {reason}", path.display());
    }
    let files: Vec<PathBuf> = discovered
        .files
        .into_iter()
        .filter(|file| paths.contains(file) || !config.excludes(file))
        .map(|file| std::path::absolute(&file).unwrap_or(file))
        .collect();
    if files.is_empty() {
        bail!(
            "no Python files to fix in {}",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(files)
}

/// A file the fixes changed: its path in the user's tree, both texts and what was applied.
pub struct Fixed {
    pub path: PathBuf,
    /// `/`-separated, relative to the repository's root (as the report and the patch show it).
    pub shown: String,
    pub original: String,
    pub text: String,
    pub applied: Vec<crate::fix::apply::AppliedFix>,
}

/// Fix the files as `--apply` would, writing the results into the copy only.
fn fix_in_copy(files: &[PathBuf], settings: &Settings, unsafe_fixes: bool, copy: &Copy) -> Result<Vec<Fixed>> {
    let mut fixed = Vec::new();
    for report in run(files, settings, None, FixMode::Fix { unsafe_fixes }, None) {
        let Ok(checked) = report.outcome else { continue };
        if !checked.changed() {
            continue;
        }
        let target = copy.map(&report.path)?;
        crate::write::write_atomically(&target, &checked.text)
            .with_context(|| format!("{}: cannot write the fixes into the copy", target.display()))?;
        fixed.push(Fixed {
            shown: shown(&copy.root, &report.path),
            path: report.path,
            original: checked.original().to_string(),
            text: checked.text.clone(),
            applied: checked.applied,
        });
    }
    Ok(fixed)
}

/// `--keep`: the copy stays, with the fixes as a patch beside it.
fn keep(copy: &mut Copy, fixed: &[Fixed]) -> Result<(PathBuf, PathBuf)> {
    let dir = copy.keep();
    let patch = copy.scratch().join("fixes.patch");
    let diff: String =
        fixed.iter().map(|file| crate::diff::unified_diff(&file.shown, &file.original, &file.text)).collect();
    std::fs::write(&patch, diff).with_context(|| format!("{}: cannot write the patch", patch.display()))?;
    Ok((dir, patch))
}

/// The fixed files' findings, analysed under the user's paths (so the configuration applies as
/// in place) and then placed in the copy, where the run after the fixes read them.
fn reports_of_fixed(files: &[PathBuf], fixed: &[Fixed], settings: &Settings, copy: &Copy) -> Result<Vec<FileReport>> {
    let mut texts = Vec::new();
    for file in files {
        let text = match fixed.iter().find(|f| &f.path == file) {
            Some(f) => f.text.clone(),
            None => match std::fs::read_to_string(file) {
                Ok(text) => text,
                Err(_) => continue,
            },
        };
        texts.push((file.clone(), text));
    }
    let mut reports = run_texts(&texts, settings, None, FixMode::Report);
    for (report, (_, text)) in reports.iter_mut().zip(&texts) {
        report.path = copy.map(&report.path)?;
        if let Ok(checked) = &mut report.outcome
            && checked.text.is_empty()
        {
            checked.text = text.clone();
        }
    }
    Ok(reports)
}

/// What one run left: its trace read, the file its outputs went to, how long it took.
struct Traced {
    evidence: Evidence,
    output: PathBuf,
    seconds: f64,
}

/// Run the command once in `dir` (the tree at `root`) with a fresh trace directory.
fn run_once(options: &Options, name: &'static str, root: &Path, dir: &Path, scratch: &Path) -> Result<Traced, Failed> {
    let trace = scratch.join(format!("trace-{name}"));
    let output = scratch.join(format!("output-{name}.pt"));
    let _ = std::fs::remove_dir_all(&trace);
    let env = environment(root, &trace, &output, scratch);
    let launch = Launch { command: &options.command, dir, env, logs: scratch, timeout: options.timeout };
    let seconds = launch.run(name)?;
    let evidence = read_trace(&trace).map_err(|reason| Failed {
        reason,
        stderr_tail: command::stderr_tail(&scratch.join(format!("{name}.stderr"))),
    })?;
    Ok(Traced { evidence, output, seconds })
}

/// The command's environment: the trace directory, the output file, the tree's own modules first
/// on `PYTHONPATH` (an editable install would otherwise import the user's tree in both runs), and
/// Python's bytecode cache outside both trees.
fn environment(root: &Path, trace: &Path, output: &Path, scratch: &Path) -> Vec<(String, String)> {
    let mut path = vec![root.to_path_buf()];
    if root.join("src").is_dir() {
        path.push(root.join("src"));
    }
    path.extend(
        std::env::var_os("PYTHONPATH").map(|old| std::env::split_paths(&old).collect::<Vec<_>>()).unwrap_or_default(),
    );
    let python_path =
        std::env::join_paths(path).map(|joined| joined.to_string_lossy().into_owned()).unwrap_or_default();
    let mut env = vec![
        (TORCH_TRACE.to_string(), trace.display().to_string()),
        (OUTPUT_VARIABLE.to_string(), output.display().to_string()),
        ("PYTHONPATH".to_string(), python_path),
    ];
    if std::env::var_os("PYTHONPYCACHEPREFIX").is_none() {
        env.push(("PYTHONPYCACHEPREFIX".to_string(), scratch.join("pycache").display().to_string()));
    }
    env
}

/// The run's trace, or why there is none to prove with.
fn read_trace(trace: &Path) -> Result<Evidence, String> {
    let has_logs = std::fs::read_dir(trace)
        .map(|entries| entries.flatten().any(|entry| entry.path().extension().is_some_and(|ext| ext == "log")))
        .unwrap_or(false);
    if !has_logs {
        return Err(format!(
            "the command finished but wrote no trace to {}: it never ran torch.compile (or it reset {TORCH_TRACE})",
            trace.display()
        ));
    }
    let mut evidence = Evidence::default();
    evidence.read_traces(&[trace.to_path_buf()]);
    if let Some(error) = evidence.unreadable.first() {
        return Err(format!("the trace cannot be read: {error}"));
    }
    if evidence.compiles.is_empty() && evidence.events.is_empty() {
        return Err(format!(
            "the command finished but compiled nothing: its trace in {} holds no compile (is the compiled \
             function or module called?)",
            trace.display()
        ));
    }
    Ok(evidence)
}

/// A warning when the run after the fixes compiled files of the user's tree instead of the copy:
/// the command imports the project from elsewhere (an installed copy), and the fixes were not run.
fn ran_the_users_tree(after: &Evidence, copy: &Copy) -> Option<String> {
    let users = after.compiles.iter().find(|compile| {
        Path::new(&compile.co_filename).starts_with(&copy.root)
            && !Path::new(&compile.co_filename).starts_with(&copy.dir)
    })?;
    Some(format!(
        "the run after the fixes compiled {} from your tree, not from the fixed copy: the command imports the project \
         from a fixed path; the fixes in that file were not run",
        users.co_filename
    ))
}

/// `models/net.py`: a path as the report shows it, relative to the tree's root.
pub fn shown(root: &Path, path: &Path) -> String {
    let absolute = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let relative = absolute.strip_prefix(root).unwrap_or(&absolute);
    relative.to_string_lossy().replace('\\', "/")
}

impl Comparison {
    /// `equal (max abs diff 0.0e0 over 3 tensors)`.
    pub fn describe(&self) -> String {
        let verdict = if self.equal { "equal" } else { "different" };
        let mut out = format!("{verdict} (max abs diff {:.3e} over {} tensors)", self.max_abs_diff, self.tensors);
        if let Some(mismatch) = &self.mismatch {
            out.push_str(&format!(": {mismatch}"));
        }
        out
    }
}
