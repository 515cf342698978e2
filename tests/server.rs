//! `tcfix server` over stdio, as an editor drives it: JSON-RPC messages with `Content-Length`
//! headers to the built binary's stdin, and what it writes back on stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Long enough for a debug build on a busy CI machine; a working server answers in milliseconds.
const PATIENCE: Duration = Duration::from_secs(30);

const CLEAN: &str = "import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x
";

/// The line typed into `forward`: the emoji is two UTF-16 code units and four bytes.
const PRINT: &str = "        print(\"é😀\", x.shape)\n";

fn with_print() -> String {
    CLEAN.replace("        return x\n", &format!("{PRINT}        return x\n"))
}

struct Client {
    server: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Notifications read while waiting for something else.
    inbox: Vec<Value>,
    next_id: i64,
}

impl Client {
    /// A server for the workspace `root`, initialized (with these client capabilities).
    fn start(root: &Path, capabilities: Value) -> (Client, Value) {
        Client::start_in(root, root, capabilities)
    }

    /// `start`, with the server's process started in `cwd`.
    fn start_in(cwd: &Path, root: &Path, capabilities: Value) -> (Client, Value) {
        let mut server = Command::new(env!("CARGO_BIN_EXE_tcfix"))
            .arg("server")
            .current_dir(cwd)
            .env("TCFIX_SERVER_PANIC_FOR_TESTS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcfix server starts");
        let stdin = server.stdin.take().unwrap();
        let stdout = BufReader::new(server.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || read_messages(stdout, &sender));
        let mut client = Client { server, stdin, messages, inbox: Vec::new(), next_id: 0 };
        let root_uri = uri(root);
        let initialized =
            client.request("initialize", json!({"processId": null, "rootUri": root_uri, "capabilities": capabilities}));
        client.notify("initialized", json!({}));
        (client, initialized["result"].clone())
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The response (the whole message: `result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(&format!("the answer to {method}"), |message| {
            message["id"] == id && message.get("method").is_none()
        })
    }

    /// The next message that `wanted` accepts, among those already read first.
    fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.inbox.iter().position(&wanted) {
            return self.inbox.remove(at);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.messages.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(message) if wanted(&message) => return message,
                Ok(message) => self.inbox.push(message),
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within {PATIENCE:?}; read: {:#?}", self.inbox),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server ended before {what}; read: {:#?}", self.inbox)
                }
            }
        }
    }

    /// The next diagnostics published for `uri` (for `version`, when given).
    fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let published = self.wait_for(&format!("diagnostics for {uri} {version:?}"), |message| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && version.is_none_or(|version| message["params"]["version"] == version)
        });
        published["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn open(&mut self, uri: &str, text: &str) {
        let document = json!({"uri": uri, "languageId": "python", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": document}));
    }

    fn replace_text(&mut self, uri: &str, version: i64, text: &str) {
        let change = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
        self.notify("textDocument/didChange", change);
    }

    fn code_actions(&mut self, uri: &str, range: Value) -> Vec<Value> {
        let params = json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}});
        self.request("textDocument/codeAction", params)["result"].as_array().expect("a list of actions").clone()
    }

    fn code_actions_of_kind(&mut self, uri: &str, range: Value, kind: &str) -> Vec<Value> {
        let context = json!({"diagnostics": [], "only": [kind]});
        let params = json!({"textDocument": {"uri": uri}, "range": range, "context": context});
        self.request("textDocument/codeAction", params)["result"].as_array().expect("a list of actions").clone()
    }

    /// `shutdown`, then `exit`: the server's exit status.
    fn stop(mut self) -> ExitStatus {
        let answer = self.request("shutdown", Value::Null);
        assert_eq!(answer["result"], Value::Null, "{answer}");
        assert!(answer.get("error").is_none(), "{answer}");
        self.notify("exit", Value::Null);
        self.wait()
    }

    fn wait(mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.server.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn read_messages(mut stdout: BufReader<std::process::ChildStdout>, sender: &std::sync::mpsc::Sender<Value>) {
    loop {
        let mut length = None;
        loop {
            let mut header = String::new();
            if stdout.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some(value) = header.strip_prefix("Content-Length: ") {
                length = Some(value.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        stdout.read_exact(&mut body).unwrap();
        if sender.send(serde_json::from_slice(&body).expect("a JSON message")).is_err() {
            return;
        }
    }
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect()
}

/// `edits` (LSP text edits, UTF-16 positions) applied to `text`.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |position: &Value| -> usize {
        let (line, character) = (position["line"].as_u64().unwrap() as usize, position["character"].as_u64().unwrap());
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (at, c) in text[start..].char_indices() {
            if units >= character || c == '\n' {
                return start + at;
            }
            units += c.len_utf16() as u64;
        }
        text.len()
    };
    let mut edits: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|edit| (offset(&edit["range"]["start"]), offset(&edit["range"]["end"]), edit["newText"].as_str().unwrap()))
        .collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit.0));
    let mut text = text.to_string();
    for (start, end, new) in edits {
        text.replace_range(start..end, new);
    }
    text
}

/// The edits an action makes to `uri`, and the buffer version they are for.
fn edits_of<'a>(action: &'a Value, uri: &str) -> (&'a Vec<Value>, &'a Value) {
    let change = &action["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], uri, "{action}");
    (change["edits"].as_array().unwrap(), &change["textDocument"]["version"])
}

#[test]
fn a_print_typed_into_forward_is_reported_and_its_quick_fix_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, initialized) = Client::start(dir.path(), json!({}));
    assert_eq!(initialized["capabilities"]["positionEncoding"], "utf-16", "{initialized}");
    assert_eq!(initialized["serverInfo"]["name"], "tcfix");
    let file = uri(&dir.path().join("model.py"));
    client.open(&file, CLEAN);
    assert_eq!(client.diagnostics(&file, Some(1)), Vec::<Value>::new());

    // Typing the print on the line before `return x`, as an editor reports it: an insertion.
    let typed = json!({
        "textDocument": {"uri": file, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 6, "character": 0}, "end": {"line": 6, "character": 0}}, "text": PRINT}],
    });
    client.notify("textDocument/didChange", typed);
    let found = client.diagnostics(&file, Some(2));
    assert_eq!(codes(&found), ["TCF101"], "{found:#?}");
    let print = &found[0];
    assert_eq!(print["severity"], 2, "a high-severity finding is a warning");
    assert_eq!(print["source"], "tcfix");
    assert!(print["message"].as_str().unwrap().contains("`print()` in `Model.forward` breaks the graph"), "{print}");
    // `print("é😀", x.shape)` ends after 8 + 21 UTF-16 units (the emoji is two).
    assert_eq!(print["range"], json!({"start": {"line": 6, "character": 8}, "end": {"line": 6, "character": 29}}));
    assert!(
        print["relatedInformation"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("TCF101 print-in-compiled-code: Every call splits the compiled code"),
        "{print}"
    );

    let actions = client.code_actions(&file, print["range"].clone());
    let titles: Vec<&str> = actions.iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "TCF101: Guard with `if not torch.compiler.is_compiling():`",
            "TCF101: Silence with `# noqa: TCF101`",
            "Fix all 1 safe tcfix hazard in this file",
        ]
    );
    let quick_fix = &actions[0];
    assert_eq!(quick_fix["kind"], "quickfix");
    assert_eq!(quick_fix["isPreferred"], true, "a safe fix is the preferred one");
    assert_eq!(quick_fix["diagnostics"][0]["code"], "TCF101");

    // The noqa comment goes after the emoji: its position counts UTF-16 units.
    let (noqa, version) = edits_of(&actions[1], &file);
    assert_eq!(version, 2);
    assert_eq!(noqa[0]["range"]["start"], json!({"line": 6, "character": 29}));
    assert!(apply(&with_print(), noqa).contains("print(\"é😀\", x.shape)  # noqa: TCF101\n"));
    assert_eq!(actions[2]["kind"], "source.fixAll.tcfix");
    let (fix_all, _) = edits_of(&actions[2], &file);
    let all_fixed = apply(&with_print(), fix_all);
    let only_fix_all = client.code_actions_of_kind(&file, print["range"].clone(), "source.fixAll");
    assert_eq!(only_fix_all, [actions[2].clone()], "`only` filters by kind");

    let (edits, _) = edits_of(quick_fix, &file);
    let fixed = apply(&with_print(), edits);
    assert!(
        fixed.contains("        if not torch.compiler.is_compiling():\n            print(\"é😀\", x.shape)\n"),
        "{fixed}"
    );
    assert_eq!(all_fixed, fixed, "with one safe fix, fixing all is that fix");
    client.replace_text(&file, 3, &fixed);
    assert_eq!(client.diagnostics(&file, Some(3)), Vec::<Value>::new(), "the fix removed the finding");
    assert!(client.stop().success());
}

/// Mid-edit the findings stay as they were, and the syntax error shows beside them (as ruff shows
/// it), so the user sees why they stopped following the edits.
#[test]
fn a_buffer_that_does_not_parse_keeps_its_last_good_diagnostics_and_shows_the_syntax_error() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _) = Client::start(dir.path(), json!({}));
    let file = uri(&dir.path().join("model.py"));
    client.open(&file, &with_print());
    let good = client.diagnostics(&file, Some(1));
    assert_eq!(codes(&good), ["TCF101"]);

    client.replace_text(&file, 2, &with_print().replace("return x", "return (x"));
    let broken = client.diagnostics(&file, Some(2));
    assert_eq!(codes(&broken), ["TCF101", "syntax-error"], "{broken:#?}");
    assert_eq!(broken[0], good[0], "the last good finding, as it was");
    let syntax = &broken[1];
    assert_eq!(syntax["severity"], 1, "an error: {syntax}");
    assert!(syntax["message"].as_str().unwrap().starts_with("SyntaxError: "), "{syntax}");
    assert!(syntax["range"]["start"]["line"].as_u64().unwrap() >= 7, "at or after the open parenthesis: {syntax}");
    let actions =
        client.code_actions(&file, json!({"start": {"line": 6, "character": 8}, "end": {"line": 6, "character": 8}}));
    assert_eq!(actions, Vec::<Value>::new(), "no edits for a text the findings are not about");

    client.replace_text(&file, 3, CLEAN);
    assert_eq!(client.diagnostics(&file, Some(3)), Vec::<Value>::new(), "a text that parses again is analysed");
    assert!(client.stop().success());
}

#[test]
fn a_panic_in_a_request_is_answered_with_an_error_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _) = Client::start(dir.path(), json!({}));
    let answer = client.request("tcfix/panicForTests", json!({}));
    assert_eq!(answer["error"]["code"], -32603, "an internal error: {answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("tcfix crashed answering tcfix/panicForTests"));

    let file = uri(&dir.path().join("model.py"));
    client.open(&file, &with_print());
    assert_eq!(codes(&client.diagnostics(&file, Some(1))), ["TCF101"], "the server goes on");
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": file}, "position": {"line": 6, "character": 10}}),
    );
    let shown = hover["result"]["contents"]["value"].as_str().expect("a hover on the finding");
    assert!(shown.starts_with("# TCF101 print-in-compiled-code"), "the rule's documentation: {shown}");
    let nothing = client
        .request("textDocument/hover", json!({"textDocument": {"uri": file}, "position": {"line": 0, "character": 0}}));
    assert_eq!(nothing["result"], Value::Null);

    let unknown = client.request("textDocument/definition", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert!(client.stop().success());
}

#[test]
fn exit_without_shutdown_fails_and_requests_after_shutdown_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _) = Client::start(dir.path(), json!({}));
    client.notify("exit", Value::Null);
    assert_eq!(client.wait().code(), Some(2), "`exit` without `shutdown`: the protocol says to fail");

    let (mut client, _) = Client::start(dir.path(), json!({}));
    assert_eq!(client.request("shutdown", Value::Null)["result"], Value::Null);
    let refused = client.request("textDocument/hover", json!({}));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    client.notify("exit", Value::Null);
    assert!(client.wait().success());
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let dir = tempfile::tempdir().unwrap();
    let capabilities = json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}});
    let (mut client, initialized) = Client::start(dir.path(), capabilities);
    assert_eq!(initialized["capabilities"]["positionEncoding"], "utf-8");
    let file = uri(&dir.path().join("model.py"));
    client.open(&file, &with_print());
    let found = client.diagnostics(&file, Some(1));
    // 8 spaces and `print("é😀", x.shape)`: 24 bytes (é is two, the emoji four).
    assert_eq!(found[0]["range"]["end"], json!({"line": 6, "character": 32}));
    assert!(client.stop().success());
}

/// `late.py`'s helper runs under compile only because `model.py` calls it from `forward`: the
/// finding needs the project index, which the server builds from the workspace's files.
#[test]
fn a_helper_called_from_another_files_forward_is_reported_from_the_project_index() {
    let dir = tempfile::tempdir().unwrap();
    let caller = "from torch import nn\nfrom late import helper\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return helper(x)\n";
    std::fs::write(dir.path().join("model.py"), caller).unwrap();
    let helper = "def helper(x):\n    print(x)\n    return x\n";
    std::fs::write(dir.path().join("late.py"), helper).unwrap();
    let watching = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let (mut client, _) = Client::start(dir.path(), watching);
    let registration =
        client.wait_for("the file watchers' registration", |m| m["method"] == "client/registerCapability");
    let watchers = &registration["params"]["registrations"][0]["registerOptions"]["watchers"];
    let globs: Vec<&str> = watchers.as_array().unwrap().iter().map(|w| w["globPattern"].as_str().unwrap()).collect();
    assert_eq!(globs, ["**/*.py", "**/*.pyi", "**/tcfix.toml", "**/.tcfix.toml", "**/pyproject.toml"]);
    client.send(json!({"jsonrpc": "2.0", "id": registration["id"], "result": null}));
    let file = uri(&dir.path().join("late.py"));
    client.open(&file, helper);
    let found = loop {
        // Published once on its own, then again once the index is built.
        let found = client.diagnostics(&file, Some(1));
        if !found.is_empty() {
            break found;
        }
    };
    assert_eq!(codes(&found), ["TCF101"]);
    assert!(found[0]["message"].as_str().unwrap().contains("called from `Model.forward`"), "{found:#?}");

    // Changed on disk without the call (reported by the watchers), the caller no longer makes the
    // helper compiled code; saved with it again (in the editor), it does.
    let caller_uri = uri(&dir.path().join("model.py"));
    std::fs::write(dir.path().join("model.py"), caller.replace("return helper(x)", "return x")).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": caller_uri, "type": 2}]}));
    assert_eq!(client.diagnostics(&file, Some(1)), Vec::<Value>::new());
    std::fs::write(dir.path().join("model.py"), caller).unwrap();
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": caller_uri}}));
    assert_eq!(codes(&client.diagnostics(&file, Some(1))), ["TCF101"]);
    assert!(client.stop().success());
}

#[test]
fn a_bad_configuration_is_shown_on_its_file_and_fixing_it_is_picked_up() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tcfix.toml");
    std::fs::write(&config, "select = [\"TCF1\"]\nselct = [\"TCF1\"]\n").unwrap();
    let (mut client, _) = Client::start(dir.path(), json!({}));
    let config_uri = uri(&config);
    let shown = client.diagnostics(&config_uri, None);
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert!(shown[0]["message"].as_str().unwrap().contains("unknown field `selct`"), "{shown:#?}");
    assert_eq!(shown[0]["range"]["start"]["line"], 1, "at the key the TOML parser names: {shown:#?}");

    let file = uri(&dir.path().join("model.py"));
    client.open(&file, &with_print());
    assert_eq!(codes(&client.diagnostics(&file, Some(1))), ["TCF101"], "the defaults meanwhile");

    // Fixed outside the editor: noticed at the next change of a buffer.
    std::fs::write(&config, "ignore = [\"TCF101\"]\n").unwrap();
    client.replace_text(&file, 2, &with_print());
    assert_eq!(client.diagnostics(&config_uri, None), Vec::<Value>::new(), "the error is cleared");
    assert_eq!(client.diagnostics(&file, Some(2)), Vec::<Value>::new(), "the new configuration ignores TCF101");
    assert!(client.stop().success());
}

#[test]
fn an_unsafe_fix_is_labelled_and_never_preferred() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, _) = Client::start(dir.path(), json!({}));
    let file = uri(&dir.path().join("model.py"));
    client.open(&file, &CLEAN.replace("        return x\n", "        return x * x.sum().item()\n"));
    let found = client.diagnostics(&file, Some(1));
    assert_eq!(codes(&found), ["TCF103"]);
    let actions = client.code_actions(&file, found[0]["range"].clone());
    let titles: Vec<&str> = actions.iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles.len(), 2, "the unsafe fix and noqa; no fix-all without a safe fix: {titles:?}");
    assert!(titles[0].starts_with("TCF103 (unsafe fix): Use `.detach()` instead of `.item()`"), "{titles:?}");
    assert!(actions[0].get("isPreferred").is_none(), "{}", actions[0]);
    assert_eq!(titles[1], "TCF103: Silence with `# noqa: TCF103`");

    let elsewhere = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    assert_eq!(client.code_actions(&file, elsewhere), Vec::<Value>::new(), "nothing away from the findings");
    assert!(client.stop().success());
}

/// The configuration's `baseline` leaves out the findings it records, as in a CLI run: only a
/// print added since is reported.
#[test]
fn the_configurations_baseline_leaves_out_the_findings_it_records() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.py"), with_print()).unwrap();
    let recorded = Command::new(env!("CARGO_BIN_EXE_tcfix"))
        .args(["--write-baseline", "tcfix-baseline.json", "model.py"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(recorded.status.success(), "{recorded:?}");
    std::fs::write(dir.path().join("tcfix.toml"), "baseline = \"tcfix-baseline.json\"\n").unwrap();

    // Started in another directory than the workspace's, as an editor may start it.
    let (mut client, _) = Client::start_in(&std::env::temp_dir(), dir.path(), json!({}));
    let file = uri(&dir.path().join("model.py"));
    client.open(&file, &with_print());
    assert_eq!(client.diagnostics(&file, Some(1)), Vec::<Value>::new(), "the recorded print is left out");
    let added = with_print().replace("        return x\n", "        print(x)\n        return x\n");
    client.replace_text(&file, 2, &added);
    let found = client.diagnostics(&file, Some(2));
    assert_eq!(codes(&found), ["TCF101"], "{found:#?}");
    assert_eq!(found[0]["range"]["start"]["line"], 7, "the new print only");
    assert!(client.stop().success());
}

#[test]
fn why_on_demand_answers_for_the_buffer_as_it_is_now() {
    let dir = tempfile::tempdir().unwrap();
    let (mut client, initialized) = Client::start(dir.path(), json!({}));
    assert_eq!(initialized["capabilities"]["executeCommandProvider"]["commands"], json!(["tcfix.why"]));
    let file = uri(&dir.path().join("model.py"));
    // Not on disk: the answer is about the buffer.
    client.open(&file, &with_print());
    let print_line = with_print().lines().position(|line| line.contains("print(")).unwrap();
    let answer =
        client.request("workspace/executeCommand", json!({"command": "tcfix.why", "arguments": [file, print_line]}));
    let text = answer["result"].as_str().unwrap_or_else(|| panic!("{answer}"));
    assert!(text.contains("Compiled: yes, in `Model.forward`"), "{text}");
    assert!(text.contains("TCF101 print-in-compiled-code: reported"), "{text}");
    let shown = client.wait_for("the answer as a message", |message| message["method"] == "window/showMessage");
    assert_eq!(shown["params"]["message"].as_str(), Some(text));
    let bad = client.request("workspace/executeCommand", json!({"command": "tcfix.why", "arguments": [file]}));
    assert!(bad["error"]["message"].as_str().unwrap().contains("0-based line"), "{bad}");
    client.stop();
}
