//! What a link-following crawl saw, kept with the crawl (schema version 9),
//! so an audit of the index reports the crawl as an audit of a fresh crawl
//! does: inlinks, links to fix, folded URLs, orphan and unlisted pages,
//! traps and links not followed.
//!
//! The links, the bulk, are rows of `crawl_links` (URLs as text, one row
//! per distinct link); everything else is one JSON document per crawl in
//! `crawl_facts`.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use webdup_core::crawl::{CrawlFacts, MovedStart, NotFollowed, Trap};

use crate::index::{lock, write_transaction};
use crate::{Error, Index, Result};

/// The facts of a crawl but its links, as `crawl_facts.facts` keeps them.
#[derive(Serialize, Deserialize)]
struct Stored {
    pages: u64,
    depth: u32,
    listed: Option<Vec<String>>,
    folded: Vec<(String, String)>,
    folded_beyond: u64,
    canonicals_beyond: u64,
    traps: Vec<Trap>,
    not_followed: NotFollowed,
    moved_starts: Vec<MovedStart>,
}

impl Index {
    /// Keeps `facts` as what crawl `crawl` saw, replacing what an earlier
    /// add to that crawl kept; one transaction.
    pub fn store_crawl_facts(&self, crawl: &str, facts: &CrawlFacts) -> Result<()> {
        self.check_writable()?;
        let stored = Stored {
            pages: facts.pages,
            depth: facts.depth,
            listed: facts.listed.clone(),
            folded: facts.folded.clone(),
            folded_beyond: facts.folded_beyond,
            canonicals_beyond: facts.canonicals_beyond,
            traps: facts.traps.clone(),
            not_followed: facts.not_followed.clone(),
            moved_starts: facts.moved_starts.clone(),
        };
        let json = serde_json::to_string(&stored).expect("plain data");
        let mut conn = lock(&self.writer);
        let tx = write_transaction(&mut conn)?;
        tx.execute("DELETE FROM crawl_links WHERE crawl = ?1", [crawl])?;
        tx.execute("INSERT OR REPLACE INTO crawl_facts (crawl, facts) VALUES (?1, ?2)", params![crawl, json])?;
        {
            // Repeats count once (see `CrawlFacts::links`): the key drops them.
            let mut insert =
                tx.prepare_cached("INSERT OR IGNORE INTO crawl_links (crawl, from_url, to_url) VALUES (?1, ?2, ?3)")?;
            for (from, to) in &facts.links {
                insert.execute(params![crawl, from, to])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// What crawl `crawl` saw, as [`Index::store_crawl_facts`] kept it;
    /// `None` for a crawl stored without following links, or before schema
    /// version 9. Links come back sorted. Fails with
    /// [`Error::CrawlFacts`] when the kept document cannot be decoded.
    pub fn crawl_facts(&self, crawl: &str) -> Result<Option<CrawlFacts>> {
        self.with_reader(|conn| {
            let json: Option<String> =
                conn.query_row("SELECT facts FROM crawl_facts WHERE crawl = ?1", [crawl], |r| r.get(0)).optional()?;
            let Some(json) = json else { return Ok(None) };
            let s: Stored = serde_json::from_str(&json)
                .map_err(|e| Error::CrawlFacts { crawl: crawl.into(), reason: e.to_string() })?;
            let mut stmt =
                conn.prepare("SELECT from_url, to_url FROM crawl_links WHERE crawl = ?1 ORDER BY from_url, to_url")?;
            let links = stmt
                .query_map([crawl], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<(String, String)>>>()?;
            Ok(Some(CrawlFacts {
                pages: s.pages,
                depth: s.depth,
                links,
                listed: s.listed,
                folded: s.folded,
                folded_beyond: s.folded_beyond,
                canonicals_beyond: s.canonicals_beyond,
                traps: s.traps,
                not_followed: s.not_followed,
                moved_starts: s.moved_starts,
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Settings, schema};
    use webdup_core::settings::FingerprintSettings;

    fn settings() -> Settings {
        Settings {
            fingerprint: FingerprintSettings::default(),
            threshold: 0.8,
            cross_site_threshold: None,
            bands: 16,
            rows: 8,
            assumed: Vec::new(),
        }
    }

    fn facts(links: &[(&str, &str)]) -> CrawlFacts {
        CrawlFacts {
            pages: 3,
            depth: 2,
            links: links.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            listed: Some(vec!["https://example.com/".into(), "https://example.com/orphan".into()]),
            folded: vec![("https://example.com/a?utm_source=x".into(), "https://example.com/a".into())],
            folded_beyond: 4,
            canonicals_beyond: 1,
            traps: vec![Trap { pattern: "example.com/cal?month".into(), fetched: 12, skipped: 7 }],
            not_followed: NotFollowed { robots: 1, nofollow: 2, ..NotFollowed::default() },
            moved_starts: vec![MovedStart { from: "https://old.example/".into(), to: "https://example.com/".into() }],
        }
    }

    #[test]
    fn crawl_facts_round_trip_and_a_re_add_replaces_them() {
        let dir = tempfile::tempdir().unwrap();
        let index = Index::open(dir.path().join("i.db"), settings()).unwrap();
        assert_eq!(index.crawl_facts("c1").unwrap(), None, "a crawl stored without facts has none");
        let first = facts(&[
            ("https://example.com/", "https://example.com/b"),
            ("https://example.com/", "https://example.com/a"),
            ("https://example.com/", "https://example.com/a"),
        ]);
        index.store_crawl_facts("c1", &first).unwrap();
        index.store_crawl_facts("c2", &facts(&[("https://example.com/x", "https://example.com/y")])).unwrap();
        let read = index.crawl_facts("c1").unwrap().unwrap();
        let sorted_once = facts(&[
            ("https://example.com/", "https://example.com/a"),
            ("https://example.com/", "https://example.com/b"),
        ]);
        assert_eq!(read, sorted_once, "links come back sorted, a repeat once, and everything else as kept");

        let again =
            CrawlFacts { pages: 1, listed: None, ..facts(&[("https://example.com/", "https://example.com/c")]) };
        index.store_crawl_facts("c1", &again).unwrap();
        assert_eq!(index.crawl_facts("c1").unwrap().unwrap(), again, "the re-add's facts replace the first's");
        assert_eq!(index.crawl_facts("c2").unwrap().unwrap().links.len(), 1, "another crawl's stay");
    }

    #[test]
    fn an_index_of_version_8_migrates_and_keeps_facts_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v8.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            for sql in &schema::MIGRATIONS[..8] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 8).unwrap();
        }
        let index = Index::open(&path, settings()).unwrap();
        assert_eq!(index.stats().unwrap().schema_version, schema::VERSION);
        assert_eq!(index.crawl_facts("c1").unwrap(), None);
        let f = facts(&[("https://example.com/", "https://example.com/a")]);
        index.store_crawl_facts("c1", &f).unwrap();
        assert_eq!(index.crawl_facts("c1").unwrap(), Some(f));
    }

    #[test]
    fn facts_that_cannot_be_decoded_are_a_typed_error_naming_the_crawl() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.db");
        let index = Index::open(&path, settings()).unwrap();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute("INSERT INTO crawl_facts (crawl, facts) VALUES ('c1', '{\"pages\": \"many\"}')", [])
            .unwrap();
        match index.crawl_facts("c1") {
            Err(Error::CrawlFacts { crawl, .. }) => assert_eq!(crawl, "c1"),
            other => panic!("{other:?}"),
        }
    }
}
