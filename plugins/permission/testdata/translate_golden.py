#!/usr/bin/env python3
"""Regenerates translate_golden.json from CPython: fnmatch.translate of every
pattern, and [pattern, text, fnmatchcase(text, pattern), LionAGI _matches]
per case. plugins/builtin's TestPermission_Matches_CPythonGolden asks the permission
module about the LionAGI column.

The Go tests only read the JSON file; run this (python3 translate_golden.py in
this directory) only to refresh it. Generated with CPython 3.11 on Linux.
"""
import fnmatch
import json
import random
import sys

rng = random.Random(20260829)

HAND_PATTERNS = [
    "", "*", "**", "?", "a*", "*a", "a*b", "a?b", "*/*", "rm *", "git *", "*.py",
    "[abc]", "[!abc]", "[^abc]", "[a-c]", "[!a-c]", "[z-a]", "[!z-a]", "[a-]", "[-a]",
    "[!-a]", "[]]", "[]a]", "[!]]", "[!]a]", "[]-a]", "[!]-a]", "[", "[a", "[!", "[]",
    "[!]", "a[", "a[b", "[[]", "[\\]", "[\\-a]", "\\", "a\\b", "\\*", "{a,b}", "[a--]",
    "[--]", "[a-c-e]", "[z-a!b]", "[z-a!-c]", "[a[:alpha:]]", "[[:alpha:]]", "[&&]",
    "[a&&b]", "[~~]", "[||]", "[a-c&&b]", "*[", "*[]", "?*?", "*a*a*a*b", "[!!]",
    "[!]]]", "[a-cx-z]", "[c-ax-z]", "[a-cz-x]", "[!a-cz-x]", "RM *", "Sudo *",
    "\u0130*", "*\u03a3", "[A-Z]", "[a-z]", ".env", "*.key", "*secret*",
]
HAND_TEXTS = [
    "", "a", "b", "c", "z", "-", "]", "[", "!", "^", "\\", "/", "\n", "ab", "abc",
    "a/b", "a\nb", "rm -rf /", "rm x", "rm", "rmdir x", "RM -rf", "git status",
    "x.py", "dir/x.py", "{a,b}", "a", "[a", "a[b", "[]", "[!]", "*", "?", "A",
    "\u0130x", "\u0131", "x\u03a3", "\u03c3", "\u03c2", "i\u0307x", ".env", "a.key",
    "top secret", "&", "~", "|",
]

PAT_ALPHABET = list("abcz!^-][*?\\/A") + ["\n", " ", "\u00e9", "\u0130", "\u03a3"]
TEXT_ALPHABET = list("abcz!^-][\\/A") + ["\n", " ", "\u00e9", "i", "\u03c3"]


def lion_match(text, pat):
    if pat == "*":
        return True
    return fnmatch.fnmatch(text, pat) or fnmatch.fnmatch(text.lower(), pat.lower())


def main():
    cases = []
    translations = {}
    seen = set()

    def add(p, t):
        if (p, t) in seen:
            return
        seen.add((p, t))
        translations[p] = fnmatch.translate(p)
        cases.append([p, t, fnmatch.fnmatchcase(t, p), lion_match(t, p)])

    for p in HAND_PATTERNS:
        for t in HAND_TEXTS:
            add(p, t)
    for _ in range(3000):
        p = "".join(rng.choice(PAT_ALPHABET) for _ in range(rng.randint(0, 8)))
        t = "".join(rng.choice(TEXT_ALPHABET) for _ in range(rng.randint(0, 6)))
        add(p, t)
    # Texts built to match random patterns more often.
    for _ in range(1500):
        p = "".join(rng.choice("ab[]!-*?z") for _ in range(rng.randint(1, 7)))
        t = "".join(rng.choice("ab-z]!") for _ in range(rng.randint(0, 5)))
        add(p, t)
    # One case a line: [pattern, text, fnmatchcase(text, pattern), LionAGI _matches].
    with open("translate_golden.json", "w", encoding="utf-8") as f:
        f.write('{"translate": ')
        json.dump(translations, f, ensure_ascii=False, sort_keys=True)
        f.write(',\n"cases": [\n')
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")

    print(len(cases), "fnmatch cases", file=sys.stderr)


if __name__ == "__main__":
    main()
