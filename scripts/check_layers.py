#!/usr/bin/env python3
"""The layer rules and the no-cycle rule of tooldeck, checked on the import graph.

Reads every module under ``src/tooldeck`` with :mod:`ast` (nothing is imported),
collects its ``tooldeck`` imports and checks them against the rules below.
Exit status 1 and one line per violation when a rule is broken, 0 otherwise.

    scripts/check_layers.py              check (scripts/test.sh runs it before pytest)
    scripts/check_layers.py --graph      the layers and what each package imports (docs/architecture.md)
    scripts/check_layers.py --mermaid    the same graph as a mermaid flowchart
    scripts/check_layers.py --root DIR   check another source tree (DIR holds tooldeck/)

What counts as an import:

* a module-level import, including one under ``if TYPE_CHECKING:`` (a type the
  module names is a dependency of the module all the same);
* an import inside a function ("lazy"): it obeys the layer rules and the
  cycle rule like any other (no edge is exempt: a lazy import does not make a
  cycle acceptable), and it must say why *it* is lazy: a ``# lazy: <reason>``
  comment on its line (or the line above) naming the start-up path it keeps
  light; no module or package gives its imports a reason wholesale;
* ``importlib.import_module("tooldeck....")`` and a ``"tooldeck.x.y"`` string
  naming a module inside a tuple or list (``catalog.DOMAINS``): an edge like any
  other, so a module loaded by name still shows in the graph.

The layers, top to bottom (a module may import its own layer's modules, subject
to the host rule, and anything below):

    entry      the command line: launch.py, cli*.py, __main__.py: builds the runtime, starts a host
    front      tui/: ``tooldeck chat``, a terminal face over the ChatMD host (no other host)
    hosts      mcp/, chatmd/, dashboard/ : never import each other
    catalog    catalog.py: assembles the tool domains
    tools      tools/<domain>/ : never import a host
    services   everything else (workspace/, state/, store/, selection/, ... runtime.py): never a tool or a host
    core       core/ : imports nothing of tooldeck but core

plus: state/ (persistence) never imports the model loop (llm/, agents/);
no cycle between modules, and none between packages.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LAYERS = ("core", "services", "tools", "catalog", "hosts", "front", "entry")
HOSTS = frozenset({"mcp", "chatmd", "dashboard"})
ENTRY = frozenset(
    {"__main__", "launch", "cli", "cli_call", "cli_chat", "cli_index", "cli_line", "cli_serve", "cli_settings",
     "cli_trust", "cli_workspace"}
)
MODEL_LOOP = frozenset({"llm", "agents"})

# Today's known violations: (importer, imported module) -> the issue that removes it.
ALLOWED: dict[tuple[str, str], str] = {}

@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    line: int
    lazy: bool
    reason: str  # the `# lazy:` comment, when there is one


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit(module: str) -> str:
    """The package a module belongs to (a top-level module is its own unit);
    ``tools`` is split by domain."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "tools":
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def layer(module: str) -> str:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top == "core":
        return "core"
    if top == "tools":
        return "tools"
    if top == "catalog":
        return "catalog"
    if top in HOSTS:
        return "hosts"
    if top == "tui":
        return "front"
    if top in ENTRY or top.startswith("cli_"):  # a CLI verb's module is part of the command line
        return "entry"
    return "services"


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(node: ast.AST) -> Iterator[ast.AST]:
    """The statements directly inside ``node`` (an import is always a statement)."""
    for field in _BODIES:
        for child in getattr(node, field, ()) or ():
            if isinstance(child, ast.AST):
                yield child


class _Collector:
    """The ``tooldeck`` edges of one module: one iterative pre-order pass over
    its tree (an ``ast.NodeVisitor`` dispatching every node by method name
    took most of this script's time; the suite runs it 20 times)."""

    def __init__(self, name: str, is_package: bool, modules: set[str], lines: list[str]) -> None:
        self.name = name
        self.package = name if is_package else name.rpartition(".")[0]
        self.modules = modules
        self.lines = lines
        self.depth = 0
        self.edges: list[Edge] = []
        # a module is named in an expression only by `import_module("tooldeck...")`, `__import__`
        # or a "tooldeck.x" string: without one in its text, statements alone hold its imports
        text = "\n".join(lines)
        self.expressions = any(mark in text for mark in ("import_module", "__import__", '"tooldeck.', "'tooldeck."))

    def visit(self, tree: ast.AST) -> None:
        stack: list[tuple[ast.AST, int]] = [(tree, 0)]
        while stack:
            node, self.depth = stack.pop()
            kind = type(node)
            if kind is ast.Import:
                self.visit_Import(node)  # type: ignore[arg-type]
                continue
            if kind is ast.ImportFrom:
                self.visit_ImportFrom(node)  # type: ignore[arg-type]
                continue
            if kind is ast.Call:
                self.visit_Call(node)  # type: ignore[arg-type]
            elif kind is ast.Tuple or kind is ast.List:
                self._names(node)  # type: ignore[arg-type]
            inner = self.depth + 1 if kind in _FUNCTIONS else self.depth
            children = list(ast.iter_child_nodes(node) if self.expressions else _statements(node))
            stack.extend((child, inner) for child in reversed(children))

    def _add(self, target: str, node: ast.AST) -> None:
        if target != "tooldeck" and not target.startswith("tooldeck."):
            return
        while target not in self.modules and "." in target:
            target = target.rpartition(".")[0]
        if target == self.name or target == "tooldeck":
            return
        line = getattr(node, "lineno", 0)
        self.edges.append(Edge(self.name, target, line, self.depth > 0, self._reason(line)))

    def _reason(self, line: int) -> str:
        for text in self.lines[max(line - 2, 0) : line]:
            if "# lazy:" in text:
                return text.split("# lazy:", 1)[1].strip()
        return ""

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        for alias in node.names:
            child = f"{module}.{alias.name}"
            self._add(child if child in self.modules else module, node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0] if node.args else None
        by_name = named in ("import_module", "__import__")
        if by_name and isinstance(first, ast.Constant) and isinstance(first.value, str):
            self._add(first.value, node)

    def _names(self, node: ast.Tuple | ast.List) -> None:
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str) and elt.value in self.modules:
                self._add(elt.value, node)


_EDGES: dict[tuple[str, bool, str, frozenset[str]], list[Edge]] = {}


def _module_edges(name: str, path: Path, text: str, modules: frozenset[str]) -> list[Edge]:
    """One module's edges, remembered by its text and the module names
    around it: the tests check ~20 copies of the tree in one process, each
    differing from the real one in a single file (parsing is this script's time)."""
    key = (name, path.name == "__init__.py", text, modules)
    if key not in _EDGES:
        collector = _Collector(name, key[1], set(modules), text.splitlines())
        collector.visit(ast.parse(text, str(path)))
        _EDGES[key] = collector.edges
    return _EDGES[key]


def collect(src: Path) -> tuple[set[str], list[Edge]]:
    files = {module_name(p, src): p for p in sorted((src / "tooldeck").rglob("*.py"))}
    modules = frozenset(files)
    edges: list[Edge] = []
    for name, path in files.items():
        edges.extend(_module_edges(name, path, path.read_text(encoding="utf-8"), modules))
    return set(modules), edges


def layer_violation(edge: Edge) -> str | None:
    src, dst = edge.src, edge.dst
    low, high = layer(src), layer(dst)
    if LAYERS.index(high) > LAYERS.index(low):
        return f"{low} imports {high}"
    top_src, top_dst = src.split(".")[1], dst.split(".")[1]
    if low == high == "hosts" and top_src != top_dst:
        return "a host imports another host"
    if low == "front" and high == "hosts" and top_dst != "chatmd":
        return "the terminal chat imports a host other than ChatMD"
    if top_src == "state" and top_dst in MODEL_LOOP:
        return "state/ imports the model loop"
    return None


def cycles(nodes: set[str], pairs: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    graph: dict[str, list[str]] = defaultdict(list)
    for a, b in sorted(pairs):
        graph[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    item = stack.pop()
                    on_stack.discard(item)
                    component.append(item)
                    if item == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def check(src: Path) -> list[str]:
    modules, edges = collect(src)
    problems: list[str] = []
    for edge in edges:
        why = layer_violation(edge)
        if why and (edge.src, edge.dst) not in ALLOWED:
            problems.append(f"layer: {edge.src}:{edge.line} -> {edge.dst}: {why}")
        if edge.lazy and not edge.reason:
            problems.append(f"lazy: {edge.src}:{edge.line} -> {edge.dst}: no `# lazy:` reason")
    eager = {(e.src, e.dst) for e in edges}
    for component in cycles(modules, eager):
        problems.append("module cycle: " + " <-> ".join(component))
    units = {unit(m) for m in modules}
    unit_pairs = {(unit(a), unit(b)) for a, b in eager if unit(a) != unit(b)}
    for component in cycles(units, unit_pairs):
        problems.append("package cycle: " + " <-> ".join(component))
    broken = {(e.src, e.dst) for e in edges if layer_violation(e)}
    for pair in (p for p in ALLOWED if p not in broken):
        problems.append(f"stale: {pair[0]} -> {pair[1]} is listed but breaks no rule now; remove it from the list")
    return list(dict.fromkeys(problems))  # one line per import statement, in order


def _package_edges(src: Path) -> tuple[set[str], dict[tuple[str, str], bool]]:
    """Top-level packages and the edges between them (True: only lazy imports)."""
    modules, edges = collect(src)
    kinds: dict[tuple[str, str], bool] = {}
    for e in edges:
        a, b = e.src.split(".")[1], e.dst.split(".")[1]
        if a != b:
            kinds[(a, b)] = kinds.get((a, b), True) and e.lazy
    return {m.split(".")[1] for m in modules if "." in m}, kinds


def picture(src: Path) -> str:
    """The layers top to bottom, each package with what it imports (a name in
    parentheses: only from inside a function)."""
    names, kinds = _package_edges(src)
    lines: list[str] = []
    for name in reversed(LAYERS):
        members = sorted(n for n in names if layer(f"tooldeck.{n}") == name)
        lines.append(f"{name}:")
        for n in members:
            deps = sorted((b, lazy) for (a, b), lazy in kinds.items() if a == n)
            shown = " ".join(f"({b})" if lazy else b for b, lazy in deps) or "-"
            lines.append(f"  {n:<16} -> {shown}")
    return "\n".join(lines)


def mermaid(src: Path) -> str:
    """The graph between top-level packages as mermaid, grouped by layer; a
    dotted arrow is an edge made only of function-level imports."""
    names, kinds = _package_edges(src)
    lines = ["flowchart TD"]
    for name in reversed(LAYERS):
        lines.append(f'  subgraph layer_{name}["{name}"]')
        lines.extend(f"    {n.strip('_')}[{n}]" for n in sorted(names) if layer(f"tooldeck.{n}") == name)
        lines.append("  end")
    for (a, b), lazy in sorted(kinds.items()):
        lines.append(f"  {a.strip('_')} {'-.->' if lazy else '-->'} {b.strip('_')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    parser.add_argument("--graph", action="store_true", help="print the layers and what each package imports")
    parser.add_argument("--mermaid", action="store_true", help="print the package graph as mermaid")
    args = parser.parse_args(argv)
    if args.graph or args.mermaid:
        print(picture(args.root) if args.graph else mermaid(args.root))
        return 0
    problems = check(args.root)
    for line in problems:
        print(line)
    if problems:
        print(f"check_layers: {len(problems)} violation(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
