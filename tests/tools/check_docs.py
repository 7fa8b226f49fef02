#!/usr/bin/env python3
"""What the docs name in code, checked against the code.

Every `backticked` span of README.md and docs/*.md is scanned for names of code:
  - paths under the repository's top-level folders (scripts/device-lab.sh): the file exists;
  - C++ qualified names (Stage::launch, not std::): each part is a word of the code, its comments
    left out;
  - tuning knobs (morphology.row_tile, also in --tuning NAME=VALUE): a plugin or the streamer
    reads it, or the device database sets it;
  - identifiers with an underscore (morph_rect_walk, CLF_BUILD_OPTIONS), outside code blocks and
    placeholders (my_plugin, name_pitch): a word of the code, or a file's name (test_pipeline);
  - command-line options (--strip-rows): some source spells them, unless the span is another
    tool's command (dask worker --nthreads 1).
Prints each name that is not there, with its file and line; exits 1 when there is one.
`--self-test` first runs it on names made up to be stale and on names the code has (ctest's docs
test; scripts/check-style.sh runs the plain check).
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]
docs = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
# The working tree's files: tracked, and new ones git does not ignore (not yet added).
tracked = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, text=True, check=True).stdout.split()
# The code: every tracked file but the docs and this one (its self-test's names are made up).
code_files = [f for f in tracked if not f.endswith(".md") and f != "tests/tools/check_docs.py"
              and (root / f).is_file()]
bodies = {f: (root / f).read_text(errors="replace") for f in code_files}
text = "\n".join(bodies.values())


def code_only(name):
    """A source file without its comments: a name in the docs must be in the code itself."""
    body = bodies[name]
    if re.search(r"\.(c|h|cpp|hpp|cl|clh)$", name):
        return re.sub(r"//[^\n]*|/\*.*?\*/", " ", body, flags=re.S)
    if re.search(r"\.(py|sh|txt|cmake|tuning)$|^\.ci/|^scripts/", name):
        return re.sub(r"(^|\s)#[^\n]*", " ", body)
    return body


words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(map(code_only, code_files))))
words |= {pathlib.Path(f).stem for f in tracked}  # test_pipeline: a test's executable
# Commands of other tools, whose options are theirs.
foreign = re.compile(
    r"(dask|vips|oiiotool|cmake|ctest|apt(-get)?|pip3?|git|ptxas|cuobjdump|nsys)\b")
top = {f.split("/")[0] for f in tracked if "/" in f}
knobs = set(re.findall(r'knob(?:_number)?\("([a-z_.]+)"', text))
knobs |= set(re.findall(r"^([a-z_.]+) *=", (root / "core/tuning/devices.tuning").read_text(), re.M))
families = {k.split(".")[0] for k in knobs if "." in k}


def names_missing(name, body):
    """The findings for one document's text: 'NAME:LINE: `thing`: why'."""
    findings = set()
    # Fenced blocks are commands: their options and paths are checked too.
    for m in re.finditer(r"```.*?```|`[^`]+`", body, re.S):  # a span may wrap a line
        span = m.group(0).strip("`")
        fenced = m.group(0).startswith("```")
        where = f"{name}:{body.count(chr(10), 0, m.start()) + 1}"

        def check(thing, why):
            findings.add(f"{where}: `{thing}`: {why}")

        for token in re.findall(r"[A-Za-z0-9_./:=+*-]+", span):
            token = token.rstrip(".,:;")
            if "*" in token or re.match(r"(my|MY|name)_", token):  # patterns, placeholders
                continue
            if re.fullmatch(r"(\.\./shared/)?([A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*", token):
                if token.split("/")[0] in top and not (root / token).exists():
                    check(token, "no such file")
                continue
            for part in token.split(","):
                thing = part.split("=")[0]
                if re.fullmatch(r"[a-z]+\.[a-z_]+", thing) and thing.split(".")[0] in families:
                    if thing not in knobs:
                        check(thing, "no plugin reads this knob and no database sets it")
                elif (re.fullmatch(r"[A-Za-z_]\w*(::~?\w+)+", thing)
                      and not thing.startswith("std::")):
                    for w in thing.replace("~", "").split("::"):
                        if w not in words:
                            check(thing, f"'{w}' is nowhere in the sources")
                elif re.fullmatch(r"--[a-z][a-z0-9-]*", thing):
                    if thing not in text and not foreign.match(span.strip()):
                        check(thing, "no source spells this option")
                elif not fenced and re.fullmatch(r"[A-Za-z]\w*_\w+", thing) and thing not in words:
                    check(thing, "nowhere in the sources")
    return findings


def self_test():
    """The checker finds each kind of stale name, and passes names the code has."""
    stale = ("See `morphology.row_tiles`, `Stage::relaunch`, `core/src/nothing.cpp`,\n"
             "`morph_rect_walker`, `clfilter --strip-rowz 4`, and `--tuning\n"
             "morphology.walk_grup=3`.\n")
    fine = ("`morphology.row_tile`, `Stage::launch`, `core/src/stage.cpp`, `morph_rect_walk`,\n"
            "`clfilter --strip-rows 4`, `dask worker --nthreads 1`, `my_plugin`, `std::puts`,\n"
            "`tests/test_*.cpp`, `--tuning morphology.walk_group=64`\n"
            "```python\nedges_of_big = 1\n```\n")
    found = names_missing("stale.md", stale)
    want = {"morphology.row_tiles", "Stage::relaunch", "core/src/nothing.cpp",
            "morph_rect_walker", "--strip-rowz", "morphology.walk_grup"}
    named = {f.split("`")[1] for f in found}
    assert named == want, f"self-test: found {sorted(named)}, want {sorted(want)}"
    # A span wrapped over two lines is read whole, and named at the line it starts on.
    assert "stale.md:2: `morphology.walk_grup`" in {f.split(": no")[0] for f in found}, found
    assert not names_missing("fine.md", fine), names_missing("fine.md", fine)
    print("check-docs: self-test passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:  # then the docs themselves
        self_test()
    findings = set()
    for doc in docs:
        findings |= names_missing(str(doc.relative_to(root)), doc.read_text())
    for f in sorted(findings):
        print(f)
    if findings:
        print(f"check-docs: {len(findings)} names in the docs that the code does not have")
    sys.exit(1 if findings else 0)
