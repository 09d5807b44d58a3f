//! Where a job runs: worker threads per process, the processes and their
//! addresses, checked before anything starts.

use std::path::Path;

use crate::Error;

/// Most worker threads a process may run. timely starts every thread and
/// its channels to every other worker at once: far past the cores of any
/// machine, `-w 100000` ran out of memory and aborted the process instead
/// of failing with a message.
pub const MAX_THREADS: usize = 256;

/// Most processes a job may have: each holds a TCP connection to every
/// other, and the default addresses take one port each from 2101.
pub const MAX_PROCESSES: usize = 1024;

/// The processes a job runs on, their addresses and worker threads:
/// timely's `-w`, `-n`, `-p` and host file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Worker threads per process.
    pub threads: usize,
    /// Processes in all.
    pub processes: usize,
    /// This process's index.
    pub process: usize,
    /// `host:port` of every process, in process order; `None`: all on
    /// 127.0.0.1 from port 2101.
    pub hosts: Option<Vec<String>>,
}

impl Layout {
    /// One process with `threads` workers.
    pub fn local(threads: usize) -> Layout {
        Layout { threads, processes: 1, process: 0, hosts: None }
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.threads == 0 {
            return Err(Error::Config("a process needs at least one worker thread (-w)".into()));
        }
        if self.threads > MAX_THREADS {
            return Err(Error::Config(format!(
                "{} worker threads per process (-w): at most {MAX_THREADS}; a thread per core is the most that helps",
                self.threads
            )));
        }
        if self.processes > MAX_PROCESSES {
            return Err(Error::Config(format!("{} processes (-n): at most {MAX_PROCESSES}", self.processes)));
        }
        if self.processes == 0 || self.process >= self.processes {
            return Err(Error::Config(format!(
                "process index {} must be below the process count {} (-p and -n)",
                self.process, self.processes
            )));
        }
        if let Some(h) = &self.hosts
            && h.len() != self.processes
        {
            return Err(Error::Config(format!(
                "the host file names {} processes, and -n says {}: give one host:port a line, one per process",
                h.len(),
                self.processes
            )));
        }
        Ok(())
    }

    /// Every process's `host:port`, in process order.
    pub(crate) fn addresses(&self) -> Vec<String> {
        self.hosts.clone().unwrap_or_else(|| (0..self.processes).map(|i| format!("127.0.0.1:{}", 2101 + i)).collect())
    }
}

/// Reads a host file: one `host:port` a line, `#` comments and blank lines skipped.
pub fn read_hosts(path: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let hosts: Vec<String> =
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string).collect();
    if let Some(bad) = hosts.iter().find(|h| h.rsplit_once(':').is_none_or(|(_, p)| p.parse::<u16>().is_err())) {
        return Err(Error::Config(format!("{}: {bad:?} is not host:port", path.display())));
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dcluster_w_100000_is_refused_with_the_bound_named() {
        let err = Layout::local(100_000).validate().unwrap_err().to_string();
        assert!(err.contains("100000 worker threads") && err.contains("at most 256"), "{err}");
        let err = Layout { processes: 100_000, ..Layout::local(1) }.validate().unwrap_err().to_string();
        assert!(err.contains("100000 processes") && err.contains("at most 1024"), "{err}");
        assert!(Layout::local(MAX_THREADS).validate().is_ok());
        assert!(Layout { processes: MAX_PROCESSES, process: MAX_PROCESSES - 1, ..Layout::local(1) }.validate().is_ok());
    }
}
