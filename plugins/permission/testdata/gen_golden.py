#!/usr/bin/env python3
"""Regenerates fnmatch_golden.json and pytext_golden.json from CPython.

The Go tests only read the JSON files; run this (python3 gen_golden.py in this
directory) only to refresh them. Generated with CPython 3.11 on Linux.
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
    with open("fnmatch_golden.json", "w", encoding="utf-8") as f:
        f.write('{"translate": ')
        json.dump(translations, f, ensure_ascii=False, sort_keys=True)
        f.write(',\n"cases": [\n')
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")

    # Python str()/repr()/lower() of values decoded by json.loads.
    values = [
        "plain", "it's", 'say "hi"', "both ' and \"", "tab\tnl\nret\r", "back\\slash",
        "\x00\x01\x1f\x7f", "\u00a0nbsp", "\u00e9t\u00e9", "\u2028\u2029", "\u200b",
        "\ud7ff\ue000", "\U0001f600", "\U000e0001", "\u0085", "\u00ad", "\ufeff",
        True, False, None, 0, -0, 1, -17, 12345678901234567890123,
        1.0, -0.0, 0.0, 1.5, 1e16, 1e15, 123456789012345678.0, 0.0001, 0.00001,
        1e-7, 1.5e300, 2.5e-300, 5e-324, 1e22, 1e21, 9999999999999998.0, 0.1, 1 / 3,
        [], [1, "a", None, True], {}, {"k": "v", "n": [1, 2]}, [{"a": "it's"}],
    ]
    number_literals = ["0", "-0", "1", "-1", "10", "1.0", "1e2", "1E2", "1e+2", "1e-2",
                       "-0.0", "0e5", "1e400", "-1e400", "1e-400", "2e-324",
                       "123456789012345678901234567890", "0.1", "3.141592653589793238"]
    lowers = ["ABC", "\u0130STANBUL", "\u03a3", "A\u03a3", "A\u03a3B", "A\u03a3.", "A.\u03a3",
              "\u03a3A", "A\u03a3'", "A'\u03a3", "\u1e9e", "\u01c5", "\u2160", "\u24b6",
              "A\u0301\u03a3", "\u03a3\u03a3", "A\u03a3\u03a3", "ÀÉÎ", "\u0130", "K\u212a"]
    out = {
        "values": [{"json": json.dumps(v), "str": str(v), "repr": repr(v)} for v in values],
        "numbers": [{"literal": n, "str": str(json.loads(n))} for n in number_literals],
        "lower": [{"text": s, "lower": s.lower()} for s in lowers],
    }
    with open("pytext_golden.json", "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(len(cases), "fnmatch cases", file=sys.stderr)


if __name__ == "__main__":
    main()
