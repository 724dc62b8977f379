"""Words of prose a reader reads on a chapter page (issue 43's 3,600-word limit).

Counts the Markdown of notebooks/NN_*.md outside code cells (and so outside outputs and
the self-check forms, which code cells draw), exercise solutions, the lecture deck's
`{only}` blocks (not on the page), MyST comments, labels
and directive options. Math counts as it reads: each run of letters or digits in it, less
LaTeX command names, is a word; a glued number is one word. Counted this way the chapters
as issue 43 found them had 2,800-4,800 words (its own counts: 2,700-4,700).

    .venv/bin/python scripts/prose_words.py notebooks/0*.md
"""
import re
import sys


def _math_words(match):
    text = re.sub(r"\\[A-Za-z]+", " ", match.group(0))
    return " " + " ".join("m" for _ in re.findall(r"[A-Za-z0-9]+", text)) + " "


def prose_words(text: str) -> int:
    if text.startswith("---"):
        text = text.split("\n---\n", 1)[1]                       # the front matter
    text = re.sub(r"```\{code-cell\}.*?\n```", "", text, flags=re.S)
    text = re.sub(r"```\{only\}.*?\n```", "", text, flags=re.S)     # the lecture deck's
    text = re.sub(r"````\{solution-start\}.*?````\{solution-end\}\n````", "", text,
                  flags=re.S)
    text = re.sub(r"(:{3,})\{solution\}.*?\n\1\s*\n", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", _math_words, text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", _math_words, text)
    text = re.sub(r"\{glue:text\}`[^`]*`", " N ", text)
    kept = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("%", ":label:", ":class:", ":::", "```", "+++", ":name:")):
            continue
        if s.startswith("(") and s.endswith(")="):
            continue
        kept.append(line)
    text = re.sub(r"\{[a-z:-]+\}`([^`<]*)(<[^>]*>)?`", r"\1", "\n".join(kept))
    return len(re.findall(r"[A-Za-z0-9][\w'’.,-]*", text))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            print(f"{path}: {prose_words(f.read())}")
