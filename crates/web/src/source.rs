//! Inputs: what the user named, expanded into an ordered list of documents,
//! and local files read into text.
//!
//! An input is a file, a directory (walked recursively, in name order), a
//! list file (one path or URL a line, `#` comments and blank lines skipped),
//! `-` (a list read from standard input), or a URL. Every document keeps the
//! position at which it was first named; naming it again is ignored.
//!
//! A web archive (`*.warc`, `*.warc.gz`) is one source that holds many
//! documents, its HTTP responses (read by [`crate::warc`]); see
//! [`Collected`] for how their keys are given.
//!
//! A walk stays inside the directory named: a symbolic link is followed
//! when its target (resolved, every link on the way) is under the
//! directory (resolved too), and otherwise reported as an error naming the
//! link, unless [`InputOptions::follow_symlinks`]. A link back to a
//! directory being walked is a loop, reported, never walked again. No walk
//! enters `/proc`, `/sys` or `/dev`, followed links or not, and no file of
//! a virtual file system (procfs, sysfs, ...) is read, named or walked: their
//! files are the kernel's (a process's environment), not documents, and
//! some never end. A named FIFO, device or socket is refused before it is
//! opened.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::decode;
use crate::error::{DocError, DocErrorKind};
pub use webdup_core::DocKey;

/// Largest list file (or list on standard input) read.
const MAX_LIST_BYTES: u64 = 64 << 20;

/// Extensions that make a file a document when a directory is walked.
const DOCUMENT_EXTENSIONS: &[&str] = &["html", "htm", "xhtml", "txt", "text", "md", "warc"];

/// Bits of a key left for the records of a web archive when keys are
/// spaced (see [`Collected`]).
pub const RECORD_BITS: u32 = 32;

/// Where a document comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    File(PathBuf),
    Url(String),
}

/// One document to process, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The id shown in every report: the path as named, or the URL.
    pub id: String,
    /// The document's global key: its position in the input (0-based).
    pub key: DocKey,
    pub location: Location,
}

impl Source {
    /// Whether this source is a web archive (`*.warc`, `*.warc.gz`): many
    /// documents, not one.
    pub fn is_warc(&self) -> bool {
        matches!(&self.location, Location::File(p) if is_warc_name(p))
    }

    /// The key of record `r` (0-based, every record counted) of this web
    /// archive: `key | r` (see [`Collected`]); `None` past the
    /// 2<sup>32</sup> records a key has room for.
    pub fn record_key(&self, r: u64) -> Option<DocKey> {
        (r < 1 << RECORD_BITS).then_some(DocKey(self.key.0 | r))
    }
}

/// Whether a document's text is markup or already plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Html,
    Text,
}

/// A document read and decoded, before extraction.
#[derive(Debug, Clone)]
pub struct RawDocument {
    pub id: String,
    pub key: DocKey,
    pub format: Format,
    pub body: String,
    /// Where the body was served from, after redirects (fetched pages
    /// only): relative links such as `rel=canonical` resolve against it.
    pub url: Option<String>,
}

/// The result of expanding the user's inputs.
///
/// Keys, the one rule: distinct, and in input order. A source is one
/// document, keyed by its position among the inputs named (0, 1, 2, ...).
/// A web archive is one source but many documents, so when any source is
/// one ([`Collected::spaced`]) every key of the run is spaced instead: the
/// n-th source has key `n << 32`, and record r of an archive `(n << 32) | r`
/// ([`Source::record_key`]). Inputs that could not be expanded come after
/// every source ([`Collected::error_key`]). Keys are given here, once, so a
/// subset of the sources loaded by another process (a task of N) keys its
/// documents as the whole run would.
#[derive(Debug, Default)]
pub struct Collected {
    pub sources: Vec<Source>,
    /// Inputs that could not be expanded (missing paths, unreadable lists).
    pub errors: Vec<DocError>,
    /// When links are followed and sitemaps were among the inputs: the
    /// URLs they listed, as [`crate::crawl::listed`] gives them (orphan
    /// and unlisted pages are judged by them). Filled by the expansion of
    /// sitemaps, not here.
    pub listed: Option<Vec<Box<str>>>,
}

impl Collected {
    /// Total number of named documents, failed or not.
    pub fn len(&self) -> usize {
        self.sources.len() + self.errors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether keys are spaced for the records of web archives: true when
    /// any source is one.
    pub fn spaced(&self) -> bool {
        self.sources.iter().any(Source::is_warc)
    }

    /// The key of the `i`-th input that could not be expanded: after every
    /// source (and, spaced, after every record of the last one).
    pub fn error_key(&self, i: usize) -> DocKey {
        if self.spaced() {
            DocKey(((self.sources.len() + i) as u64) << RECORD_BITS)
        } else {
            let next = self.sources.last().map_or(0, |s| s.key.0 + 1);
            DocKey(next + i as u64)
        }
    }

    /// Keys for documents found beyond the inputs (the pages a crawl
    /// reaches): after every source and error, spaced as they are.
    pub fn next_keys(&self) -> crate::crawl::KeyPlan {
        let step = if self.spaced() { 1 << RECORD_BITS } else { 1 };
        crate::crawl::KeyPlan { first: self.error_key(self.errors.len()).0, step }
    }

    /// Adds an input that could not be expanded, keyed after the sources.
    pub fn push_error(&mut self, mut error: DocError) {
        error.key = self.error_key(self.errors.len());
        self.errors.push(error);
    }

    /// Gives every source and error its key by the rule above.
    fn assign_keys(&mut self) {
        if self.spaced() {
            for (n, s) in self.sources.iter_mut().enumerate() {
                s.key = DocKey((n as u64) << RECORD_BITS);
            }
        }
        let keys: Vec<DocKey> = (0..self.errors.len()).map(|i| self.error_key(i)).collect();
        for (e, key) in self.errors.iter_mut().zip(keys) {
            e.key = key;
        }
    }
}

/// How inputs are expanded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// Follow symbolic links that lead out of a walked directory (off: such
    /// a link is an error naming it, and nothing behind it is read). Even
    /// then a walk never enters `/proc`, `/sys` or `/dev`, and a link back
    /// to a directory being walked is reported as a loop.
    pub follow_symlinks: bool,
}

/// Expands inputs into sources, keyed as [`Collected`] says. `stdin`
/// supplies the list for an input `-`. Symbolic links out of a walked
/// directory are not followed ([`collect_with`] to choose).
pub fn collect(inputs: &[String], stdin: &mut dyn Read) -> Collected {
    collect_with(inputs, stdin, InputOptions::default())
}

/// [`collect`] with the given options.
pub fn collect_with(inputs: &[String], stdin: &mut dyn Read, options: InputOptions) -> Collected {
    let mut c = Collector { options, ..Collector::default() };
    for input in inputs {
        c.add_input(input, stdin);
    }
    c.out.assign_keys();
    c.out
}

#[derive(Default)]
struct Collector {
    out: Collected,
    /// Inputs already named: URLs by their text, files by their path's
    /// bytes (two names that differ only in bytes that are not UTF-8 are
    /// two files).
    seen: HashSet<OsString>,
    next: usize,
    options: InputOptions,
}

impl Collector {
    fn add_input(&mut self, input: &str, stdin: &mut dyn Read) {
        if input == "-" {
            let mut bytes = Vec::new();
            match stdin.take(MAX_LIST_BYTES + 1).read_to_end(&mut bytes) {
                Ok(_) if bytes.len() as u64 > MAX_LIST_BYTES => self.error(
                    input,
                    DocErrorKind::TooLarge,
                    format!("the list on standard input is larger than {MAX_LIST_BYTES} bytes"),
                ),
                Ok(_) => match String::from_utf8(bytes) {
                    Ok(text) => self.add_list("standard input", &text, Path::new(".")),
                    Err(_) => {
                        self.error(input, DocErrorKind::Encoding, "the list on standard input is not UTF-8".into())
                    }
                },
                Err(e) => self.error(input, DocErrorKind::Io, format!("cannot read list from standard input: {e}")),
            }
            return;
        }
        self.add_path_or_url(input, Path::new(input));
    }

    fn add_path_or_url(&mut self, input: &str, path: &Path) {
        if is_url(input) {
            self.push(input.to_string(), Location::Url(input.to_string()));
            return;
        }
        match std::fs::metadata(path) {
            Err(e) => self.error(&path_id(path), DocErrorKind::Io, io_message(&e)),
            Ok(m) if m.is_dir() => self.add_dir(path),
            Ok(_) => match read_list(path) {
                Some(text) => {
                    let base = path.parent().unwrap_or(Path::new("."));
                    self.add_list(&path_id(path), &text, base)
                }
                None => self.push_file(path.to_path_buf()),
            },
        }
    }

    fn add_dir(&mut self, dir: &Path) {
        let root = match std::fs::canonicalize(dir) {
            Ok(root) => root,
            Err(e) => return self.error(&path_id(dir), DocErrorKind::Io, io_message(&e)),
        };
        if let Some(place) = never_walked(&root) {
            return self.error(&path_id(dir), DocErrorKind::Io, format!("a directory {place}: never walked"));
        }
        let follow = self.options.follow_symlinks;
        // Filled by the filter, drained as the walk goes, so each refusal
        // is reported in walk order.
        let refused = std::cell::RefCell::new(Vec::new());
        let walker = walkdir::WalkDir::new(dir).follow_links(true).sort_by_file_name().into_iter().filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_name().to_string_lossy().starts_with('.') {
                return false;
            }
            match refusal(e, &root, follow) {
                Refusal::Take => true,
                Refusal::Skip => false,
                Refusal::Refuse(why) => {
                    refused.borrow_mut().push((e.path().to_path_buf(), why));
                    false
                }
            }
        });
        for entry in walker {
            for (path, why) in refused.borrow_mut().drain(..) {
                self.error(&path_id(&path), DocErrorKind::Io, why);
            }
            match entry {
                Ok(e) if e.file_type().is_file() && is_document_name(e.path()) => {
                    self.push_file(e.path().to_path_buf());
                }
                Ok(_) => {}
                Err(e) => {
                    let id = e.path().map_or_else(|| path_id(dir), path_id);
                    self.error(&id, DocErrorKind::Io, e.to_string());
                }
            }
        }
        for (path, why) in refused.into_inner() {
            self.error(&path_id(&path), DocErrorKind::Io, why);
        }
    }

    /// Adds a list's entries; a line that is neither a URL nor an existing
    /// path is an error naming the list and the line, never dropped.
    fn add_list(&mut self, list: &str, text: &str, base: &Path) {
        for (n, line) in list_lines(text) {
            if is_url(line) {
                self.push(line.to_string(), Location::Url(line.to_string()));
                continue;
            }
            // Relative to the list's folder; a list from standard input names
            // paths as the user wrote them (`a.html`, not `./a.html`).
            let path = if Path::new(line).is_absolute() || base == Path::new(".") {
                PathBuf::from(line)
            } else {
                base.join(line)
            };
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => self.add_dir(&path),
                Ok(_) => self.push_file(path),
                Err(e) => {
                    let why = if looks_like_schemeless_url(line) {
                        format!(
                            "not a URL (no http:// or https://) and no such file; write http://{line} or https://{line}"
                        )
                    } else {
                        io_message(&e)
                    };
                    self.error(line, DocErrorKind::Io, format!("{list} line {n}: {why}"));
                }
            }
        }
    }

    fn push_file(&mut self, path: PathBuf) {
        let key = path.as_os_str().to_owned();
        if self.seen.insert(key) {
            self.out.sources.push(Source {
                id: path_id(&path),
                key: DocKey::at(self.next),
                location: Location::File(path),
            });
            self.next += 1;
        }
    }

    fn push(&mut self, id: String, location: Location) {
        if self.seen.insert(OsString::from(&id)) {
            self.out.sources.push(Source { id, key: DocKey::at(self.next), location });
            self.next += 1;
        }
    }

    fn error(&mut self, id: &str, kind: DocErrorKind, message: String) {
        if self.seen.insert(OsString::from(id)) {
            self.out.errors.push(DocError::new(id, DocKey::at(self.next), kind, message));
            self.next += 1;
        }
    }
}

/// What a walk does with an entry it found.
enum Refusal {
    /// Walked or read.
    Take,
    /// Left out without a word: a link to a file that is no document.
    Skip,
    /// Left out, and reported as an error naming the entry.
    Refuse(String),
}

/// Whether the walk of `root` (resolved) leaves out entry `e`: a link out
/// of the root (unless `follow`), anything in `/proc`, `/sys`, `/dev` or a
/// virtual file system.
fn refusal(e: &walkdir::DirEntry, root: &Path, follow: bool) -> Refusal {
    let link = e.path_is_symlink();
    // Only links and directories can lead somewhere a walk must not go:
    // a plain file is where its folder is.
    if !link && !e.file_type().is_dir() {
        return Refusal::Take;
    }
    let target = match std::fs::canonicalize(e.path()) {
        Ok(t) => t,
        Err(err) => return Refusal::Refuse(io_message(&err)),
    };
    let matters = e.file_type().is_dir() || is_document_name(e.path());
    if let Some(place) = never_walked(&target) {
        let what = if link { format!("a symbolic link to {}", target.display()) } else { "a directory".into() };
        return if matters { Refusal::Refuse(format!("{what}, {place}: never walked")) } else { Refusal::Skip };
    }
    if link && !follow && !target.starts_with(root) {
        return if matters {
            Refusal::Refuse(format!(
                "a symbolic link to {}, outside {}: not followed (--follow-symlinks follows it)",
                target.display(),
                root.display()
            ))
        } else {
            Refusal::Skip
        };
    }
    Refusal::Take
}

/// Directories no walk enters, through a link or not: their files are the
/// kernel's (a process's environment, devices), not documents, and some
/// never end.
const NEVER_WALKED: &[&str] = &["/proc", "/sys", "/dev"];

/// Why the resolved path `canonical` is never walked, if it is not: the
/// directory of [`NEVER_WALKED`] it is in, or its virtual file system.
fn never_walked(canonical: &Path) -> Option<String> {
    if cfg!(unix)
        && let Some(dir) = NEVER_WALKED.iter().find(|d| canonical.starts_with(d))
    {
        return Some(format!("under {dir}"));
    }
    virtual_file_system(canonical).map(|fs| format!("on {fs}, a virtual file system"))
}

/// The kind of virtual file system `path` (a link followed) is on, if it is
/// on one: its files are made by the kernel as they are read.
#[cfg(target_os = "linux")]
fn virtual_file_system(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: zeroed is a valid `statfs` (plain integers), filled in below.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct of the size statfs writes.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // The magic numbers of linux/magic.h; every one fits 32 bits, whatever
    // width `f_type` has on the target.
    Some(match st.f_type as u32 {
        0x9fa0 => "procfs",
        0x6265_6572 => "sysfs",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x7363_6673 => "securityfs",
        0x0027_e0eb | 0x6367_7270 => "cgroupfs",
        0x6265_6570 => "configfs",
        0xde5e_81e4 => "efivarfs",
        0xcafe_4a11 => "bpffs",
        0x6165_676c => "pstore",
        _ => return None,
    })
}

#[cfg(not(target_os = "linux"))]
fn virtual_file_system(_: &Path) -> Option<&'static str> {
    None
}

pub(crate) fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => e.to_string(),
    }
}

pub use webdup_core::is_url;

/// Whether a path names a web archive: `*.warc` or `*.warc.gz`, in any case.
pub fn is_warc_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

fn is_document_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    Path::new(name).extension().is_some_and(|ext| DOCUMENT_EXTENSIONS.iter().any(|d| ext.eq_ignore_ascii_case(d)))
}

/// A path as shown in reports: its text, with each byte that is not UTF-8
/// written `\xNN`, so two names that differ only there stay apart.
pub fn path_id(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        let mut id = String::with_capacity(bytes.len());
        for chunk in bytes.utf8_chunks() {
            id.push_str(chunk.valid());
            for b in chunk.invalid() {
                id.push_str(&format!("\\x{b:02X}"));
            }
        }
        id
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().into_owned()
    }
}

/// A list's entries with their line numbers (1-based): blank lines and `#`
/// comments skipped, a byte-order mark and CRLF line ends accepted.
fn list_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// `example.com/page` or `127.0.0.1:8080/a.html`: a web address written
/// without its scheme.
fn looks_like_schemeless_url(line: &str) -> bool {
    let host = line.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once(':').filter(|(_, port)| port.parse::<u16>().is_ok()).map_or(host, |(h, _)| h);
    !host.is_empty()
        && host.contains('.')
        && !host.starts_with('.')
        && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && !is_document_name(Path::new(host))
}

/// Whether a line reads as a list entry: one token that is a URL, a web
/// address without its scheme, or a path (existing, or with a folder or a
/// document's extension).
fn entry_like(line: &str, base: &Path) -> bool {
    if line.contains(char::is_whitespace) {
        return false;
    }
    if is_url(line) || looks_like_schemeless_url(line) || line.contains('/') || is_document_name(Path::new(line)) {
        return true;
    }
    let p = Path::new(line);
    if p.is_absolute() { p.exists() } else { base.join(p).exists() }
}

/// Reads `path` as a list file if it is one: a regular file, small, UTF-8
/// (a byte-order mark allowed), not named or shaped as HTML, and at least half
/// of its entries read as URLs or paths (see [`entry_like`]). Entries that
/// then turn out wrong (a missing file, a URL without its scheme) are errors
/// naming their line, never a reason to read the list as one text document.
fn read_list(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if [".gz", ".html", ".htm", ".xml", ".warc"].iter().any(|e| name.ends_with(e)) {
        return None;
    }
    let bytes = read_bounded(path, MAX_LIST_BYTES).ok()?;
    if looks_like_html(&bytes) {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    let base = path.parent().unwrap_or(Path::new("."));
    let (mut entries, mut lines) = (0usize, 0usize);
    for (_, line) in list_lines(&text) {
        lines += 1;
        entries += usize::from(entry_like(line, base));
    }
    (lines > 0 && entries * 2 >= lines).then_some(text)
}

/// Reads at most `max` bytes of a regular file. Anything else (a FIFO, a
/// device such as `/dev/zero`, a socket) is refused before it is opened:
/// opening a FIFO waits for a writer, and a device may never end.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let size = file.metadata().map_or(0, |m| m.len());
    if size > max {
        return Err(std::io::Error::other(format!("larger than the {max} byte limit")));
    }
    let mut bytes = Vec::with_capacity(size as usize + 1);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!("larger than the {max} byte limit")));
    }
    Ok(bytes)
}

/// Opens `path` for reading if it is a regular file (or a link to one) of
/// a real file system: a file of `/proc` or `/sys` says it is regular, and
/// holds what the kernel puts there (`/proc/self/environ`: the environment).
pub(crate) fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other(not_regular(&meta)));
    }
    if let Some(fs) = virtual_file_system(path) {
        return Err(std::io::Error::other(format!("a file of {fs}, a virtual file system: never read")));
    }
    std::fs::File::open(path)
}

fn not_regular(meta: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    let what = {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            "a FIFO (named pipe)"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a special file"
        }
    };
    #[cfg(not(unix))]
    let what = {
        let _ = meta;
        "a special file"
    };
    format!("{what}, not a regular file; pipe a list of inputs to `-` instead")
}

/// Limits applied when reading a local file.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    /// Largest document accepted, after decompression.
    pub max_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits { max_bytes: 10 << 20 }
    }
}

/// Reads, decompresses and decodes a local file.
pub fn read_file(source: &Source, path: &Path, limits: ReadLimits) -> Result<RawDocument, DocError> {
    let err = |kind, msg: String| DocError::new(&source.id, source.key, kind, msg);
    let file = open_regular(path).map_err(|e| err(DocErrorKind::Io, io_message(&e)))?;
    let name = path.to_string_lossy().to_ascii_lowercase();
    let gz = name.ends_with(".gz");
    // Size the buffer from the file so a read is one system call, not a
    // doubling series of them (which costs at 100,000 files).
    let size_hint = file.metadata().map_or(0, |m| m.len()).min(limits.max_bytes + 1) as usize;
    let mut bytes = Vec::with_capacity(if gz { size_hint * 4 } else { size_hint + 1 });
    let read = if gz {
        flate2::read::MultiGzDecoder::new(file).take(limits.max_bytes + 1).read_to_end(&mut bytes)
    } else {
        file.take(limits.max_bytes + 1).read_to_end(&mut bytes)
    };
    if let Err(e) = read {
        let kind = if gz { DocErrorKind::Decompress } else { DocErrorKind::Io };
        return Err(err(kind, e.to_string()));
    }
    if bytes.len() as u64 > limits.max_bytes {
        return Err(err(DocErrorKind::TooLarge, format!("larger than the {} byte limit", limits.max_bytes)));
    }
    let plain_name = name.strip_suffix(".gz").unwrap_or(&name);
    let format = if plain_name.ends_with(".txt") || plain_name.ends_with(".text") || plain_name.ends_with(".md") {
        Format::Text
    } else if [".html", ".htm", ".xhtml"].iter().any(|e| plain_name.ends_with(e)) || looks_like_html(&bytes) {
        Format::Html
    } else {
        Format::Text
    };
    bytes_to_document(source, bytes, None, format)
}

/// Checks and decodes bytes into a document: empty and binary input are
/// refused, text is decoded as [`decode::decode`] says.
pub fn bytes_to_document(
    source: &Source,
    bytes: Vec<u8>,
    header_charset: Option<&str>,
    format: Format,
) -> Result<RawDocument, DocError> {
    let err = |kind, msg: String| DocError::new(&source.id, source.key, kind, msg);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(err(DocErrorKind::Empty, "empty document".to_string()));
    }
    // UTF-16 text legitimately holds NUL bytes; it always starts with a BOM here.
    let has_utf16_bom = bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]);
    if !has_utf16_bom && memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
        return Err(err(DocErrorKind::Binary, "binary content (NUL bytes), not a text or HTML document".to_string()));
    }
    let decoded = decode::decode(&bytes, header_charset, format == Format::Html)
        .map_err(|e| err(DocErrorKind::Encoding, e.to_string()))?;
    // FF FE opens UTF-16 text, and also many binary formats: text it is only
    // if it decodes to characters a text holds.
    if has_utf16_bom && !plausible_text(&decoded.text) {
        return Err(err(
            DocErrorKind::Binary,
            "binary content: starts like UTF-16 text (a byte-order mark) but does not decode to text".to_string(),
        ));
    }
    Ok(RawDocument { id: source.id.clone(), key: source.key, format, body: decoded.text, url: None })
}

/// At most 1 in 100 characters a control character, an unpaired surrogate
/// (decoded as U+FFFD) or a private-use code point. Random bytes decoded as
/// UTF-16 give about 13 in 100, zeros give control characters.
fn plausible_text(text: &str) -> bool {
    let (mut odd, mut all) = (0usize, 0usize);
    for c in text.chars().take(1 << 16) {
        all += 1;
        let control = c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c');
        odd += usize::from(control || c == '\u{FFFD}' || ('\u{E000}'..='\u{F8FF}').contains(&c));
    }
    all > 0 && odd * 100 <= all
}

fn looks_like_html(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    let lower = head.to_ascii_lowercase();
    [&b"<!doctype html"[..], b"<html", b"<head", b"<body"]
        .iter()
        .any(|needle| memchr::memmem::find(&lower, needle).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(c: &Collected) -> Vec<&str> {
        c.sources.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn directories_are_walked_in_name_order_and_duplicates_dropped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("b.html"), "<p>b</p>").unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("sub/c.html.gz"), "").unwrap();
        std::fs::write(dir.path().join("image.png"), "x").unwrap();
        let d = dir.path().to_string_lossy().into_owned();
        let c = collect(&[d.clone(), d], &mut std::io::empty());
        let names: Vec<_> = ids(&c).iter().map(|i| i.rsplit('/').next().unwrap().to_string()).collect();
        assert_eq!(names, ["a.txt", "b.html", "c.html.gz"]);
        assert_eq!(c.sources.iter().map(|s| s.key.0).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_a_walked_directory_are_errors_unless_followed() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a.html"), "a").unwrap();
        std::fs::write(outside.join("s.html"), "s").unwrap();
        std::fs::write(outside.join("logo.png"), "x").unwrap();
        symlink(outside.join("s.html"), root.join("s.html")).unwrap();
        // Not a document: left out without a word, as a plain one would be.
        symlink(outside.join("logo.png"), root.join("logo.png")).unwrap();
        symlink(root.join("a.html"), root.join("b.html")).unwrap();
        let name = |id: &str| id.rsplit('/').next().unwrap().to_string();
        // Named through a link of its own, the root is where the link points.
        symlink(&root, dir.path().join("named")).unwrap();
        for named in [&root, &dir.path().join("named")] {
            let c = collect(&[named.to_string_lossy().into_owned()], &mut std::io::empty());
            assert_eq!(ids(&c).iter().map(|i| name(i)).collect::<Vec<_>>(), ["a.html", "b.html"]);
            assert_eq!(c.errors.len(), 1, "{:?}", c.errors);
            assert_eq!(name(&c.errors[0].id), "s.html");
            assert!(c.errors[0].message.contains("outside"), "{}", c.errors[0].message);
        }
        let follow = InputOptions { follow_symlinks: true };
        let c = collect_with(&[root.to_string_lossy().into_owned()], &mut std::io::empty(), follow);
        assert_eq!(ids(&c).iter().map(|i| name(i)).collect::<Vec<_>>(), ["a.html", "b.html", "s.html"]);
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn virtual_files_are_never_opened_and_proc_never_walked() {
        let e = open_regular(Path::new("/proc/self/environ")).unwrap_err();
        assert!(e.to_string().contains("procfs"), "{e}");
        let c = collect(&["/proc/self".into()], &mut std::io::empty());
        assert!(c.sources.is_empty());
        assert!(c.errors[0].message.contains("under /proc"), "{}", c.errors[0].message);
    }

    #[test]
    fn web_archives_are_walked_named_and_listed_and_space_every_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for name in ["a.html", "b.warc.gz", "c.WARC", "d.txt", "sub/e.warc", "f.warc.zst"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let d = dir.path().to_string_lossy().into_owned();
        let c = collect(&[d.clone(), format!("{d}/missing.html")], &mut std::io::empty());
        let names: Vec<_> = ids(&c).iter().map(|i| i.rsplit('/').next().unwrap().to_string()).collect();
        assert_eq!(names, ["a.html", "b.warc.gz", "c.WARC", "d.txt", "e.warc"]);
        assert!(c.spaced());
        assert_eq!(c.sources.iter().map(|s| s.key.0 >> RECORD_BITS).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(c.sources.iter().map(|s| s.key.0 & 0xFFFF_FFFF).collect::<Vec<_>>(), [0; 5]);
        assert_eq!(c.errors[0].key, DocKey(5 << RECORD_BITS));
        assert_eq!(c.sources[1].record_key(7), Some(DocKey((1 << RECORD_BITS) | 7)));
        assert_eq!(c.sources[1].record_key(1 << RECORD_BITS), None);
        // Named directly, an archive is never read as a list of paths.
        std::fs::write(dir.path().join("list.warc"), "a.html\nd.txt\n").unwrap();
        let c = collect(&[format!("{d}/list.warc")], &mut std::io::empty());
        assert_eq!(c.sources.len(), 1);
        assert!(c.sources[0].is_warc());
    }

    #[test]
    fn without_archives_keys_are_positions_and_errors_follow_every_source() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.html"), "a").unwrap();
        std::fs::write(dir.path().join("b.html"), "b").unwrap();
        let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
        let mut c = collect(&[p("a.html"), p("missing.html"), p("b.html")], &mut std::io::empty());
        assert!(!c.spaced());
        assert_eq!(c.sources.iter().map(|s| s.key.0).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(c.errors[0].key, DocKey(3));
        c.push_error(DocError::new("sitemap.xml", DocKey(0), DocErrorKind::Io, "gone"));
        assert_eq!(c.errors[1].key, DocKey(4));
    }

    #[test]
    fn list_files_are_detected_and_plain_text_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.html"), "<p>a</p>").unwrap();
        std::fs::write(dir.path().join("list.txt"), "# pages\na.html\n\nhttps://example.com/x\n").unwrap();
        std::fs::write(dir.path().join("prose.txt"), "a.html is a file\n").unwrap();
        let list = dir.path().join("list.txt").to_string_lossy().into_owned();
        let prose = dir.path().join("prose.txt").to_string_lossy().into_owned();
        let c = collect(&[list, prose.clone()], &mut std::io::empty());
        assert_eq!(c.sources.len(), 3);
        assert!(c.sources[0].id.ends_with("a.html"));
        assert_eq!(c.sources[1].location, Location::Url("https://example.com/x".into()));
        assert_eq!(c.sources[2].id, prose);
    }

    #[test]
    fn missing_paths_become_errors_in_order() {
        let c = collect(&["https://a.example/".into(), "/no/such/file.html".into()], &mut std::io::empty());
        assert_eq!(c.errors.len(), 1);
        assert_eq!(c.errors[0].kind, DocErrorKind::Io);
        assert_eq!(c.errors[0].key, DocKey(1));
    }

    #[test]
    fn stdin_list() {
        let c = collect(&["-".into()], &mut "http://x.example/\n# c\nhttp://y.example/\n".as_bytes());
        assert_eq!(ids(&c), ["http://x.example/", "http://y.example/"]);
        // An endless standard input is cut off, not read forever.
        let c = collect(&["-".into()], &mut std::io::repeat(b'a'));
        assert_eq!(c.errors[0].kind, DocErrorKind::TooLarge);
    }

    #[test]
    fn reading_refuses_empty_binary_and_oversized_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            (Source { id: name.into(), key: DocKey(0), location: Location::File(p.clone()) }, p)
        };
        let kind = |(s, p): (Source, PathBuf), max| read_file(&s, &p, ReadLimits { max_bytes: max }).unwrap_err().kind;
        assert_eq!(kind(write("e.html", b" \n"), 100), DocErrorKind::Empty);
        assert_eq!(kind(write("b.html", b"\x7fELF\0\0\x01"), 100), DocErrorKind::Binary);
        assert_eq!(kind(write("big.txt", &[b'a'; 101]), 100), DocErrorKind::TooLarge);
        assert_eq!(kind(write("bad.txt", b"ok \xC3\x28"), 100), DocErrorKind::Encoding);
        assert_eq!(kind(write("bad.html.gz", b"not gzip"), 100), DocErrorKind::Decompress);
    }

    #[test]
    fn gzip_files_are_decompressed() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.html.gz");
        let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&p).unwrap(), flate2::Compression::fast());
        enc.write_all(b"<html><body>hello</body></html>").unwrap();
        enc.finish().unwrap();
        let s = Source { id: "p".into(), key: DocKey(0), location: Location::File(p.clone()) };
        let doc = read_file(&s, &p, ReadLimits::default()).unwrap();
        assert_eq!(doc.format, Format::Html);
        assert!(doc.body.contains("hello"));
    }
}
