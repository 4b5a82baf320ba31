#!/usr/bin/python3
"""The house rules a reader relies on, checked (CTest runs this as `layout`):

1. Layers. Each library folder sits on a floor (LAYERS below, bottom first) and may include
   headers only of folders on lower floors: `#include "pipeline/..."` from tensor/ is a
   dependency running up, and fails. Folders on one floor do not know each other (bench and
   labs, say). docs/architecture.md draws this table.
2. Files a reader can hold. A source file outside tests/ and fuzz/ is at most 800 lines.
   The ones over it today are listed in OVERSIZED with their length now: they may shrink but
   not grow, and an entry whose file has come under the limit must be deleted, so the list
   only gets shorter.

Run from anywhere:  /usr/bin/python3 scripts/check_layout.py   (exit 1 and one line per
broken rule).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. A folder may include its own headers and those of any lower floor.
LAYERS = [
    ["lang", "proc"],                    # the language; running a process under limits
    ["vm", "llvm_backend", "analysis"],  # scalar engines and the abstract interpreter
    ["native", "tensor"],                # native (on vm's bytecode); tensor IR, schedules, runtime
    ["cpu", "gpu", "tune", "importer"],  # CPU and OpenCL devices, auto-tuner, ONNX import (on tensor)
    ["plugins"],                         # cpu + llvm_backend, importer as shared objects opened on first use
    ["pipeline"],                        # the Session: the one place that sees every stage
    ["bench", "labs"],                   # on the Session
    ["apps", "viz", "python"],           # front ends
]

LIMIT = 800
# Over the limit, with their length when listed: none since issue 33 split the last ten. Keep it
# empty: a file that grows past the limit is split along its seams, not listed here.
OVERSIZED = {}
SOURCE = (".cpp", ".h", ".py", ".cl")
SKIP = ("tests/", "fuzz/corpus", "build", ".git", "third_party", "examples/")


def floor_of():
    floors = {}
    for i, names in enumerate(LAYERS):
        for n in names:
            floors[n] = i
    return floors


def check_layers(problems):
    floors = floor_of()
    include = re.compile(r'\s*#\s*include\s+"([^"/]+)/')
    for folder, floor in sorted(floors.items()):
        for root, _, files in os.walk(os.path.join(ROOT, folder)):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, ROOT)
                with open(path, errors="replace") as text:
                    for number, line in enumerate(text, 1):
                        m = include.match(line)
                        if not m or m.group(1) == folder or m.group(1) not in floors:
                            continue
                        other = m.group(1)
                        if floors[other] >= floor:
                            how = "the same floor" if floors[other] == floor else "a floor above"
                            problems.append("%s:%d: includes %s/, which is on %s (%s may use only %s)"
                                            % (rel, number, other, how, folder,
                                               ", ".join(n for n in floors if floors[n] < floor) or "nothing"))


def check_sizes(problems):
    seen = set()
    for root, dirs, files in os.walk(ROOT):
        rel_root = os.path.relpath(root, ROOT)
        dirs[:] = [d for d in dirs if not os.path.join(rel_root, d).lstrip("./").startswith(SKIP)
                   and not d.startswith(("build", "."))]
        for f in files:
            if not f.endswith(SOURCE):
                continue
            rel = os.path.normpath(os.path.join(rel_root, f))
            if rel.startswith(SKIP):
                continue
            with open(os.path.join(root, f), errors="replace") as text:
                lines = sum(1 for _ in text)
            allowed = OVERSIZED.get(rel)
            if allowed is not None:
                seen.add(rel)
                if lines <= LIMIT:
                    problems.append("%s: %d lines, under %d now: delete its entry in OVERSIZED "
                                    "(scripts/check_layout.py)" % (rel, lines, LIMIT))
                elif lines > allowed:
                    problems.append("%s: %d lines; it is over %d and may only shrink (it was %d): "
                                    "split it along a seam" % (rel, lines, LIMIT, allowed))
            elif lines > LIMIT:
                problems.append("%s: %d lines, over %d: split it along a seam (one concern per file)"
                                % (rel, lines, LIMIT))
    for rel in sorted(set(OVERSIZED) - seen):
        problems.append("%s: listed in OVERSIZED but not there: delete its entry" % rel)


def main():
    problems = []
    check_layers(problems)
    check_sizes(problems)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("layout: %d floors, %d files over %d lines (may only shrink)" % (len(LAYERS), len(OVERSIZED), LIMIT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
