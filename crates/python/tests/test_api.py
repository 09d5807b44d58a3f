"""The Python API, on the installed wheel: run by tests/python.rs in a fresh
venv (python -m unittest discover crates/python/tests).

WEBDUP_BIN names the `webdup` binary, to compare `cluster` with
`webdup cluster`; the repository root is two folders up.
"""

import json
import os
import random
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path

import pyarrow as pa

import webdup

ROOT = Path(__file__).resolve().parents[3]
WORDS = (
    "river path bench gravel lamp bridge council summer winter garden school market harbour "
    "village train station museum library festival concert weather storm flood repair budget "
    "meeting resident volunteer teacher student doctor nurse farmer baker painter writer"
).split()


def article(seed: int, words: int = 300) -> str:
    r = random.Random(seed)
    return " ".join(r.choice(WORDS) + str(r.randint(0, 40)) for _ in range(words))


def edited(text: str, every: int) -> str:
    return " ".join("zzzedit" if i % every == 0 else w for i, w in enumerate(text.split(" ")))


def page(title: str, body: str) -> str:
    paragraphs = "".join(f"<p>{' '.join(body.split()[i:i + 60])}</p>" for i in range(0, len(body.split()), 60))
    return (
        f"<html><head><title>{title}</title></head><body>"
        f"<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"<article><h1>{title}</h1>{paragraphs}</article>"
        f"<footer>Copyright the town council</footer></body></html>"
    )


class IndexTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "crawl.db")

    def tearDown(self) -> None:
        self.dir.cleanup()

    def test_check_insert_and_check_and_insert(self) -> None:
        index = webdup.Index(self.path, crawl="monday")
        text = article(1)
        self.assertFalse(index.check("https://a.test/1", html=page("One", text)).seen)
        row = index.insert("https://a.test/1", html=page("One", text), status=200,
                           redirects=[("https://a.test/old", 301)], final_url="https://a.test/1")
        self.assertIsInstance(row, int)

        same = index.check("https://b.test/copy", html=page("One", text))
        self.assertTrue(same.seen)
        self.assertEqual([m.url for m in same.identical], ["https://a.test/1"])
        self.assertEqual((same.identical[0].crawl, same.kind), ("monday", "identical"))

        near = index.check_and_insert("https://b.test/near", html=page("One", edited(text, 80)))
        self.assertFalse(near.new)
        self.assertEqual(near.near[0].url, "https://a.test/1")
        self.assertGreaterEqual(near.near[0].jaccard, 0.8)
        self.assertLess(near.near[0].jaccard, 1.0)
        self.assertIsNotNone(near.id)
        # b.test had no page stored: its template is not learned yet (issue 37).
        self.assertEqual(near.template, "not yet learned")

        other = index.check_and_insert("https://c.test/new", text=article(2))
        self.assertTrue(other.new)
        self.assertIsNone(other.best)

        stored = index.get("https://a.test/1")
        self.assertEqual(stored[0]["status"], 200)
        self.assertEqual(stored[0]["redirects"], [{"url": "https://a.test/old", "status": 301}])
        stats = index.stats()
        self.assertEqual(stats["pages"], 3)
        self.assertEqual(index.remove("https://c.test/new"), 1)
        self.assertEqual(index.stats()["pages"], 2)

    def test_pages_of_another_host_are_held_to_the_cross_site_threshold(self) -> None:
        index = webdup.Index(self.path)
        self.assertEqual((index.threshold, index.cross_site_threshold), (0.8, 0.5))
        story = article(11)
        index.insert("https://a.test/story", text=story)
        copy = edited(story, 20)
        across = index.check("https://b.test/story", text=copy)
        self.assertEqual([m.url for m in across.near], ["https://a.test/story"])
        self.assertTrue(0.5 <= across.near[0].jaccard < 0.8, across.near[0].jaccard)
        self.assertFalse(index.check("https://a.test/copy", text=copy).seen)
        # One rule for every pair when the threshold is at or below 0.5.
        self.assertIsNone(webdup.Index(self.path + ".low", threshold=0.5).cross_site_threshold)

    def test_an_existing_index_opens_with_its_settings_and_refuses_others(self) -> None:
        webdup.Index(self.path, threshold=0.7, extractor="readability").insert("https://a.test/", text=article(3))
        self.assertEqual(webdup.Index(self.path).threshold, 0.7)
        with self.assertRaises(webdup.WebdupError) as e:
            webdup.Index(self.path, threshold=0.9)
        self.assertIn("threshold", str(e.exception))
        with self.assertRaises(webdup.WebdupError) as e:
            webdup.Index(self.path, extractor="blocks")
        self.assertIn("extractor", str(e.exception))
        # Given as it was built with, it opens.
        self.assertEqual(webdup.Index(self.path, threshold=0.7, extractor="readability").threshold, 0.7)

    def test_an_index_in_a_missing_folder_is_refused_naming_the_folder(self) -> None:
        folder = os.path.join(self.dir.name, "no", "such")
        with self.assertRaises(FileNotFoundError) as e:
            webdup.Index(os.path.join(folder, "crawl.db"))
        self.assertIn(f"its folder {folder} does not exist", str(e.exception))
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "no")), "nothing created")
        file = os.path.join(self.dir.name, "a-file")
        Path(file).write_text("")
        with self.assertRaises(NotADirectoryError) as e:
            webdup.Index(os.path.join(file, "crawl.db"))
        self.assertIn(f"{file} is not a folder", str(e.exception))
        # A bare file name is in the working folder, which exists.
        cwd = os.getcwd()
        try:
            os.chdir(self.dir.name)
            self.assertEqual(webdup.Index("here.db").path.name, "here.db")
        finally:
            os.chdir(cwd)

    def test_a_page_with_no_text_of_its_own_can_be_checked_without_being_stored(self) -> None:
        import multihost_site

        rng = random.Random(5)
        host = multihost_site.Host(1, rng)
        index = webdup.Index(self.path)
        for i in range(6):
            words = multihost_site._words(rng, 350)
            index.check_and_insert(f"http://h.test/p{i}.html", html=host.page(f"Story {i}", multihost_site._paragraphs(words)))
        # The site's template, learned from its articles, and nothing else (a site index page without its list).
        bare = host.page("", [])
        skipped = index.check_and_insert("http://h.test/index.html", html=bare, skip_template_only=True)
        self.assertEqual((skipped.template, skipped.template_only, skipped.seen, skipped.id), ("learned", True, False, None))
        self.assertEqual(index.get("http://h.test/index.html"), [])
        stored = index.check_and_insert("http://h.test/index2.html", html=bare)
        self.assertTrue(stored.template_only)
        self.assertIsNotNone(stored.id)
        # A page of its own is stored either way.
        own = index.check_and_insert("http://h.test/p9.html", html=host.page("Story 9", [article(9)]), skip_template_only=True)
        self.assertEqual((own.template_only, own.new), (False, True))
        self.assertIsNotNone(own.id)

    def test_bad_pages_are_refused_with_a_reason(self) -> None:
        index = webdup.Index(self.path)
        with self.assertRaises(ValueError):
            index.check("https://a.test/")
        with self.assertRaises(ValueError):
            index.check("https://a.test/", html="<p>x</p>", text="x")
        with self.assertRaises(ValueError) as e:
            index.check_and_insert_batch([{"url": "https://a.test/1", "text": "x"}, {"url": "https://a.test/2"}])
        self.assertIn("page 1", str(e.exception))
        with self.assertRaises(ValueError) as e:
            index.check_batch([{"url": "https://a.test/", "body": "x"}])
        self.assertIn("body", str(e.exception))
        with self.assertRaises(ValueError):
            webdup.Index(self.path, extractor="nonsense")
        # Nothing of the refused batch was stored.
        self.assertEqual(index.stats()["pages"], 0)

    def test_racing_near_copies_give_exactly_one_new_page_per_group(self) -> None:
        index = webdup.Index(self.path)
        groups = 12
        work = []
        for g in range(groups):
            text = article(100 + g)
            for v, body in enumerate([text, text, edited(text, 150), edited(text, 200)]):
                work.append((g, f"https://g{g}.test/{v}", page(f"Group {g}", body)))
        random.Random(5).shuffle(work)
        lock = threading.Lock()
        barrier = threading.Barrier(8)
        new: list[int] = []

        def crawl() -> None:
            barrier.wait()
            while True:
                with lock:
                    if not work:
                        return
                    g, url, html = work.pop()
                r = index.check_and_insert(url, html=html)
                if r.new:
                    with lock:
                        new.append(g)

        threads = [threading.Thread(target=crawl) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(new), list(range(groups)))
        self.assertEqual(index.stats()["pages"], groups * 4)

    def test_a_batch_of_1000_pages_as_an_arrow_table(self) -> None:
        index = webdup.Index(self.path)
        urls, htmls, copies = [], [], set()
        for i in range(1000):
            if i % 10 == 9:
                # A copy of the page before it, under another URL.
                urls.append(f"https://copy.test/{i}")
                htmls.append(htmls[-1])
                copies.add(i)
            else:
                urls.append(f"https://a.test/{i}")
                htmls.append(page(f"Page {i}", article(1000 + i, 120)))
        table = pa.table({"url": urls, "html": htmls})
        out = index.check_and_insert_batch(table)
        self.assertIsInstance(out, pa.Table)
        self.assertEqual(out.num_rows, 1000)
        self.assertEqual(out.column("url").to_pylist(), urls)
        new = out.column("new").to_pylist()
        self.assertEqual({i for i, n in enumerate(new) if not n}, copies)
        match, match_id, ids = (out.column(c).to_pylist() for c in ("match_url", "match_id", "id"))
        for i in copies:
            self.assertEqual(match[i], urls[i - 1])
            self.assertEqual(match_id[i], ids[i - 1], "the match's row id is the original's")
        self.assertEqual(index.stats()["pages"], 1000)

        # Checked again as an Arrow batch: every page is now seen, nothing stored.
        again = index.check_batch(pa.table({"url": [u + "?again" for u in urls], "html": htmls}))
        self.assertTrue(all(not n for n in again.column("new").to_pylist()))
        self.assertTrue(all(i is None for i in again.column("id").to_pylist()))
        # A RecordBatch and a list of dicts answer alike.
        batch = pa.record_batch({"url": urls[:5], "html": htmls[:5]})
        listed = index.check_batch([{"url": u, "html": h} for u, h in zip(urls[:5], htmls[:5])])
        self.assertEqual(index.check_batch(batch).column("match_url").to_pylist(),
                         [r.best.url for r in listed])
        self.assertEqual(index.check_batch(batch).column("match_id").to_pylist(), [r.best.id for r in listed])
        with self.assertRaises(ValueError):
            index.check_batch(pa.table({"url": ["https://a.test/"], "body": ["x"]}))

    def test_insert_batch_is_one_transaction(self) -> None:
        index = webdup.Index(self.path)
        ids = index.insert_batch([{"url": f"https://a.test/{i}", "text": article(i)} for i in range(20)])
        self.assertEqual(len(set(ids)), 20)
        self.assertEqual(index.stats()["pages"], 20)


class LibraryTest(unittest.TestCase):
    def test_cluster_gives_what_webdup_cluster_gives(self) -> None:
        example = str(ROOT / "fixtures" / "example")
        clusters = webdup.cluster([example])
        cli = subprocess.run(
            [os.environ["WEBDUP_BIN"], "cluster", example, "-q", "-f", "json"],
            check=False, capture_output=True, text=True,
        )
        self.assertEqual(clusters.to_json(), cli.stdout)
        self.assertGreater(len(clusters), 0)
        self.assertEqual(clusters.summary["clusters"], len(clusters.clusters))
        table = clusters.to_arrow()
        self.assertEqual(table.num_rows, sum(c["size"] for c in clusters.clusters))
        self.assertEqual(
            set(table.column("id").to_pylist()),
            {m["id"] for c in clusters.clusters for m in c["members"]},
        )

    def test_cluster_of_pages_given_as_dicts(self) -> None:
        text = article(7)
        pages = [
            {"url": "https://a.test/1", "html": page("One", text)},
            {"url": "https://b.test/2", "html": page("Two", article(8))},
            {"url": "https://a.test/1-print", "html": page("One", text)},
            {"url": "https://c.test/3", "html": page("One again", edited(text, 60))},
        ]
        clusters = webdup.cluster(pages)
        self.assertEqual(len(clusters), 1)
        members = [m["id"] for m in clusters.clusters[0]["members"]]
        self.assertEqual(members, ["https://a.test/1", "https://a.test/1-print", "https://c.test/3"])

    def test_compare_and_extract(self) -> None:
        text = article(9)
        same = webdup.compare(page("A", text), page("A", text))
        self.assertTrue(same["identical"] and not same["same_text"])
        # Another page (its <title> differs) with the same main text.
        retitled = webdup.compare(page("A", text), page("A", text).replace("<title>A<", "<title>A, again<"))
        self.assertTrue(retitled["same_text"] and not retitled["identical"])
        near = webdup.compare(text, edited(text, 40), text=True)
        self.assertFalse(near["identical"] or near["same_text"])
        self.assertGreater(near["jaccard"], 0.5)
        self.assertLess(near["jaccard"], 1.0)
        extracted = webdup.extract(page("Title here", text), url="https://a.test/x")
        self.assertEqual(extracted["title"], "Title here")
        self.assertNotIn("Copyright", extracted["text"])
        self.assertIn(text.split()[0], extracted["text"])


class WithoutPyarrowTest(unittest.TestCase):
    """What a user without pyarrow meets (pyarrow is the `arrow` extra): `sys.modules["pyarrow"] =
    None` makes `import pyarrow` fail in this process as a missing package does."""

    def setUp(self) -> None:
        import sys

        saved = sys.modules.get("pyarrow")
        sys.modules["pyarrow"] = None  # type: ignore[assignment]
        self.addCleanup(sys.modules.__setitem__, "pyarrow", saved)

    def test_an_arrow_answer_names_the_extra_to_install(self) -> None:
        clusters = webdup.cluster([{"url": "https://a.test/1", "html": page("A", article(1))},
                                   {"url": "https://a.test/2", "html": page("A", article(1))}])
        self.assertEqual(len(clusters), 1, "the rest works without pyarrow")
        with self.assertRaises(ImportError) as e:
            clusters.to_arrow()
        self.assertIn("pip install 'webdup[arrow]'", str(e.exception))
        self.assertIsInstance(e.exception.__cause__, ImportError)


if __name__ == "__main__":
    unittest.main()
