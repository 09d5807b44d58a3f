//! `webdup lost-and-found`: a redirect map from an old crawl to a new one.

use std::process::ExitCode;

use webdup::report::{terminal_safe, write_redirects};
use webdup::store::lost_and_found::{self, Options};

use crate::args::LostAndFoundArgs;
use crate::common::write_to;

pub fn run(args: LostAndFoundArgs) -> anyhow::Result<ExitCode> {
    for (name, v) in [("min-jaccard", args.min_jaccard), ("min-containment", args.min_containment)] {
        if !(v > 0.0 && v <= 1.0) {
            anyhow::bail!("--{name} must be in (0, 1], not {v}");
        }
    }
    // The index's own settings decide everything compared here.
    let index = webdup::store::Index::open_existing(&args.index.path)?;
    let options =
        Options { min_jaccard: args.min_jaccard, min_containment: args.min_containment, ..Options::default() };
    let map = lost_and_found::lost_and_found(&index, &args.old, &args.new, &options)?;
    let mut skipped = Vec::new();
    write_to(args.output.as_deref(), |out| {
        skipped = write_redirects(&map, args.format.format(), out)?;
        Ok(())
    })?;
    // An old URL a format cannot express is named, not dropped silently.
    for s in skipped {
        eprintln!("webdup: left {} out of the map: {}", terminal_safe(&s.url), s.why);
    }
    Ok(ExitCode::SUCCESS)
}
