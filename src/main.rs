use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;

use tcfix::baseline::{Baseline, Recorded};
use tcfix::cache::Cache;
use tcfix::changed_lines::ChangedLines;
use tcfix::config::Config;
use tcfix::diff::unified_diff;
use tcfix::discover::canonical;
use tcfix::discover::discover;
use tcfix::fix::Safety;
use tcfix::git::{Worktree, identity, unprotected};
use tcfix::output::{FileFindings, Format, display_path, markdown, render, text};
use tcfix::patch::{RulePatch, format_patch, utc_timestamp};
use tcfix::project::{Checked, FileReport, FixMode, run, run_texts, run_with_progress, setting};
use tcfix::rules::{CommandLine, RULES, Rule, Settings, names_a_rule};
use tcfix::scope::Scope;
use tcfix::source::{SourceError, SourceFile};

mod cli;

// The parser allocates a node at a time: a faster allocator is most of a run's spare speed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cli::{Cli, Command};

/// What the run ended with, most serious last: the exit code is the worst seen.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Clean = 0,
    Findings = 1,
    Error = 2,
}

fn main() -> ExitCode {
    tcfix::memory::return_memory_promptly();
    tcfix::project::quiet_panics_in_file_work();
    let cli = Cli::parse();
    let status = match run_cli(&cli) {
        Ok(Status::Findings) if cli.exit_zero => Status::Clean,
        Ok(status) => status,
        Err(err) => {
            eprintln!("error: {err:#}");
            Status::Error
        }
    };
    ExitCode::from(status as u8)
}

/// Everything one invocation needs to know.
struct Run<'c> {
    cli: &'c Cli,
    settings: Settings,
    unsafe_fixes: bool,
    config: Arc<Config>,
    /// Only the findings on changed lines and not in the baseline, when asked.
    scope: Option<Arc<Scope>>,
    /// A path could not be walked: the summary must not say everything passed.
    walk_failed: std::cell::Cell<bool>,
    /// With --trace / --torch-logs: the run's account per compiled frame, printed first.
    evidence_summary: std::cell::RefCell<Option<tcfix::evidence::summary::Summary>>,
    /// The findings of earlier runs (`.tcfix_cache/`), unless turned off.
    cache: Option<Cache>,
    /// With --apply: the findings fixed in the files written, for the summary line.
    fixed: std::cell::Cell<usize>,
}

fn run_cli(cli: &Cli) -> Result<Status> {
    match &cli.command {
        Some(Command::Rules) => return print_rules(),
        Some(Command::Explain { rule }) => return explain(rule),
        Some(Command::Server) => return tcfix::server::run().map(|()| Status::Clean),
        Some(Command::Prove(args)) => return prove(args),
        Some(Command::Why { place, project }) => return why(place, project),
        None => {}
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = Arc::new(Config::discover(&cwd, cli.config.as_deref(), cli.isolated, names_a_rule)?);
    for warning in &config.warnings {
        eprintln!("warning: {warning}");
    }
    let scope = scope(cli, &config, &cwd)?;
    let settings = settings(cli, &config)?;
    let cache = open_cache(cli, &config, &settings, scope.is_some());
    let mut run = Run {
        cli,
        unsafe_fixes: cli.unsafe_fixes || config.options.unsafe_fixes == Some(true),
        settings,
        config,
        scope,
        walk_failed: Default::default(),
        evidence_summary: Default::default(),
        cache,
        fixed: Default::default(),
    };
    if cli.paths.iter().any(|path| path == Path::new("-")) {
        if !cli.trace.is_empty() || cli.torch_logs.is_some() {
            bail!("--trace and --torch-logs join a run's log to the files it ran: name the files, not `-`");
        }
        return run.stdin();
    }
    let (files, mut status) = run.files()?;
    if files.is_empty() {
        // A mistyped path in CI must not pass as "All checks passed!"; when the paths could not
        // be walked the errors said so, and stdout stays empty rather than summarise nothing.
        if status == Status::Clean {
            let paths: Vec<String> = cli.paths.iter().map(|path| display_path(path)).collect();
            eprintln!(
                "error: no Python files to check in {}: only `.py` and `.pyi` files are read, and files that \
                 .gitignore or the configuration's `exclude` skip are left out",
                paths.join(", ")
            );
        }
        return Ok(Status::Error);
    }
    let outcome = if let Some(path) = &cli.write_baseline {
        run.write_baseline(&files, path)?
    } else if let Some(dir) = &cli.worktree {
        run.apply_in_worktree(&cwd, dir)?
    } else if cli.diff || cli.patch.is_some() {
        run.diff(&files)?
    } else if let Some(dir) = &cli.patch_dir {
        run.patch_series(&files, dir)?
    } else if cli.add_noqa {
        run.add_noqa(&files)
    } else if cli.apply {
        run.apply(&files)?
    } else if !cli.trace.is_empty() || cli.torch_logs.is_some() {
        run.report_with_evidence(&files)?
    } else {
        run.report(&run.reports(&files, FixMode::Report))?
    };
    status = status.max(outcome);
    if let Some(cache) = run.cache
        && let Err(error) = cache.save()
    {
        eprintln!("warning: cannot write the cache in {}: {error}", tcfix::cache::DIRECTORY);
    }
    Ok(status)
}

/// `tcfix prove -- CMD`: the proof on stdout; a run that could not be proven with on stderr.
fn prove(args: &cli::ProveArgs) -> Result<Status> {
    let options = tcfix::prove::Options {
        command: args.command.clone(),
        paths: args.paths.clone(),
        unsafe_fixes: args.unsafe_fixes,
        select: args.select.clone(),
        ignore: args.ignore.clone(),
        config: args.config.clone(),
        isolated: args.isolated,
        timeout: args.timeout.map(std::time::Duration::from_secs),
        keep: args.keep,
        compare_output: args.compare_output,
        python: args.python.clone(),
        tolerance: tcfix::prove::compare::Tolerance { rtol: args.rtol, atol: args.atol },
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let proof = match tcfix::prove::prove(&options, &cwd)? {
        Ok(proof) => proof,
        Err(not_proven) => {
            eprintln!("error: could not prove the fixes: the run {}: {}", not_proven.run, not_proven.failed.reason);
            if !not_proven.failed.stderr_tail.is_empty() {
                eprintln!("the end of its stderr:\n{}", not_proven.failed.stderr_tail);
            }
            match not_proven.kept {
                Some(dir) => eprintln!("the fixed copy is kept in {}", dir.display()),
                None if not_proven.run == "after the fixes" => eprintln!("rerun with --keep to look at the fixed copy"),
                None => {}
            }
            return Ok(Status::Error);
        }
    };
    proof.warnings.iter().for_each(|warning| eprintln!("warning: {warning}"));
    let text = match args.format {
        cli::ProveFormat::Text => proof.text(),
        cli::ProveFormat::Markdown => proof.markdown(),
        cli::ProveFormat::Json => proof.json(),
    };
    write(&mut std::io::stdout().lock(), &text)?;
    Ok(if proof.outputs_unknown() {
        Status::Error
    } else if proof.regressed() {
        Status::Findings
    } else {
        Status::Clean
    })
}

/// `tcfix why PATH:LINE[:COL]`.
fn why(place: &str, project: &[PathBuf]) -> Result<Status> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = Config::discover(&cwd, None, false, names_a_rule)?;
    let settings = Settings::from_config(&Arc::new(config), &CommandLine::default());
    let place = tcfix::why::Place::parse(place)?;
    let project = if project.is_empty() { vec![PathBuf::from(".")] } else { project.to_vec() };
    let answer = tcfix::why::why(&place, &project, &settings)?;
    write(&mut std::io::stdout().lock(), &answer.text())?;
    Ok(Status::Clean)
}

/// The cache of earlier runs' findings, unless `--no-cache` or `cache = false` turns it off, or
/// the run is `scoped` (`--diff-base`, `--baseline`: see the cache's note).
fn open_cache(cli: &Cli, config: &Config, settings: &Settings, scoped: bool) -> Option<Cache> {
    if cli.no_cache || config.options.cache == Some(false) || scoped {
        return None;
    }
    let (cache, warning) = Cache::open(config.root(), settings);
    if let Some(warning) = warning {
        eprintln!("warning: {warning}");
    }
    Some(cache)
}

/// `tcfix rules`: one line per rule, in aligned columns.
fn print_rules() -> Result<Status> {
    let name = RULES.iter().map(|rule| rule.name.len()).chain(["NAME".len()]).max().unwrap_or_default();
    let category =
        RULES.iter().map(|rule| rule.category.to_string().len()).chain(["CATEGORY".len()]).max().unwrap_or_default();
    let mut out = format!("{:<6}  {:<name$}  {:<category$}  {}\n", "CODE", "NAME", "CATEGORY", "FIX");
    for rule in RULES {
        let line = format!("{:<6}  {:<name$}  {:<category$}  {}", rule.code, rule.name, rule.category, fixes(rule));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    write(&mut std::io::stdout().lock(), &out)?;
    Ok(Status::Clean)
}

/// "safe fix", "unsafe fix", "safe or unsafe fix", "no fix".
fn fixes(rule: &Rule) -> String {
    let names: Vec<&str> = rule
        .fixes
        .iter()
        .map(|safety| match safety {
            Safety::Safe => "safe",
            Safety::Unsafe => "unsafe",
            Safety::DisplayOnly => "display-only",
        })
        .collect();
    if names.is_empty() { "no fix".to_string() } else { format!("{} fix", names.join(" or ")) }
}

/// `tcfix explain TCF104` / `tcfix explain data-dependent-branch`: the rule's README.
fn explain(wanted: &str) -> Result<Status> {
    let rule = RULES
        .iter()
        .chain(tcfix::evidence::runtime_rule::RUNTIME_RULES)
        .find(|rule| rule.code.eq_ignore_ascii_case(wanted) || rule.name.eq_ignore_ascii_case(wanted))
        .ok_or_else(|| anyhow!("no rule is called {wanted:?}: `tcfix rules` lists them"))?;
    write(&mut std::io::stdout().lock(), rule.explanation)?;
    Ok(Status::Clean)
}

/// `--diff-base` and `--baseline` (or the configuration's `baseline`); none when writing one.
fn scope(cli: &Cli, config: &Config, cwd: &Path) -> Result<Option<Arc<Scope>>> {
    if cli.write_baseline.is_some() {
        return Ok(None);
    }
    let changed = match &cli.diff_base {
        Some(rev) => Some(ChangedLines::since(cwd, rev, cli.include_uncommitted)?),
        None => None,
    };
    let baseline = match cli.baseline.clone().or_else(|| config.baseline()) {
        Some(path) => Some(Baseline::read(&path)?),
        None => None,
    };
    Ok((changed.is_some() || baseline.is_some()).then(|| Arc::new(Scope::new(changed, baseline))))
}

/// What the summary says applies the fixes: under pre-commit, the hook that does.
fn apply_hint() -> &'static str {
    if std::env::var_os("PRE_COMMIT").is_some_and(|value| value == "1") {
        "the `tcfix-fix` pre-commit hook"
    } else {
        "`--apply`"
    }
}

/// What the command line chooses over any configuration file.
fn command_line(cli: &Cli) -> CommandLine {
    CommandLine { select: cli.select.clone(), ignore: cli.ignore.clone(), min_severity: cli.min_severity }
}

/// The settings from the command line over those of the configuration file.
fn settings(cli: &Cli, config: &Arc<Config>) -> Result<Settings> {
    let selectors = cli.select.iter().chain(&cli.ignore).map(String::as_str);
    let unknown: Vec<&str> = selectors.filter(|selector| !names_a_rule(selector)).collect();
    if !unknown.is_empty() {
        bail!(
            "no rule matches {}: use a code (TCF101), a prefix (TCF1), a name or a category (graph-break, recompile, setup, error)",
            unknown.join(", ")
        );
    }
    Ok(Settings::from_config(config, &command_line(cli)))
}

impl Run<'_> {
    fn fix_mode(&self) -> FixMode {
        FixMode::Fix { unsafe_fixes: self.unsafe_fixes }
    }

    /// The files to check, with the status of walking the paths. Unless one configuration is
    /// named (or none wanted), each file's settings are then those of the configuration nearest
    /// it, as ruff finds them: the projects of a monorepo keep their own.
    fn files(&mut self) -> Result<(Vec<PathBuf>, Status)> {
        let discovered = discover(&self.cli.paths);
        if self.cli.config.is_none() && !self.cli.isolated {
            let nearest = tcfix::config::Nearest::discover(&discovered.files, &self.config, names_a_rule)?;
            for warning in nearest.warnings().iter().filter(|warning| !self.config.warnings.contains(warning)) {
                eprintln!("warning: {warning}");
            }
            self.settings.nearest = Some(Arc::new((nearest, command_line(self.cli))));
        }
        let config_of = |file: &Path| -> Arc<Config> {
            let nearest = self.settings.nearest.as_deref().and_then(|(nearest, _)| nearest.of(file));
            Arc::clone(nearest.unwrap_or(&self.config))
        };
        let mut status = Status::Clean;
        for (path, reason) in &discovered.errors {
            eprintln!("{}: error: {reason}", display_path(path));
            status = Status::Error;
            self.walk_failed.set(true);
        }
        let named = |file: &PathBuf| self.cli.paths.contains(file);
        let files: Vec<PathBuf> =
            discovered.files.into_iter().filter(|file| named(file) || !config_of(file).excludes(file)).collect();
        let failed: Vec<&PathBuf> = discovered.errors.iter().map(|(path, _)| path).collect();
        let empty = self.cli.paths.iter().filter(|path| !failed.contains(path) && path.is_dir());
        for path in empty.filter(|path| !files.is_empty() && !files.iter().any(|file| lies_under(file, path))) {
            eprintln!("warning: no Python files to check in {}", display_path(path));
        }
        let sources = discovered.generator_sources.len();
        if sources > 0 && matches!(self.cli.output_format, Format::Full | Format::Concise) && !self.cli.quiet {
            eprintln!(
                "note: skipped {sources} code-generation source{} (`modular_*.py` that a generated file in the same \
                 directory names as its source): the generated files hold the same code and are what runs, so each \
                 hazard is reported once, there; name a file on the command line to check it anyway",
                if sources == 1 { "" } else { "s" }
            );
        }
        Ok((files, status))
    }

    /// Check or fix the files, reporting the ones that could not be read or parsed.
    fn reports(&self, files: &[PathBuf], mode: FixMode) -> Vec<FileReport> {
        let reports = match progress_bar(files.len(), self.cli.quiet) {
            Some(bar) => {
                let reports = run_with_progress(
                    files,
                    &self.settings,
                    self.scope.as_deref(),
                    mode,
                    &|| bar.inc(1),
                    self.cache.as_ref(),
                );
                bar.finish_and_clear();
                reports
            }
            None => run(files, &self.settings, self.scope.as_deref(), mode, self.cache.as_ref()),
        };
        for report in &reports {
            if let Err(error) = &report.outcome {
                print_error(&report.path, error);
            }
            if let Ok(checked) = &report.outcome {
                warn_dropped(&report.path, checked);
            }
        }
        reports
    }

    /// The findings in the chosen format (the text formats end with a summary line).
    fn report(&self, reports: &[FileReport]) -> Result<Status> {
        let shown: Vec<(String, &Checked)> = reports
            .iter()
            .filter_map(|report| report.outcome.as_ref().ok().map(|checked| (display_path(&report.path), checked)))
            .collect();
        let files: Vec<FileFindings> = shown
            .iter()
            .map(|(path, checked)| FileFindings { path, text: &checked.text, diagnostics: &checked.diagnostics })
            .collect();
        let mut tally = text::Tally { fixed: self.fixed.get(), ..Default::default() };
        files.iter().for_each(|file| tally.add(file.diagnostics));
        let format = self.cli.output_format;
        let mut out = self.output()?;
        let scope = self.scope.as_ref().map(|scope| scope.describe());
        if let Some(summary) = self.evidence_summary.borrow().as_ref().filter(|_| !self.cli.quiet) {
            match format {
                Format::Full | Format::Concise => write(&mut out, &format!("{}\n", summary.text()))?,
                Format::Markdown => write(&mut out, &summary.markdown())?,
                _ => {}
            }
        }
        if self.cli.statistics {
            write(&mut out, &tcfix::output::statistics(&files, self.unsafe_fixes))?;
        } else if format == Format::Markdown {
            let shape = markdown::Review {
                max_chars: self.cli.markdown_max_chars,
                scope: scope.as_deref(),
                apply: apply_hint(),
            };
            write(&mut out, &markdown::review(&files, self.unsafe_fixes, &shape))?;
        } else {
            write(&mut out, &render(format, &files, self.cli.sort, self.unsafe_fixes))?;
        }
        if matches!(format, Format::Full | Format::Concise) && !self.cli.quiet {
            let failed = self.walk_failed.get() || worst(reports) == Status::Error;
            let summary = match text::summary(tally, self.unsafe_fixes, apply_hint()) {
                _ if failed && tally.found + tally.fixed == 0 => {
                    "No hazards found in the files that could be checked.".to_string()
                }
                summary => summary,
            };
            write(&mut out, &format!("{summary}\n"))?;
            for removed in setting::removed(files.iter().map(|file| file.diagnostics)) {
                write(&mut out, &format!("{}\n", removed.setting.summary(removed.findings, removed.files)))?;
            }
            if let Some(scope) = &scope {
                write(&mut out, &format!("{scope}\n"))?;
            }
        }
        Ok(worst(reports).max(if tally.found > 0 { Status::Findings } else { Status::Clean }))
    }

    fn output(&self) -> Result<Box<dyn Write>> {
        match &self.cli.output_file {
            Some(path) => std::fs::File::create(path)
                .map(|file| Box::new(file) as Box<dyn Write>)
                .with_context(|| format!("{}: cannot write the report", path.display())),
            None => Ok(Box::new(std::io::stdout().lock())),
        }
    }

    /// `--trace` / `--torch-logs`: the findings joined to what a run of torch.compile logged
    /// (see `tcfix::evidence`). A log that cannot be read at all is an error; the rest is used.
    fn report_with_evidence(&self, files: &[PathBuf]) -> Result<Status> {
        // A log path that is not there is a mistyped argument: said before any work, like git does.
        let logs = self.cli.trace.iter().chain(self.cli.torch_logs.iter().filter(|path| *path != Path::new("-")));
        if let Some(missing) = logs.into_iter().find(|path| !path.exists()) {
            bail!("{}: no such trace file or directory", display_path(missing));
        }
        let evidence = self.read_evidence();
        let mut reports = self.reports(files, FixMode::Report);
        let summary =
            tcfix::evidence::attach(&evidence, &mut reports, &self.settings, self.scope.as_deref(), display_path);
        summary.warning().iter().chain(&summary.stale).for_each(|warning| eprintln!("warning: {warning}"));
        // No log read (all unreadable): the errors said so; a summary of nothing would not.
        *self.evidence_summary.borrow_mut() = (!evidence.is_empty()).then_some(summary);
        let status = if evidence.unreadable.is_empty() { Status::Clean } else { Status::Error };
        Ok(status.max(self.report(&reports)?))
    }

    fn read_evidence(&self) -> tcfix::evidence::Evidence {
        let mut evidence = tcfix::evidence::Evidence::default();
        evidence.read_traces(&self.cli.trace);
        if let Some(path) = &self.cli.torch_logs {
            let mut bytes = Vec::new();
            let read = if path == Path::new("-") {
                std::io::stdin().read_to_end(&mut bytes).map(|_| ())
            } else {
                std::fs::read(path).map(|read| bytes = read)
            };
            match read {
                Ok(()) => evidence.read_torch_logs(path, &bytes),
                Err(err) => evidence.unreadable.push(format!("{}: cannot read the log: {err}", display_path(path))),
            }
        }
        const SHOWN: usize = 20;
        for problem in evidence.problems.iter().take(SHOWN) {
            let line = problem.line.map(|line| format!(":{line}")).unwrap_or_default();
            eprintln!("{}{line}: warning: {}", display_path(&problem.log), problem.message);
        }
        if evidence.problems.len() > SHOWN {
            eprintln!("warning: {} more unreadable log lines, skipped", evidence.problems.len() - SHOWN);
        }
        evidence.version_warnings().iter().for_each(|warning| eprintln!("warning: {warning}"));
        evidence.unreadable.iter().for_each(|error| eprintln!("error: {error}"));
        evidence
    }

    /// `--write-baseline FILE`: record every current finding.
    fn write_baseline(&self, files: &[PathBuf], path: &Path) -> Result<Status> {
        let reports = self.reports(files, FixMode::Report);
        let recorded: Vec<Recorded> = reports
            .iter()
            .filter_map(|report| {
                let checked = report.outcome.as_ref().ok().filter(|checked| !checked.diagnostics.is_empty())?;
                Some(Recorded { file: canonical(&report.path), text: &checked.text, diagnostics: &checked.diagnostics })
            })
            .collect();
        let count = tcfix::baseline::write(path, &recorded)?;
        let shown = display_path(path);
        eprintln!(
            "Wrote {count} {} to {shown}: `tcfix --baseline {shown}` (or `baseline = \"{shown}\"` in the \
             configuration) reports only the findings not in it.",
            plural(count, "finding")
        );
        Ok(worst(&reports))
    }

    /// `--diff` prints the fixes; `--patch FILE` writes them.
    fn diff(&self, files: &[PathBuf]) -> Result<Status> {
        let reports = self.reports(files, self.fix_mode());
        let changed: Vec<(&FileReport, &Checked)> = changed(&reports);
        let diff: String = changed
            .iter()
            .map(|(report, checked)| unified_diff(&display_path(&report.path), checked.original(), &checked.text))
            .collect();
        let fixes: usize = changed.iter().map(|(_, checked)| checked.applied.len()).sum();
        match &self.cli.patch {
            Some(path) if !changed.is_empty() => {
                std::fs::write(path, &diff).with_context(|| format!("{}: cannot write the patch", path.display()))?;
                eprintln!(
                    "Wrote {} ({fixes} {} in {} {}).",
                    path.display(),
                    plural(fixes, "fix"),
                    changed.len(),
                    plural(changed.len(), "file")
                );
            }
            None if !changed.is_empty() => {
                write(&mut std::io::stdout().lock(), &diff)?;
                eprintln!(
                    "Would fix {fixes} {} in {} {}.",
                    plural(fixes, "hazard"),
                    changed.len(),
                    plural(changed.len(), "file")
                );
            }
            _ => eprintln!("{}", if self.cli.patch.is_some() { "No fixes to write." } else { "No fixes to show." }),
        }
        self.hint_unsafe_fixes(&reports);
        let printed = if changed.is_empty() { Status::Clean } else { Status::Findings };
        Ok(worst(&reports).max(printed))
    }

    /// "3 more fixes are available with --unsafe-fixes" on stderr, as ruff hints, when `--diff`
    /// or `--apply` held fixes back for want of it: the Unsafe fixes left, and each capture
    /// option that would be written where the project compiles (one fix for all it removes).
    fn hint_unsafe_fixes(&self, reports: &[FileReport]) {
        if self.unsafe_fixes || self.cli.quiet {
            return;
        }
        let checked = || reports.iter().filter_map(|report| report.outcome.as_ref().ok());
        let unsafe_fixes = checked()
            .flat_map(|checked| &checked.diagnostics)
            .filter(|diagnostic| diagnostic.fix.as_ref().is_some_and(|fix| fix.safety == Safety::Unsafe))
            .count();
        let settings = setting::removed(checked().map(|checked| &checked.diagnostics[..]))
            .iter()
            .filter(|removed| removed.setting.written_in.is_some())
            .count();
        match unsafe_fixes + settings {
            0 => {}
            1 => eprintln!("1 more fix is available with --unsafe-fixes"),
            more => eprintln!("{more} more fixes are available with --unsafe-fixes"),
        }
    }

    /// Writes the fixes to every file git could give back, then reports what is left.
    fn apply(&self, files: &[PathBuf]) -> Result<Status> {
        let reports = self.reports(files, self.fix_mode());
        let (written, status) = self.write_fixed(&reports)?;
        let fixes: usize = written.iter().map(|(_, checked)| checked.applied.len()).sum();
        self.fixed.set(fixes);
        if !written.is_empty() && !self.cli.quiet {
            eprintln!(
                "Fixed {fixes} {} in {} {}.",
                plural(fixes, "hazard"),
                written.len(),
                plural(written.len(), "file")
            );
        }
        self.hint_unsafe_fixes(&reports);
        // A file that was not written still holds its hazards: report those, not the fixed text's.
        let written: Vec<PathBuf> = written.iter().map(|(report, _)| report.path.clone()).collect();
        let unwritten = changed(&reports).len() != written.len();
        let shown = if unwritten {
            // Both runs list the same files in path order.
            let before = run(files, &self.settings, self.scope.as_deref(), FixMode::Report, self.cache.as_ref());
            reports
                .into_iter()
                .zip(before)
                .map(|(after, before)| if written.contains(&after.path) { after } else { before })
                .collect()
        } else {
            reports
        };
        Ok(status.max(self.report(&shown)?))
    }

    /// Write each changed file atomically, refusing those git could not give back: files with
    /// uncommitted changes (unless --allow-dirty) and files outside any repository (unless
    /// --allow-no-vcs or --allow-dirty), as `cargo fix` does.
    fn write_fixed<'r>(&self, reports: &'r [FileReport]) -> Result<(Vec<(&'r FileReport, &'r Checked)>, Status)> {
        let mut changed = changed(reports);
        let mut status = Status::Clean;
        let paths: Vec<PathBuf> = changed.iter().map(|(report, _)| report.path.clone()).collect();
        let found = unprotected(&paths)?;
        let mut refused = Vec::new();
        if !self.cli.allow_no_vcs && !self.cli.allow_dirty && !found.outside_git.is_empty() {
            eprintln!(
                "error: not writing {} {} outside a git repository, where nothing could give the old text back \
                 (pass --allow-no-vcs to write them anyway):",
                found.outside_git.len(),
                plural(found.outside_git.len(), "file")
            );
            found.outside_git.iter().for_each(|path| eprintln!("  {}", display_path(path)));
            refused.extend(found.outside_git);
        }
        if !self.cli.allow_dirty && !found.dirty.is_empty() {
            eprintln!(
                "error: not writing {} {} with uncommitted changes (commit or stash them, or pass --allow-dirty):",
                found.dirty.len(),
                plural(found.dirty.len(), "file")
            );
            found.dirty.iter().for_each(|path| eprintln!("  {}", display_path(path)));
            refused.extend(found.dirty);
        }
        if !refused.is_empty() {
            changed.retain(|(report, _)| !refused.contains(&report.path));
            status = Status::Error;
        }
        let mut written = Vec::new();
        for (report, checked) in changed {
            match tcfix::write::write_atomically(&report.path, &checked.text) {
                Ok(()) => written.push((report, checked)),
                Err(err) => {
                    eprintln!("{}: error: could not write the fixes: {err}", display_path(&report.path));
                    status = Status::Error;
                }
            }
        }
        Ok((written, status))
    }

    /// `--apply --worktree DIR`: fix a fresh worktree of HEAD and commit there. Each file is
    /// read from the worktree but analysed under the user's own path, so the configuration's
    /// `exclude` and `per-file-ignores` apply as they would in place.
    fn apply_in_worktree(&mut self, cwd: &Path, dir: &Path) -> Result<Status> {
        let worktree = Worktree::create(cwd, dir, self.cli.branch.as_deref())?;
        let (files, mut status) = self.files()?;
        let mut texts = Vec::new();
        for file in files {
            match SourceFile::read(&worktree.map(&file)?) {
                Ok(text) => texts.push((file, text)),
                // Not in HEAD (a new file of the user's): nothing of it is in the worktree.
                Err(SourceError::Io(_)) => {}
                Err(error) => {
                    print_error(&file, &error);
                    status = Status::Error;
                }
            }
        }
        let reports = run_texts(&texts, &self.settings, self.scope.as_deref(), self.fix_mode());
        let mut written = Vec::new();
        for (report, checked) in changed(&reports) {
            let target = worktree.map(&report.path)?;
            tcfix::write::write_atomically(&target, &checked.text)
                .with_context(|| format!("{}: could not write the fixes", target.display()))?;
            written.push((target, checked.applied.clone()));
        }
        if written.is_empty() {
            eprintln!(
                "No fixes to make: created branch `{}` in {} with nothing to commit.",
                worktree.branch,
                dir.display()
            );
        } else {
            let message = commit_message(&worktree, &written);
            let paths: Vec<PathBuf> = written.iter().map(|(path, _)| path.clone()).collect();
            let commit = worktree.commit(&paths, &message)?;
            let fixes: usize = written.iter().map(|(_, applied)| applied.len()).sum();
            eprintln!(
                "Fixed {fixes} {} in {} {} on branch `{}` ({}), in {}; your working tree is unchanged.",
                plural(fixes, "hazard"),
                written.len(),
                plural(written.len(), "file"),
                worktree.branch,
                &commit[..12],
                dir.display()
            );
        }
        Ok(status.max(self.report(&reports)?))
    }

    /// `--patch-dir DIR`: one `git format-patch` file per rule, each on top of the last.
    fn patch_series(&self, files: &[PathBuf], dir: &Path) -> Result<Status> {
        let (mut texts, mut status) = (Vec::new(), Status::Clean);
        for path in files {
            match SourceFile::read(path) {
                Ok(text) => texts.push((path.clone(), text)),
                Err(error) => {
                    print_error(path, &error);
                    status = Status::Error;
                }
            }
        }
        let mut patches = Vec::new();
        for rule in RULES.iter().filter(|rule| self.settings.selection.enabled(rule)) {
            let mut settings = self.settings.clone();
            settings.selection.select = vec![rule.code.to_string()];
            // Files under a configuration of their own take the same one rule.
            if let Some((nearest, command_line)) = self.settings.nearest.as_deref() {
                let command_line = CommandLine { select: vec![rule.code.to_string()], ..command_line.clone() };
                settings.nearest = Some(Arc::new((nearest.clone(), command_line)));
            }
            let reports = run_texts(&texts, &settings, self.scope.as_deref(), self.fix_mode());
            status = status.max(worst(&reports));
            let mut patch = RulePatch { rule, diffs: Vec::new(), sites: Vec::new() };
            for (report, checked) in changed(&reports) {
                let shown = display_path(&report.path);
                patch.diffs.push(unified_diff(&shown, checked.original(), &checked.text));
                patch.sites.extend(checked.applied.iter().map(|fix| format!("{shown}:{}: {}", fix.line, fix.message)));
                let text = texts.iter_mut().find(|(path, _)| path == &report.path).expect("read above");
                text.1 = checked.text.clone();
            }
            if !patch.diffs.is_empty() {
                patches.push(patch);
            }
        }
        if patches.is_empty() {
            eprintln!("No fixes to write.");
            return Ok(status);
        }
        std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        let date = utc_timestamp();
        let author = author();
        for (number, patch) in patches.iter().enumerate() {
            let (name, text) = format_patch(number + 1, patches.len(), patch, &author, &date);
            let path = dir.join(&name);
            std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
            eprintln!("{}", display_path(&path));
        }
        Ok(status.max(Status::Findings))
    }

    /// `--add-noqa`: silence every current finding with a comment on its line.
    fn add_noqa(&self, files: &[PathBuf]) -> Status {
        let reports = self.reports(files, FixMode::Report);
        let mut with_comments = Vec::new();
        let mut comments = std::collections::HashMap::new();
        for report in &reports {
            let Ok(checked) = &report.outcome else { continue };
            if checked.diagnostics.is_empty() {
                continue;
            }
            let Ok(source) = SourceFile::parse(&report.path, checked.text.clone()) else { continue };
            let (edits, skipped) = tcfix::suppress::noqa_edits(&source, &checked.diagnostics);
            for line in skipped {
                eprintln!(
                    "{}:{line}: warning: no noqa comment added: the line ends inside a string or continues with `\\`",
                    display_path(&report.path)
                );
            }
            comments.insert(report.path.clone(), edits.len());
            let text = tcfix::fix::edit::apply_edits(&checked.text, &edits.iter().collect::<Vec<_>>());
            if SourceFile::parse(&report.path, text.clone()).is_err() {
                let shown = display_path(&report.path);
                eprintln!(
                    "{shown}: warning: no noqa comments added: they would leave invalid Python; please report this"
                );
                continue;
            }
            with_comments.push(FileReport {
                path: report.path.clone(),
                outcome: Ok(Checked::rewritten(checked.text.clone(), text)),
            });
        }
        let (written, status) = match self.write_fixed(&with_comments) {
            Ok(done) => done,
            Err(err) => {
                eprintln!("error: {err:#}");
                return Status::Error;
            }
        };
        // Count only what was written: a refused file keeps none of its comments.
        let added: usize = written.iter().map(|(report, _)| comments[&report.path]).sum();
        let refused = with_comments.len() - written.len();
        let not_written = match refused {
            0 => String::new(),
            _ => format!(" {refused} {} not written (above).", plural(refused, "file")),
        };
        eprintln!(
            "Added {added} noqa {} in {} {}.{not_written}",
            plural(added, "comment"),
            written.len(),
            plural(written.len(), "file")
        );
        worst(&reports).max(status)
    }

    /// `tcfix -`: one file from standard input; with --apply the fixed source goes to stdout.
    fn stdin(&self) -> Result<Status> {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("cannot read standard input")?;
        let path = self.cli.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("-"));
        let mode = if self.cli.apply || self.cli.diff { self.fix_mode() } else { FixMode::Report };
        let reports = run_texts(&[(path.clone(), text.clone())], &self.settings, self.scope.as_deref(), mode);
        let checked = match &reports[0].outcome {
            Ok(checked) => checked,
            Err(error) => {
                print_error(&path, error);
                if self.cli.apply {
                    // An editor piping its buffer through tcfix must get it back untouched.
                    write(&mut std::io::stdout().lock(), &text)?;
                }
                return Ok(Status::Error);
            }
        };
        let shown = display_path(&path);
        if self.cli.apply {
            // A file with nothing to fix keeps no text of its own: give the input back as it came.
            let fixed = if checked.changed() { &checked.text } else { &text };
            write(&mut std::io::stdout().lock(), fixed)?;
            eprint!("{}", text::diagnostics(&shown, &checked.text, &checked.diagnostics, self.unsafe_fixes));
            return Ok(if checked.diagnostics.is_empty() { Status::Clean } else { Status::Findings });
        }
        if self.cli.diff {
            write(&mut std::io::stdout().lock(), &unified_diff(&shown, checked.original(), &checked.text))?;
            return Ok(if checked.changed() { Status::Findings } else { Status::Clean });
        }
        self.report(&reports)
    }
}

/// A bar on a terminal, for runs long enough to want one; never in pipes, files or CI logs.
fn progress_bar(files: usize, quiet: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    let wanted = files >= 500 && !quiet && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
    wanted.then(|| {
        let bar = indicatif::ProgressBar::new(2 * files as u64);
        let style = indicatif::ProgressStyle::with_template("{spinner} {pos}/{len} file passes {wide_bar}");
        bar.set_style(style.unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()));
        bar
    })
}

/// Whether a walked file lies under a directory named on the command line (`.` and `./x` as
/// the walk writes them, or not).
fn lies_under(file: &Path, dir: &Path) -> bool {
    let plain =
        |path: &Path| -> PathBuf { path.components().filter(|part| *part != std::path::Component::CurDir).collect() };
    plain(file).starts_with(plain(dir))
}

fn changed(reports: &[FileReport]) -> Vec<(&FileReport, &Checked)> {
    reports
        .iter()
        .filter_map(|report| {
            report.outcome.as_ref().ok().filter(|checked| checked.changed()).map(|checked| (report, checked))
        })
        .collect()
}

/// `Status::Error` if any file could not be read or parsed.
fn worst(reports: &[FileReport]) -> Status {
    if reports.iter().any(|report| report.outcome.is_err()) { Status::Error } else { Status::Clean }
}

/// `Name <email>` for the patches' `From:`: the user's git identity, as `git format-patch` writes
/// it; tcfix only when git has none.
fn author() -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    match identity(&cwd) {
        Some((name, email)) => tcfix::patch::mail_address(&name, &email),
        None => {
            eprintln!(
                "warning: git has no user.name and user.email: the patches name `tcfix <tcfix@localhost>` as \
                 their author (set yours with `git config --global user.name ...` and `user.email ...`)"
            );
            "tcfix <tcfix@localhost>".to_string()
        }
    }
}

fn commit_message(worktree: &Worktree, written: &[(PathBuf, Vec<tcfix::fix::apply::AppliedFix>)]) -> String {
    let mut message = String::from("Fix torch.compile hazards (tcfix)\n\n");
    for rule in RULES {
        let sites: Vec<String> = written
            .iter()
            .flat_map(|(path, applied)| {
                let shown = path.strip_prefix(&worktree.dir).unwrap_or(path).display().to_string();
                applied
                    .iter()
                    .filter(|fix| fix.rule == *rule)
                    .map(move |fix| format!("- {shown}:{}: {}", fix.line, fix.message))
            })
            .collect();
        if !sites.is_empty() {
            message.push_str(&format!("{} {} ({}):\n{}\n\n", rule.code, rule.name, rule.summary, sites.join("\n")));
        }
    }
    message.trim_end().to_string() + &format!("\n\n{}\n", tcfix::patch::trailer())
}

fn print_error(path: &Path, error: &SourceError) {
    let shown = display_path(path);
    match error {
        SourceError::Syntax { line, column, message } => eprintln!("{shown}:{line}:{column}: error: {message}"),
        _ => eprintln!("{shown}: error: {error}"),
    }
}

fn warn_dropped(path: &Path, checked: &Checked) {
    for dropped in &checked.dropped {
        eprintln!(
            "{}:{}: warning: {} fix not applied, it would leave invalid Python ({}); please report this",
            display_path(path),
            dropped.line,
            dropped.rule.code,
            dropped.title
        );
    }
}

fn write(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes()).context("cannot write the output")
}

fn plural(count: usize, noun: &str) -> String {
    match (count, noun) {
        (1, _) => noun.to_string(),
        (_, "fix") => "fixes".to_string(),
        _ => format!("{noun}s"),
    }
}
