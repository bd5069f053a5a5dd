"""Regenerates fnmatch_golden.json: CPython's fnmatch.fnmatchcase answers for
hand-picked and random pattern/text pairs. Run: python3 fnmatch_golden.py fnmatch_golden.json
(the committed file was made with CPython 3.11.7; the seed makes it reproducible)."""
import fnmatch, json, random, sys
random.seed(86)
pats = ["*", "?", "*.key", ".env", "[!a]*", "[^a]*", "[a-c]x", "[z-a]", "[!z-a]", "[z-a-c]", "[a-]", "[-a]", "[]]", "[!]]", "[!]", "[",
        "a[", "[a", "\\*", "a\\b", "*.{js,ts}", "[a-c-e]", "[!a-c-e]", "[a--]", "[--0]", "[%--]", "*[", "**", "?*?", "[!-]", "[\\]",
        "[&&]", "[~~]", "[||]", "[a-z0-9_]*", "secret*", "*secret*", "id_rsa*", "[.]env", "*~", "[[]", "[[a]", "[a-b-c-d]", "[b-a-c]",
        "[ab-]", "[!ab-]", "x[!b-a]y", "[é-ü]", "*.[ch]", "?/?", "*/*", "[/]", "[!/]"]
alphabet = "abcxyz-!^[]\\*?./~&|é0_ "
for _ in range(150):
    pats.append("".join(random.choice(alphabet) for _ in range(random.randint(1, 7))))
texts = ["", "a", "b", "c", "x", "ax", "bx", "dx", "/", "-", "]", "!", "^", "[", "\\", "*", "a\\b", "ab", ".env", ".env.local", "api.key",
         "keystone.py", "secret", "mysecret~", "id_rsa.pub", "\n", "a\nb", "é", "z", "e", "0", "_", "&", "~", "|", "%", "a-b", "abc", "xay", "xby",
         "a.c", "a.h", "a/b", "tmp", "pytest-of-root"]
for _ in range(200):
    texts.append("".join(random.choice(alphabet) for _ in range(random.randint(0, 6))))
cases = []
seen = set()
for p in pats:
    local = [p] + ["".join(random.choice(p + "ab-") for _ in range(random.randint(0, 4))) for _ in range(25)]
    for t in random.sample(texts, 15) + texts[:12] + local:
        if (p, t) in seen: continue
        seen.add((p, t))
        cases.append([p, t, fnmatch.fnmatchcase(t, p)])
with open(sys.argv[1], "w") as f:
    f.write('{"python": %s, "function": "fnmatch.fnmatchcase(text, pattern)", "generator": "fnmatch_golden.py", "cases": [\n' % json.dumps(sys.version.split()[0]))
    f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
    f.write("\n]}\n")
print(len(cases), sum(1 for c in cases if c[2]))
