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
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]
docs = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                         check=True).stdout.split()
code_files = [f for f in tracked if not f.endswith(".md") and (root / f).is_file()]
text = "\n".join((root / f).read_text(errors="replace") for f in code_files)


def code_only(name):
    """A source file without its comments: a name in the docs must be in the code itself."""
    body = (root / name).read_text(errors="replace")
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

findings = []
def check(doc, line, name, why):
    findings.append(f"{doc.relative_to(root)}:{line}: `{name}`: {why}")

for doc in docs:
    body = doc.read_text()
    # Fenced blocks are commands: their options and paths are checked too.
    for m in re.finditer(r"```.*?```|`[^`]+`", body, re.S):  # a span may wrap a line
        span = m.group(0).strip("`")
        fenced = m.group(0).startswith("```")
        line = body.count("\n", 0, m.start()) + 1
        for token in re.findall(r"[A-Za-z0-9_./:=+*-]+", span):
            token = token.rstrip(".,:;")
            if "*" in token or re.match(r"(my|MY|name)_", token):  # patterns, placeholders
                continue
            if re.fullmatch(r"(\.\./shared/)?([A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*", token):
                first = token.split("/")[0]
                if first in top and not (root / token).exists():
                    check(doc, line, token, "no such file")
                continue
            for part in token.split(","):
                name = part.split("=")[0]
                if re.fullmatch(r"[a-z]+\.[a-z_]+", name) and name.split(".")[0] in families:
                    if name not in knobs:
                        check(doc, line, name, "no plugin reads this knob and no database sets it")
                elif re.fullmatch(r"[A-Za-z_]\w*(::~?\w+)+", name) and not name.startswith("std::"):
                    for w in name.replace("~", "").split("::"):
                        if w not in words:
                            check(doc, line, name, f"'{w}' is nowhere in the sources")
                elif re.fullmatch(r"--[a-z][a-z0-9-]*", name):
                    if name not in text and not foreign.match(span.strip()):
                        check(doc, line, name, "no source spells this option")
                elif not fenced and re.fullmatch(r"[A-Za-z]\w*_\w+", name) and name not in words:
                    check(doc, line, name, "nowhere in the sources")

for f in sorted(set(findings)):
    print(f)
if findings:
    print(f"check-docs: {len(set(findings))} names in the docs that the code does not have")
sys.exit(1 if findings else 0)
