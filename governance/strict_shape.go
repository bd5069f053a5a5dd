package governance

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Shape is what ReadStrictJSON accepts where: the exact keys of an
// object, the shape of an array's items or a map's values. A nil *Shape,
// or FreeShape, accepts any JSON there (keys still unrepeated, text still
// strict).
type Shape struct {
	// Fields are an object's members by exact key; nil for a shape that
	// is not an object with fixed keys.
	Fields map[string]*Shape
	// Elem is the shape of an array's items and of a map's values.
	Elem *Shape
	// Free accepts any JSON here.
	Free bool
}

// FreeShape accepts any JSON.
var FreeShape = &Shape{Free: true}

// member returns the shape of the member key of an object of shape s,
// and whether s names key.
func (s *Shape) member(key []byte) (*Shape, bool) {
	switch {
	case s == nil || s.Free:
		return nil, true
	case s.Fields != nil:
		f, ok := s.Fields[string(key)]
		return f, ok
	}
	return s.Elem, true
}

// item returns the shape of an array's items.
func (s *Shape) item() *Shape {
	if s == nil || s.Free {
		return nil
	}
	return s.Elem
}

// KeysAtAnyDepth is the shape of a document whose object keys, at every
// depth, are each one of keys.
func KeysAtAnyDepth(keys []string) *Shape {
	s := &Shape{Fields: make(map[string]*Shape, len(keys))}
	for _, k := range keys {
		s.Fields[k] = s
	}
	s.Elem = s
	return s
}

var shapes sync.Map // reflect.Type → *Shape

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// ShapeOf returns the shape encoding/json decodes into t, from its json
// tags (cached per type): a struct's members by their exact JSON names
// (embedded structs' promoted), slices', arrays' and maps' items, and any
// JSON for json.RawMessage, interfaces and types with their own
// UnmarshalJSON.
func ShapeOf(t reflect.Type) *Shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*Shape)
	}
	s := buildShape(t, map[reflect.Type]*Shape{})
	shapes.Store(t, s)
	return s
}

func buildShape(t reflect.Type, building map[reflect.Type]*Shape) *Shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := building[t]; ok {
		return s // a recursive type: the shape being built
	}
	if t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) || t.Kind() == reflect.Interface {
		return FreeShape
	}
	s := &Shape{}
	building[t] = s
	switch t.Kind() {
	case reflect.Struct:
		s.Fields = map[string]*Shape{}
		addFields(s.Fields, t, building)
	case reflect.Slice, reflect.Array, reflect.Map:
		s.Elem = buildShape(t.Elem(), building)
	}
	return s
}

// addFields adds a struct's JSON members (embedded structs' promoted).
func addFields(into map[string]*Shape, t reflect.Type, building map[reflect.Type]*Shape) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				addFields(into, et, building)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		into[name] = buildShape(f.Type, building)
	}
}
