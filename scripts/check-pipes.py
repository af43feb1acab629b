#!/usr/bin/env python3
"""Fails on a pipeline whose reader may stop before its writer is done, in the project's shell scripts.

Usage: scripts/check-pipes.py [ROOT]      (default: the repository this script is in)
       scripts/check-pipes.py --self-test

Why: the scripts run with `set -o pipefail` (most with -e too). In `producer | head -n1` the reader
exits after its first line; a producer still writing then dies of SIGPIPE, the pipeline's status
is 141 and a `set -e` script ends there without a word. Whether that happens depends on how much
the producer writes and when: `ldconfig -p | awk '... {print; exit}'` passed for months and failed
CI once the machine's library cache outgrew the 64 KiB pipe buffer (bundle.sh, image.sh exited
141 with an empty log). So no reader that stops early may follow a `|`: head, grep -q/-m,
awk with exit, sed with q. Read a variable with a here-string instead (grep -q X <<<"$text"),
or a reader that reads to the end (sed -n 1p, awk 'NR == 1', awk without exit).

Checked: every tracked *.sh, *.sbatch, .ci/run and file with a sh/bash shebang; pipes in code,
inside $(...) and inside double-quoted $(...); not in comments, quotes or here-documents."""
import os
import re
import subprocess
import sys


def stages_after_pipes(text):
    """(line number, command text) of every pipeline stage that reads a pipe."""
    out = []
    i, n, line = 0, len(text), 1
    stack = ["code"]  # code | squote | dquote; "code" pushed for each $( ... )
    heredocs = []      # delimiters whose bodies start at the next newline
    pending = None     # [line, chars] of the stage being read after a pipe
    depth_of_pending = None

    def close_pending():
        nonlocal pending
        if pending is not None:
            out.append((pending[0], "".join(pending[1]).strip()))
            pending = None

    def end_stage_here():
        # A `)`, `||`, `|`, `;` or `&` at the pending stage's depth ends it; the character
        # already appended to it is not part of it.
        if pending is not None and len(stack) == depth_of_pending:
            pending[1].pop()
            close_pending()

    while i < n:
        c = text[i]
        top = stack[-1]
        if c == "\n":
            line += 1
            if top == "code" and not text[max(0, i - 1)] == "\\":
                if pending is not None and len(stack) == depth_of_pending and "".join(pending[1]).strip():
                    close_pending()
            if heredocs and top == "code":
                # Skip the bodies, one delimiter after the other.
                j = i + 1
                for delim in heredocs:
                    while j < n:
                        end = text.find("\n", j)
                        end = n if end < 0 else end
                        body_line = text[j:end]
                        line += 1
                        j = end + 1
                        if body_line.strip() == delim:
                            break
                heredocs = []
                i = j
                continue
            if pending is not None:
                pending[1].append(" ")
            i += 1
            continue
        if pending is not None and len(stack) >= depth_of_pending:
            pending[1].append(c)
        if top == "squote":
            if c == "'":
                stack.pop()
            i += 1
            continue
        if c == "\\":
            if pending is not None and len(stack) >= depth_of_pending and i + 1 < n:
                pending[1].append(text[i + 1])
            if text.startswith("\n", i + 1):
                line += 1
            i += 2
            continue
        if top == "dquote":
            if c == '"':
                stack.pop()
            elif text.startswith("$(", i) and not text.startswith("$((", i):
                stack.append("code")
                if pending is not None:
                    pending[1].append("(")
                i += 2
                continue
            i += 1
            continue
        # code
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;(|&"):
            end = text.find("\n", i)
            if pending is not None:
                pending[1].pop()
            i = n if end < 0 else end
            continue
        if c == "'":
            stack.append("squote")
        elif c == '"':
            stack.append("dquote")
        elif text.startswith("$(", i) and not text.startswith("$((", i):
            stack.append("code")
            if pending is not None:
                pending[1].append("(")
            i += 2
            continue
        elif c == ")" and len(stack) > 1:
            end_stage_here()
            stack.pop()
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            m = re.match(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1", text[i:])
            if m:
                heredocs.append(m.group(2))
                if pending is not None:
                    pending[1].extend(m.group(0)[1:])
                i += len(m.group(0))
                continue
        elif text.startswith("||", i):
            end_stage_here()
            i += 2
            continue
        elif c == "|":
            end_stage_here()
            pending, depth_of_pending = [line, []], len(stack)
        elif c in ";&":
            end_stage_here()
        i += 1
    close_pending()
    return out


def early_reader(stage):
    """Why this stage may stop reading before its writer is done, or None."""
    words = stage.split()
    while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]) or words[0] in ("sudo", "env", "command", "exec")):
        words = words[1:]
    if not words:
        return None
    name = os.path.basename(words[0])
    if name == "head":
        return "head stops after its lines"
    if name in ("grep", "egrep", "fgrep"):
        for w in words[1:]:
            if w == "--":
                break
            if w in ("--quiet", "--silent") or w.startswith("--max-count"):
                return f"grep {w} stops at its first match"
            if re.match(r"^-[A-Za-z]*[qm]", w) and not w.startswith("--"):
                return f"grep {w} stops at its first match"
        return None
    if name in ("awk", "gawk", "mawk") and re.search(r"\bexit\b", stage):
        return "awk's exit stops reading"
    if name == "sed" and re.search(r"(^|[;{}/'\s\d$])q\d*\s*($|[;}'])", stage.split(None, 1)[1] if " " in stage else ""):
        return "sed's q stops reading"
    return None


def is_shell(path):
    if path.endswith((".sh", ".sbatch")) or path == ".ci/run":
        return True
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return bool(re.match(rb"#!\s*(/usr)?/bin/(env\s+)?(ba)?sh\b", first))


def check_text(text):
    return [(ln, stage, why) for ln, stage in stages_after_pipes(text) if (why := early_reader(stage))]


def self_test():
    bad = [
        'v=$("$bin" version | head -n1)',
        "x=$(ldconfig -p | awk -v n=a '$1 == n {print $NF; exit}')",
        'srun --mpi=list 2>&1 | grep -q pmix && how=srun',
        'echo "$(cmd | grep -Eq x)"',
        'ls |\n  head -n 3',
        'cmd | sed -n "/x/{p;q}"',
        'cmd | grep -m1 x',
        'f() { a | sudo head -c 10; }',
    ]
    good = [
        'v=$("$bin" version | sed -n 1p)',
        "x=$(ldconfig -p | awk -v n=a '$1 == n && p == \"\" {p = $NF} END {print p}')",
        'grep -q pmix <<<"$(srun --mpi=list 2>&1)"',
        "grep -E 'a|head' file",
        '# cmd | head -n1',
        'echo "a | head"',
        "python3 - <<'EOF'\nx = a | head\nEOF\necho ok",
        'head -n1 <<<"$out"',
        'a || head -n1 f',
        'grep -c x f | grep -q 3 <<<"$y"' if False else 'cmd | grep -c q',
        'cmd | awk "{print}" | sort',
        "cmd | sed 's/q//'",
    ]
    failed = 0
    for t in bad:
        if not check_text(t):
            print(f"self-test: not caught: {t!r}")
            failed += 1
    for t in good:
        if found := check_text(t):
            print(f"self-test: wrongly caught: {t!r}: {found}")
            failed += 1
    print(f"check-pipes self-test: {len(bad) + len(good) - failed} of {len(bad) + len(good)} cases right")
    return 1 if failed else 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True).stdout.split()
    problems, checked = 0, 0
    for rel in files:
        path = os.path.join(root, rel)
        if not os.path.isfile(path) or not is_shell(path):
            continue
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for ln, stage, why in check_text(text):
            print(f"{rel}:{ln}: '| {stage[:60]}': {why}; with pipefail its writer may die of SIGPIPE (141)")
            problems += 1
    print(f"check-pipes: {checked} shell scripts, {problems} pipe(s) read by a reader that stops early")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
