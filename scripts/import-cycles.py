#!/usr/bin/env python3
"""Find import circles between the files of the library crate.

    scripts/import-cycles.py [--edges] [CRATE_DIR]

CRATE_DIR (default: the directory above scripts/) holds Cargo.toml and src/.
Builds the file-level dependency graph of src/ (the library: src/bin/, files
named tests.rs and every `#[cfg(test)]` item are left out) and prints each
circle (a strongly connected component of more than one file) as a chain
`a -> b -> ... -> a`, followed by every edge inside it with the lines that
create it. Exits 1 if there is a circle, else prints one OK line and exits 0.
--edges also prints the whole graph (every edge with its lines).

An edge A -> B is a `use` in A, or a path in A's code starting with `crate::`,
`super::`, `self::`, a child module or a module imported by a `use`, that
names an item of B. Resolution: a path is looked up in the longest prefix
that is a module with a file (src/a/b.rs or src/a/b/mod.rs is crate::a::b); a
name that a mod.rs (or lib.rs) only re-exports (`pub use child::Item`, a group
or a glob) is followed to the file that defines it. Importing a module itself
(`use crate::pce;`) is no edge: the paths used through it are. `mod child;`
is no edge, a file never depends on itself, macros and external crates are
ignored (but `$crate::` paths written inside `macro_rules!` count).
Standard library only.
"""

import bisect
import os
import re
import sys
from collections import defaultdict, deque

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"
ITEM_RE = re.compile(
    r"(?<![\w$])(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(?:mut\s+)?"
    r"(?!(?:fn|unsafe|extern|async|mut)\b)(" + IDENT + r")"
)
USE_RE = re.compile(r"(?<![\w$])use\s")
MOD_DECL_RE = re.compile(r"(?<![\w$])mod\s+(" + IDENT + r")\s*([;{])")
CODE_PATH_RE = re.compile(r"(?<![\w$:])(\$?" + IDENT + r")((?:\s*::\s*" + IDENT + r")+)(\s*!)?")
PUB_IN_RE = re.compile(r"pub\s*\(\s*in\s+[^)]*\)")
CFG_RE = re.compile(r"#\s*\[\s*cfg\s*\(")


def die(msg):
    print("import-cycles: " + msg, file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- lexing


def clean(src):
    """`src` with comments, string and char literals blanked (same length,
    newlines kept), so offsets and line numbers stay those of the file."""
    out = list(src)
    n = len(src)
    i = 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rb" and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.compile(r'b?r(#*)"').match(src, i)
            if m:
                end = src.find('"' + m.group(1), m.end())
                end = n if end < 0 else end + 1 + len(m.group(1))
                blank(i, end)
                i = end
            elif src.startswith('b"', i) or src.startswith("b'", i):
                i += 1  # the literal itself is handled next round
            else:
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        elif c == "'":
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 2)
                j = n if j < 0 else j
                blank(i, j + 1)
                i = j + 1
            elif i + 2 < n and src[i + 2] == "'":
                blank(i, i + 3)
                i += 3
            else:
                i += 1  # a lifetime
        else:
            i += 1
    return "".join(out)


def match_close(text, i, open_ch, close_ch):
    """Offset just past the bracket closing the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_ch:
            depth += 1
        elif text[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def cfg_is_test_only(pred):
    pred = re.sub(r"\s+", "", pred)
    if pred == "test":
        return True
    if pred.startswith("all(") and pred.endswith(")"):
        depth, arg, args = 0, "", []
        for ch in pred[4:-1]:
            if ch == "," and depth == 0:
                args.append(arg)
                arg = ""
                continue
            depth += ch == "("
            depth -= ch == ")"
            arg += ch
        args.append(arg)
        return "test" in args
    return False


def strip_test_items(text):
    """Blank every item under `#[cfg(test)]` (or `#[cfg(all(test, ..))]`)."""
    out = list(text)
    pos = 0
    while True:
        m = CFG_RE.search(text, pos)
        if not m:
            break
        pclose = match_close(text, m.end() - 1, "(", ")")
        pos = pclose
        if not cfg_is_test_only(text[m.end():pclose - 1]):
            continue
        aend = match_close(text, m.start() + text[m.start():].index("["), "[", "]")
        # skip further attributes, then the item: up to `;` or a `{...}` block
        j = aend
        while True:
            k = j
            while k < len(text) and text[k].isspace():
                k += 1
            if text.startswith("#", k) and "[" in text[k:k + 3]:
                j = match_close(text, text.index("[", k), "[", "]")
            else:
                j = k
                break
        depth = 0
        while j < len(text):
            ch = text[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == ";" and depth == 0:
                j += 1
                break
            elif ch == "{" and depth == 0:
                j = match_close(text, j, "{", "}")
                break
            j += 1
        for k in range(m.start(), j):
            if out[k] != "\n":
                out[k] = " "
        pos = j
    return "".join(out)


def is_pub(text, off):
    """Whether the item or use starting at `off` has a `pub` visibility."""
    start = max(text.rfind(c, 0, off) for c in ";{}]")
    return re.search(r"(?<![\w$])pub(?![\w$])", text[start + 1:off]) is not None


def tokenize_use(text, i):
    """Tokens of the use tree starting at text[i], and the offset past `;`."""
    toks = []
    tok_re = re.compile(r"\s*(::|\$?" + IDENT + r"|[{},*;])")
    while True:
        m = tok_re.match(text, i)
        if not m:
            return None, i + 1
        i = m.end()
        t = m.group(1)
        if t == ";":
            return toks, i
        toks.append((t, m.start(1)))


def parse_use_tree(toks):
    """Leaves of a use tree: (segments, alias or None, is_glob, offset)."""
    leaves = []
    pos = [0]

    def peek():
        return toks[pos[0]][0] if pos[0] < len(toks) else None

    def take():
        t = toks[pos[0]]
        pos[0] += 1
        return t

    def tree(prefix):
        segs = list(prefix)
        if peek() == "::" and not segs:
            take()  # a leading `::`: an external crate
            segs.append("::")
        while True:
            t = peek()
            if t == "{":
                take()
                while peek() != "}":
                    tree(segs)
                    if peek() == ",":
                        take()
                    elif peek() != "}":
                        raise ValueError
                take()
                return
            if t == "*":
                off = take()[1]
                leaves.append((segs, None, True, off))
                return
            if t is None or not re.match(r"\$?" + IDENT + "$", t):
                raise ValueError
            name, off = take()
            if name == "self" and segs and segs != ["self"] and peek() != "::":
                leaves.append((segs, _alias(), False, off))  # `{self}` in a group
                return
            segs = segs + [name]
            if peek() == "::":
                take()
                continue
            leaves.append((segs, _alias(), False, off))
            return

    def _alias():
        if peek() == "as":
            take()
            return take()[0]
        return None

    tree([])
    if pos[0] != len(toks):
        raise ValueError
    return leaves


# ---------------------------------------------------------------- crate model


class Scope:
    """A module: a file, or an inline `mod name { .. }` inside one."""

    def __init__(self, path, file, start, end, depth):
        self.path = path  # ("crate", "a", "b")
        self.file = file
        self.start, self.end = start, end  # span of its body in the file
        self.depth = depth  # brace depth of its items
        self.items = {}  # name defined here (module level) -> whether pub
        self.uses = []  # (segments, alias, glob, offset, module_level, pub)
        self.children = set()  # child module names (files and inline)


class Crate:
    def __init__(self, root):
        self.root = root
        self.src = os.path.join(root, "src")
        self.scopes = {}  # path tuple -> Scope
        self.files = {}  # rel file -> dict(path, raw, text, depth, scopes)
        self.notes = []
        self._load()

    # -- files and modules

    def _module_path(self, rel):
        parts = rel[len("src/"):-len(".rs")].split("/")
        if parts == ["lib"]:
            return ("crate",)
        if parts[-1] == "mod":
            parts = parts[:-1]
        return ("crate",) + tuple(parts)

    def _load(self):
        if not os.path.isfile(os.path.join(self.src, "lib.rs")):
            die("no src/lib.rs under " + self.root)
        rels = []
        for dirpath, dirnames, filenames in os.walk(self.src):
            reldir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            if reldir == "src":
                dirnames[:] = [d for d in dirnames if d != "bin"]
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(".rs") and f != "tests.rs" and not (reldir == "src" and f == "main.rs"):
                    rels.append(reldir + "/" + f)
        by_path = {}
        for rel in rels:
            mp = self._module_path(rel)
            if mp in by_path:
                self.notes.append("both %s and %s are %s; using %s" % (by_path[mp], rel, "::".join(mp), by_path[mp]))
                continue
            by_path[mp] = rel
        for mp, rel in by_path.items():
            with open(os.path.join(self.root, rel), encoding="utf-8") as fh:
                raw = fh.read()
            cleaned = clean(raw)
            text = strip_test_items(cleaned)
            self.files[rel] = {"path": mp, "raw": raw, "cleaned": cleaned, "text": text}
        # drop files whose parent declares them only under #[cfg(test)]
        for rel in sorted(self.files):
            mp = self.files[rel]["path"]
            if len(mp) == 1:
                continue
            parent = by_path.get(mp[:-1])
            if parent is None or parent not in self.files:
                self.notes.append("%s: no parent module file; scanned anyway" % rel)
                continue
            name = mp[-1]
            decl = re.compile(r"(?<![\w$])mod\s+" + re.escape(name) + r"\s*;")
            if not decl.search(self.files[parent]["text"]):
                if decl.search(self.files[parent]["cleaned"]):
                    del self.files[rel]  # test-only module
                else:
                    self.notes.append("%s: not declared in %s; scanned anyway" % (rel, parent))
        for rel, f in self.files.items():
            self._scan_file(rel, f)
        for sc in self.scopes.values():  # child modules that are files
            if len(sc.path) > 1 and sc.path[:-1] in self.scopes:
                self.scopes[sc.path[:-1]].children.add(sc.path[-1])

    def _scan_file(self, rel, f):
        text = f["text"]
        depth = [0] * (len(text) + 1)
        d = 0
        for i, ch in enumerate(text):
            depth[i] = d
            if ch == "{":
                d += 1
            elif ch == "}":
                d -= 1
        depth[len(text)] = d
        f["depth"] = depth
        file_scope = Scope(f["path"], rel, 0, len(text), 0)
        scopes = [file_scope]
        for m in MOD_DECL_RE.finditer(text):
            if m.group(2) == "{":
                brace = m.end() - 1
                end = match_close(text, brace, "{", "}")
                scopes.append(Scope(None, rel, brace + 1, end - 1, depth[brace] + 1))
                scopes[-1].name = m.group(1).replace("r#", "")
        # inline module paths: nest by span
        scopes[1:] = sorted(scopes[1:], key=lambda s: s.start)
        for s in scopes[1:]:
            parent = self._scope_at(scopes, s.start - 1, exclude=s)
            s.path = parent.path + (s.name,)
            parent.children.add(s.name)
        f["scopes"] = scopes
        for s in scopes:
            self.scopes[s.path] = s
        for m in ITEM_RE.finditer(text):
            s = self._scope_at(scopes, m.start())
            if depth[m.start()] == s.depth:
                name = m.group(1).replace("r#", "")
                s.items[name] = s.items.get(name, False) or is_pub(text, m.start())
        # use statements
        uses_spans = []
        for m in USE_RE.finditer(text):
            toks, end = tokenize_use(text, m.end())
            if toks is None:
                continue
            try:
                leaves = parse_use_tree(toks)
            except (ValueError, IndexError):
                continue  # not a use statement we understand (macro input)
            s = self._scope_at(scopes, m.start())
            level = depth[m.start()] == s.depth
            pub = is_pub(text, m.start())
            for segs, alias, glob, off in leaves:
                segs = [x.replace("r#", "") for x in segs]
                s.uses.append((segs, alias, glob, off, level, pub))
            uses_spans.append((m.start(), end))
        # code text for path scanning: no use statements, no `pub(in path)`
        code = list(text)
        for a, b in uses_spans:
            for k in range(a, b):
                if code[k] != "\n":
                    code[k] = " "
        code = "".join(code)
        code = PUB_IN_RE.sub(lambda mm: re.sub(r"[^\n]", " ", mm.group(0)), code)
        f["code"] = code

    @staticmethod
    def _scope_at(scopes, off, exclude=None):
        best = scopes[0]
        for s in scopes[1:]:
            if s is not exclude and s.start <= off < s.end and s.start >= best.start:
                best = s
        return best

    # -- name resolution

    def bindings(self, scope, name, module_level_only):
        """Segments (relative to `scope`) that a `use` in `scope` binds `name` to."""
        out = []
        for segs, alias, glob, _, level, _ in scope.uses:
            if glob or (module_level_only and not level):
                continue
            last = segs[-1] if segs[-1] != "self" else segs[-2]
            if (alias or last) == name:
                out.append(segs if segs[-1] != "self" else segs[:-1])
        return out

    def absolutize(self, segs, scope, seen=None):
        """Absolute path ("crate", ...) of `segs` written in `scope`, or None
        when it leaves the crate (std, external crates, a leading `::`)."""
        if not segs:
            return None
        first, rest = segs[0], list(segs[1:])
        if first in ("crate", "$crate"):
            return ("crate",) + tuple(rest)
        if first == "self":
            return scope.path + tuple(rest)
        if first == "super":
            path = scope.path
            while True:
                if len(path) <= 1:
                    return None
                path = path[:-1]
                if rest and rest[0] == "super":
                    rest = rest[1:]
                    continue
                return path + tuple(rest)
        if first == "::":
            return None
        if first in scope.children:
            return scope.path + tuple(segs)
        seen = seen or set()
        key = (scope.path, first)
        if key not in seen:
            seen.add(key)
            for b in self.bindings(scope, first, module_level_only=False):
                base = self.absolutize(b, scope, seen)
                return None if base is None else base + tuple(rest)
        if first in scope.items:
            return scope.path + tuple(segs)
        return None

    def provides(self, mpath, name, seen):
        """Whether a glob import of module `mpath` brings `name`: a pub item, a
        pub use or a pub glob of it (private names do not travel by glob)."""
        sc = self.scopes.get(mpath)
        if sc is None or (mpath, name) in seen:
            return False
        seen.add((mpath, name))
        if sc.items.get(name):
            return True
        for segs, alias, glob, _, level, pub in sc.uses:
            if not (level and pub):
                continue
            if not glob:
                last = segs[-1] if segs[-1] != "self" else segs[-2]
                if (alias or last) == name:
                    return True
            else:
                g = self.absolutize(segs, sc)
                if g is not None and self.provides(g, name, seen):
                    return True
        return False

    def resolve(self, path, seen=None):
        """(files, is_module): the files that absolute `path` names (several
        where cfg-alternative re-exports bind the name), and whether `path`
        is a module itself. No files: it leads out of the crate."""
        seen = seen or set()
        if path in seen:
            return set(), False
        seen = seen | {path}
        k = len(path)
        while k > 1 and path[:k] not in self.scopes:
            k -= 1
        sc = self.scopes[path[:k]]
        rest = path[k:]
        if not rest:
            return {sc.file}, True
        name = rest[0]
        facade = os.path.basename(sc.file) in ("mod.rs", "lib.rs")
        if facade and name not in sc.items:
            found, files, module = False, set(), True
            for b in self.bindings(sc, name, module_level_only=True):
                found = True
                target = self.absolutize(b, sc)
                if target is not None:  # else re-exported from outside the crate
                    f, m = self.resolve(target + tuple(rest[1:]), seen)
                    files |= f
                    module = module and m
            if not found:
                for segs, _, glob, _, level, _ in sc.uses:
                    if glob and level:
                        g = self.absolutize(segs, sc)
                        if g is not None and g != sc.path and self.provides(g, name, set()):
                            found = True
                            f, m = self.resolve(g + tuple(rest), seen)
                            files |= f
                            module = module and m
            if found:
                return files, module and bool(files)
        return {sc.file}, False

    # -- the graph

    def graph(self):
        edges = defaultdict(list)  # (src, dst) -> [(line, text)]

        def add(rel, off, dst, f):
            if dst == rel:
                return
            line = bisect.bisect_right(f["starts"], off)
            text = f["lines"][line - 1].strip()
            if (line, text) not in edges[(rel, dst)]:
                edges[(rel, dst)].append((line, text))

        for rel, f in self.files.items():
            f["lines"] = f["raw"].split("\n")
            f["starts"] = [0] + [m.end() for m in re.finditer("\n", f["raw"])]
            for sc in f["scopes"]:
                for segs, _alias, glob, off, _level, _pub in sc.uses:
                    target = self.absolutize(segs, sc)
                    if target is None:
                        continue
                    dsts, is_module = self.resolve(target)
                    if is_module and not glob:
                        continue  # importing a module: its uses count
                    for dst in dsts:
                        add(rel, off, dst, f)
            for m in CODE_PATH_RE.finditer(f["code"]):
                if m.group(3):
                    continue  # a macro
                segs = [m.group(1)] + re.findall(IDENT, m.group(2))
                segs = [x.replace("r#", "") for x in segs]
                sc = self._scope_at(f["scopes"], m.start())
                first = segs[0]
                if first not in ("crate", "$crate", "self", "super") and first not in sc.children:
                    # a name bound by a `use`: only modules lead anywhere new
                    target = self.absolutize([first], sc)
                    if target is None:
                        continue
                    if not self.resolve(target)[1]:
                        continue
                target = self.absolutize(segs, sc)
                if target is None:
                    continue
                for dst in self.resolve(target)[0]:
                    add(rel, m.start(), dst, f)
        return edges


# ---------------------------------------------------------------- cycles


def sccs(nodes, succ):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(start, comp, succ):
    members = set(comp)
    prev = {start: None}
    q = deque([start])
    while q:
        v = q.popleft()
        for w in sorted(succ[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                q.append(w)
    return [start]


def main(argv):
    args = [a for a in argv if not a.startswith("-")]
    flags = [a for a in argv if a.startswith("-")]
    if any(f not in ("--edges", "-h", "--help") for f in flags) or len(args) > 1:
        die("usage: scripts/import-cycles.py [--edges] [CRATE_DIR]")
    if "-h" in flags or "--help" in flags:
        print(__doc__.strip())
        return 0
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    crate = Crate(os.path.normpath(root))
    for note in crate.notes:
        print("import-cycles: note: " + note, file=sys.stderr)
    edges = crate.graph()
    succ = defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    if "--edges" in flags:
        for (a, b) in sorted(edges):
            print("%s -> %s" % (a, b))
            for line, text in edges[(a, b)]:
                print("    %s:%d: %s" % (a, line, text))
    cycles = [c for c in sccs(crate.files, succ) if len(c) > 1]
    if not cycles:
        print("import-cycles: OK, no import circles among %d files (%d edges)" % (len(crate.files), len(edges)))
        return 0
    for comp in sorted(cycles):
        print("import circle among %d files:" % len(comp))
        print("  " + " -> ".join(shortest_cycle(comp[0], comp, succ)))
        members = set(comp)
        for (a, b) in sorted(edges):
            if a in members and b in members:
                print("  %s -> %s" % (a, b))
                for line, text in edges[(a, b)]:
                    print("      %s:%d: %s" % (a, line, text))
    sys.stdout.flush()
    print("import-cycles: %d import circle(s)" % len(cycles), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
