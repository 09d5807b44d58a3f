//! Crawls a small news site served on 127.0.0.1: four distinct articles,
//! a print version that is a byte-identical copy of one of them, a partner
//! site's reprint of another with a few words changed, and a dead link.

use std::collections::HashMap;

use axum::http::{StatusCode, Uri, header};
use webdup_spider_example::{Outcome, Verdict, crawl};

const RIVER_PATH: &str = "\
<p>The riverside path between the old mill and the Kingsbridge footbridge reopened on Monday after four months of \
repairs. Council workers replaced the cracked tarmac with compacted gravel, rebuilt two collapsed drainage culverts \
and installed twelve new benches made from reclaimed oak. Solar lamps now stand every fifty metres along the eastern \
bank, a change residents had asked for since a petition gathered more than nine hundred signatures two years ago.</p>
<p>The work cost just under three hundred thousand pounds, most of it from a regional active travel grant. Cyclists \
will share the path with walkers, and the council has painted a centre line on the narrow stretch below the weir \
where the two groups most often meet.</p>
<p>Not everyone is pleased. The angling club says the new lamps disturb fish near the spawning beds and has asked for \
them to be dimmed after ten at night. A council spokesperson said the lighting schedule would be reviewed in the \
autumn, once officers had collected a summer of data on how many people use the path after dark.</p>
<p>Volunteers from the river trust will plant native wildflowers along the verges next month.</p>";

const LIBRARY_HOURS: &str = "\
<p>From the first of March the central library will open until eight in the evening on Tuesdays and Thursdays, the \
first extension of its hours in more than a decade. The change follows a consultation in which students and shift \
workers said the current closing time of five o'clock made the building impossible to use on weekdays.</p>
<p>The longer evenings are being paid for by closing the branch an hour earlier on Saturday afternoons, when visitor \
numbers are lowest, and by moving two part-time posts from the mobile library service. The mobile van will continue \
to visit the outlying villages, but on a fortnightly rather than a weekly timetable.</p>
<p>Head librarian Priya Natarajan said the study rooms on the second floor would be bookable online for the first \
time, and that the homework club run by volunteers on Thursday evenings would move into the larger reading room. The \
library's café will stay open until seven.</p>
<p>Staff unions have agreed to the new rota after the council promised that no evening shift would be worked \
alone.</p>";

const MARKET_SQUARE: &str = "\
<p>Traders on Market Square will move to temporary stalls on Castle Street for six weeks from the end of May while \
the square's Victorian drainage is replaced. The square floods after heavy rain because the original clay pipes, laid \
in 1874, have been crushed by delivery lorries over the years, and last winter water reached the doorways of three \
shops on the north side.</p>
<p>The council's contractor will lift the granite setts one section at a time, number them and relay them over new \
plastic pipes, so that the square looks exactly as it did once the work is finished. Market days stay the same: \
Wednesdays, Fridays and Saturdays from eight until four.</p>
<p>Stallholders have been offered a rent holiday for the first fortnight of the move. Ron Beckett, who has sold fruit \
and vegetables on the square for thirty-one years, said he expected to lose passing trade but was glad the flooding \
would finally be dealt with. Parking bays on Castle Street will be suspended on market days while the temporary \
stalls are in place.</p>";

const NIGHT_BUSES: &str = "\
<p>A night bus service linking the town centre with the hospital, the university campus and the Northfield estate \
will begin a one-year trial in September. Buses will leave the station every forty minutes between midnight and five \
in the morning on Fridays and Saturdays, with a single fare of two pounds.</p>
<p>The route was drawn up after the students' union and the hospital's staff forum both reported that nurses and bar \
workers finishing late were paying for taxis or walking home along unlit roads. The trial will be run by the operator \
that holds the daytime contract, using two of its newer electric vehicles, which are quieter on residential \
streets.</p>
<p>Passenger numbers will be counted every month. If fewer than sixty people use the service on an average night by \
the end of the trial, the council says it will be withdrawn or cut back to Saturdays only. Campaigners want it \
extended to weekday nights and to the villages east of the bypass, and they plan to present a petition at the \
transport committee meeting in November.</p>";

/// A page of the site: its header, the article, its footer.
fn layout(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} | Riverside Gazette</title></head>\n\
         <body><header><a href=\"/\">Riverside Gazette</a> <nav><a href=\"/\">News</a> \
         <a href=\"/articles/market-square\">Business</a></nav></header>\n\
         <main><article><h1>{title}</h1>\n{body}\n</article></main>\n\
         <footer><p>Riverside Gazette, 14 Mill Lane. Letters to the editor are welcome.</p></footer></body></html>\n"
    )
}

/// The site, by path. The copies are linked from their originals only, so
/// the crawl fetches (and checks) an original before its copy.
fn site() -> HashMap<&'static str, String> {
    let home = layout(
        "Latest news",
        "<ul>\
         <li><a href=\"/articles/river-path\">Riverside path reopens with lamps and benches</a>: four months of \
         repairs are over, though anglers are unhappy with the new lighting.</li>\
         <li><a href=\"/articles/library-hours\">Library to open late twice a week</a>: evening hours return after \
         a consultation of students and shift workers.</li>\
         <li><a href=\"/articles/market-square\">Market moves to Castle Street during drainage work</a>: six weeks \
         of temporary stalls while the Victorian pipes are replaced.</li>\
         <li><a href=\"/articles/night-buses\">Night buses to run on a one-year trial</a>: a route to the hospital, \
         the campus and Northfield on Friday and Saturday nights.</li>\
         <li><a href=\"/articles/ferry-timetable\">Ferry timetable</a> (archive).</li>\
         </ul>",
    );
    let river_path = layout(
        "Riverside path reopens with lamps and benches",
        &format!("{RIVER_PATH}\n<p><a href=\"/print/river-path\">Print this article</a></p>"),
    );
    let library_hours = layout(
        "Library to open late twice a week",
        &format!(
            "{LIBRARY_HOURS}\n<p><a href=\"/partners/valley-weekly/library-hours\">Also in the Valley Weekly</a></p>"
        ),
    );
    // The Valley Weekly's reprint: three words changed.
    let reprint = library_hours
        .replace("first of March", "first of April")
        .replace("a decade", "a generation")
        .replace("open until seven", "open until six");
    assert_ne!(reprint, library_hours);
    HashMap::from([
        ("/robots.txt", "User-agent: *\nAllow: /\n".to_string()),
        ("/", home),
        ("/print/river-path", river_path.clone()),
        ("/articles/river-path", river_path),
        ("/partners/valley-weekly/library-hours", reprint),
        ("/articles/library-hours", library_hours),
        ("/articles/market-square", layout("Market moves to Castle Street during drainage work", MARKET_SQUARE)),
        ("/articles/night-buses", layout("Night buses to run on a one-year trial", NIGHT_BUSES)),
    ])
}

/// Serves `site()` on 127.0.0.1 and returns its origin; 404 for other paths.
async fn serve() -> String {
    let site = site();
    let app = axum::Router::new().fallback(move |uri: Uri| {
        let page = site.get(uri.path()).cloned();
        async move {
            let content_type = if uri.path().ends_with(".txt") { "text/plain" } else { "text/html; charset=utf-8" };
            match page {
                Some(body) => (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body),
                None => (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, content_type)], layout("Not found", "")),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let origin = format!("http://{}", listener.local_addr().expect("bound address"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    origin
}

/// The outcomes by path, each path once.
fn by_path(outcomes: Vec<Outcome>, origin: &str) -> HashMap<String, Verdict> {
    let mut paths = HashMap::new();
    for o in outcomes {
        let path = o.url.strip_prefix(origin).unwrap_or_else(|| panic!("{} is not on {origin}", o.url)).to_string();
        let before = paths.insert(path, o.verdict);
        assert!(before.is_none(), "{} crawled twice", o.url);
    }
    paths
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_are_found_while_crawling() {
    let origin = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("crawl.db");

    let outcomes = crawl(&format!("{origin}/"), &index).await.expect("crawl");
    let report: Vec<String> = outcomes.iter().map(ToString::to_string).collect();
    let verdicts = by_path(outcomes, &origin);
    let verdict = |path: &str| verdicts.get(path).unwrap_or_else(|| panic!("{path} not crawled: {report:#?}"));

    let mut paths: Vec<&str> = verdicts.keys().map(String::as_str).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/",
            "/articles/ferry-timetable",
            "/articles/library-hours",
            "/articles/market-square",
            "/articles/night-buses",
            "/articles/river-path",
            "/partners/valley-weekly/library-hours",
            "/print/river-path",
        ],
        "{report:#?}"
    );
    for path in
        ["/", "/articles/river-path", "/articles/library-hours", "/articles/market-square", "/articles/night-buses"]
    {
        assert_eq!(verdict(path), &Verdict::New, "{path}: {report:#?}");
    }
    assert_eq!(
        verdict("/print/river-path"),
        &Verdict::Duplicate { of: format!("{origin}/articles/river-path"), jaccard: 1.0 },
        "{report:#?}"
    );
    match verdict("/partners/valley-weekly/library-hours") {
        Verdict::Duplicate { of, jaccard } => {
            assert_eq!(of, &format!("{origin}/articles/library-hours"), "{report:#?}");
            assert!((0.8..1.0).contains(jaccard), "a near copy, not an exact one: {report:#?}");
        }
        other => panic!("the reprint is {other:?}: {report:#?}"),
    }
    assert_eq!(verdict("/articles/ferry-timetable"), &Verdict::Skipped("HTTP 404".into()), "{report:#?}");

    // A second crawl into the same index (opened with the settings it was
    // made with) has seen every page: each is an exact copy of a page
    // stored with its text.
    let again = by_path(crawl(&format!("{origin}/"), &index).await.expect("second crawl"), &origin);
    assert_eq!(again.len(), verdicts.len());
    for (path, verdict) in &again {
        match verdict {
            Verdict::Duplicate { of, jaccard } => {
                let same_text: &[&str] = match path.as_str() {
                    "/articles/river-path" | "/print/river-path" => &["/articles/river-path", "/print/river-path"],
                    path => &[path],
                };
                assert!(same_text.iter().any(|p| of == &format!("{origin}{p}")), "{path} duplicates {of}");
                assert_eq!(*jaccard, 1.0, "{path} duplicates {of}");
            }
            Verdict::Skipped(_) => assert_eq!(path, "/articles/ferry-timetable"),
            Verdict::New => panic!("{path} is new on the second crawl"),
        }
    }
}
