//! `tcfix.why`, on demand: `workspace/executeCommand` with the buffer's URI and a 0-based line
//! answers what `tcfix why PATH:LINE` says about that line of the buffer as it is now (shown as a
//! message, and returned as the command's result).

use lsp_server::{ErrorCode, ResponseError};
use lsp_types::{ExecuteCommandParams, Url};
use rustc_hash::FxHashMap as HashMap;

use crate::server::documents::Document;
use crate::server::workspace::Workspace;
use crate::why::{Place, why_in_text};

/// The command's name, as the client calls it.
pub const COMMAND: &str = "tcfix.why";

pub fn answer(
    params: &ExecuteCommandParams,
    documents: &HashMap<Url, Document>,
    workspace: &Workspace,
) -> Result<String, ResponseError> {
    let invalid = |message: String| ResponseError { code: ErrorCode::InvalidParams as i32, message, data: None };
    if params.command != COMMAND {
        return Err(invalid(format!("tcfix server runs only `{COMMAND}`, not `{}`", params.command)));
    }
    let usage = || invalid(format!("`{COMMAND}` takes the buffer's URI and a 0-based line: [\"file:///...\", 41]"));
    let uri = params.arguments.first().and_then(|uri| uri.as_str()).ok_or_else(usage)?;
    let line = params.arguments.get(1).and_then(|line| line.as_u64()).ok_or_else(usage)?;
    let uri = Url::parse(uri).map_err(|_| usage())?;
    let document = documents.get(&uri).ok_or_else(|| invalid(format!("{uri} is not open")))?;
    let place = Place { path: document.path.clone(), line: line as usize + 1, column: None };
    let answer = why_in_text(&place, document.text.clone(), std::slice::from_ref(&workspace.root), &workspace.settings)
        .map_err(|error| ResponseError {
            code: ErrorCode::RequestFailed as i32,
            message: format!("{error:#}"),
            data: None,
        })?;
    Ok(answer.text())
}
