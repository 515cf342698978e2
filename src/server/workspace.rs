//! The project around the open buffers: its configuration (`tcfix.toml`, `[tool.tcfix]` in
//! `pyproject.toml`, found as the CLI finds it from the workspace's root), reloaded when a
//! configuration file changes, and the project index of its Python files, built once in the
//! background and updated as files are saved. A buffer is analysed against that index with its
//! own summary in place of the file's on disk.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rayon::prelude::*;

use crate::baseline::Baseline;
use crate::config::{Config, FILE_NAMES};
use crate::diagnostic::Diagnostic;
use crate::discover::discover;
use crate::model::compiled::reach::mark_region;
use crate::model::file::FileModel;
use crate::model::file::facts::Facts;
use crate::model::index::{FileSummary, ProjectIndex, module_name};
use crate::rules::{Settings, names_a_rule};
use crate::scope::Scope;
use crate::source::{SourceError, SourceFile};

/// A configuration that did not load: the file to show it on, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    /// Where in the file, as a byte range, when the TOML parser says.
    pub span: Option<std::ops::Range<usize>>,
    pub message: String,
}

/// The project's summaries, by path relative to the workspace's root (the module names the
/// index resolves imports by are made from these paths, as the CLI makes them from a run in the
/// root).
pub type Summaries = BTreeMap<PathBuf, FileSummary>;

pub struct Workspace {
    pub root: PathBuf,
    pub config: Arc<Config>,
    pub settings: Settings,
    /// The findings its baseline records are left out (`None`: no baseline).
    pub scope: Option<Arc<Scope>>,
    /// The configuration that failed to load, while it does (the last good one stays in use).
    pub config_error: Option<ConfigError>,
    /// The configuration files that could apply, with their modification times, to notice a
    /// change even when the editor does not report one.
    config_stamps: Vec<(PathBuf, Option<(SystemTime, u64)>)>,
    summaries: Summaries,
    /// Counts changes to `summaries`: facts computed before a change are stale.
    revision: u64,
    /// Each buffer's last facts, with the revision and its summary they were computed from
    /// (most edits change no summary: the index need not be built again for them).
    facts: HashMap<PathBuf, (u64, String, Facts)>,
}

impl Workspace {
    pub fn new(root: PathBuf) -> Self {
        let mut workspace = Workspace {
            config: Arc::new(Config::default()),
            settings: Settings::default(),
            scope: None,
            config_error: None,
            config_stamps: Vec::new(),
            summaries: Summaries::new(),
            revision: 0,
            facts: HashMap::default(),
            root,
        };
        workspace.load_config();
        workspace
    }

    /// Read the configuration again. On an error the last good configuration stays in use and
    /// the error is kept to show on its file.
    pub fn load_config(&mut self) {
        self.config_stamps = config_stamps(&self.root);
        let loaded = Config::discover(&self.root, None, false, names_a_rule).and_then(|config| {
            let config = Arc::new(config);
            Ok((scope(&config)?, config))
        });
        match loaded {
            Ok((scope, config)) => {
                for warning in &config.warnings {
                    eprintln!("tcfix server: warning: {warning}");
                }
                self.settings = Settings::from_config(&config, &Default::default());
                self.scope = scope;
                self.config = config;
                self.config_error = None;
            }
            Err(error) => self.config_error = Some(self.config_error_of(&error)),
        }
    }

    /// Whether a configuration file appeared, changed or went away since it was last read.
    pub fn config_changed(&self) -> bool {
        config_stamps(&self.root) != self.config_stamps
    }

    fn config_error_of(&self, error: &anyhow::Error) -> ConfigError {
        let message = format!("{error:#}");
        let existing: Vec<PathBuf> =
            self.config_stamps.iter().filter(|(_, stamp)| stamp.is_some()).map(|(p, _)| p.clone()).collect();
        // Every configuration error starts with the path of its file.
        let path = existing
            .iter()
            .find(|path| message.starts_with(&path.display().to_string()))
            .or(existing.first())
            .cloned()
            .unwrap_or_else(|| self.root.join("tcfix.toml"));
        let span = error.downcast_ref::<toml::de::Error>().and_then(toml::de::Error::span);
        ConfigError { path, span, message }
    }

    /// The path a file's module name is made from: relative to the root, or the bare file name
    /// for a file outside the workspace.
    pub fn relative(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(relative) => relative.to_path_buf(),
            Err(_) => PathBuf::from(path.file_name().unwrap_or(path.as_os_str())),
        }
    }

    pub fn excludes(&self, path: &Path) -> bool {
        self.config.excludes(path)
    }

    /// The index the background thread built (see `index_project`).
    pub fn set_summaries(&mut self, summaries: Summaries) {
        self.summaries = summaries;
        self.revision += 1;
    }

    /// A file saved or changed on disk: its summary is read again (dropped when it no longer
    /// parses or is gone, as a CLI run would leave it out).
    pub fn file_changed(&mut self, path: &Path) {
        let relative = self.relative(path);
        let summary = SourceFile::read(path).and_then(|text| crate::summarise(&relative, text));
        match summary {
            Ok(summary) if !self.excludes(path) => _ = self.summaries.insert(relative, summary),
            _ => _ = self.summaries.remove(&relative),
        }
        self.revision += 1;
    }

    /// A buffer's findings with the project's facts about it, and those facts.
    pub fn analyse(&mut self, path: &Path, text: &str) -> Result<(Vec<Diagnostic>, Facts), SourceError> {
        let relative = self.relative(path);
        let source = SourceFile::parse(&relative, text.to_string())?;
        let mut model = FileModel::build(&source, &module_name(&relative));
        let facts = self.facts_of(&relative, FileSummary::of(&model));
        mark_region(&mut model, &facts);
        let diagnostics = crate::check_model(&model, &self.settings.for_file(path), self.scope.as_deref());
        Ok((diagnostics, facts))
    }

    /// A buffer closed: its facts are not needed again.
    pub fn closed(&mut self, path: &Path) {
        self.facts.remove(&self.relative(path));
    }

    /// The index's facts about one file, given its summary now: those of its last analysis when
    /// neither its summary nor the others' changed since.
    fn facts_of(&mut self, relative: &Path, summary: FileSummary) -> Facts {
        // `FileSummary` has no `PartialEq`; its derived `Debug` text shows every field.
        let key = format!("{summary:?}");
        if let Some((revision, last_key, facts)) = self.facts.get(relative)
            && *revision == self.revision
            && *last_key == key
        {
            return facts.clone();
        }
        let facts = self.facts_with(relative, summary);
        self.facts.insert(relative.to_path_buf(), (self.revision, key, facts.clone()));
        facts
    }

    /// The index's facts about one file with this summary. The whole index is built again: it
    /// holds names and edges only, and a change to one file may change any file's facts.
    fn facts_with(&self, relative: &Path, summary: FileSummary) -> Facts {
        let mut files = Vec::with_capacity(self.summaries.len() + 1);
        let mut own = 0;
        for (path, other) in &self.summaries {
            if path.as_path() < relative {
                own += 1;
            }
            if path != relative {
                files.push(other.clone());
            }
        }
        // In path order, as a CLI run gives the index its files.
        files.insert(own, summary);
        ProjectIndex::new(files).facts().swap_remove(own)
    }
}

/// The scope a run with this configuration and no command-line options has (what `main.rs`
/// makes of the configuration, less the flags): the findings its baseline records are left out.
fn scope(config: &Config) -> anyhow::Result<Option<Arc<Scope>>> {
    let baseline = match config.baseline() {
        Some(path) => Some(Baseline::read(&path)?),
        None => None,
    };
    Ok(baseline.map(|baseline| Arc::new(Scope::new(None, Some(baseline)))))
}

/// Each configuration file that could apply, with its modification time and size (`None`: absent).
fn config_stamps(root: &Path) -> Vec<(PathBuf, Option<(SystemTime, u64)>)> {
    root.ancestors()
        .flat_map(|directory| FILE_NAMES.map(|name| directory.join(name)))
        .map(|path| {
            let metadata = std::fs::metadata(&path).ok().filter(|metadata| metadata.is_file());
            let stamp = metadata.and_then(|metadata| Some((metadata.modified().ok()?, metadata.len())));
            (path, stamp)
        })
        .collect()
}

/// The stack of the threads that summarise files: the analysis recurses once per level of a
/// file's syntax tree (see `project::ANALYSIS_STACK`).
pub const ANALYSIS_STACK: usize = 256 << 20;

/// Pass one of a CLI run over the workspace: every Python file the configuration does not
/// exclude, summarised in parallel on half the cores (the editor needs the rest).
pub fn index_project(root: &Path, config: &Config) -> Summaries {
    let files: Vec<PathBuf> =
        discover(&[root.to_path_buf()]).files.into_iter().filter(|file| !config.excludes(file)).collect();
    let summarise = || -> Summaries {
        files
            .par_iter()
            .filter_map(|path| {
                let relative = path.strip_prefix(root).ok()?.to_path_buf();
                let text = SourceFile::read(path).ok()?;
                // A file tcfix crashes on is left out of the index, as a CLI run leaves it out.
                let summary = std::panic::catch_unwind(|| crate::summarise(&relative, text)).ok()?.ok()?;
                Some((relative, summary))
            })
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().div_ceil(2));
    match rayon::ThreadPoolBuilder::new().num_threads(threads).stack_size(ANALYSIS_STACK).build() {
        Ok(pool) => pool.install(summarise),
        Err(_) => summarise(),
    }
}
