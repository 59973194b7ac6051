//! One error type for the whole crate. Every variant names the file or flag it
//! is about, so `main` can print it as a single line.

use std::path::PathBuf;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag or option value is wrong (exit code 2, like a usage error).
    #[error("{flag}: {message}")]
    Flag { flag: String, message: String },

    /// A file could not be read or written.
    #[error("{kind} {}: {source}", path.display())]
    Io {
        kind: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A file was read but is not what it was given as.
    #[error("{kind} {}: {message}", path.display())]
    Input { kind: &'static str, path: PathBuf, message: String },

    /// The requested profile cannot be shown (e.g. a step that was not recorded).
    #[error("{0}")]
    Profile(String),

    /// Ctrl-C ended the command where it could say what it had done (exit
    /// code 130, as shells report a command that SIGINT ended).
    #[error("{0}")]
    Interrupted(String),
}

impl Error {
    pub fn flag(flag: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Flag { flag: flag.into(), message: message.into() }
    }

    pub fn input(kind: &'static str, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Input { kind, path: path.into(), message: message.into() }
    }

    /// Process exit code: 2 for usage errors, 130 when Ctrl-C ended the
    /// command, 1 for input and profile errors.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Flag { .. } => 2,
            Error::Interrupted(_) => 130,
            _ => 1,
        }
    }
}

/// Messages from libraries may span lines; rtfprof's errors print as one.
pub fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
