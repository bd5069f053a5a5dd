#!/usr/bin/env python3
"""Regenerates pytext_golden.json from CPython.

The tests (plugins/builtin, TestPermission_PythonText_CPythonGolden) only read the
JSON file; run this (python3 gen_golden.py in this directory) only to refresh it.
Generated with CPython 3.11 on Linux. The fnmatch golden files are beside it
(translate_golden.py, fnmatch_golden.py).
"""
import json


def main():
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


if __name__ == "__main__":
    main()
