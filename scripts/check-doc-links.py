#!/usr/bin/env python3
"""Fails on a dangling relative link or anchor in README.md and docs/*.md.

Usage: scripts/check-doc-links.py [ROOT]   (default: the repository this script is in)
Checks every Markdown link [text](target) and <a href> outside code: a relative target must
exist (file or folder); a #anchor must match a heading of the target file, slugged the way
GitHub does (lower case, punctuation dropped, spaces to '-', '-N' for repeats). External links
(http, https, mailto) are not fetched."""
import os
import re
import sys
import urllib.parse

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HREF = re.compile(r"<a\s[^>]*href=\"([^\"]+)\"")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHOR_TAG = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"")


def strip_code(lines):
    """The lines with fenced blocks blanked and inline code removed."""
    out, fence = [], None
    for line in lines:
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif line.strip().startswith(fence):
                fence = None
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`+[^`]*`+", "", line))
    return out


def slug(text):
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)     # links keep their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)                      # GitHub keeps letters, digits, _, -, space
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, counts = set(), {}
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for raw, line in zip(lines, strip_code(lines)):
            m = HEADING.match(raw) if line else None  # a heading keeps its inline code; fences have none
            if m:
                s = slug(m.group(2))
                n = counts.get(s, 0)
                counts[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
            for a in ANCHOR_TAG.findall(raw):
                found.add(a)
        cache[path] = found
    return cache[path]


def check_file(path, root):
    problems = []
    with open(path, encoding="utf-8") as f:
        lines = strip_code(f.read().splitlines())
    for number, line in enumerate(lines, 1):
        for target in LINK.findall(line) + HREF.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            where = f"{os.path.relpath(path, root)}:{number}"
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part)
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append(f"{where}: {target}: no such file or folder")
                continue
            if anchor and os.path.isfile(dest) and dest.endswith(".md"):
                if urllib.parse.unquote(anchor) not in anchors(dest):
                    problems.append(f"{where}: {target}: no heading with anchor #{anchor} in {os.path.relpath(dest, root)}")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    for dirpath, _, names in os.walk(docs):
        files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".md")]
    problems = []
    for f in files:
        if os.path.exists(f):
            problems += check_file(f, root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(f"{len(problems)} dangling link(s) in {len(files)} files")
    print(f"ok: every relative link in {len(files)} files resolves")


if __name__ == "__main__":
    main()
