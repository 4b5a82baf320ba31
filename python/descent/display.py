"""How Descent's results look in a notebook.

Jupyter asks an object for its richest picture (``_repr_html_``, ``_repr_svg_``,
``_repr_png_``) and falls back to ``repr``. Everything here is presentation: the text, the DOT
and the PNG bytes all come from the Session; this file only wraps them in HTML (with a small,
self-contained syntax highlighter), runs Graphviz's ``dot`` for SVG, and lays tables out.
Nothing needs a browser extension or a plotting library.
"""
import base64
import html
import re
import shutil
import subprocess

# One colour per token class, inline (a notebook exported to HTML keeps them).
_COLOURS = {
    "comment": "#6a737d",
    "keyword": "#a626a4",
    "number": "#986801",
    "string": "#50a14f",
    "name": "#4078f2",     # LLVM %values, @globals; registers; labels
    "type": "#0184bc",
    "op": "#c18401",       # opcodes / mnemonics
}

_KEYWORDS = {
    "descent": {"fn", "kernel", "if", "else", "while", "for", "in", "return", "print", "true",
                "false", "and", "or", "not", "let", "break", "continue", "reduce", "sum", "max",
                "min"},
    "tir": {"for", "in", "with", "if", "else", "def", "return", "T", "range", "serial",
            "parallel", "vectorized", "unroll", "grid", "block", "init", "axis", "spatial",
            "reduce", "alloc_buffer", "Buffer", "prim_func", "float32", "int32", "where",
            "reads", "writes"},
    "llvm": {"define", "declare", "ret", "br", "label", "call", "phi", "icmp", "fcmp", "load",
             "store", "alloca", "getelementptr", "inbounds", "select", "add", "sub", "mul",
             "sdiv", "srem", "fadd", "fsub", "fmul", "fdiv", "nsw", "nuw", "fast", "tail",
             "entry", "to", "align", "global", "private", "constant", "internal", "unreachable",
             "switch", "zext", "sext", "trunc", "sitofp", "fptosi", "bitcast", "and", "or", "xor",
             "shl", "ashr", "lshr", "eq", "ne", "slt", "sle", "sgt", "sge", "olt", "ole", "ogt",
             "oge", "oeq", "une", "attributes", "nounwind"},
}
_TYPES = re.compile(r"^(i1|i8|i32|i64|double|float|void|ptr|f32|f64|int|bool|str|Tensor|<\d+ x \w+>)$")

_TOKEN = re.compile(
    r"(?P<comment>(?:#|;|//).*$)"
    r"|(?P<string>\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<name>[%@][\w.$-]+|\b[re][a-ds][xip]\b|\br\d+[dwb]?\b|\b[xy]mm\d+\b|\bv\d+\b|\bs\d+\b)"
    r"|(?P<number>\b-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:e[+-]?\d+)?)\b)"
    r"|(?P<word>[A-Za-z_][\w.]*)",
    re.M)


def language_of(view):
    """The highlighter's language for a stage or view name."""
    if view in ("llvm", "llvm-opt", "mir", "mir-regalloc", "passes") or view.startswith("llvm"):
        return "llvm"
    if view in ("tir", "tir-original", "c", "opencl"):
        return "tir"
    if view in ("asm", "native-asm"):
        return "asm"
    if view in ("stack", "stack-fused", "reg", "reg-alloc", "reg-fused", "native-sched",
                "native-regalloc"):
        return "bytecode"
    return "descent"


def highlight(text, language="descent"):
    """The text as HTML spans, coloured by token class."""
    keywords = _KEYWORDS.get(language, set())
    out = []
    pos = 0
    for m in _TOKEN.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        pos = m.end()
        kind = m.lastgroup
        word = m.group(0)
        if kind == "word":
            if word in keywords:
                kind = "keyword"
            elif _TYPES.match(word):
                kind = "type"
            elif language in ("bytecode", "asm") and (word.isupper() or _starts_line(text, m.start())):
                kind = "op"
            else:
                out.append(html.escape(word))
                continue
        out.append('<span style="color:%s">%s</span>' % (_COLOURS[kind], html.escape(word)))
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _starts_line(text, at):
    """Is the word at `at` the first on its line (after an address or a label's colon)?"""
    line_start = text.rfind("\n", 0, at) + 1
    before = text[line_start:at]
    return before.strip() == "" or before.rstrip().endswith(":")


def pre(html_body, title=None):
    head = ('<div style="font-weight:bold;margin-bottom:2px">%s</div>' % html.escape(title)
            if title else "")
    return (head + '<pre style="line-height:1.3;font-size:12px;padding:6px;'
            'background:#fafafa;border:1px solid #eee;overflow:auto">' + html_body + "</pre>")


def dot_to_svg(dot):
    """Graphviz's SVG of a DOT text, or None when `dot` is not installed."""
    exe = shutil.which("dot")
    if not exe:
        return None
    r = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60)
    if r.returncode != 0:
        return None
    svg = r.stdout.decode("utf-8", "replace")
    # Jupyter wants the <svg> element itself, without the XML prologue and doctype.
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


class View:
    """One stage's view: ``text`` (what ``descent dump`` prints), shown highlighted in a
    notebook; a DOT view (fmt="dot") is drawn as SVG through Graphviz."""

    def __init__(self, name, text, fmt="text", language=None):
        self.name = name
        self.text = text
        self.fmt = fmt
        self.language = language or language_of(name)

    def __str__(self):
        return self.text

    def __repr__(self):
        return self.text

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(self.text)

    def __contains__(self, item):
        return item in self.text

    def splitlines(self):
        return self.text.splitlines()

    def svg(self):
        """The picture (DOT views), as SVG text; None for text views or without Graphviz."""
        return dot_to_svg(self.text) if self.fmt == "dot" else None

    def _repr_svg_(self):
        return self.svg()

    def _repr_html_(self):
        if self.fmt == "dot":
            return None  # the SVG is the picture
        return pre(highlight(self.text, self.language), self.name)


class Table(list):
    """Rows (dicts) shown as an HTML table in a notebook and as aligned text elsewhere."""

    def __init__(self, rows, columns=None, title=None):
        super().__init__(rows)
        self.columns = columns or (list(rows[0].keys()) if rows else [])
        self.title = title

    def _cells(self, row):
        return [_cell(row.get(c, "")) for c in self.columns]

    def __str__(self):
        # A cell of several lines (a schedule's trace) is one line here: "split i 4; ...".
        flat = lambda cells: [c.rstrip("\n").replace("\n", "; ") for c in cells]
        rows = [self.columns] + [flat(self._cells(r)) for r in self]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.columns))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        return ((self.title + "\n") if self.title else "") + "\n".join(lines)

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        head = "".join("<th style='text-align:left'>%s</th>" % html.escape(c) for c in self.columns)
        body = "".join(
            "<tr>" + "".join("<td style='text-align:left;font-family:monospace'>%s</td>"
                             % html.escape(v).replace("\n", "<br>") for v in self._cells(r)) + "</tr>"
            for r in self)
        caption = ("<caption style='text-align:left;font-weight:bold'>%s</caption>"
                   % html.escape(self.title)) if self.title else ""
        return "<table>%s<tr>%s</tr>%s</table>" % (caption, head, body)


def _cell(v):
    if isinstance(v, float):
        return "%.4g" % v
    return str(v)


class Chart:
    """A PNG chart drawn by Descent's own plotter (bench/plot.cpp): the same bytes that
    ``descent bench --plot`` and ``descent tune --plot`` write."""

    def __init__(self, png, title=""):
        self.png = png
        self.title = title

    def _repr_png_(self):
        return self.png

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.png)

    def html(self):
        return '<img src="data:image/png;base64,%s" style="max-width:100%%"/>' % (
            base64.b64encode(self.png).decode("ascii"))

    def __repr__(self):
        return "<Chart %s: %d bytes of PNG>" % (self.title, len(self.png))
