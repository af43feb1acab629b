#!/usr/bin/env python3
"""Fails when README.md or a docs/ page says a path is absent (not built, not in this build, not
yet run on a GPU, ...) and the code or the record of GPU runs says otherwise.

Usage: scripts/check-doc-facts.py [ROOT]     check the repository (default: the one it is in)
       scripts/check-doc-facts.py --self-test  show that the check catches what it should

The facts live in scripts/doc-facts.json, one entry per fact with its one home page:

  {"id": ..., "home": "docs/PAGE.md", "says": "text of the home page's statement",
   "subject": ["words", ...],                      # what a pointer elsewhere must name
   "code": [{"file": PATH, "contains": TEXT}],     # "not built": the refusal the code gives
   "not_run": {"paths": [ID, ...], "steps": [STEP, ...]}}   # "not yet run on a GPU"

and the record of GPU runs, `gpu_runs`: each run's date, GPU, where it is written up, and the
GPU paths it proved (`proved`: ids).

The check, in four rules:
  1. Every sentence of README.md and docs/*.md (code left out) that uses an absence phrase
     (ABSENCE below, in any rewording of "not built", "not in this build", "has not run",
     "not yet run", ...) is either the statement of a fact (it holds the fact's `says`, on the
     fact's home page) or a pointer to one (it links to the fact's home page and names one of
     its `subject` words). A sentence that is neither is an absence nobody has backed.
  2. Each fact is stated once: its `says` appears on its home page, exactly once, and on no
     other page.
  3. A "not built" fact is backed by the code: each `code` file exists and still holds the
     refusal text (the skip reason a user sees). When the path is built, the refusal goes, and
     the page has to change with it.
  4. A "not yet run on a GPU" fact is backed by the record: each smoke step in `steps` exists
     in scripts/gpu-smoke.sh (the path is built and the next GPU call runs it) and no recorded
     run proved any of its `paths`. Recording a run that proved them fails the page until it
     is changed.
So a page that says a shipped path is not built fails rule 1 (no fact can back it: its code
has no refusal, its steps ran), however it is worded, as long as it uses an absence phrase;
and a true statement goes stale the day the code or the record changes.
"""
import json
import os
import re
import sys

ABSENCE = re.compile(
    r"""\bnot\s+(?:yet\s+|been\s+|ever\s+)*(?:built|implemented|wired\s+up|run\s+on\s+(?:a|any|the)\s+gpu)\b
      | \bnot\s+(?:yet\s+)?in\s+(?:this|the|any)\s+build\b
      | \b(?:is|are)\s+not\s+(?:yet\s+)?(?:part\s+of|included\s+in)\s+(?:this|the)\s+build\b
      | \bnot\s+yet\s+(?:run|built|measured\s+on|calibrated\s+on|tried\s+on|tested\s+on)\b
      | \bha(?:s|ve)(?:n't|\s+not)\s+(?:yet\s+)?(?:been\s+)?(?:run|built|implemented)\b
      | \bnever\s+(?:been\s+)?(?:run|built)\s+on\b
      | \byet\s+to\s+(?:be\s+)?(?:run|built)\b
      | \bunbuilt\b
      | \bmissing\s+from\s+(?:this|the)\s+build\b
      | \bleft\s+out\s+of\s+(?:this|the)\s+build\b
      | \b(?:has|have)\s+no\s+(?:[\w-]+\s+){0,3}yet\b
      | \bnot\s+(?:exported|supported|available|used|wired)\s+yet\b
      | \b(?:is|are)\s+not\s+(?:yet\s+)?(?:exported|supported|available)\s+(?:in|by)\s+(?:this|the)\s+build\b""",
    re.I | re.X,
)
# Phrases of the product itself, not of a path's absence: a build configured without CUDA says
# "not built with CUDA" (docs/no-cuda.md), and configure's line says its GPU suites "are not built".
NOT_ABSENCE = re.compile(r"not\s+built\s+with\s+CUDA|GPU\s+suites\s+and\s+CUDA\s+instruments\s+are\s+not\s+built", re.I)
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?[^)]*\)")


def pages_of(root):
    out = {"README.md": open(os.path.join(root, "README.md"), encoding="utf-8").read()}
    for name in sorted(os.listdir(os.path.join(root, "docs"))):
        if name.endswith(".md"):
            out["docs/" + name] = open(os.path.join(root, "docs", name), encoding="utf-8").read()
    return out


def blocks(text):
    """(first line number, text) of each paragraph, list item, table row and heading, fenced
    code left out; inline code kept (a fact's `says` may quote it) but not searched for phrases."""
    out, cur, start, fence = [], [], 0, None
    def flush():
        if cur:
            out.append((start, " ".join(s.strip() for s in cur)))
        cur.clear()
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*(```+|~~~+)", line):
            flush()
            fence = None if fence else True
            continue
        if fence:
            continue
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        if stripped.startswith(("|", "#")) or re.match(r"^([-*+]|\d+\.)\s", stripped):
            flush()
            start = n
            cur.append(line)
            if stripped.startswith(("|", "#")):
                flush()
            continue
        if not cur:
            start = n
        cur.append(line)
    flush()
    return out


def sentences(block):
    """A block's sentences (a table row's cells are one sentence each)."""
    if block.startswith("|"):
        return [c.strip() for c in block.strip("|").split("|") if c.strip()]
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z`(\[*])", block)
    return [p for p in parts if p.strip()]


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def without_code(s):
    return re.sub(r"`+[^`]*`+", "`…`", s)


def link_pages(sentence, page):
    """The pages a sentence links to, as repository paths (a bare #anchor is its own page)."""
    out = set()
    for target in LINK.findall(sentence):
        if re.match(r"^[a-z]+:", target):
            continue
        path = target.split("#")[0]
        if not path:
            out.add(page)
            continue
        out.add(os.path.normpath(os.path.join(os.path.dirname(page), path)).replace(os.sep, "/"))
    return out


def smoke_steps(script_text):
    m = re.search(r"cat <<'STEPS'\n(.*?)\nSTEPS", script_text, re.S)
    steps = set()
    for line in (m.group(1) if m else "").split("\n"):
        f = line.split()
        if len(f) >= 2 and not f[0].startswith("#"):
            steps.add(f[1])
    return steps


def check(pages, facts_doc, read, files_under=lambda folder: []):
    """Errors, one line each. `pages`: path -> text; `read(path)`: a repository file's text or None;
    `files_under(folder)`: the source files under a repository folder."""
    errors = []
    facts = facts_doc["facts"]
    proved = {p for run in facts_doc.get("gpu_runs", []) for p in run.get("proved", [])}
    ids = [f["id"] for f in facts]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"scripts/doc-facts.json: fact id {dup} twice")
    # Rule 1: every absence sentence is a statement or a pointer.
    for page, text in pages.items():
        for line, block in blocks(text):
            for s in sentences(block):
                if block.startswith("#"):
                    continue  # a heading ("## Not yet") titles the statements under it
                plain = NOT_ABSENCE.sub("", without_code(s))
                if not ABSENCE.search(plain):
                    continue
                # A table row's statement is the row (its cells are sentences of one line).
                ns = norm(block) if block.startswith("|") else norm(s)
                if any(f["home"] == page and norm(f["says"]) in ns for f in facts):
                    continue
                targets = link_pages(s, page)
                lower = plain.lower()
                if any(f["home"] in targets and any(w.lower() in lower for w in f.get("subject", [])) for f in facts):
                    continue
                phrase = ABSENCE.search(plain).group(0)
                errors.append(f"{page}:{line}: '{phrase}' in \"{norm(plain)[:160]}\" is backed by no fact of "
                              f"scripts/doc-facts.json (state a listed fact on its home page, or link to it)")
    # Rule 2: one statement per fact.
    for f in facts:
        if f["home"] not in pages:
            errors.append(f"scripts/doc-facts.json: {f['id']}: home {f['home']} is not a page")
            continue
        said = norm(f["says"])
        for page, text in pages.items():
            n = sum(norm(b).count(said) for _, b in blocks(text))
            if page == f["home"] and n != 1:
                errors.append(f"{page}: {f['id']}: its statement \"{said[:80]}\" is there {n} times (once expected)")
            if page != f["home"] and n > 0:
                errors.append(f"{page}: {f['id']}: restates \"{said[:80]}\"; say it once, on {f['home']}, and link to it")
    # Rule 3: "not built" facts against the code.
    for f in facts:
        for c in f.get("code", []):
            text = read(c["file"])
            if text is None:
                errors.append(f"{f['home']}: {f['id']}: {c['file']} does not exist; the absence it backed is unproven")
            elif c["contains"] not in text:
                errors.append(f"{f['home']}: {f['id']}: {c['file']} no longer says \"{c['contains']}\": the path may be "
                              f"built now; correct the page and scripts/doc-facts.json")
        for c in f.get("lacks", []):  # a call the code does not make: no file under the folders holds it
            for folder in c["under"]:
                for path in files_under(folder):
                    if c["text"] in (read(path) or ""):
                        errors.append(f"{f['home']}: {f['id']}: {path} has \"{c['text']}\" now; the page says it is not used")
    # Rule 4: "not yet run on a GPU" facts against the smoke and the record of runs.
    steps = smoke_steps(read("scripts/gpu-smoke.sh") or "")
    for f in facts:
        nr = f.get("not_run")
        if nr is None:
            if not f.get("code") and not f.get("lacks"):
                errors.append(f"scripts/doc-facts.json: {f['id']}: neither code nor not_run backs it")
            continue
        for st in nr.get("steps", []):
            if st not in steps:
                errors.append(f"{f['home']}: {f['id']}: smoke step {st} is not in scripts/gpu-smoke.sh: is the path built?")
        for p in nr.get("paths", []):
            if p in proved:
                run = next(r for r in facts_doc["gpu_runs"] if p in r.get("proved", []))
                errors.append(f"{f['home']}: {f['id']}: the GPU run of {run['date']} ({run['gpu']}) proved {p}: the page "
                              f"says it has not run; correct it and drop the fact")
        if not nr.get("paths"):
            errors.append(f"scripts/doc-facts.json: {f['id']}: not_run names no path")
    return errors


def load(root):
    facts = json.load(open(os.path.join(root, "scripts", "doc-facts.json"), encoding="utf-8"))
    def read(path):
        p = os.path.join(root, path)
        return open(p, encoding="utf-8", errors="replace").read() if os.path.isfile(p) else None
    def files_under(folder):
        out = []
        for d, _, names in os.walk(os.path.join(root, folder)):
            out += [os.path.relpath(os.path.join(d, n), root) for n in names
                    if n.endswith((".cpp", ".hpp", ".cu", ".cuh", ".h", ".c"))]
        return sorted(out)
    return pages_of(root), facts, read, files_under


def self_test(root):
    """Each rule catches what it is for, on mutated copies of the real pages and facts."""
    pages, facts, read, under = load(root)
    assert check(pages, facts, read, under) == [], "the repository itself fails; run without --self-test"
    def fails(what, pages=pages, facts=facts, read=read, expect=""):
        errs = check(pages, facts, read, under)
        hit = next((e for e in errs if expect in e), None)
        print(f"{'ok  ' if hit else 'FAIL'} {what}: {hit or (errs[0] if errs else 'no error')}")
        return hit is not None
    results = []
    train = "docs/suite-train.md"
    # Rule 1: the sentence of issue 49, as it was, and reworded.
    for sentence in ["The GPU path (NCCL on a second stream) is not in this build yet: `dp=ddp|zero1` on a CUDA device "
                     "is skipped with that reason.",
                     "On GPUs, data parallelism has not been built.",
                     "The data-parallel GPU step is missing from this build.",
                     "GPU data parallelism is not yet part of this build.",
                     "NCCL data parallelism hasn't run on a GPU yet."]:
        p = dict(pages)
        p[train] = p[train] + "\n\n" + sentence + "\n"
        results.append(fails(f"rule 1 catches \"{sentence[:50]}...\"", pages=p, expect="backed by no fact"))
    p = dict(pages)
    p["README.md"] = p["README.md"] + "\n\nThe train suite's data-parallel step [has not run on a GPU](docs/suite-train.md).\n"
    results.append(fails("rule 1: a pointer must name its fact's subject", pages=p, expect="backed by no fact"))
    # Rule 2: a fact restated on another page.
    f0 = facts["facts"][0]
    p = dict(pages)
    other = "docs/gpu-hosts.md" if f0["home"] != "docs/gpu-hosts.md" else "docs/build.md"
    p[other] = p[other] + "\n\n" + f0["says"] + "\n"
    results.append(fails("rule 2 catches a restatement", pages=p, expect="restates"))
    # Rule 3: the refusal gone from the code (the path built).
    coded = next(f for f in facts["facts"] if f.get("code"))
    c = coded["code"][0]
    results.append(fails("rule 3 catches a built path",
                         read=lambda path: (read(path) or "").replace(c["contains"], "") if path == c["file"] else read(path),
                         expect="no longer says"))
    lacking = next(f for f in facts["facts"] if f.get("lacks"))
    lc = lacking["lacks"][0]
    first = under(lc["under"][0])[0]
    results.append(fails("rule 3 catches a call the code makes now",
                         read=lambda path: (read(path) or "") + lc["text"] if path == first else read(path),
                         expect="has \"" + lc["text"]))
    # Rule 4: a recorded run that proved a path the page says has not run; a step that went.
    ran = next(f for f in facts["facts"] if f.get("not_run"))
    fx = json.loads(json.dumps(facts))
    fx["gpu_runs"].append({"date": "2027-01-01", "gpu": "test", "proved": [ran["not_run"]["paths"][0]]})
    results.append(fails("rule 4 catches a path a run proved", facts=fx, expect="proved"))
    step = ran["not_run"]["steps"][0]
    results.append(fails("rule 4 catches a step that is gone",
                         read=lambda path: re.sub(rf"^(\S+\s+){re.escape(step)}\b.*$", "", read(path), flags=re.M)
                         if path == "scripts/gpu-smoke.sh" else read(path), expect="is not in scripts/gpu-smoke.sh"))
    return all(results)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        root = args[1] if len(args) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        sys.exit(0 if self_test(root) else 1)
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    errors = check(*load(root))
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print("doc facts: ok")


if __name__ == "__main__":
    main()
