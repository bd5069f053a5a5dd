// Package destructive is the pure-Go logic of govhost's built-in
// guard_destructive gate (ADR-0086 D2): it denies a call whose "command"
// argument contains a destructive shell or SQL command, and allows anything
// else.
//
// The command is folded once (case, the Unicode letters Python's IGNORECASE
// equates with ASCII ones, Unicode whitespace) and then matched with plain
// code, never regexp, which is slow inside a Wasm guest:
//
//   - a baseline scan reproduces LionAGI's ten regular expressions exactly
//     (Unicode \s and \b included), so anything the original catches is
//     caught;
//   - a token scan catches the spellings the regex list misses: flags in any
//     order or split (rm -fr, rm -r -f, rm --recursive --force), git push
//     with -f or +refspec anywhere, git clean -df, dd with if= anywhere,
//     mkfs variants, SQL through comments, and block devices beyond /dev/sdX.
//
// There is no shell parsing: quoted text counts, exactly as in the original.
//
// New builds an immutable *Gate; Evaluate is safe for concurrent use and
// never panics. The package compiles for GOOS=wasip1 and imports nothing of
// govhost's but abi.
package destructive
