//! Error types.
//!
//! Two kinds are kept apart, as in tantivy and milli: a [`DocError`] belongs to
//! one input document and never stops a run (it is reported beside the
//! results), while an [`Error`] stops the operation that returned it (an
//! invalid configuration, an unwritable output).

use std::fmt;

use serde::Serialize;
use webdup_core::DocKey;

/// Why one input document could not be fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocErrorKind {
    /// The path does not exist or could not be read.
    Io,
    /// The input is empty.
    Empty,
    /// The input is larger than the configured maximum.
    TooLarge,
    /// The input looks like a binary file (NUL bytes).
    Binary,
    /// The bytes are not valid UTF-8 and no other charset is declared.
    Encoding,
    /// The HTML is nested more deeply than the extractor can safely walk.
    TooDeep,
    /// Extracting the page would cost more than the page budget allows
    /// (elements, attributes).
    TooCostly,
    /// Compressed input could not be decompressed.
    Decompress,
    /// No words were left after extraction and normalization.
    NoText,
    /// The page could not be fetched (set by the fetcher).
    Fetch,
    /// A web archive (WARC) record is malformed or cut short; the error
    /// names the archive and the record.
    Archive,
    /// The page was fetched but a headless Chromium could not render it
    /// (scripts that never stop, a crashed tab, a DOM over the size limit).
    Render,
}

impl DocErrorKind {
    /// Every kind.
    pub const ALL: [DocErrorKind; 12] = [
        DocErrorKind::Io,
        DocErrorKind::Empty,
        DocErrorKind::TooLarge,
        DocErrorKind::Binary,
        DocErrorKind::Encoding,
        DocErrorKind::TooDeep,
        DocErrorKind::TooCostly,
        DocErrorKind::Decompress,
        DocErrorKind::NoText,
        DocErrorKind::Fetch,
        DocErrorKind::Archive,
        DocErrorKind::Render,
    ];

    /// The kind whose [`DocErrorKind::as_str`] is `name`.
    pub fn from_name(name: &str) -> Option<DocErrorKind> {
        DocErrorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// A short stable name, used in CSV and JSON output.
    pub fn as_str(&self) -> &'static str {
        match self {
            DocErrorKind::Io => "io",
            DocErrorKind::Empty => "empty",
            DocErrorKind::TooLarge => "too_large",
            DocErrorKind::Binary => "binary",
            DocErrorKind::Encoding => "encoding",
            DocErrorKind::TooDeep => "too_deep",
            DocErrorKind::TooCostly => "too_costly",
            DocErrorKind::Decompress => "decompress",
            DocErrorKind::NoText => "no_text",
            DocErrorKind::Fetch => "fetch",
            DocErrorKind::Archive => "archive",
            DocErrorKind::Render => "render",
        }
    }
}

/// A failure confined to one document. The run goes on without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{id}: {message}")]
pub struct DocError {
    /// The document's id (its path or URL).
    pub id: String,
    /// The document's key (its position in the input); serialized as
    /// `order`, its name before keys.
    #[serde(rename = "order")]
    pub key: DocKey,
    /// What went wrong, as a stable category.
    pub kind: DocErrorKind,
    /// A sentence for people.
    pub message: String,
}

impl DocError {
    pub fn new(id: impl Into<String>, key: DocKey, kind: DocErrorKind, message: impl Into<String>) -> Self {
        DocError { id: id.into(), key, kind, message: message.into() }
    }
}

/// An error that stops the operation that returned it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting is out of range or settings contradict each other.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An input list or directory could not be read at all.
    #[error("cannot read input {path}: {source}")]
    Input { path: String, source: std::io::Error },
    /// The inputs named no document at all.
    #[error("no documents found in the inputs given")]
    NoDocuments,
    /// Writing a report failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    /// Serializing a report failed.
    #[error("cannot serialize output: {0}")]
    Serialize(String),
    /// A run's temporary file (the shingle sets it keeps on disk) failed.
    #[error("the run's temporary file failed: {0}")]
    Scratch(String),
    /// The run would not fit in the memory allowed it.
    #[error("{0}")]
    Memory(String),
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        if e.is_io() { Error::Output(e.into()) } else { Error::Serialize(e.to_string()) }
    }
}

impl From<csv::Error> for Error {
    fn from(e: csv::Error) -> Self {
        match e.into_kind() {
            csv::ErrorKind::Io(io) => Error::Output(io),
            other => Error::Serialize(format!("{other:?}")),
        }
    }
}

/// Result alias for operations that can fail as a whole.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for DocErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
