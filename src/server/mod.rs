//! `tcfix server`: a language server over stdio. The editor sends the buffers' text as it
//! changes; tcfix answers with the hazards in it (diagnostics), their fixes (code actions) and
//! each rule's documentation (hover).
//!
//! One thread runs the loop and analyses the buffers itself (a 5,000-line file in tens of
//! milliseconds); changes that arrive meanwhile are applied together before the next analysis. A buffer's analysis waits `DEBOUNCE` after its first unanalysed change, so a burst
//! of keystrokes is analysed once. Only the project index is built on other threads.

mod code_actions;
mod diagnostics;
mod documents;
mod hover;
mod why;
mod workspace;

use rustc_hash::FxHashMap as HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response, ResponseError};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{CodeActionRequest, HoverRequest, RegisterCapability, Request as _};
use lsp_types::{
    CodeActionOptions, CodeActionProviderCapability, DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher,
    GlobPattern, HoverProviderCapability, InitializeParams, InitializeResult, PositionEncodingKind,
    PublishDiagnosticsParams, Registration, RegistrationParams, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Url,
};
use serde::de::DeserializeOwned;

use crate::config::FILE_NAMES;
use crate::discover::is_python;
use crate::server::documents::{Analysis, Document, Encoding, LineIndex};
use crate::server::workspace::{ANALYSIS_STACK, Summaries, Workspace, index_project};

/// How long after a buffer's first unanalysed change its diagnostics wait for more changes.
/// Short, so that a diagnostic still appears well within 100 ms of a change.
const DEBOUNCE: Duration = Duration::from_millis(15);

/// A request that panics on purpose, answered only when this variable is set: the tests prove
/// with it that a crash in one request is answered with an error and the server goes on.
const PANIC_FOR_TESTS: &str = "tcfix/panicForTests";
const PANIC_FOR_TESTS_VARIABLE: &str = "TCFIX_SERVER_PANIC_FOR_TESTS";

/// Serve the client on stdin and stdout until it says `exit`.
pub fn run() -> Result<()> {
    let (connection, io_threads) = Connection::stdio();
    // The loop analyses buffers, which recurses once per level of their syntax trees.
    let server = std::thread::Builder::new().name("tcfix server".to_string()).stack_size(ANALYSIS_STACK);
    let outcome = server
        .spawn(move || serve(connection))
        .context("cannot start the server's thread")?
        .join()
        .map_err(|_| anyhow!("the server crashed"))?;
    io_threads.join().context("the connection to the editor failed")?;
    outcome
}

fn serve(connection: Connection) -> Result<()> {
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params).context("the editor's `initialize` request")?;
    let encoding = position_encoding(&params);
    let result = InitializeResult {
        capabilities: capabilities(encoding),
        server_info: Some(ServerInfo {
            name: "tcfix".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    connection.initialize_finish(id, serde_json::to_value(result)?)?;
    let root = workspace_root(&params);
    // Paths the configuration and the baseline name are resolved as a CLI run in the root would.
    if let Err(error) = std::env::set_current_dir(&root) {
        eprintln!("tcfix server: cannot work in {}: {error}", root.display());
    }
    let mut server = Server::new(connection, root, encoding);
    server.show_config_error();
    server.start_indexing();
    if watches_files(&params) {
        server.watch_files();
    }
    server.main_loop()
}

/// UTF-8 positions when the client offers them (no conversion to UTF-16 units), else the
/// protocol's default.
fn position_encoding(params: &InitializeParams) -> Encoding {
    let offered = params.capabilities.general.as_ref().and_then(|general| general.position_encodings.as_ref());
    match offered {
        Some(kinds) if kinds.contains(&PositionEncodingKind::UTF8) => Encoding::Utf8,
        _ => Encoding::Utf16,
    }
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..TextDocumentSyncOptions::default()
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![lsp_types::CodeActionKind::QUICKFIX, code_actions::fix_all_kind()]),
            ..CodeActionOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        execute_command_provider: Some(lsp_types::ExecuteCommandOptions {
            commands: vec![why::COMMAND.to_string()],
            ..Default::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// The first workspace folder, else the root the client names, else the current directory.
#[allow(deprecated)] // `root_uri` and `root_path`: older clients (Neovim 0.7) send only these
fn workspace_root(params: &InitializeParams) -> PathBuf {
    let folder = params.workspace_folders.iter().flatten().map(|folder| &folder.uri).next();
    folder
        .or(params.root_uri.as_ref())
        .and_then(|uri| uri.to_file_path().ok())
        .or_else(|| params.root_path.as_ref().map(PathBuf::from))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

fn watches_files(params: &InitializeParams) -> bool {
    let workspace = params.capabilities.workspace.as_ref();
    workspace.and_then(|w| w.did_change_watched_files.as_ref()).and_then(|w| w.dynamic_registration) == Some(true)
}

/// What the background threads report to the loop.
enum Event {
    /// The project index of one configuration (`generation`: older ones are dropped).
    Indexed { generation: u64, summaries: Summaries },
}

/// Whether the loop goes on after a message.
enum Flow {
    Continue,
    Exit,
}

struct Server {
    connection: Connection,
    documents: HashMap<Url, Document>,
    workspace: Workspace,
    encoding: Encoding,
    events: (Sender<Event>, Receiver<Event>),
    /// Counts index builds: a build for an older configuration is dropped.
    index_generation: u64,
    /// The configuration file a diagnostic is shown on, to clear it once the file is fixed.
    config_error_shown: Option<PathBuf>,
    shutdown: bool,
}

impl Server {
    fn new(connection: Connection, root: PathBuf, encoding: Encoding) -> Self {
        Server {
            connection,
            documents: HashMap::default(),
            workspace: Workspace::new(root),
            encoding,
            events: crossbeam_channel::unbounded(),
            index_generation: 0,
            config_error_shown: None,
            shutdown: false,
        }
    }

    fn main_loop(&mut self) -> Result<()> {
        let messages = self.connection.receiver.clone();
        let events = self.events.1.clone();
        loop {
            let due = self.documents.values().filter_map(|document| document.due).min();
            let wake = due.map_or_else(crossbeam_channel::never, crossbeam_channel::at);
            select! {
                recv(messages) -> message => {
                    let message = message.map_err(|_| anyhow!("the editor closed the connection without `exit`"))?;
                    if let Flow::Exit = self.handle(message) {
                        return match self.shutdown {
                            true => Ok(()),
                            false => bail!("the editor sent `exit` without `shutdown` first"),
                        };
                    }
                }
                recv(events) -> event => if let Ok(event) = event { self.on_event(event) },
                recv(wake) -> _ => {}
            }
            // Changes that queued up during an analysis are all applied before the next one.
            if messages.is_empty() {
                self.analyse_due();
            }
        }
    }

    fn handle(&mut self, message: Message) -> Flow {
        match message {
            Message::Request(request) => {
                let response = self.answer(request);
                self.send(response.into());
            }
            Message::Notification(notification) if notification.method == "exit" => return Flow::Exit,
            Message::Notification(notification) => {
                let method = notification.method.clone();
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| self.on_notification(notification))) {
                    eprintln!(
                        "tcfix server: crashed handling {method} ({}); please report this bug",
                        panic_message(&panic)
                    );
                }
            }
            // Replies to the server's own requests (registering the file watchers): nothing to do.
            Message::Response(_) => {}
        }
        Flow::Continue
    }

    /// A request's answer; a panic while answering is answered as an internal error.
    fn answer(&mut self, request: Request) -> Response {
        let (id, method) = (request.id.clone(), request.method.clone());
        if self.shutdown {
            return Response::new_err(id, ErrorCode::InvalidRequest as i32, "the server is shutting down".to_string());
        }
        match catch_unwind(AssertUnwindSafe(|| self.on_request(request))) {
            Ok(Ok(result)) => Response::new_ok(id, result),
            Ok(Err(error)) => Response { id, result: None, error: Some(error) },
            Err(panic) => {
                let message =
                    format!("tcfix crashed answering {method} ({}); please report this bug", panic_message(&panic));
                Response::new_err(id, ErrorCode::InternalError as i32, message)
            }
        }
    }

    fn on_request(&mut self, request: Request) -> Result<serde_json::Value, ResponseError> {
        match request.method.as_str() {
            "shutdown" => {
                self.shutdown = true;
                Ok(serde_json::Value::Null)
            }
            CodeActionRequest::METHOD => {
                let params: lsp_types::CodeActionParams = params_of(request)?;
                let uri = &params.text_document.uri;
                self.analyse_if_due(uri);
                let actions = match self.documents.get(uri) {
                    Some(document) => code_actions::code_actions(&params, document, &self.workspace, self.encoding),
                    None => Vec::new(),
                };
                Ok(serde_json::to_value(actions).expect("code actions serialise"))
            }
            HoverRequest::METHOD => {
                let params: lsp_types::HoverParams = params_of(request)?;
                let position = params.text_document_position_params;
                self.analyse_if_due(&position.text_document.uri);
                let document = self.documents.get(&position.text_document.uri);
                let found = document.and_then(|document| hover::hover(document, position.position, self.encoding));
                Ok(serde_json::to_value(found).expect("a hover serialises"))
            }
            lsp_types::request::ExecuteCommand::METHOD => {
                let params: lsp_types::ExecuteCommandParams = params_of(request)?;
                let answer = why::answer(&params, &self.documents, &self.workspace)?;
                let shown = lsp_types::ShowMessageParams { typ: lsp_types::MessageType::INFO, message: answer.clone() };
                self.send(Notification::new(ShowMessage::METHOD.to_string(), shown).into());
                Ok(serde_json::Value::String(answer))
            }
            PANIC_FOR_TESTS if std::env::var_os(PANIC_FOR_TESTS_VARIABLE).is_some() => {
                panic!("a panic the tests asked for")
            }
            method => Err(ResponseError {
                code: ErrorCode::MethodNotFound as i32,
                message: format!("tcfix server does not answer {method}"),
                data: None,
            }),
        }
    }

    fn on_notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some(params) = notification_params::<lsp_types::DidOpenTextDocumentParams>(notification) else {
                    return;
                };
                let document = params.text_document;
                let opened = Document::new(&document.uri, &document.language_id, document.text, document.version);
                self.documents.insert(document.uri, opened);
            }
            DidChangeTextDocument::METHOD => {
                let Some(params) = notification_params::<lsp_types::DidChangeTextDocumentParams>(notification) else {
                    return;
                };
                if let Some(document) = self.documents.get_mut(&params.text_document.uri) {
                    document.change(params.text_document.version, params.content_changes, self.encoding, DEBOUNCE);
                }
            }
            DidCloseTextDocument::METHOD => {
                let Some(params) = notification_params::<lsp_types::DidCloseTextDocumentParams>(notification) else {
                    return;
                };
                if let Some(closed) = self.documents.remove(&params.text_document.uri) {
                    self.workspace.closed(&closed.path);
                    self.publish(params.text_document.uri, Vec::new(), None);
                }
            }
            DidSaveTextDocument::METHOD => {
                let Some(params) = notification_params::<lsp_types::DidSaveTextDocumentParams>(notification) else {
                    return;
                };
                if let Ok(path) = params.text_document.uri.to_file_path() {
                    self.file_changed(&path);
                }
            }
            DidChangeWatchedFiles::METHOD => {
                let Some(params) = notification_params::<lsp_types::DidChangeWatchedFilesParams>(notification) else {
                    return;
                };
                for change in params.changes {
                    if let Ok(path) = change.uri.to_file_path() {
                        self.file_changed(&path);
                    }
                }
            }
            _ => {}
        }
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::Indexed { generation, summaries } if generation == self.index_generation => {
                self.workspace.set_summaries(summaries);
                self.reanalyse_all();
            }
            Event::Indexed { .. } => {}
        }
    }

    /// A file saved, or changed on disk: the configuration is read again, or the file's part of
    /// the project index, and the open buffers are analysed again (their facts may change).
    fn file_changed(&mut self, path: &Path) {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        if FILE_NAMES.contains(&name) {
            self.reload_config();
        } else if is_python(path) {
            self.workspace.file_changed(path);
            self.reanalyse_all();
        }
    }

    fn reload_config(&mut self) {
        self.workspace.load_config();
        self.show_config_error();
        // `exclude` may have changed what the index holds.
        self.start_indexing();
        self.reanalyse_all();
    }

    fn reanalyse_all(&mut self) {
        let now = Instant::now();
        self.documents.values_mut().for_each(|document| document.due = Some(now));
    }

    /// Summarise the workspace's files on another thread; the loop gets them as an event.
    fn start_indexing(&mut self) {
        self.index_generation += 1;
        let (generation, sender) = (self.index_generation, self.events.0.clone());
        let (root, config) = (self.workspace.root.clone(), self.workspace.config.clone());
        let started = std::thread::Builder::new().name("tcfix index".to_string()).spawn(move || {
            if let Ok(summaries) = catch_unwind(|| index_project(&root, &config)) {
                let _ = sender.send(Event::Indexed { generation, summaries });
            }
        });
        if let Err(error) = started {
            // Buffers are then analysed on their own, as `tcfix -` analyses one file.
            eprintln!("tcfix server: cannot index the project: {error}");
        }
    }

    /// Ask the editor to report changes to Python and configuration files (saved by other
    /// programs, or by `git checkout`).
    fn watch_files(&mut self) {
        let mut globs = vec!["**/*.py".to_string(), "**/*.pyi".to_string()];
        globs.extend(FILE_NAMES.map(|name| format!("**/{name}")));
        let watchers =
            globs.into_iter().map(|glob| FileSystemWatcher { glob_pattern: GlobPattern::String(glob), kind: None });
        let options = DidChangeWatchedFilesRegistrationOptions { watchers: watchers.collect() };
        let registration = Registration {
            id: "tcfix-watched-files".to_string(),
            method: DidChangeWatchedFiles::METHOD.to_string(),
            register_options: Some(serde_json::to_value(options).expect("watchers serialise")),
        };
        let params = RegistrationParams { registrations: vec![registration] };
        let id = RequestId::from("tcfix-watched-files".to_string());
        self.send(Request::new(id, RegisterCapability::METHOD.to_string(), params).into());
    }

    fn analyse_due(&mut self) {
        // Editors report changes to the files they have open; a configuration file changed
        // elsewhere is noticed here.
        if self.workspace.config_changed() {
            self.reload_config();
        }
        let now = Instant::now();
        let due: Vec<Url> = self
            .documents
            .iter()
            .filter(|(_, document)| document.due.is_some_and(|at| at <= now))
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in due {
            self.analyse(&uri);
        }
    }

    /// A request about a buffer is answered for its text now, not the text last analysed.
    fn analyse_if_due(&mut self, uri: &Url) {
        if self.documents.get(uri).is_some_and(|document| document.due.is_some()) {
            self.analyse(uri);
        }
    }

    /// Analyse a buffer and publish its diagnostics. A text that does not parse keeps the last
    /// good ones (mid-edit, most text does not parse, and findings that flicker away are noise)
    /// and shows the syntax error beside them, as ruff does.
    fn analyse(&mut self, uri: &Url) {
        let Some(document) = self.documents.get_mut(uri) else { return };
        document.due = None;
        if !document.python {
            return;
        }
        let found = if self.workspace.excludes(&document.path) {
            Ok(Ok((Vec::new(), Default::default())))
        } else {
            catch_unwind(AssertUnwindSafe(|| self.workspace.analyse(&document.path, &document.text)))
        };
        let (diagnostics, facts) = match found {
            Ok(Ok(found)) => found,
            Ok(Err(error)) => {
                let lines = LineIndex::new(&document.text);
                let Some(syntax) = diagnostics::syntax_error(&error, &document.text, &lines, self.encoding) else {
                    return;
                };
                let mut published: Vec<lsp_types::Diagnostic> = match &document.analysis {
                    Some(last) => {
                        let lines = LineIndex::new(&last.text);
                        let to_lsp = |found| diagnostics::to_lsp(found, uri, &last.text, &lines, self.encoding);
                        last.diagnostics.iter().map(to_lsp).collect()
                    }
                    None => Vec::new(),
                };
                published.push(syntax);
                let version = document.version;
                self.publish(uri.clone(), published, Some(version));
                return;
            }
            Err(panic) => {
                let shown = document.path.display();
                eprintln!(
                    "tcfix server: crashed analysing {shown} ({}); please report this bug",
                    panic_message(&panic)
                );
                return;
            }
        };
        let lines = LineIndex::new(&document.text);
        let published = diagnostics
            .iter()
            .map(|diagnostic| diagnostics::to_lsp(diagnostic, uri, &document.text, &lines, self.encoding))
            .collect();
        let version = document.version;
        document.analysis = Some(Analysis { version, text: document.text.clone(), diagnostics, facts });
        self.publish(uri.clone(), published, Some(version));
    }

    /// A configuration that does not load is shown on its file, at the place the TOML parser
    /// names (else its first line); the last good configuration stays in use meanwhile.
    fn show_config_error(&mut self) {
        if let Some(path) = self.config_error_shown.take()
            && let Ok(uri) = Url::from_file_path(&path)
        {
            self.publish(uri, Vec::new(), None);
        }
        let Some(error) = self.workspace.config_error.clone() else { return };
        eprintln!("tcfix server: error: {}", error.message);
        let Ok(uri) = Url::from_file_path(&error.path) else { return };
        let text = std::fs::read_to_string(&error.path).unwrap_or_default();
        let span = error.span.clone().unwrap_or(0..0);
        let range = ruff_text_size::TextRange::new(
            ruff_text_size::TextSize::new(span.start.min(text.len()) as u32),
            ruff_text_size::TextSize::new(span.end.min(text.len()) as u32),
        );
        let diagnostic = lsp_types::Diagnostic {
            range: LineIndex::new(&text).range(range, &text, self.encoding),
            severity: Some(lsp_types::DiagnosticSeverity::ERROR),
            source: Some("tcfix".to_string()),
            message: format!(
                "{} (until it loads, tcfix uses the last configuration that did, or its defaults)",
                error.message
            ),
            ..lsp_types::Diagnostic::default()
        };
        self.publish(uri, vec![diagnostic], None);
        self.config_error_shown = Some(error.path);
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_string(), params).into());
    }

    fn send(&self, message: Message) {
        // Only fails once the editor has gone: the loop then ends at the next read.
        let _ = self.connection.sender.send(message);
    }
}

fn params_of<P: DeserializeOwned>(request: Request) -> Result<P, ResponseError> {
    serde_json::from_value(request.params).map_err(|error| ResponseError {
        code: ErrorCode::InvalidParams as i32,
        message: format!("{}: {error}", request.method),
        data: None,
    })
}

/// A notification's parameters; a malformed one is logged and ignored (there is no one to
/// answer).
fn notification_params<P: DeserializeOwned>(notification: Notification) -> Option<P> {
    match serde_json::from_value(notification.params) {
        Ok(params) => Some(params),
        Err(error) => {
            eprintln!("tcfix server: ignoring a malformed {}: {error}", notification.method);
            None
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}
