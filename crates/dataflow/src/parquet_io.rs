//! Parquet files, column by column: what the stage files and the page
//! table are made of. Every file carries its kind and format version in
//! its key-value metadata, and is written to a temporary name and renamed,
//! so a file that exists is whole.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, ListBuilder, UInt32Builder};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float64Array, ListArray, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::column::reader::ColumnReader;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::SchemaDescriptor;

use crate::Error;

/// Metadata key naming what a file holds (`webdup.ingest`, ...).
pub const KIND_KEY: &str = "webdup.kind";
/// Metadata key holding the file's format version.
pub const VERSION_KEY: &str = "webdup.format_version";

/// Rows per record batch when writing.
const BATCH_ROWS: usize = 8192;

/// Encoded bytes a writer buffers before it ends a row group. The writer
/// keeps a whole row group in memory, and its default (a million rows)
/// made a stage file's row group as large as the file: 400 MB of shingles
/// for 100,000 pages, all of it fresh memory the kernel zeroes.
const ROW_GROUP_BYTES: usize = 64 << 20;

/// One column to write; lists and strings are borrowed from the rows.
pub enum Column<'a> {
    U64(Vec<u64>),
    OptU64(Vec<Option<u64>>),
    Str(Vec<&'a str>),
    OptStr(Vec<Option<&'a str>>),
    OptBin(Vec<Option<&'a [u8]>>),
    /// Lists of hashes as binary values, 8 little-endian bytes a hash: a
    /// list column costs a repetition and a definition level per hash to
    /// write and to read, and ingest files hold tens of millions of them.
    BinU64(Vec<Option<&'a [u64]>>),
    ListU32(Vec<Option<&'a [u32]>>),
    Bool(Vec<bool>),
    OptBool(Vec<Option<bool>>),
    OptF64(Vec<Option<f64>>),
}

/// How a file is stored: stage files hold hashes, which neither compress
/// nor repeat, so they are written plain; the page table is for people's
/// tools and compresses well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Plain,
    Compressed,
}

impl Column<'_> {
    fn data_type(&self) -> DataType {
        match self {
            Column::U64(_) | Column::OptU64(_) => DataType::UInt64,
            Column::Str(_) | Column::OptStr(_) => DataType::Utf8,
            Column::OptBin(_) | Column::BinU64(_) => DataType::Binary,
            Column::ListU32(_) => DataType::List(Arc::new(Field::new("item", DataType::UInt32, true))),
            Column::Bool(_) | Column::OptBool(_) => DataType::Boolean,
            Column::OptF64(_) => DataType::Float64,
        }
    }

    fn nullable(&self) -> bool {
        !matches!(self, Column::U64(_) | Column::Str(_) | Column::Bool(_))
    }

    fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::OptU64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::OptStr(v) => v.len(),
            Column::OptBin(v) => v.len(),
            Column::BinU64(v) => v.len(),
            Column::ListU32(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::OptBool(v) => v.len(),
            Column::OptF64(v) => v.len(),
        }
    }

    /// Rows `from..to` as an arrow array.
    fn slice(&self, from: usize, to: usize) -> ArrayRef {
        match self {
            Column::U64(v) => Arc::new(UInt64Array::from(v[from..to].to_vec())),
            Column::OptU64(v) => Arc::new(UInt64Array::from(v[from..to].to_vec())),
            Column::Str(v) => Arc::new(StringArray::from_iter_values(v[from..to].iter())),
            Column::OptStr(v) => Arc::new(StringArray::from(v[from..to].to_vec())),
            Column::OptBin(v) => {
                let mut b = BinaryBuilder::new();
                for x in &v[from..to] {
                    b.append_option(*x);
                }
                Arc::new(b.finish())
            }
            Column::BinU64(v) => {
                let rows = &v[from..to];
                let hashes: usize = rows.iter().map(|x| x.map_or(0, <[u64]>::len)).sum();
                let mut b = BinaryBuilder::with_capacity(rows.len(), hashes * 8);
                let mut bytes = Vec::new();
                for x in rows {
                    match x {
                        Some(items) => {
                            bytes.clear();
                            bytes.extend(items.iter().flat_map(|h| h.to_le_bytes()));
                            b.append_value(&bytes);
                        }
                        None => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
            Column::ListU32(v) => {
                let mut b = ListBuilder::new(UInt32Builder::new());
                for x in &v[from..to] {
                    match x {
                        Some(items) => {
                            b.values().append_slice(items);
                            b.append(true);
                        }
                        None => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
            Column::Bool(v) => Arc::new(BooleanArray::from(v[from..to].to_vec())),
            Column::OptBool(v) => Arc::new(BooleanArray::from(v[from..to].to_vec())),
            Column::OptF64(v) => Arc::new(Float64Array::from(v[from..to].to_vec())),
        }
    }
}

/// Writes `columns` (all of one length) to `path` as Parquet, through a
/// temporary file renamed into place.
pub fn write(
    path: &Path,
    kind: &str,
    version: u32,
    storage: Storage,
    columns: Vec<(&str, Column)>,
) -> Result<(), Error> {
    let mut w = Writer::new(path, kind, version, storage);
    w.append(columns)?;
    w.finish()
}

/// A Parquet file written a block of rows at a time: [`Writer::append`]
/// takes the columns of some rows (the first block sets the schema), and
/// [`Writer::finish`] renames the whole file into place.
pub struct Writer<'p> {
    path: &'p Path,
    tmp: std::path::PathBuf,
    props: Option<WriterProperties>,
    writer: Option<(ArrowWriter<File>, Arc<Schema>)>,
    row_group_bytes: usize,
}

impl<'p> Writer<'p> {
    pub fn new(path: &'p Path, kind: &str, version: u32, storage: Storage) -> Writer<'p> {
        // Stage files are read whole by webdup, never filtered by value:
        // the min and max of every page of hashes would go unread.
        let (compression, dictionary, statistics) = match storage {
            Storage::Plain => (Compression::UNCOMPRESSED, false, EnabledStatistics::None),
            Storage::Compressed => (Compression::SNAPPY, true, EnabledStatistics::Page),
        };
        let props = WriterProperties::builder()
            .set_compression(compression)
            .set_dictionary_enabled(dictionary)
            .set_statistics_enabled(statistics)
            .set_key_value_metadata(Some(vec![
                KeyValue::new(KIND_KEY.to_string(), kind.to_string()),
                KeyValue::new(VERSION_KEY.to_string(), version.to_string()),
            ]))
            .build();
        Writer {
            path,
            tmp: crate::marker::temporary(path),
            props: Some(props),
            writer: None,
            row_group_bytes: ROW_GROUP_BYTES,
        }
    }

    /// Ends a row group once this many encoded bytes are buffered.
    pub fn row_group_bytes(mut self, bytes: usize) -> Writer<'p> {
        self.row_group_bytes = bytes;
        self
    }

    /// Writes the rows of `columns` (all of one length, the same names and
    /// types at every call).
    pub fn append(&mut self, columns: Vec<(&str, Column)>) -> Result<(), Error> {
        let path = self.path;
        let rows = columns.first().map_or(0, |(_, c)| c.len());
        debug_assert!(columns.iter().all(|(_, c)| c.len() == rows), "columns of different lengths");
        if self.writer.is_none() {
            let fields: Vec<Field> =
                columns.iter().map(|(name, c)| Field::new(*name, c.data_type(), c.nullable())).collect();
            let schema = Arc::new(Schema::new(fields));
            let file = File::create(&self.tmp).map_err(|e| Error::io(&self.tmp, e))?;
            let writer =
                ArrowWriter::try_new(file, schema.clone(), self.props.take()).map_err(|e| Error::parquet(path, e))?;
            self.writer = Some((writer, schema));
        }
        let Some((writer, schema)) = self.writer.as_mut() else { unreachable!("created above") };
        let mut from = 0;
        loop {
            let to = (from + BATCH_ROWS).min(rows);
            let arrays: Vec<ArrayRef> = columns.iter().map(|(_, c)| c.slice(from, to)).collect();
            let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| Error::arrow(path, e))?;
            writer.write(&batch).map_err(|e| Error::parquet(path, e))?;
            if writer.in_progress_size() >= self.row_group_bytes {
                writer.flush().map_err(|e| Error::parquet(path, e))?;
            }
            from = to;
            if from >= rows {
                break;
            }
        }
        Ok(())
    }

    /// Closes the file and renames it into place. At least one
    /// [`Writer::append`] (of no rows, if need be) must come first: it
    /// gives the file its schema.
    pub fn finish(self) -> Result<(), Error> {
        let path = self.path;
        let Some((writer, _)) = self.writer else {
            return Err(Error::Format(format!("{}: nothing was written, not even a schema", path.display())));
        };
        // Not synced to disk: the rename makes a killed process leave a whole
        // file or none, which is what a rerun needs; after a power cut, a part
        // that does not read is an error naming it (delete it and run again).
        drop(writer.into_inner().map_err(|e| Error::parquet(path, e))?);
        std::fs::rename(&self.tmp, path).map_err(|e| Error::io(path, e))
    }
}

/// The record batches of `path`, one at a time, checked to be a `kind` file
/// of `version` (only `columns` when given).
pub fn read<'p>(
    path: &'p Path,
    kind: &str,
    version: u32,
    columns: Option<&[&str]>,
) -> Result<impl Iterator<Item = Result<RecordBatch, Error>> + 'p, Error> {
    read_groups(path, kind, version, columns, &|_| true)
}

/// How many row groups the file at `path` has.
pub fn row_groups(path: &Path) -> Result<usize, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| Error::parquet(path, e))?;
    Ok(builder.metadata().num_row_groups())
}

/// [`read`], of the row groups whose index `groups` takes only: workers
/// that share one file each read some of its row groups.
pub fn read_groups<'p>(
    path: &'p Path,
    kind: &str,
    version: u32,
    columns: Option<&[&str]>,
    groups: &dyn Fn(usize) -> bool,
) -> Result<impl Iterator<Item = Result<RecordBatch, Error>> + 'p, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| Error::parquet(path, e))?;
    check_kind(builder.metadata().file_metadata().key_value_metadata(), path, kind, version)?;
    let builder = match columns {
        Some(names) => {
            let mask = projection(builder.parquet_schema(), names);
            builder.with_projection(mask)
        }
        None => builder,
    };
    let wanted: Vec<usize> = (0..builder.metadata().num_row_groups()).filter(|&g| groups(g)).collect();
    let reader = builder.with_row_groups(wanted).build().map_err(|e| Error::parquet(path, e))?;
    Ok(reader.map(move |b| b.map_err(|e| Error::arrow(path, e))))
}

/// The leaves of the top-level columns `names`.
fn projection(schema: &SchemaDescriptor, names: &[&str]) -> ProjectionMask {
    let wanted: Vec<usize> = (0..schema.num_columns())
        .filter(|&i| names.contains(&schema.column(i).path().parts().first().map_or("", String::as_str)))
        .collect();
    ProjectionMask::leaves(schema, wanted)
}

/// Whether a file's key-value metadata names it a webdup `kind` file of
/// format `version`.
fn check_kind(meta: Option<&Vec<KeyValue>>, path: &Path, kind: &str, version: u32) -> Result<(), Error> {
    let value = |k: &str| meta.and_then(|m| m.iter().find(|kv| kv.key == k)).and_then(|kv| kv.value.clone());
    if value(KIND_KEY).as_deref() != Some(kind) {
        return Err(Error::Format(format!("{}: not a webdup {kind} file", path.display())));
    }
    let found = value(VERSION_KEY).and_then(|v| v.parse::<u32>().ok());
    if found != Some(version) {
        return Err(Error::Format(format!(
            "{}: {kind} format version {}, this webdup reads version {version}",
            path.display(),
            found.map_or_else(|| "unknown".to_string(), |v| v.to_string())
        )));
    }
    Ok(())
}

/// A webdup file opened to be read a row group at a time: most columns
/// through Arrow ([`Groups::arrow`]), [`Column::BinU64`] columns straight
/// from their pages ([`Groups::bin_u64s`]). Through Arrow, a binary column
/// is first copied into one growing buffer a batch, whose regrowth copies
/// (and faults in) memory never written; read from the pages, each value
/// is copied once, into its row's list.
pub struct Groups<'p> {
    path: &'p Path,
    file: File,
    arrow: ArrowReaderMetadata,
    pages: SerializedFileReader<File>,
}

/// Opens a webdup `kind` file of format `version` for [`Groups`].
pub fn open_groups<'p>(path: &'p Path, kind: &str, version: u32) -> Result<Groups<'p>, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let arrow = ArrowReaderMetadata::load(&file, ArrowReaderOptions::default()).map_err(|e| Error::parquet(path, e))?;
    check_kind(arrow.metadata().file_metadata().key_value_metadata(), path, kind, version)?;
    let pages = SerializedFileReader::new(file.try_clone().map_err(|e| Error::io(path, e))?)
        .map_err(|e| Error::parquet(path, e))?;
    Ok(Groups { path, file, arrow, pages })
}

impl Groups<'_> {
    /// Row groups in the file.
    pub fn len(&self) -> usize {
        self.arrow.metadata().num_row_groups()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row group `group`'s `columns`, as Arrow batches.
    pub fn arrow(
        &self,
        group: usize,
        columns: &[&str],
    ) -> Result<impl Iterator<Item = Result<RecordBatch, Error>> + '_, Error> {
        let file = self.file.try_clone().map_err(|e| Error::io(self.path, e))?;
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.arrow.clone());
        let mask = projection(builder.parquet_schema(), columns);
        let reader = builder
            .with_projection(mask)
            .with_row_groups(vec![group])
            .build()
            .map_err(|e| Error::parquet(self.path, e))?;
        Ok(reader.map(move |b| b.map_err(|e| Error::arrow(self.path, e))))
    }

    /// Row group `group`'s rows of the [`Column::BinU64`] column `name`.
    pub fn bin_u64s(&self, group: usize, name: &str) -> Result<Vec<Option<Vec<u64>>>, Error> {
        let path = self.path;
        let bad = |what: String| Error::Format(format!("{}: column {name}, row group {group}: {what}", path.display()));
        let schema = self.pages.metadata().file_metadata().schema_descr();
        let index = (0..schema.num_columns())
            .find(|&i| schema.column(i).name() == name)
            .ok_or_else(|| bad("no such column".into()))?;
        let max_def = schema.column(index).max_def_level();
        let group_reader = self.pages.get_row_group(group).map_err(|e| Error::parquet(path, e))?;
        let rows = usize::try_from(group_reader.metadata().num_rows()).unwrap_or(0);
        let ColumnReader::ByteArrayColumnReader(mut column) =
            group_reader.get_column_reader(index).map_err(|e| Error::parquet(path, e))?
        else {
            return Err(bad("not a binary column".into()));
        };
        let (mut defs, mut values) = (Vec::new(), Vec::new());
        let mut out: Vec<Option<Vec<u64>>> = Vec::with_capacity(rows);
        loop {
            defs.clear();
            values.clear();
            let (records, _, _) = column
                .read_records(4096, (max_def > 0).then_some(&mut defs), None, &mut values)
                .map_err(|e| Error::parquet(path, e))?;
            if records == 0 {
                break;
            }
            let mut values = values.iter();
            for r in 0..records {
                if max_def > 0 && defs.get(r).is_none_or(|&d| d < max_def) {
                    out.push(None);
                    continue;
                }
                let bytes = values.next().ok_or_else(|| bad(format!("row {}: no value", out.len())))?.data();
                out.push(Some(hashes_of(bytes).map_err(|e| bad(format!("row {}: {e}", out.len())))?));
            }
        }
        if out.len() != rows {
            return Err(bad(format!("{} rows read of {rows}", out.len())));
        }
        Ok(out)
    }
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str, path: &Path) -> Result<&'a T, Error> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| Error::Format(format!("{}: column {name} is missing or of the wrong type", path.display())))
}

pub fn u64s(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<u64>, Error> {
    Ok(column::<UInt64Array>(batch, name, path)?.values().to_vec())
}

pub fn opt_u64s(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<u64>>, Error> {
    Ok(column::<UInt64Array>(batch, name, path)?.iter().collect())
}

pub fn strs(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<String>, Error> {
    Ok(column::<StringArray>(batch, name, path)?.iter().map(|s| s.unwrap_or_default().to_string()).collect())
}

pub fn opt_strs(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<String>>, Error> {
    Ok(column::<StringArray>(batch, name, path)?.iter().map(|s| s.map(str::to_string)).collect())
}

/// A binary column's rows of `N` bytes each (`None`: null, or another length).
pub fn opt_byte_arrays<const N: usize>(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
) -> Result<Vec<Option<[u8; N]>>, Error> {
    Ok(column::<BinaryArray>(batch, name, path)?.iter().map(|s| s.and_then(|b| <[u8; N]>::try_from(b).ok())).collect())
}

pub fn bools(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<bool>, Error> {
    Ok(column::<BooleanArray>(batch, name, path)?.iter().map(|b| b.unwrap_or(false)).collect())
}

/// One [`Column::BinU64`] value's hashes, or why it holds none.
fn hashes_of(bytes: &[u8]) -> Result<Vec<u64>, String> {
    if !bytes.len().is_multiple_of(8) {
        return Err(format!("{} bytes, not a whole number of 8-byte hashes", bytes.len()));
    }
    Ok(bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

/// A [`Column::BinU64`] column's rows.
pub fn bin_u64s(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<Vec<u64>>>, Error> {
    let array = column::<BinaryArray>(batch, name, path)?;
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                return Ok(None);
            }
            hashes_of(array.value(i))
                .map(Some)
                .map_err(|e| Error::Format(format!("{}: column {name}, row {i}: {e}", path.display())))
        })
        .collect()
}

pub fn list_u32s(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<Vec<u32>>>, Error> {
    lists::<UInt32Array, u32>(batch, name, path)
}

/// A list column's rows, read through its offsets (no array per row).
fn lists<A, T>(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<Vec<T>>>, Error>
where
    A: 'static + PrimitiveValues<T>,
    T: Copy,
{
    let list = column::<ListArray>(batch, name, path)?;
    let values = list
        .values()
        .as_any()
        .downcast_ref::<A>()
        .ok_or_else(|| Error::Format(format!("{}: column {name} holds lists of another type", path.display())))?
        .slice_values();
    let offsets = list.value_offsets();
    Ok((0..list.len())
        .map(|i| (!list.is_null(i)).then(|| values[offsets[i] as usize..offsets[i + 1] as usize].to_vec()))
        .collect())
}

/// The values of a primitive array.
trait PrimitiveValues<T> {
    fn slice_values(&self) -> &[T];
}

impl PrimitiveValues<u32> for UInt32Array {
    fn slice_values(&self) -> &[u32] {
        self.values()
    }
}

pub fn opt_f64s(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<f64>>, Error> {
    Ok(column::<Float64Array>(batch, name, path)?.iter().collect())
}

pub fn opt_bools(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<Option<bool>>, Error> {
    Ok(column::<BooleanArray>(batch, name, path)?.iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_lists_read_back_and_a_torn_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hashes.parquet");
        let lists: Vec<Option<&[u64]>> = vec![Some(&[1, u64::MAX, 1 << 40]), None, Some(&[])];
        write(&path, "test", 1, Storage::Plain, vec![("h", Column::BinU64(lists.clone()))]).unwrap();
        let batches: Vec<RecordBatch> = read(&path, "test", 1, None).unwrap().map(Result::unwrap).collect();
        let back: Vec<Option<Vec<u64>>> = batches.iter().flat_map(|b| bin_u64s(b, "h", &path).unwrap()).collect();
        assert_eq!(back, lists.iter().map(|l| l.map(<[u64]>::to_vec)).collect::<Vec<_>>());

        // A value that is not a whole number of hashes.
        let torn = dir.path().join("torn.parquet");
        write(&torn, "test", 1, Storage::Plain, vec![("h", Column::OptBin(vec![Some(&[0u8; 8]), Some(&[1u8; 7])]))])
            .unwrap();
        let batch = read(&torn, "test", 1, None).unwrap().next().unwrap().unwrap();
        let e = bin_u64s(&batch, "h", &torn).unwrap_err().to_string();
        assert!(e.contains("torn.parquet") && e.contains("row 1") && e.contains("7 bytes"), "{e}");
    }

    #[test]
    fn hash_lists_read_from_their_pages_match_arrow_by_row_group_and_a_torn_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("groups.parquet");
        let lists: Vec<Vec<u64>> = (0..3000u64).map(|i| (0..i % 9).map(|j| i * 31 + j).collect()).collect();
        let rows: Vec<Option<&[u64]>> =
            lists.iter().enumerate().map(|(i, l)| (i % 5 != 3).then_some(l.as_slice())).collect();
        let keys: Vec<u64> = (0..3000).collect();
        // Small row groups: several in the file.
        let mut w = Writer::new(&path, "test", 1, Storage::Plain).row_group_bytes(16 << 10);
        for block in (0..3000).collect::<Vec<usize>>().chunks(500) {
            w.append(vec![
                ("key", Column::U64(block.iter().map(|&i| keys[i]).collect())),
                ("h", Column::BinU64(block.iter().map(|&i| rows[i]).collect())),
            ])
            .unwrap();
        }
        w.finish().unwrap();
        let groups = open_groups(&path, "test", 1).unwrap();
        assert!(groups.len() > 2, "{} row groups", groups.len());
        let mut back = Vec::new();
        for g in 0..groups.len() {
            let hashes = groups.bin_u64s(g, "h").unwrap();
            let keys: Vec<u64> =
                groups.arrow(g, &["key"]).unwrap().flat_map(|b| u64s(&b.unwrap(), "key", &path).unwrap()).collect();
            assert_eq!(hashes.len(), keys.len(), "row group {g}");
            back.extend(hashes);
        }
        assert_eq!(back, rows.iter().map(|l| l.map(<[u64]>::to_vec)).collect::<Vec<_>>());
        let other = open_groups(&path, "other", 1).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(other.contains("not a webdup other file"), "{other}");

        let torn = dir.path().join("torn.parquet");
        write(
            &torn,
            "test",
            1,
            Storage::Plain,
            vec![("h", Column::OptBin(vec![None, Some(&[0u8; 8]), Some(&[1u8; 7])]))],
        )
        .unwrap();
        let e = open_groups(&torn, "test", 1).unwrap().bin_u64s(0, "h").unwrap_err().to_string();
        assert!(e.contains("torn.parquet") && e.contains("row 2") && e.contains("7 bytes"), "{e}");
    }
}
