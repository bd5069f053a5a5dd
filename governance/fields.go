package governance

import (
	"slices"
	"strconv"
	"sync"

	"github.com/google/uuid"
)

// Fields is a record payload object built without a map: the controller
// writes six small objects of scalars a governed call, and a
// map[string]any for each cost a dozen allocations (the map, and every
// string or integer boxed into an interface). Set keys in any order; a key
// set twice keeps its last value, as a map would. AppendCanonical writes
// exactly the bytes Canonical writes for the equal map[string]any (tested
// byte for byte and fuzzed), so a payload's digest does not depend on how
// it was built.
type Fields struct {
	list []field
	// inline holds the fields of a payload of up to len(inline) keys (every
	// record payload of a governed call): one allocation a payload.
	inline [inlineFields]field
}

const inlineFields = 10

type fieldKind uint8

const (
	fieldString fieldKind = iota
	fieldInt
	fieldBool
	fieldUUID
	fieldStrings
	fieldValue // anything else Canonical approves, encoded by appendValue
)

type field struct {
	key  string
	kind fieldKind
	s    string
	n    int64
	id   uuid.UUID
	ss   []string
	v    any
}

// NewFields returns an empty payload with room for n fields. A payload
// released by its last user (Release) is reused: a governed call writes
// six, about 900 bytes each.
func NewFields(n int) *Fields {
	f := fieldsPool.Get().(*Fields)
	if n <= inlineFields {
		f.list = f.inline[:0]
	} else {
		f.list = make([]field, 0, n)
	}
	return f
}

var fieldsPool = sync.Pool{New: func() any { return new(Fields) }}

// Release hands f back for reuse by NewFields once its last user is done
// with it (the controller, once a record's payload is encoded): f must
// not be used after.
func (f *Fields) Release() {
	clear(f.list) // NB: keep no reference to the values set
	f.list = nil
	fieldsPool.Put(f)
}

// set keeps the list sorted by key as it goes (byte order, as Canonical
// sorts map keys), so encoding needs no sort: a payload's few keys are
// set once each, mostly in order, and an insertion moves at most the few
// fields after it.
func (f *Fields) set(nf field) *Fields {
	i := len(f.list)
	for i > 0 && f.list[i-1].key >= nf.key {
		i--
	}
	if i < len(f.list) && f.list[i].key == nf.key {
		f.list[i] = nf
		return f
	}
	f.list = slices.Insert(f.list, i, nf)
	return f
}

// String sets key to a string.
func (f *Fields) String(key, v string) *Fields {
	return f.set(field{key: key, kind: fieldString, s: v})
}

// Int sets key to an integer.
func (f *Fields) Int(key string, v int64) *Fields {
	return f.set(field{key: key, kind: fieldInt, n: v})
}

// Bool sets key to a boolean.
func (f *Fields) Bool(key string, v bool) *Fields {
	var n int64
	if v {
		n = 1
	}
	return f.set(field{key: key, kind: fieldBool, n: n})
}

// UUID sets key to a UUID, written as its canonical string.
func (f *Fields) UUID(key string, v uuid.UUID) *Fields {
	return f.set(field{key: key, kind: fieldUUID, id: v})
}

// Strings sets key to a list of strings, encoded as Value of the list
// is, without boxing it.
func (f *Fields) Strings(key string, v []string) *Fields {
	return f.set(field{key: key, kind: fieldStrings, ss: v})
}

// Value sets key to any value Canonical approves (a list, a nested
// object); it is encoded, and refused, exactly as inside a map.
func (f *Fields) Value(key string, v any) *Fields {
	return f.set(field{key: key, kind: fieldValue, v: v})
}

// Len is the number of distinct keys set.
func (f *Fields) Len() int { return len(f.list) }

// appendCanonical writes the object with its keys sorted as Canonical
// sorts map keys (byte order of the UTF-8 text): set keeps them so.
func (f *Fields) appendCanonical(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	var err error
	for i := range f.list {
		e := &f.list[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendString(dst, e.key); err != nil {
			return nil, err
		}
		dst = append(dst, ':')
		switch e.kind {
		case fieldString:
			dst, err = appendString(dst, e.s)
		case fieldInt:
			dst = strconv.AppendInt(dst, e.n, 10)
		case fieldBool:
			dst = strconv.AppendBool(dst, e.n != 0)
		case fieldUUID:
			dst = append(dst, '"')
			dst = AppendUUID(dst, e.id)
			dst = append(dst, '"')
		case fieldStrings:
			dst, err = appendStrings(dst, e.ss)
		default:
			dst, err = appendValue(dst, e.v)
		}
		if err != nil {
			return nil, at(err, "["+strconv.Quote(e.key)+"]")
		}
	}
	return append(dst, '}'), nil
}
