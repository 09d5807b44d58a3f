#!/usr/bin/env python3
"""Writes fixtures/site-v1, fixtures/site-v2 and fixtures/site-truth.csv: a
made-up site before and after a migration, with planted moves, renames,
edits, merges, deletions, soft 404s and redirects. Deterministic (seeded);
the text is generated word salad, not taken from anywhere.

Run from the repository root: python3 scripts/gen-site-fixtures.py
"""
import os, random, shutil, html

R = random.Random(20240605)
ADJ = """quiet bright narrow wooden early late hidden sturdy gentle bitter golden rusty shallow rapid
patient curious silver hollow ancient modern humble noisy fragile steady careful muddy frozen sunny
crooked polished broken spare local distant northern southern eastern western tiny heavy clever
simple tidy rough smooth pale dark warm chilly fresh stale busy idle loyal brave odd plain""".split()
NOUN = """kettle ladder lantern harbour orchard bicycle teapot meadow garden bridge chimney library
market beehive compass ferry glacier hammer island journal kitchen lighthouse mill notebook owl
parcel quarry railway saddle tractor umbrella valley windmill yard anchor barn canal cellar
dormitory engine fountain gate hedge inn jetty kiln loom mirror needle oven pier quilt river
stable tunnel village wagon workshop almanac basket candle drawer easel fiddle granary helmet
inkwell jar kayak ledger mason nursery oar pantry quiver rope shed thimble violin wheelbarrow
yarn zither apron bucket cart dial feather glove hinge ivy jug knot ribbon sail""".split()
VERB = """repairs paints follows measures carries watches builds cleans opens closes gathers mends
sorts lifts guards visits crosses trims sweeps weighs counts marks fills empties tests polishes
sketches records borrows returns shelters warms cools loads unpacks ties unties greets
describes photographs""".split()
PLACE = """station square hillside quay courtyard workshop corner schoolhouse bakery riverbank
crossroads harbour wall orchard gate market hall chapel tower mill pond green lane clearing
boathouse dock terrace attic porch""".split()
NAMES = """Ada Bram Cato Dora Emil Fenna Gus Hilde Ivo Jora Kees Lotte Mads Nele Otto Pia Ruud Saar
Teun Ulla Vera Wim Xander Yara Zeno""".split()

def sentence():
    p = R.choice
    forms = [
        lambda: f"The {p(ADJ)} {p(NOUN)} {p(VERB)} the {p(ADJ)} {p(NOUN)} by the {p(PLACE)}.",
        lambda: f"{p(NAMES)} {p(VERB)} a {p(NOUN)} and a {p(ADJ)} {p(NOUN)} every {p(ADJ)} morning.",
        lambda: f"Near the {p(PLACE)} a {p(ADJ)} {p(NOUN)} {p(VERB)} {R.randint(2, 90)} {p(NOUN)}s before noon.",
        lambda: f"Ask {p(NAMES)} why the {p(NOUN)} {p(VERB)} the {p(NOUN)} when the {p(PLACE)} is {p(ADJ)}.",
        lambda: f"Our {p(ADJ)} {p(NOUN)} {p(VERB)} {p(NAMES)}'s {p(NOUN)} while the {p(NOUN)} stays {p(ADJ)}.",
    ]
    return p(forms)()

def paragraphs(n_sentences):
    s = [sentence() for _ in range(n_sentences)]
    return s

def page(title, sentences, nav=True):
    paras = []
    for i in range(0, len(sentences), 4):
        paras.append("<p>" + html.escape(" ".join(sentences[i:i + 4])) + "</p>")
    navhtml = '<nav><a href="/">Home</a> <a href="/about/">About</a></nav>' if nav else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>
<body>{navhtml}
<article><h1>{html.escape(title)}</h1>
{chr(10).join(paras)}
</article>
<footer>Made-up pages for webdup's lost-and-found test.</footer>
</body></html>
"""

def title():
    return f"{R.choice(ADJ).capitalize()} {R.choice(NOUN)} at the {R.choice(PLACE)}"

def edit(sentences, rate):
    out = list(sentences)
    for i in range(len(out)):
        if R.random() < rate:
            out[i] = sentence()
    return out

v1, v2, routes, truth = {}, {}, [], []

def text_page():
    return title(), paragraphs(R.randint(14, 22))

# Home page and about page: unchanged.
home = ("Welcome to the workshop", paragraphs(10))
v1["index.html"] = home; v2["index.html"] = home
truth.append(("/", "same", "unchanged"))
for i in range(8):
    t = text_page(); path = f"notes/unchanged-{i}.html"
    v1[path] = t; v2[path] = t
    truth.append(("/" + path, "same", "unchanged"))
for i in range(8):
    t = text_page(); old = f"notes/moved-{i}.html"; new = f"archive/2023/moved-{i}.html"
    v1[old] = t; v2[new] = t
    truth.append(("/" + old, "/" + new, "moved"))
for i in range(6):
    t = text_page(); old = f"guides/old-name-{i}.html"; new = f"guides/new-name-{i}.html"
    v1[old] = t; v2[new] = (t[0] + " (revised)", t[1])
    routes.append(f"gone /{old}")
    truth.append(("/" + old, "/" + new, "renamed"))
for i in range(6):
    t = text_page(); old = f"blog/draft-{i}.html"; new = f"blog/posts/edited-{i}.html"
    v1[old] = t; v2[new] = (t[0], edit(t[1], 0.08))
    truth.append(("/" + old, "/" + new, "edited"))
for i in range(3):
    a, b = text_page(), text_page()
    oa, ob, new = f"tips/part-a-{i}.html", f"tips/part-b-{i}.html", f"tips/combined-{i}.html"
    v1[oa] = a; v1[ob] = b
    v2[new] = (f"{a[0]} and more", paragraphs(2) + a[1] + b[1])
    truth.append(("/" + oa, "/" + new, "merged")); truth.append(("/" + ob, "/" + new, "merged"))
for i in range(4):
    t = text_page(); old = f"events/deleted-{i}.html"
    v1[old] = t
    truth.append(("/" + old, "none", "deleted"))
for i in range(2):
    # Deleted, but a new page reuses a quarter of its sentences: a trap for precision.
    t = text_page(); old = f"events/retired-{i}.html"
    v1[old] = t
    v2[f"events/related-{i}.html"] = (title(), t[1][: len(t[1]) // 4] + paragraphs(14))
    truth.append(("/" + old, "none", "deleted-partial-reuse"))
for i in range(4):
    t = text_page(); old = f"shop/item-{i}.html"
    v1[old] = t
    routes.append(f"soft404 /{old}")
    if i < 2:
        new = f"store/product-{i}.html"; v2[new] = t
        truth.append(("/" + old, "/" + new, "soft404-moved"))
    else:
        truth.append(("/" + old, "none", "soft404-deleted"))
for i in range(2):
    t = text_page(); old = f"news/story-{i}.html"
    v1[old] = t
    routes.append(f"redirect /{old} /")
    if i == 0:
        new = f"stories/story-{i}.html"; v2[new] = t
        truth.append(("/" + old, "/" + new, "redirect-home-moved"))
    else:
        truth.append(("/" + old, "none", "redirect-home-deleted"))
for i in range(3):
    t = text_page(); old = f"docs/v1/page-{i}.html"; new = f"docs/v2/page-{i}.html"
    v1[old] = t; v2[new] = (t[0], edit(t[1], 0.05))
    routes.append(f"redirect /{old} /{new}")
    truth.append(("/" + old, "already:/" + new, "already-redirected"))
for i in range(4):
    v2[f"new/fresh-{i}.html"] = text_page()

SOFT404 = page("Sorry, we could not find that", [
    "The page you were looking for is not here any more.",
    "Try the search box or start again from the home page.",
    "Our workshop moved many pages around this spring and some were retired for good.",
    "If you followed a link from another site, please let its owner know.",
], nav=True)

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
for name, pages in (("site-v1", v1), ("site-v2", v2)):
    d = os.path.join(root, name)
    shutil.rmtree(d, ignore_errors=True)
    for path, (t, s) in pages.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), "w") as f:
            f.write(page(t, s))
with open(os.path.join(root, "site-v2", "_routes.txt"), "w") as f:
    f.write("# How the v2 server answers some old URLs: gone PATH (410), soft404 PATH (200 + template),\n")
    f.write("# redirect PATH TARGET (301). Other missing paths are plain 404s.\n")
    f.write("\n".join(routes) + "\n")
with open(os.path.join(root, "site-v2", "_soft404.html"), "w") as f:
    f.write(SOFT404)
with open(os.path.join(root, "site-truth.csv"), "w") as f:
    f.write("old_path,expected,kind\n")
    for row in truth:
        f.write(",".join(row) + "\n")
print(len(v1), "v1 pages,", len(v2), "v2 pages,", len(truth), "truth rows")
