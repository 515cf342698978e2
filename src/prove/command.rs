//! Running the user's command once, under `TORCH_TRACE`: its own failure (not found, a non-zero
//! exit, a timeout) and a run that compiled nothing are told apart, each with the end of what the
//! command wrote to stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One run of the command: where, with what extra environment, for how long at most.
pub struct Launch<'a> {
    pub command: &'a [String],
    pub dir: &'a Path,
    pub env: Vec<(String, String)>,
    /// Where its stdout and stderr go (`NAME.stdout`, `NAME.stderr`).
    pub logs: &'a Path,
    pub timeout: Option<Duration>,
}

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    Exited { code: Option<i32>, seconds: f64 },
    TimedOut { seconds: f64 },
}

/// A run that could not be proven with: why, and the end of its stderr.
#[derive(Debug)]
pub struct Failed {
    pub reason: String,
    pub stderr_tail: String,
}

/// The lines of stderr shown when a run fails.
const TAIL_LINES: usize = 20;

impl Launch<'_> {
    /// Run it to its end or the timeout (then it and the processes it started are killed).
    pub fn run(&self, name: &str) -> Result<f64, Failed> {
        let stderr_path = self.logs.join(format!("{name}.stderr"));
        let started = Instant::now();
        let ended = self.spawn_and_wait(name, &stderr_path)?;
        let tail = stderr_tail(&stderr_path);
        match ended {
            Ended::Exited { code: Some(0), seconds } => Ok(seconds),
            Ended::Exited { code, .. } => Err(Failed {
                reason: match code {
                    Some(code) => format!("the command exited with status {code}"),
                    None => "the command was killed by a signal".to_string(),
                },
                stderr_tail: tail,
            }),
            Ended::TimedOut { .. } => Err(Failed {
                reason: format!(
                    "the command did not finish within {} s (--timeout); it was stopped after {:.0} s",
                    self.timeout.map_or(0, |timeout| timeout.as_secs()),
                    started.elapsed().as_secs_f64()
                ),
                stderr_tail: tail,
            }),
        }
    }

    fn spawn_and_wait(&self, name: &str, stderr_path: &Path) -> Result<Ended, Failed> {
        let program = &self.command[0];
        let open = |path: PathBuf| {
            std::fs::File::create(&path).map_err(|err| Failed {
                reason: format!("{}: cannot write the command's output: {err}", path.display()),
                stderr_tail: String::new(),
            })
        };
        let mut command = Command::new(program);
        command
            .args(&self.command[1..])
            .current_dir(self.dir)
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::null())
            .stdout(open(self.logs.join(format!("{name}.stdout")))?)
            .stderr(open(stderr_path.to_path_buf())?);
        in_own_process_group(&mut command);
        let started = Instant::now();
        let mut child = command.spawn().map_err(|err| Failed {
            reason: match err.kind() {
                std::io::ErrorKind::NotFound => format!("command not found: `{program}`"),
                std::io::ErrorKind::PermissionDenied => format!("`{program}` cannot be run (permission denied)"),
                _ => format!("cannot start `{program}`: {err}"),
            },
            stderr_tail: String::new(),
        })?;
        loop {
            let seconds = started.elapsed().as_secs_f64();
            match child.try_wait() {
                Ok(Some(status)) => return Ok(Ended::Exited { code: status.code(), seconds }),
                Ok(None) if self.timeout.is_some_and(|timeout| started.elapsed() >= timeout) => {
                    kill_process_group(&mut child);
                    return Ok(Ended::TimedOut { seconds });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(err) => {
                    return Err(Failed {
                        reason: format!("cannot wait for the command: {err}"),
                        stderr_tail: String::new(),
                    });
                }
            }
        }
    }
}

/// The last lines of a file, for a message.
pub fn stderr_tail(path: &Path) -> String {
    let text = std::fs::read(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// A command like `torchrun` starts processes of its own: in a group of their own, a timeout
/// stops them all.
#[cfg(unix)]
fn in_own_process_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

#[cfg(not(unix))]
fn in_own_process_group(_: &mut Command) {}

#[cfg(unix)]
fn kill_process_group(child: &mut std::process::Child) {
    // `kill -KILL -PGID`: the group's id is the child's (process_group(0) above).
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(not(unix))]
fn kill_process_group(child: &mut std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}
