//! Web archives: WARC/1.0 and WARC/1.1 files (ISO 28500), plain or gzip
//! compressed, read one record at a time.
//!
//! An [`Archive`] yields one [`Entry`] per record, in file order. A
//! `response` record whose HTTP payload answered 200 with an HTML type
//! (`text/html`, `application/xhtml+xml`) becomes a page: the record and
//! the document a fetch of its target URI gives ([`FetchOutcome`]: status
//! and headers kept, the body unchunked and uncompressed, then decoded by
//! the fetcher's own rule). Every other record is skipped and counted by
//! reason ([`Skip`]). A record that is malformed or cut short is a
//! [`DocError`] of kind [`DocErrorKind::Archive`] naming the archive and the
//! record; the reader then looks for the next record (the next gzip member,
//! or the next `WARC/` line of a plain file) and goes on, or ends the
//! archive where there is none. Nothing here panics or stops another input.
//!
//! Bounds: a record's WARC header block and its HTTP head take at most
//! 64 KiB each; a page's body at most [`ReadLimits::max_bytes`], as stored
//! and once its `Content-Encoding` is undone. In a compressed archive no
//! record is decompressed past [`record_cap`]: a longer one is an error and
//! the reader jumps to the next gzip member without inflating it, so a gzip
//! bomb costs bounded time and no memory. Files written one gzip member per
//! record (Common Crawl's, `wget --warc-file`'s) resync after a damaged
//! record; a file compressed as one gzip stream ends at its first one.
//!
//! ```
//! use std::io::Write;
//! use webdup_web::source::{DocKey, Location, ReadLimits, Source};
//! use webdup_web::warc::{Archive, Entry};
//!
//! let http = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Grüße</p>";
//! let record = format!(
//!     "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: https://example.com/\r\n\
//!      Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{http}\r\n\r\n",
//!     http.len()
//! );
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("crawl.warc");
//! std::fs::write(&path, record).unwrap();
//! let source = Source { id: "crawl.warc".into(), key: DocKey(0), location: Location::File(path) };
//! let entries: Vec<Entry> = Archive::open(&source, ReadLimits::default()).unwrap().collect();
//! let Entry::Page(page) = &entries[0] else { panic!("{entries:?}") };
//! assert_eq!(page.record.status, Some(200));
//! let doc = page.document.as_ref().unwrap();
//! assert_eq!((doc.id.as_str(), doc.body.as_str()), ("https://example.com/", "<p>Grüße</p>"));
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::time::Duration;

use flate2::bufread::GzDecoder;
use serde::Serialize;

use crate::error::{DocError, DocErrorKind};
use crate::fetch::{FetchOutcome, FetchRecord, Hop, decode_body};
use crate::source::{self, DocKey, Location, ReadLimits, Source};

/// Most bytes of a record's WARC header block, and of its HTTP head.
const MAX_HEAD: usize = 64 << 10;
/// Bytes read from the file, and decompressed, at a time.
const BUFFER: usize = 256 << 10;
/// How a gzip member starts: magic and the deflate method.
const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b, 0x08];
/// How a record starts in a plain archive, after the end of a line.
const RECORD_START: &[u8] = b"\nWARC/";

/// The most bytes one record of a compressed archive is decompressed to:
/// 8 × [`ReadLimits::max_bytes`] and 1 MiB for headers (81 MiB by default).
/// A page's body is held to `max_bytes`; this bounds the records read only
/// to be skipped (a video, say), and a gzip bomb.
pub fn record_cap(limits: ReadLimits) -> u64 {
    limits.max_bytes.saturating_mul(8).saturating_add(1 << 20)
}

/// Why a record was passed over. Stable names, used in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    /// `warcinfo`: about the archive itself.
    Warcinfo,
    /// `request`: what the crawler sent.
    Request,
    /// `revisit`: a capture that repeats an earlier one, usually without
    /// its body.
    Revisit,
    /// `metadata`: the crawler's notes on another record.
    Metadata,
    /// `resource`, `conversion`, `continuation`, or a type WARC does not
    /// define.
    OtherRecord,
    /// A `response` without an HTTP payload (a `dns:` lookup, a payload
    /// that does not parse) or without a target URI.
    NotHttp,
    /// An HTTP status other than 200: a redirect, a missing page, an error.
    HttpStatus,
    /// A type other than `text/html` and `application/xhtml+xml`.
    NotHtml,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Warcinfo => "warcinfo",
            Skip::Request => "request",
            Skip::Revisit => "revisit",
            Skip::Metadata => "metadata",
            Skip::OtherRecord => "other_record",
            Skip::NotHttp => "not_http",
            Skip::HttpStatus => "http_status",
            Skip::NotHtml => "not_html",
        }
    }

    fn of_type(warc_type: &str) -> Skip {
        match warc_type.to_ascii_lowercase().as_str() {
            "warcinfo" => Skip::Warcinfo,
            "request" => Skip::Request,
            "revisit" => Skip::Revisit,
            "metadata" => Skip::Metadata,
            _ => Skip::OtherRecord,
        }
    }
}

/// What one record of an archive gave.
#[derive(Debug)]
pub enum Entry {
    /// An HTML page answered with 200: the exchange as a [`FetchRecord`]
    /// (target URI, status, headers) and the decoded document, or why it
    /// did not decode, exactly as a fetch of the page gives them.
    Page(Box<FetchOutcome>),
    /// A record that is not a page, and why.
    Skipped(Skip),
    /// A record that could not be read: malformed, cut short, a page too
    /// large or whose body does not uncompress.
    Failed(DocError),
}

/// What the records of a run's archives gave, for the user to see what was
/// passed over.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// Archives named, read or not.
    pub archives: u64,
    /// Records read, whatever became of them.
    pub records: u64,
    /// Records that became pages (a page whose body then fails to decode
    /// or extract is still one).
    pub pages: u64,
    /// Records that could not be read ([`Entry::Failed`]).
    pub failed: u64,
    /// Records passed over, by [`Skip`] name; reasons never met are left out.
    pub skipped: BTreeMap<String, u64>,
}

impl Summary {
    /// Counts one record.
    pub fn count(&mut self, entry: &Entry) {
        self.records += 1;
        match entry {
            Entry::Page(_) => self.pages += 1,
            Entry::Failed(_) => self.failed += 1,
            Entry::Skipped(why) => *self.skipped.entry(why.as_str().to_string()).or_insert(0) += 1,
        }
    }

    /// True when the run named no archive.
    pub fn is_empty(&self) -> bool {
        self.archives == 0
    }

    /// Adds the counts of `other` (another task's archives).
    pub fn merge(&mut self, other: &Summary) {
        self.archives += other.archives;
        self.records += other.records;
        self.pages += other.pages;
        self.failed += other.failed;
        for (why, n) in &other.skipped {
            *self.skipped.entry(why.clone()).or_insert(0) += n;
        }
    }
}

/// `1 archive, 9 records: 4 pages, 1 failed, 4 skipped (1 request, 1 revisit, ...)`.
impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "{}, {}: {}, {} failed",
            plural(self.archives, "archive", "archives"),
            plural(self.records, "record", "records"),
            plural(self.pages, "page", "pages"),
            self.failed
        )?;
        let skipped: u64 = self.skipped.values().sum();
        write!(f, ", {skipped} skipped")?;
        if skipped > 0 {
            let reasons: Vec<String> = self.skipped.iter().map(|(why, n)| format!("{n} {why}")).collect();
            write!(f, " ({})", reasons.join(", "))?;
        }
        Ok(())
    }
}

/// One archive, read record by record as an iterator of [`Entry`]s.
///
/// Record r (0-based, every record counted) is keyed
/// [`Source::record_key`]`(r)` of the archive's source; its errors are
/// named by the archive's id, the record's 1-based number and where it
/// starts.
pub struct Archive {
    source: Source,
    stream: Stream,
    limits: ReadLimits,
    /// The next record's number (0-based).
    record: u64,
    /// The target URI of the record being read, for its error.
    uri: Option<String>,
    /// After a damaged record, until a record reads again: the places
    /// tried are not records, and fail quietly.
    resyncing: bool,
    done: bool,
}

impl Archive {
    /// Opens the archive `source` names (a file; plain or gzip, told by
    /// its first bytes, not its name).
    pub fn open(source: &Source, limits: ReadLimits) -> Result<Archive, DocError> {
        let err = |kind, m: String| DocError::new(&source.id, source.key, kind, m);
        let Location::File(path) = &source.location else {
            return Err(err(DocErrorKind::Io, "a web archive must be a local file".into()));
        };
        let file = source::open_regular(path).map_err(|e| err(DocErrorKind::Io, source::io_message(&e)))?;
        let len = file.metadata().map_err(|e| err(DocErrorKind::Io, e.to_string()))?.len();
        if len == 0 {
            return Err(err(DocErrorKind::Empty, "empty web archive".into()));
        }
        let mut reader = BufReader::with_capacity(BUFFER, file);
        let head = reader.fill_buf().map_err(|e| err(DocErrorKind::Io, e.to_string()))?;
        let stream = if head.starts_with(&GZIP_MAGIC[..2]) {
            let members = Members { state: Some(Member::Between(reader)), start: 0 };
            Stream::Gzip(Box::new(BufReader::with_capacity(BUFFER, members)))
        } else {
            Stream::Plain { reader, len }
        };
        Ok(Archive { source: source.clone(), stream, limits, record: 0, uri: None, resyncing: false, done: false })
    }

    /// Reads the next record, leaving the stream at the one after it.
    /// `Ok(None)` at the end of the archive; `Err` when the record is
    /// damaged and the stream is lost.
    fn read_record(&mut self, key: DocKey) -> Result<Option<Entry>, Broken> {
        let Some(head) = read_warc_head(self.stream.reader())? else {
            return Ok(None);
        };
        self.uri = head.target_uri();
        let entry = if head.get("warc-type").is_some_and(|t| t.eq_ignore_ascii_case("response")) {
            self.response(&head, key)?
        } else {
            self.stream.skip(head.length, record_cap(self.limits))?;
            Entry::Skipped(Skip::of_type(head.get("warc-type").unwrap_or("")))
        };
        end_record(self.stream.reader())?;
        Ok(Some(entry))
    }

    /// A `response` record's block, read or skipped whole.
    fn response(&mut self, head: &Head, key: DocKey) -> Result<Entry, Broken> {
        let cap = record_cap(self.limits);
        let max = self.limits.max_bytes;
        let is_http =
            head.get("content-type").is_none_or(|t| t.trim().to_ascii_lowercase().starts_with("application/http"));
        let mut block = self.stream.reader().take(head.length);
        let http = if is_http { read_http_head(&mut block)? } else { None };
        let rest = block.limit();
        let (Some(http), Some(uri)) = (http, self.uri.clone()) else {
            self.stream.skip(rest, cap)?;
            return Ok(Entry::Skipped(Skip::NotHttp));
        };
        if http.status != 200 {
            self.stream.skip(rest, cap)?;
            return Ok(Entry::Skipped(Skip::HttpStatus));
        }
        // Common Crawl names the type it detected when the server named none.
        let content_type =
            http.header("content-type").or_else(|| head.get("warc-identified-payload-type").map(str::to_string));
        if !content_type.as_deref().is_some_and(is_html) {
            self.stream.skip(rest, cap)?;
            return Ok(Entry::Skipped(Skip::NotHtml));
        }
        let failed = |kind, message: String| Entry::Failed(DocError::new(&uri, key, kind, message));
        if rest > max {
            self.stream.skip(rest, cap)?;
            return Ok(failed(DocErrorKind::TooLarge, format!("larger than the {max} byte limit")));
        }
        let mut raw = Vec::with_capacity(rest as usize);
        self.stream.reader().take(rest).read_to_end(&mut raw)?;
        if (raw.len() as u64) < rest {
            return Err(Broken::truncated());
        }
        let body = match payload(&http, raw, max) {
            Ok(body) => body,
            Err((kind, message)) => return Ok(failed(kind, message)),
        };
        let mut record = FetchRecord {
            id: uri.clone(),
            key,
            url: Some(uri.clone()),
            final_url: Some(uri.clone()),
            status: Some(http.status),
            chain: vec![Hop { url: uri.clone(), status: http.status }],
            content_type: None,
            last_modified: None,
            etag: None,
            canonical: None,
            x_robots_tag: None,
            bytes: 0,
            elapsed: Duration::ZERO,
            from_cache: false,
            rendered: false,
            shell: false,
            duplicates: Vec::new(),
            error: None,
        };
        record.fill_headers(|name| http.header(name), url::Url::parse(&uri).ok().as_ref());
        let page = Source { id: uri.clone(), key, location: Location::Url(uri) };
        Ok(Entry::Page(Box::new(decode_body(&page, record, body, content_type.as_deref()))))
    }

    fn broken(&mut self, key: DocKey, at: u64, why: Broken) -> DocError {
        let place = match self.stream {
            Stream::Plain { .. } => format!("record {} at byte {at}", self.record + 1),
            Stream::Gzip(_) => format!("record {} (gzip member at byte {at})", self.record + 1),
        };
        let uri = self.uri.take().map(|u| format!(", {u}")).unwrap_or_default();
        DocError::new(&self.source.id, key, DocErrorKind::Archive, format!("{place}{uri}: {}", why.0))
    }
}

impl Iterator for Archive {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        while !self.done {
            // The last key an archive has room for is kept for this error.
            let Some(key) = self.source.record_key(self.record).filter(|_| self.record < (1 << 32) - 1) else {
                self.done = true;
                let last = DocKey(self.source.key.0 | ((1 << 32) - 1));
                return Some(Entry::Failed(self.broken(
                    last,
                    0,
                    Broken("more records than an archive may hold".into()),
                )));
            };
            self.uri = None;
            let (at, read) = match self.stream.mark() {
                Ok(Some(at)) => (at, self.read_record(key)),
                Ok(None) => return None,
                // A gzip member that does not even start: resync from it.
                Err(e) => (self.stream.current(), Err(e.into())),
            };
            let why = match read {
                Ok(Some(entry)) => {
                    self.resyncing = false;
                    self.record += 1;
                    return Some(entry);
                }
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(why) => why,
            };
            let quiet = std::mem::replace(&mut self.resyncing, true);
            let error = (!quiet).then(|| self.broken(key, at, why));
            match self.stream.resync(at) {
                Ok(true) => {}
                Ok(false) | Err(_) => self.done = true,
            }
            if let Some(e) = error {
                self.record += 1;
                return Some(Entry::Failed(e));
            }
        }
        None
    }
}

/// Why a record could not be read, for people.
#[derive(Debug)]
struct Broken(String);

impl Broken {
    fn truncated() -> Broken {
        Broken("the archive ends inside this record (truncated)".into())
    }
}

impl From<io::Error> for Broken {
    fn from(e: io::Error) -> Broken {
        match e.kind() {
            io::ErrorKind::UnexpectedEof => Broken::truncated(),
            _ => Broken(format!("cannot read the archive: {e}")),
        }
    }
}

/// The archive's bytes, uncompressed.
enum Stream {
    Plain { reader: BufReader<File>, len: u64 },
    Gzip(Box<BufReader<Members>>),
}

impl Stream {
    fn reader(&mut self) -> &mut dyn BufRead {
        match self {
            Stream::Plain { reader, .. } => reader,
            Stream::Gzip(reader) => reader,
        }
    }

    /// Where the next record starts, to resync from if it is damaged: its
    /// byte in a plain file, its gzip member's in a compressed one. `None`
    /// at the end.
    fn mark(&mut self) -> io::Result<Option<u64>> {
        if self.reader().fill_buf()?.is_empty() {
            return Ok(None);
        }
        match self {
            Stream::Plain { reader, .. } => reader.stream_position().map(Some),
            // The buffer only ever holds bytes of the member being read.
            Stream::Gzip(reader) => Ok(Some(reader.get_ref().start)),
        }
    }

    /// Where reading stands, as [`Stream::mark`] counts, when it cannot say.
    fn current(&mut self) -> u64 {
        match self {
            Stream::Plain { reader, .. } => reader.stream_position().unwrap_or(0),
            Stream::Gzip(reader) => reader.get_ref().start,
        }
    }

    /// Passes over `n` bytes: a seek in a plain file; in a compressed one,
    /// inflating them when they are at most `cap`, else an error (the
    /// reader then jumps to the next gzip member).
    fn skip(&mut self, n: u64, cap: u64) -> Result<(), Broken> {
        match self {
            Stream::Plain { reader, len } => {
                let n = i64::try_from(n).map_err(|_| Broken("impossible Content-Length".into()))?;
                reader.seek_relative(n)?;
                if reader.stream_position()? > *len {
                    return Err(Broken::truncated());
                }
            }
            Stream::Gzip(_) if n > cap => {
                return Err(Broken(format!(
                    "a block of {n} bytes, more than the {cap} a record of a compressed archive may take; skipped"
                )));
            }
            Stream::Gzip(reader) => {
                if io::copy(&mut reader.take(n), &mut io::sink())? < n {
                    return Err(Broken::truncated());
                }
            }
        }
        Ok(())
    }

    /// Moves to the next place after `from` where a record may start: the
    /// next `WARC/` line of a plain file, the next gzip member of a
    /// compressed one. False when there is none.
    fn resync(&mut self, from: u64) -> io::Result<bool> {
        match self {
            Stream::Plain { reader, .. } => {
                reader.seek(SeekFrom::Start(from + 1))?;
                Ok(scan(reader, RECORD_START)?.is_some())
            }
            Stream::Gzip(reader) => {
                let buffered = reader.buffer().len();
                reader.consume(buffered);
                reader.get_mut().jump(from)
            }
        }
    }
}

/// A gzip file's members, inflated one after another as `MultiGzDecoder`
/// does, knowing where the current one starts.
struct Members {
    state: Option<Member>,
    /// The byte of the file where the member being read starts.
    start: u64,
}

enum Member {
    Between(BufReader<File>),
    Inside(Box<GzDecoder<BufReader<File>>>),
}

impl Members {
    /// Gives up the current member: the next starts at the first gzip
    /// header after byte `from`. False when there is none.
    fn jump(&mut self, from: u64) -> io::Result<bool> {
        let mut file = match self.state.take() {
            Some(Member::Inside(d)) => d.into_inner(),
            Some(Member::Between(f)) => f,
            None => return Ok(false),
        };
        let found = file.seek(SeekFrom::Start(from + 1)).and_then(|_| scan(&mut file, GZIP_MAGIC));
        self.state = Some(Member::Between(file));
        Ok(found?.is_some())
    }
}

impl Read for Members {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.state.take() {
                Some(Member::Inside(mut d)) => match d.read(buf) {
                    // The member ended; the file stands just after it.
                    Ok(0) => self.state = Some(Member::Between(d.into_inner())),
                    r => {
                        self.state = Some(Member::Inside(d));
                        return r;
                    }
                },
                Some(Member::Between(mut f)) => {
                    let more = f.fill_buf().map(|b| !b.is_empty());
                    match (more, f.stream_position()) {
                        (Ok(true), Ok(start)) => {
                            self.start = start;
                            self.state = Some(Member::Inside(Box::new(GzDecoder::new(f))));
                        }
                        (Ok(false), _) => {
                            self.state = Some(Member::Between(f));
                            return Ok(0);
                        }
                        (Err(e), _) | (_, Err(e)) => {
                            self.state = Some(Member::Between(f));
                            return Err(e);
                        }
                    }
                }
                None => return Err(io::Error::other("internal: the gzip stream was lost")),
            }
        }
    }
}

/// Moves `reader` to the next occurrence of `needle` and returns where it
/// is; `None` (at the end) when there is none.
fn scan(reader: &mut BufReader<File>, needle: &[u8]) -> io::Result<Option<u64>> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if let Some(i) = memchr::memmem::find(buf, needle) {
            reader.consume(i);
            return reader.stream_position().map(Some);
        }
        // A match may straddle the end of the buffer: try the tail there.
        let len = buf.len();
        let tail = (len.saturating_sub(needle.len() - 1)..len).find(|&i| needle.starts_with(&buf[i..]));
        let Some(i) = tail else {
            reader.consume(len);
            continue;
        };
        reader.consume(i);
        let at = reader.stream_position()?;
        let mut probe = Vec::with_capacity(needle.len());
        reader.by_ref().take(needle.len() as u64).read_to_end(&mut probe)?;
        if probe == needle {
            reader.seek(SeekFrom::Start(at))?;
            return Ok(Some(at));
        }
        reader.seek(SeekFrom::Start(at + 1))?;
    }
}

/// One line, with its end, taken from a budget of header bytes.
enum Line {
    Read,
    /// The end of the input, before a whole line.
    End,
    /// The budget ran out before the line ended.
    TooLong,
}

fn read_line(r: &mut dyn BufRead, line: &mut Vec<u8>, budget: &mut usize) -> io::Result<Line> {
    line.clear();
    let n = r.take(*budget as u64).read_until(b'\n', line)?;
    *budget -= n;
    Ok(if line.ends_with(b"\n") {
        Line::Read
    } else if *budget == 0 {
        Line::TooLong
    } else {
        Line::End
    })
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b'\r' | b'\n'))
}

/// Header fields up to the blank line that ends them: names lowercased,
/// folded lines joined. `Err` with the [`Line`] that stopped them early.
fn read_fields(r: &mut dyn BufRead, budget: &mut usize) -> io::Result<Result<Vec<(String, String)>, Line>> {
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut line = Vec::new();
    loop {
        match read_line(r, &mut line, budget)? {
            Line::Read if is_blank(&line) => return Ok(Ok(fields)),
            Line::Read => {}
            stop => return Ok(Err(stop)),
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.starts_with([' ', '\t']) {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(text.trim());
            }
        } else if let Some((name, value)) = text.split_once(':') {
            fields.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
}

/// A record's WARC header block.
struct Head {
    fields: Vec<(String, String)>,
    /// The block's length (`Content-Length`).
    length: u64,
}

impl Head {
    /// The first value of a field (`name` lowercase).
    fn get(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// `WARC-Target-URI`, without the angle brackets WARC/1.0's grammar had.
    fn target_uri(&self) -> Option<String> {
        let uri = self.get("warc-target-uri")?.trim();
        let uri = uri.strip_prefix('<').and_then(|u| u.strip_suffix('>')).unwrap_or(uri);
        (!uri.is_empty()).then(|| uri.to_string())
    }
}

/// The version line and header fields of the next record; `None` at the
/// end of the archive (blank lines after the last record included).
fn read_warc_head(r: &mut dyn BufRead) -> Result<Option<Head>, Broken> {
    let mut budget = MAX_HEAD;
    let mut line = Vec::new();
    let too_long = || Broken(format!("a header block longer than {MAX_HEAD} bytes"));
    loop {
        match read_line(r, &mut line, &mut budget)? {
            Line::Read if is_blank(&line) => continue,
            Line::Read => break,
            Line::End if is_blank(&line) => return Ok(None),
            Line::End => return Err(Broken::truncated()),
            Line::TooLong => return Err(too_long()),
        }
    }
    if !line.starts_with(b"WARC/") {
        return Err(Broken("no WARC/ version line where a record should start".into()));
    }
    let fields = match read_fields(r, &mut budget)? {
        Ok(fields) => fields,
        Err(Line::TooLong) => return Err(too_long()),
        Err(_) => return Err(Broken::truncated()),
    };
    let length = fields
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .ok_or_else(|| Broken("no valid Content-Length".into()))?;
    Ok(Some(Head { fields, length }))
}

/// Passes over the blank line that ends a block: CRLF CRLF, or fewer line
/// ends, or none at the end of the archive. Anything else means the block
/// was not as long as its `Content-Length` said.
fn end_record(r: &mut dyn BufRead) -> Result<(), Broken> {
    for n in 0..4 {
        match r.fill_buf()?.first() {
            Some(b'\r' | b'\n') => r.consume(1),
            Some(_) if n == 0 => {
                return Err(Broken("no blank line after the block: its Content-Length is wrong".into()));
            }
            _ => break,
        }
    }
    Ok(())
}

/// An HTTP response's status line and headers.
struct HttpHead {
    status: u16,
    headers: Vec<(String, String)>,
}

impl HttpHead {
    /// Every value of a header (`name` lowercase), joined by `, `.
    fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self.headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect();
        (!values.is_empty()).then(|| values.join(", "))
    }
}

/// The HTTP head at the start of a block; `None` when the block does not
/// start with one (it is not HTTP, or is cut short).
fn read_http_head(block: &mut dyn BufRead) -> io::Result<Option<HttpHead>> {
    let mut budget = MAX_HEAD;
    let mut line = Vec::new();
    if !matches!(read_line(block, &mut line, &mut budget)?, Line::Read) || !line.starts_with(b"HTTP/") {
        return Ok(None);
    }
    let status = String::from_utf8_lossy(&line).split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok());
    let Some(status) = status else { return Ok(None) };
    Ok(read_fields(block, &mut budget)?.ok().map(|headers| HttpHead { status, headers }))
}

/// `text/html` or `application/xhtml+xml`, parameters aside.
fn is_html(content_type: &str) -> bool {
    let media = content_type.split([';', ',']).next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("text/html") || media.eq_ignore_ascii_case("application/xhtml+xml")
}

/// A body as the server meant it: chunked transfer undone, then each
/// `Content-Encoding` (gzip, deflate) in turn, at most `max` bytes.
/// Archivers that stored the body decoded but kept the headers are
/// forgiven: a body that is not chunked or not compressed is taken as it is.
fn payload(http: &HttpHead, raw: Vec<u8>, max: u64) -> Result<Vec<u8>, (DocErrorKind, String)> {
    let mut body = raw;
    if http.header("transfer-encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
        && let Some(unchunked) = dechunk(&body)
    {
        body = unchunked;
    }
    if let Some(codings) = http.header("content-encoding") {
        // Listed in the order applied, so undone from the last.
        for coding in codings.rsplit(',') {
            body = uncompress(coding.trim(), body, max)?;
        }
    }
    Ok(body)
}

/// Chunked transfer coding undone; `None` when the body does not start
/// with a chunk size (it was stored unchunked). A body cut short keeps the
/// chunks it has.
fn dechunk(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    let mut first = true;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let line = String::from_utf8_lossy(&rest[..end]);
        let size = line.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            if first {
                return None;
            }
            break;
        };
        first = false;
        rest = &rest[end + 1..];
        if size == 0 {
            break;
        }
        let have = size.min(rest.len());
        out.extend_from_slice(&rest[..have]);
        rest = &rest[have..];
        rest = rest.strip_prefix(b"\r\n").or_else(|| rest.strip_prefix(b"\n")).unwrap_or(rest);
    }
    (!first).then_some(out)
}

fn uncompress(coding: &str, body: Vec<u8>, max: u64) -> Result<Vec<u8>, (DocErrorKind, String)> {
    let inflate = |reader: &mut dyn Read| {
        let mut out = Vec::new();
        match reader.take(max + 1).read_to_end(&mut out) {
            Err(e) => Err((DocErrorKind::Decompress, format!("Content-Encoding {coding}: {e}"))),
            Ok(_) if out.len() as u64 > max => Err((
                DocErrorKind::TooLarge,
                format!("larger than the {max} byte limit once uncompressed (Content-Encoding {coding})"),
            )),
            Ok(_) => Ok(out),
        }
    };
    let looks_like_text = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<');
    match coding.to_ascii_lowercase().as_str() {
        "" | "identity" => Ok(body),
        "gzip" | "x-gzip" if body.starts_with(&GZIP_MAGIC[..2]) => {
            inflate(&mut flate2::read::MultiGzDecoder::new(&body[..]))
        }
        "gzip" | "x-gzip" => Ok(body),
        "deflate" if looks_like_text => Ok(body),
        // zlib, as the standard says; raw deflate, as some servers send.
        "deflate"
            if body.len() >= 2 && body[0] & 0x0f == 8 && u16::from_be_bytes([body[0], body[1]]).is_multiple_of(31) =>
        {
            inflate(&mut flate2::read::ZlibDecoder::new(&body[..]))
        }
        "deflate" => inflate(&mut flate2::read::DeflateDecoder::new(&body[..])),
        other => Err((DocErrorKind::Decompress, format!("Content-Encoding {other} is not supported"))),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn record(warc_type: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: {warc_type}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n\
             Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn http(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
        let mut h = format!("HTTP/1.1 {status}\r\n");
        for (name, value) in headers {
            h.push_str(&format!("{name}: {value}\r\n"));
        }
        h.push_str("\r\n");
        let mut block = h.into_bytes();
        block.extend_from_slice(body);
        block
    }

    fn response(uri: &str, status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
        record("response", uri, "application/http; msgtype=response", &http(status, headers, body))
    }

    fn html(uri: &str, body: &str) -> Vec<u8> {
        response(uri, "200 OK", &[("Content-Type", "text/html; charset=utf-8")], body.as_bytes())
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// Every kind of record once: warcinfo, request, a page, a redirect, a
    /// revisit, metadata, an image.
    fn crawl() -> Vec<Vec<u8>> {
        vec![
            record("warcinfo", "", "application/warc-fields", b"software: test\r\n"),
            record("request", "https://e.com/a", "application/http; msgtype=request", b"GET /a HTTP/1.1\r\n\r\n"),
            response(
                "https://e.com/a",
                "200 OK",
                &[
                    ("Content-Type", "text/html; charset=windows-1252"),
                    ("X-Robots-Tag", "noindex"),
                    ("Link", "</canon>; rel=\"canonical\""),
                ],
                b"<html><body><p>caf\xe9 cr\xe8me</p></body></html>",
            ),
            response("https://e.com/old", "301 Moved Permanently", &[("Location", "https://e.com/a")], b""),
            record("revisit", "https://e.com/a", "message/http", b"HTTP/1.1 200 OK\r\n\r\n"),
            record("metadata", "https://e.com/a", "application/warc-fields", b"via: x\r\n"),
            response("https://e.com/logo.png", "200 OK", &[("Content-Type", "image/png")], b"\x89PNG\r\n\x1a\n"),
        ]
    }

    fn read_with(bytes: &[u8], limits: ReadLimits) -> Vec<Entry> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crawl.warc.gz");
        std::fs::write(&path, bytes).unwrap();
        let source = Source { id: "crawl.warc.gz".into(), key: DocKey(3 << 32), location: Location::File(path) };
        Archive::open(&source, limits).unwrap().collect()
    }

    fn read(bytes: &[u8]) -> Vec<Entry> {
        read_with(bytes, ReadLimits::default())
    }

    /// Entries as short strings: `page <id>`, `skip <reason>`, `fail <kind> <message>`.
    fn shapes(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match e {
                Entry::Page(p) => format!("page {}", p.record.id),
                Entry::Skipped(why) => format!("skip {}", why.as_str()),
                Entry::Failed(e) => format!("fail {} {}", e.kind, e.message),
            })
            .collect()
    }

    const CRAWL: [&str; 7] = [
        "skip warcinfo",
        "skip request",
        "page https://e.com/a",
        "skip http_status",
        "skip revisit",
        "skip metadata",
        "skip not_html",
    ];

    #[test]
    fn plain_archive_records_become_pages_or_are_skipped_by_reason() {
        let entries = read(&crawl().concat());
        assert_eq!(shapes(&entries), CRAWL);
        let Entry::Page(page) = &entries[2] else { unreachable!() };
        let doc = page.document.as_ref().unwrap();
        assert_eq!(doc.key, DocKey((3 << 32) | 2));
        assert_eq!(doc.url.as_deref(), Some("https://e.com/a"));
        assert!(doc.body.contains("café crème"), "{}", doc.body);
        let r = &page.record;
        assert_eq!((r.key, r.status, r.chain.len()), (doc.key, Some(200), 1));
        assert_eq!(r.x_robots_tag.as_deref(), Some("noindex"));
        assert_eq!(r.canonical.as_deref(), Some("https://e.com/canon"));
        assert_eq!(r.content_type.as_deref(), Some("text/html; charset=windows-1252"));
        let mut summary = Summary { archives: 1, ..Default::default() };
        entries.iter().for_each(|e| summary.count(e));
        assert_eq!(
            summary.to_string(),
            "1 archive, 7 records: 1 page, 0 failed, 6 skipped \
             (1 http_status, 1 metadata, 1 not_html, 1 request, 1 revisit, 1 warcinfo)"
        );
    }

    #[test]
    fn gzip_per_record_and_whole_file_gzip_read_alike() {
        let per_record: Vec<u8> = crawl().iter().flat_map(|r| gz(r)).collect();
        assert_eq!(shapes(&read(&per_record)), CRAWL);
        assert_eq!(shapes(&read(&gz(&crawl().concat()))), CRAWL);
    }

    #[test]
    fn chunked_and_compressed_bodies_are_undone() {
        let page = b"<html><body><p>chunked and gzipped</p></body></html>";
        let zipped = gz(page);
        let mut chunked = format!("{:x};ext=1\r\n", 10).into_bytes();
        chunked.extend_from_slice(&zipped[..10]);
        chunked.extend_from_slice(format!("\r\n{:X}\r\n", zipped.len() - 10).as_bytes());
        chunked.extend_from_slice(&zipped[10..]);
        chunked.extend_from_slice(b"\r\n0\r\nX-Trailer: y\r\n\r\n");
        let headers = [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")];
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(page).unwrap();
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(page).unwrap();
        let archive = [
            response("https://e.com/1", "200 OK", &headers, &chunked),
            // Stored decoded, headers kept (as Common Crawl's older files).
            response("https://e.com/2", "200 OK", &headers, page),
            response("https://e.com/3", "200 OK", &[("Content-Encoding", "deflate")], &zlib.finish().unwrap()),
            response("https://e.com/4", "200 OK", &[("Content-Encoding", "deflate")], &raw.finish().unwrap()),
            response("https://e.com/5", "200 OK", &[("Content-Type", "text/html"), ("Content-Encoding", "br")], b"x"),
        ];
        let mut text = archive.concat();
        // Records 3 and 4 name no type: the type Common Crawl detected stands in.
        let detected = b"WARC-Target-URI: https://e.com/3\r\n";
        let at = memchr::memmem::find(&text, detected).unwrap();
        text.splice(at..at, b"WARC-Identified-Payload-Type: text/html\r\n".iter().copied());
        let entries = read(&text);
        let bodies: Vec<String> = entries
            .iter()
            .map(|e| match e {
                Entry::Page(p) => p.document.as_ref().unwrap().body.clone(),
                other => shapes(std::slice::from_ref(other))[0].clone(),
            })
            .collect();
        let page = String::from_utf8(page.to_vec()).unwrap();
        assert_eq!(bodies[..4], [page.clone(), page.clone(), page, "skip not_html".to_string()]);
        assert_eq!(bodies[4], "fail decompress Content-Encoding br is not supported");
    }

    #[test]
    fn dechunking_keeps_what_a_cut_body_has_and_leaves_unchunked_bodies() {
        assert_eq!(dechunk(b"5\r\nhello\r\n3\r\nwor"), Some(b"hellowor".to_vec()));
        assert_eq!(dechunk(b"<html>\n</html>"), None);
        assert_eq!(dechunk(b"0\r\n\r\n"), Some(Vec::new()));
    }

    #[test]
    fn a_truncated_last_record_is_an_error_naming_the_record() {
        let records = crawl();
        let mut plain = records[..3].concat();
        let last = html("https://e.com/cut", "<p>this page was cut short by a killed crawler</p>");
        plain.extend_from_slice(&last[..last.len() - 20]);
        let shapes_of = |bytes: &[u8]| shapes(&read(bytes));
        let got = shapes_of(&plain);
        assert_eq!(got[..3], CRAWL[..3]);
        let start = records[..3].concat().len();
        assert_eq!(
            got[3],
            format!(
                "fail archive record 4 at byte {start}, https://e.com/cut: \
                 the archive ends inside this record (truncated)"
            )
        );
        assert_eq!(got.len(), 4);
        // Compressed, cut inside the last gzip member.
        let mut zipped: Vec<u8> = records[..3].iter().flat_map(|r| gz(r)).collect();
        let start = zipped.len();
        let member = gz(&last);
        zipped.extend_from_slice(&member[..member.len() / 2]);
        let got = shapes_of(&zipped);
        assert_eq!(got[..3], CRAWL[..3]);
        assert!(got[3].starts_with(&format!("fail archive record 4 (gzip member at byte {start})")), "{got:?}");
        assert_eq!(got.len(), 4);
    }

    #[test]
    fn the_reader_resyncs_after_a_damaged_record() {
        let records = crawl();
        // Compressed: a middle member's deflate data overwritten.
        let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r)).collect();
        let m = &mut members[3];
        let mid = m.len() / 2;
        m[12..mid].fill(0xAA);
        let got = shapes(&read(&members.concat()));
        assert_eq!(got.len(), CRAWL.len(), "{got:?}");
        assert!(got[3].starts_with("fail archive record 4 (gzip member at byte"), "{got:?}");
        assert_eq!([&got[..3], &got[4..]].concat(), [&CRAWL[..3], &CRAWL[4..]].concat());
        // Plain: a Content-Length that lies.
        let mut plain = records.clone();
        let text = String::from_utf8_lossy(&plain[3]).into_owned();
        let length = text.split("Content-Length: ").nth(1).unwrap().split('\r').next().unwrap().to_string();
        plain[3] = text.replacen(&format!("Content-Length: {length}"), "Content-Length: 7", 1).into_bytes();
        let got = shapes(&read(&plain.concat()));
        assert_eq!(got.len(), CRAWL.len(), "{got:?}");
        assert!(got[3].starts_with("fail archive record 4 at byte"), "{got:?}");
        assert_eq!([&got[..3], &got[4..]].concat(), [&CRAWL[..3], &CRAWL[4..]].concat());
        // Not an archive at all: one error, then the end.
        let got = shapes(&read(b"<html>not a WARC file</html>\n"));
        assert_eq!(got, ["fail archive record 1 at byte 0: no WARC/ version line where a record should start"]);
    }

    #[test]
    fn decompression_is_bounded() {
        let limits = ReadLimits { max_bytes: 1000 };
        let cap = record_cap(limits);
        // A record that inflates far past the cap is never inflated: the
        // reader jumps to the next member.
        let zeros = vec![0u8; (cap * 4) as usize];
        let bomb = record("resource", "https://e.com/zeros", "application/octet-stream", &zeros);
        let small = html("https://e.com/ok", "<p>after the bomb</p>");
        let archive = [gz(&bomb), gz(&small)].concat();
        assert!(archive.len() < 100_000);
        let got = shapes(&read_with(&archive, limits));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].contains("more than the") && got[0].starts_with("fail archive record 1"), "{got:?}");
        assert_eq!(got[1], "page https://e.com/ok");
        // A page body gzipped past max_bytes is an error of its own.
        let bomb = gz(&vec![b'a'; 100_000]);
        let page = response(
            "https://e.com/big",
            "200 OK",
            &[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            &bomb,
        );
        let got = shapes(&read_with(&[gz(&page), gz(&small)].concat(), limits));
        assert!(got[0].starts_with("fail too_large larger than the 1000 byte limit once uncompressed"), "{got:?}");
        assert_eq!(got[1], "page https://e.com/ok");
        // A body stored larger than max_bytes too, and the next record still reads.
        let big = html("https://e.com/big", &"<p>word</p>".repeat(200));
        let got = shapes(&read_with(&[big, small].concat(), limits));
        assert_eq!(got, ["fail too_large larger than the 1000 byte limit", "page https://e.com/ok"]);
    }

    #[test]
    fn blank_lines_between_and_after_records_and_bracketed_uris_are_forgiven() {
        let a = html("<https://e.com/a>", "<p>a</p>");
        let b = html("https://e.com/b", "<p>b</p>");
        let text = [&b"\r\n"[..], &a, b"\r\n", &b, b"\r\n\r\n"].concat();
        assert_eq!(shapes(&read(&text)), ["page https://e.com/a", "page https://e.com/b"]);
    }

    #[test]
    fn an_empty_file_is_an_error_and_a_missing_one_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.warc");
        std::fs::write(&path, b"").unwrap();
        let source =
            |p: &std::path::Path| Source { id: "x".into(), key: DocKey(0), location: Location::File(p.into()) };
        assert_eq!(Archive::open(&source(&path), ReadLimits::default()).err().unwrap().kind, DocErrorKind::Empty);
        let missing = dir.path().join("missing.warc");
        assert_eq!(Archive::open(&source(&missing), ReadLimits::default()).err().unwrap().kind, DocErrorKind::Io);
    }
}
