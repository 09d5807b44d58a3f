//! webdup across processes and hosts.
//!
//! Two steps, each restartable:
//!
//! 1. **Ingest** ([`ingest::ingest`]): `N` independent tasks, each reading,
//!    fetching, extracting and shingling its share of the inputs (every
//!    `N`th expanded input) into one Parquet file with a completion marker.
//!    Any scheduler runs them: a shell loop, GNU parallel, a Slurm array.
//!    A task whose marker is there is not run again.
//! 2. **Cluster** ([`job::cluster`]): the corpus-wide stages on timely
//!    dataflow workers, in one process or many (timely's `-w`, `-n`, `-p`
//!    and a host file): site templates learned per host, MinHash bands
//!    exchanged, candidates confirmed by exact Jaccard on the worker that
//!    owns each page, connected components on differential dataflow, a
//!    representative per cluster. Each stage writes Parquet parts and
//!    markers carrying a hash of the settings and of the ingest, so a crash
//!    costs the stage it hit. Process 0 writes the report with the writers
//!    of `webdup cluster`: the same bytes for the same inputs and settings.
//!
//! The file formats are in [`files`]; `pages.parquet`, one row per page, is
//! the table for Spark, DuckDB and Hugging Face datasets.

pub mod files;
mod halt;
pub mod ingest;
pub mod job;
pub mod layout;
pub mod marker;
mod net;
mod ops;
pub mod parquet_io;
mod parts;

use std::path::{Path, PathBuf};

/// What stops an ingest task or a clustering job.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
    #[error("{0}")]
    Format(String),
    /// Settings, tasks or a work directory that do not fit together.
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Webdup(#[from] webdup::Error),
    /// A worker failed; the message names what it was doing.
    #[error("{0}")]
    Worker(String),
    /// This worker stopped because another worker of the job failed (the
    /// job ends with that worker's error).
    #[error("stopped: another worker of the job failed")]
    Stopped,
    /// The connection to another process of the job broke: it failed (its
    /// error is in `why` when it could write it to the work directory), was
    /// killed, or its host went away.
    #[error("process {process} of {processes} lost its connection to process {peer} ({detail}){why}")]
    Lost { process: usize, processes: usize, peer: usize, detail: String, why: String },
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io { path: path.to_path_buf(), source }
    }

    pub(crate) fn parquet(path: &Path, e: parquet::errors::ParquetError) -> Error {
        Error::Parquet { path: path.to_path_buf(), message: e.to_string() }
    }

    pub(crate) fn arrow(path: &Path, e: arrow_schema::ArrowError) -> Error {
        Error::Parquet { path: path.to_path_buf(), message: e.to_string() }
    }
}

pub use ingest::{Task, ingest};
pub use job::{PagesFile, cluster};
pub use layout::Layout;
