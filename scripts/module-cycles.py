#!/usr/bin/env python3
"""Fail when the modules of a Rust crate import each other in a cycle.

Usage: scripts/module-cycles.py DIR [DIR ...]
       (crates/core/src; or a directory module, crates/cli/src/commands)

For each directory, the graph has one node per module directly in it
(`src/page.rs`, `src/sketch/` ...) and an edge A -> B when code in A names
B through a `crate::...` or a `super::...` path that resolves to B: in a
`use` (groups such as `crate::{a::X, b::Y}` included) or in an expression or
a type. Exit status 1, naming every cycle and the lines that make it, when
there is one; 0 otherwise. DIR is a crate's source directory (with lib.rs or
main.rs) or a directory module inside one (with mod.rs, or a sibling
`DIR.rs`): the rooms of one floor at a time.

Nested modules are folded into their parent of that floor
(`src/sketch/minhash.rs` counts as `sketch`), rather than treated per file.
A directory module is one room whose files are written together and name
each other through `super::` all the time (a `mod.rs` re-exporting its
children, the children using the parent's types); counted per file, every
such room would be a "cycle". The question this script answers is the one
the layering asks: can the rooms of a floor be read bottom up, each needing
only those below it. A room whose own parts must be acyclic too (the
binary's `commands/`) is checked as a floor of its own: give its directory.

What the script does not count, and why:
- comments (doc links name modules without depending on them) and string
  literals;
- `#[cfg(test)]` inline modules: a test may use any module of the crate
  without the product code depending on it;
- `self::` paths and `super::` paths that stay inside the same top-level
  module;
- the root (`lib.rs`, `main.rs`, or the directory module's own file): it
  declares and re-exports every module, so it is above them all. A path to
  an item the root re-exports (`pub use page::Page;` then `crate::Page`)
  counts as an edge to the module the item comes from; one to an item the
  root defines itself counts as none;
- paths that leave DIR (to a module above it, or to another crate).

Only the standard library is used, so CI needs nothing installed.
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(text):
    """The text with comments, string and char literals blanked out
    (newlines kept, so that offsets still give line numbers)."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and not re.match(IDENT, text[i - 1:i] or " "):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i:j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])
            if m:
                out.append(blank(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def inline_modules(code):
    """(start, end, name, is_test) of every inline `mod name { ... }` block."""
    blocks = []
    for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        before = code[max(0, m.start() - 200):m.start()]
        is_test = re.search(r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*(pub(\([^)]*\))?\s+)?$", before) is not None
        blocks.append((m.start(), j, m.group(1), is_test))
    return blocks


def use_tree_paths(code, j):
    """The paths of the use tree (or plain path) starting at `j`, each a list
    of segments: `a::{b, c::d}` gives [a, b], [a, c, d]; a glob ends at its
    prefix."""
    def skip_ws(j):
        while j < len(code) and code[j].isspace():
            j += 1
        return j

    def tree(j, prefix):
        j = skip_ws(j)
        if j < len(code) and code[j] == "{":
            paths, j = [], j + 1
            while True:
                j = skip_ws(j)
                if j >= len(code) or code[j] == "}":
                    return paths or [prefix], j + 1
                sub, j = tree(j, prefix)
                paths += sub
                j = skip_ws(j)
                if j < len(code) and code[j] == ",":
                    j += 1
        m = re.match(IDENT, code[j:])
        if not m:
            return [prefix], j
        path, j = prefix + [m.group(0)], j + len(m.group(0))
        k = skip_ws(j)
        if code.startswith("::", k):
            k = skip_ws(k + 2)
            if k < len(code) and code[k] in "{" or re.match(IDENT, code[k:]):
                return tree(k, path)
            return [path], k + 1  # a glob, or `::<` of generics
        return [path], j

    return tree(j, [])[0]


def root_reexports(code, modules):
    """Names the root re-exports from one of its modules: name -> module."""
    names = {}
    for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+(?:self::)?", code):
        for path in use_tree_paths(code, m.end()):
            if len(path) > 1 and path[0] in modules:
                alias = re.match(r"\s+as\s+(" + IDENT + r")", code[m.end():])
                names[path[-1]] = path[0]
                if alias and len(use_tree_paths(code, m.end())) == 1:
                    names[alias.group(1)] = path[0]
    return names


def find_root(d):
    """The crate's source directory above (or at) `d`, and its root file."""
    d = os.path.abspath(d)
    while True:
        for r in ("lib.rs", "main.rs"):
            if os.path.exists(os.path.join(d, r)):
                return d, os.path.join(d, r)
        parent = os.path.dirname(d)
        if parent == d:
            sys.exit("no lib.rs or main.rs above the directory given")
        d = parent


def floor_modules(floor):
    """The modules directly in `floor`, each with its files and their module
    paths from the crate root; the module path of the floor; its root file."""
    src, crate_root = find_root(floor)
    floor = os.path.abspath(floor)
    prefix = [] if floor == src else os.path.relpath(floor, src).split(os.sep)
    if floor == src:
        root = crate_root
    elif os.path.exists(os.path.join(floor, "mod.rs")):
        root = os.path.join(floor, "mod.rs")
    elif os.path.exists(floor + ".rs"):
        root = floor + ".rs"
    else:
        sys.exit(f"{floor}: not a crate's source directory nor a directory module")
    modules = {}
    for dirpath, _, files in os.walk(floor):
        for f in files:
            path = os.path.join(dirpath, f)
            if not f.endswith(".rs") or path == root:
                continue
            rel = os.path.relpath(path, floor).split(os.sep)
            top = rel[0][:-3] if len(rel) == 1 else rel[0]
            parts = prefix + rel[:-1] + ([] if f == "mod.rs" else [f[:-3]])
            modules.setdefault(top, []).append((path, parts))
    return modules, prefix, root


def edges_of(path, parts, prefix, modules, reexports):
    """(target module, line) for every path out of the file's module of the floor."""
    code = strip_comments_and_strings(open(path, encoding="utf-8").read())
    blocks = inline_modules(code)
    top = parts[len(prefix)]
    found = []

    def module_path_at(pos):
        inner = [b for b in blocks if b[0] < pos < b[1]]
        if any(b[3] for b in inner):
            return None  # inside a #[cfg(test)] module
        return parts + [b[2] for b in sorted(inner)]

    for m in re.finditer(r"(?<![A-Za-z0-9_$])(crate|super)((?:\s*::\s*super)*)\s*::", code):
        here = module_path_at(m.start())
        if here is None:
            continue
        if m.group(1) == "crate":
            base = []
        else:
            ups = 1 + m.group(2).count("super")
            if ups > len(here):
                continue
            base = here[:len(here) - ups]
        line = code.count("\n", 0, m.start()) + 1
        for tail in use_tree_paths(code, m.end()):
            full = base + tail
            if full[:len(prefix)] != prefix or len(full) <= len(prefix):
                continue
            name = full[len(prefix)]
            to = name if name in modules else reexports.get(name)
            if to and to != top:
                found.append((to, f"{os.path.relpath(path)}:{line}"))
    return found


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def one_cycle(graph, comp):
    """A cycle through the component's first module, as a list of modules."""
    start, members = comp[0], set(comp)
    path, seen = [start], {start}

    def walk(v):
        for w in sorted(graph[v]):
            if w == start:
                return True
            if w in members and w not in seen:
                seen.add(w)
                path.append(w)
                if walk(w):
                    return True
                path.pop()
        return False

    walk(start)
    return path + [start]


def check(floor):
    modules, prefix, root = floor_modules(floor)
    reexports = root_reexports(strip_comments_and_strings(open(root, encoding="utf-8").read()), modules)
    graph, where = {m: set() for m in modules}, {}
    for module, files in modules.items():
        for path, parts in files:
            for to, at in edges_of(path, parts, prefix, modules, reexports):
                graph[module].add(to)
                sites = where.setdefault((module, to), [])
                if at not in sites:
                    sites.append(at)
    found = cycles(graph)
    for comp in found:
        cycle = one_cycle(graph, comp)
        print(f"{floor}: modules in a cycle: {' -> '.join(cycle)}", file=sys.stderr)
        if len(comp) > len(cycle) - 1:
            print(f"  (all of {', '.join(comp)} reach each other)", file=sys.stderr)
        for a, b in zip(cycle, cycle[1:]):
            sites = where[(a, b)]
            more = f" (and {len(sites) - 3} more)" if len(sites) > 3 else ""
            print(f"  {a} -> {b}: {', '.join(sites[:3])}{more}", file=sys.stderr)
    if not found:
        print(f"{floor}: {len(modules)} modules, no cycle")
    return not found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    ok = all([check(src.rstrip("/")) for src in sys.argv[1:]])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
