package governance

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The host side's one JSON scanner (jsonScanner: whitespace, literals,
// numbers, strings with their escapes, UTF-8 and surrogate pairs) and its
// one strict reader (strictWalker) built on it. ParseJSON's value reader
// (jsonread.go), CheckStrictJSON, the policy forms' exact keys and the
// server's request bodies (ReadStrictJSON with the destination's Shape)
// all read through them, and so does the ordered-object reader
// (members.go); the canonical checker (canonical_check.go) is the one
// reader of the stricter canonical grammar.

// jsonScanner reads the tokens of RFC 8259 JSON at b[i:]. Its methods
// report only success or a fault; what a fault means is the caller's.
type jsonScanner struct {
	b []byte
	i int
}

// scanFault is why a scan stopped.
type scanFault uint8

const (
	faultNone scanFault = iota
	// faultMalformed: not JSON here (or nested deeper than maxJSONDepth).
	faultMalformed
	// faultSurrogate: a \uD800–\uDFFF escape that is not a high surrogate
	// followed by a low one (encoding/json would replace it with U+FFFD,
	// Python would read it and then fail to encode it).
	faultSurrogate
)

// maxJSONDepth bounds the scanner's nesting so hostile input cannot
// exhaust the stack (encoding/json's own bound is 10000).
const maxJSONDepth = 1000

// plainByte marks the ASCII bytes a string holds as they are (no quote,
// no backslash, no control character).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number reads a number by JSON's grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *jsonScanner) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// enter steps into the object or array whose opening bracket is at s.i;
// empty is true (and the closing bracket read) when nothing is inside.
func (s *jsonScanner) enter(closing byte) (empty bool) {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closing {
		s.i++
		return true
	}
	return false
}

// colon reads the colon after a key, and the whitespace around it.
func (s *jsonScanner) colon() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return false
	}
	s.i++
	s.ws()
	return true
}

// after reads what follows an item or member: a comma (more follows) or
// the closing bracket (done).
func (s *jsonScanner) after(closing byte) (done bool, f scanFault) {
	s.ws()
	if s.i >= len(s.b) {
		return false, faultMalformed
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, faultNone
	case closing:
		s.i++
		return true, faultNone
	}
	return false, faultMalformed
}

// str reads the string whose opening quote is at s.i: raw is its text
// between the quotes, escaped whether it holds an escape (then its
// meaning is appendUnescaped(raw), not raw). Text must be valid UTF-8
// without raw control characters; escapes must be JSON's, surrogates in
// pairs (on faultSurrogate, s.i is the escape's backslash).
func (s *jsonScanner) str() (raw []byte, escaped bool, f scanFault) {
	s.i++ // the opening quote
	start, b := s.i, s.b
	for s.i < len(b) {
		c := b[s.i]
		if plainByte[c] {
			s.i++
			continue
		}
		switch {
		case c == '"':
			raw = b[start:s.i]
			s.i++
			return raw, escaped, faultNone
		case c == '\\':
			escaped = true
			if f := s.escape(); f != faultNone {
				return nil, false, f
			}
		case c < 0x20:
			return nil, false, faultMalformed
		default:
			r, size := utf8.DecodeRune(b[s.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, faultMalformed
			}
			s.i += size
		}
	}
	return nil, false, faultMalformed
}

// escape checks the escape sequence at s.i and steps over it.
func (s *jsonScanner) escape() scanFault {
	if s.i+1 >= len(s.b) {
		return faultMalformed
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return faultNone
	case 'u':
	default:
		return faultMalformed
	}
	u, ok := hex4(s.b, s.i+2)
	if !ok {
		return faultMalformed
	}
	switch {
	case u >= 0xDC00 && u <= 0xDFFF:
		return faultSurrogate
	case u >= 0xD800 && u <= 0xDBFF:
		if s.i+7 < len(s.b) && s.b[s.i+6] == '\\' && s.b[s.i+7] == 'u' {
			if lo, ok := hex4(s.b, s.i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				s.i += 12
				return faultNone
			}
		}
		return faultSurrogate
	}
	s.i += 6
	return faultNone
}

// appendUnescaped appends the text a string's raw body stands for; raw
// was read by str (its escapes are well-formed, its surrogates paired).
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			start := i
			for i < len(raw) && raw[i] != '\\' {
				i++
			}
			dst = append(dst, raw[start:i]...)
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			u, _ := hex4(raw, i+2)
			i += 6
			if utf16.IsSurrogate(u) {
				lo, _ := hex4(raw, i+2)
				u = utf16.DecodeRune(u, lo)
				i += 6
			}
			dst = utf8.AppendRune(dst, u)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// hex4 reads the four hex digits of a \u escape at b[at:]: the host
// side's one (abi has its own: it compiles for guests and imports nothing
// of ours).
func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// StrictFault says why ReadStrictJSON refused a document.
type StrictFault uint8

const (
	// StrictMalformed: not JSON, or nested deeper than MaxStrictDepth
	// (encoding/json explains which).
	StrictMalformed StrictFault = iota + 1
	// StrictTrailing: something follows the document.
	StrictTrailing
	// StrictInvalidUTF8: the text is not valid UTF-8.
	StrictInvalidUTF8
	// StrictLoneSurrogate: an unpaired UTF-16 surrogate escape.
	StrictLoneSurrogate
	// StrictDuplicateKey: a key twice in one object.
	StrictDuplicateKey
	// StrictUnknownKey: a key the shape does not name.
	StrictUnknownKey
)

// MaxStrictDepth is the deepest nesting ReadStrictJSON reads.
const MaxStrictDepth = maxJSONDepth

// StrictJSONError is ReadStrictJSON's refusal. Path holds the keys of the
// objects leading to Key (array positions are not named); Offset is the
// byte offset of the fault where one is known (the escape of a lone
// surrogate, the repeated or unknown key).
type StrictJSONError struct {
	Fault  StrictFault
	Offset int
	Path   []string
	Key    string
}

func (e *StrictJSONError) Error() string {
	where := e.Where("document", e.Fault == StrictDuplicateKey)
	switch e.Fault {
	case StrictMalformed:
		return "malformed JSON"
	case StrictTrailing:
		return "data after the JSON document"
	case StrictInvalidUTF8:
		return "not valid UTF-8"
	case StrictLoneSurrogate:
		return fmt.Sprintf("unpaired UTF-16 surrogate escape at byte %d", e.Offset)
	case StrictDuplicateKey:
		return where + ": appears twice"
	case StrictUnknownKey:
		return fmt.Sprintf("unknown field %s in %s", strconv.Quote(e.Key), where)
	}
	return "strict JSON: fault " + strconv.Itoa(int(e.Fault))
}

// Where names the place of the fault under root: "root.call.arguments",
// and the key in it when withKey.
func (e *StrictJSONError) Where(root string, withKey bool) string {
	var b strings.Builder
	b.WriteString(root)
	for _, k := range e.Path {
		b.WriteByte('.')
		b.WriteString(k)
	}
	if withKey {
		b.WriteByte('.')
		b.WriteString(e.Key)
	}
	return b.String()
}

// ReadStrictJSON reads data as exactly one JSON document that every JSON
// reader reads the same way, in one pass that allocates nothing for a
// document that passes: text valid UTF-8 without unpaired surrogate
// escapes, no key twice in any object (compared decoded: "a" and "\u0061"
// are one key), nothing after the document, and, with a shape, every
// object key at any depth spelled exactly as the shape names it. A refusal
// is a *StrictJSONError. A bad text beats every other fault; an unknown
// key is reported only once the document is read in full, unless a later
// fault says more. A nil shape accepts any key.
func ReadStrictJSON(data []byte, shape *Shape) error {
	w := strictWalker{jsonScanner: jsonScanner{b: data}}
	f := w.document(shape)
	if f == faultNone && w.unknown == nil {
		return nil // read in full: the text is valid UTF-8 (str checks every string; grammar the rest)
	}
	if !utf8.Valid(data) {
		return &StrictJSONError{Fault: StrictInvalidUTF8, Offset: invalidUTF8Offset(data)}
	}
	if f == faultNone {
		return w.unknown
	}
	return w.fault(f)
}

// strictWalker walks one JSON document over the scanner. keys holds the
// keys of the objects open on the path (each object's from its mark), to
// find a repeated key without a map; path the keys leading to the value
// being read (for messages). The first ones live in the walker itself, so
// a small document needs no allocation (a slice over an array of the
// walker would move it to the heap).
type strictWalker struct {
	jsonScanner
	keys keyStack[[32][]byte]
	path keyStack[[16][]byte]
	// unescaped holds the decoded text of escaped keys.
	unescaped []byte
	// unknownStops makes an unknown key a fault at once (the policy
	// forms'); otherwise the first is kept in unknown and the walk goes on.
	unknownStops bool
	unknown      *StrictJSONError
	// faultAt, faultKey and faultPath locate a fault (the key of a
	// duplicate and the keys leading to its object, taken when it is met:
	// the walk unwinds the path as it returns).
	faultAt   int
	faultKey  []byte
	faultPath []string
}

// The walker's own faults beside the scanner's: a key twice, a key the
// shape does not name (when unknownStops), data after the document.
const (
	walkDuplicate scanFault = iota + 16
	walkUnknown
	walkTrailing
)

// maxKeysScanned is how many keys of one object are compared pairwise;
// past it, the object's keys go into a map (a hostile object of many
// keys costs linear time, not quadratic).
const maxKeysScanned = 32

// document reads one value surrounded by optional whitespace and nothing
// else.
func (w *strictWalker) document(s *Shape) scanFault {
	w.ws()
	if f := w.value(s, 0); f != faultNone {
		return f
	}
	w.ws()
	if w.i != len(w.b) {
		w.faultAt = w.i
		return walkTrailing
	}
	return faultNone
}

// fault turns a walk's fault into its error.
func (w *strictWalker) fault(f scanFault) *StrictJSONError {
	e := &StrictJSONError{Offset: w.faultAt}
	switch f {
	case faultSurrogate:
		e.Fault, e.Offset = StrictLoneSurrogate, w.i
	case walkDuplicate:
		e.Fault = StrictDuplicateKey
		e.Path, e.Key = w.faultPath, string(w.faultKey)
	case walkUnknown:
		return w.unknown
	case walkTrailing:
		e.Fault = StrictTrailing
	default:
		e.Fault, e.Offset = StrictMalformed, w.i
	}
	return e
}

func (w *strictWalker) pathNow() []string {
	path := make([]string, w.path.n)
	for i := range path {
		path[i] = string(w.path.at(i))
	}
	return path
}

func (w *strictWalker) value(s *Shape, depth int) scanFault {
	if depth > maxJSONDepth || w.i >= len(w.b) {
		return faultMalformed
	}
	switch c := w.b[w.i]; {
	case c == '{':
		return w.object(s, depth)
	case c == '[':
		return w.array(s, depth)
	case c == '"':
		_, _, f := w.str()
		return f
	case c == 't':
		return okOrMalformed(w.literal("true"))
	case c == 'f':
		return okOrMalformed(w.literal("false"))
	case c == 'n':
		return okOrMalformed(w.literal("null"))
	case c == '-' || (c >= '0' && c <= '9'):
		return okOrMalformed(w.number())
	}
	return faultMalformed
}

func okOrMalformed(ok bool) scanFault {
	if ok {
		return faultNone
	}
	return faultMalformed
}

func (w *strictWalker) array(s *Shape, depth int) scanFault {
	item := s.item()
	if w.enter(']') {
		return faultNone
	}
	for {
		w.ws()
		if f := w.value(item, depth+1); f != faultNone {
			return f
		}
		if done, f := w.after(']'); done || f != faultNone {
			return f
		}
	}
}

func (w *strictWalker) object(s *Shape, depth int) scanFault {
	if w.enter('}') {
		return faultNone
	}
	mark := w.keys.n
	defer w.keys.truncate(mark)
	var many map[string]struct{} // the keys past maxKeysScanned
	for {
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return faultMalformed
		}
		keyAt := w.i
		key, escaped, f := w.str()
		if f != faultNone {
			return f
		}
		if escaped {
			start := len(w.unescaped)
			w.unescaped = appendUnescaped(w.unescaped, key)
			key = w.unescaped[start:len(w.unescaped):len(w.unescaped)]
		}
		member, known := s.member(key)
		if !known && w.unknownStops {
			w.unknownAt(key, keyAt)
			return walkUnknown
		}
		if w.repeated(key, mark, &many) {
			w.faultAt, w.faultKey, w.faultPath = keyAt, key, w.pathNow()
			return walkDuplicate
		}
		if !known && w.unknown == nil {
			w.unknownAt(key, keyAt)
		}
		if !w.colon() {
			return faultMalformed
		}
		w.path.push(key)
		f = w.value(member, depth+1)
		w.path.truncate(w.path.n - 1)
		if f != faultNone {
			return f
		}
		if done, f := w.after('}'); done || f != faultNone {
			return f
		}
	}
}

// repeated reports whether key was read before in the object whose keys
// start at mark, and remembers it.
func (w *strictWalker) repeated(key []byte, mark int, many *map[string]struct{}) bool {
	if *many != nil {
		if _, dup := (*many)[string(key)]; dup {
			return true
		}
		(*many)[string(key)] = struct{}{}
		return false
	}
	for i := mark; i < w.keys.n; i++ {
		if string(w.keys.at(i)) == string(key) {
			return true
		}
	}
	w.keys.push(key)
	if w.keys.n-mark > maxKeysScanned {
		*many = make(map[string]struct{}, 2*maxKeysScanned)
		for i := mark; i < w.keys.n; i++ {
			(*many)[string(w.keys.at(i))] = struct{}{}
		}
	}
	return false
}

func (w *strictWalker) unknownAt(key []byte, at int) {
	w.unknown = &StrictJSONError{Fault: StrictUnknownKey, Offset: at, Path: w.pathNow(), Key: string(key)}
}

// keyStack is a stack of byte strings whose first len(A) entries are held
// in A itself (A is an array type: [N][]byte).
type keyStack[A interface{ ~[32][]byte | ~[16][]byte }] struct {
	first A
	more  [][]byte
	n     int
}

func (s *keyStack[A]) push(b []byte) {
	if s.n < len(s.first) {
		s.first[s.n] = b
	} else {
		s.more = append(s.more, b)
	}
	s.n++
}

func (s *keyStack[A]) at(i int) []byte {
	if i < len(s.first) {
		return s.first[i]
	}
	return s.more[i-len(s.first)]
}

func (s *keyStack[A]) truncate(n int) {
	s.n = n
	if over := n - len(s.first); over >= 0 {
		s.more = s.more[:over]
	} else {
		s.more = s.more[:0]
	}
}

// stream reads the values of data one after another until its end, as
// encoding/json's token stream does (CheckStrictJSON's reading: trailing
// data is the decoder's to refuse, but its keys are checked all the same).
func (w *strictWalker) stream(s *Shape) scanFault {
	for w.ws(); w.i < len(w.b); w.ws() {
		if f := w.value(s, 0); f != faultNone {
			return f
		}
	}
	return faultNone
}
