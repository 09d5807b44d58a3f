//! CSV and TSV output that a spreadsheet opens as data, not formulas.
//!
//! Titles, descriptions, URLs and file names come from the pages and inputs,
//! so a page titled `=HYPERLINK("https://evil.example", "click")` would run as
//! a formula in Excel, LibreOffice or Google Sheets. As OWASP's "CSV
//! Injection" advice says, a cell that starts with `=`, `+`, `-`, `@`, a tab
//! or a carriage return gets a leading `'`, which spreadsheets show as text
//! and hide. Numbers (`-0.5`) are left as they are: they cannot be formulas.

use std::borrow::Cow;
use std::io::Write;

/// The UTF-8 byte-order mark that `--csv-bom` puts before CSV and TSV
/// output, so that Excel reads it as UTF-8.
pub const UTF8_BOM: &[u8] = "\u{feff}".as_bytes();

/// `cell` made safe to open in a spreadsheet (see the module docs).
pub fn spreadsheet_safe(cell: &str) -> Cow<'_, str> {
    match cell.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') if cell.parse::<f64>().is_err() => {
            Cow::Owned(format!("'{cell}"))
        }
        _ => Cow::Borrowed(cell),
    }
}

/// A `csv::Writer` whose cells all pass through [`spreadsheet_safe`].
pub struct SafeCsvWriter<W: Write> {
    inner: csv::Writer<W>,
}

impl<W: Write> SafeCsvWriter<W> {
    /// A writer with `delimiter` (`b','` for CSV, `b'\t'` for TSV).
    pub fn new(delimiter: u8, out: W) -> Self {
        SafeCsvWriter { inner: csv::WriterBuilder::new().delimiter(delimiter).from_writer(out) }
    }

    pub fn write_record<I, T>(&mut self, record: I) -> csv::Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        self.inner.write_record(record.into_iter().map(|c| spreadsheet_safe(c.as_ref()).into_owned()))
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_quoted_and_numbers_and_text_are_not() {
        for (cell, want) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1+1", "'+1+1"),
            ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-0.5", "-0.5"),
            ("+3", "+3"),
            ("https://example.com/=a", "https://example.com/=a"),
            ("Plain title", "Plain title"),
            ("", ""),
        ] {
            assert_eq!(spreadsheet_safe(cell), want, "{cell:?}");
        }
    }

    #[test]
    fn the_writer_quotes_every_cell() {
        let mut out = Vec::new();
        let mut w = SafeCsvWriter::new(b',', &mut out);
        w.write_record(["=1+1", "ok", "-1"]).unwrap();
        w.flush().unwrap();
        drop(w);
        assert_eq!(String::from_utf8(out).unwrap(), "'=1+1,ok,-1\n");
    }
}
