//! What an index file must be before SQLite (or webdup) opens it.

use std::path::{Path, PathBuf};

use crate::Error;

/// Refuses an index at `path` that exists and is not a regular file, and
/// SQLite's files beside it (`-wal`, `-shm`, `-journal`) when they are not
/// regular files either. Opening a FIFO waits for its other end, forever
/// when there is none; a device may never end. A directory at `path` is
/// left to the caller, which says so in its own words.
pub(crate) fn refuse_special(path: &Path) -> Result<(), Error> {
    let beside = ["-wal", "-shm", "-journal"].map(|suffix| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p)
    });
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
        && !m.is_dir()
    {
        return Err(Error::NotAnIndex(format!("{}, not a regular file", kind(&m))));
    }
    for p in beside {
        if let Ok(m) = std::fs::metadata(&p)
            && !m.is_file()
        {
            return Err(Error::NotAnIndex(format!(
                "SQLite's file beside it, {}, is {}, not a regular file",
                p.display(),
                kind(&m)
            )));
        }
    }
    Ok(())
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        } else if t.is_char_device() || t.is_block_device() {
            return "a device";
        } else if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() { "a directory" } else { "a special file" }
}
