// The built form of a document: kin-openapi's decoded values, field by
// field, so that a start rebuilds them in one pass instead of decoding JSON.

package prepared

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// Build writes the prepared JSON data decoded, its references not yet
// resolved, as a stream of the exported fields of the values kin-openapi's
// decoder makes, in the order of their types' declarations; Rebuild reads
// it back. kin decodes every level of a document twice (once for its
// fields, once for extensions), which was most of what a start cost; the
// stream is read once and names no field. Build fails on anything only
// kin's decoder can set, so a rebuilt document is never different
// silently; the contract tests compare it resolved with the YAML's.
func Build(data []byte) ([]byte, error) {
	doc := &openapi3.T{}
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, fmt.Errorf("build a document: %w", err)
	}
	w := &builtWriter{}
	w.value(reflect.ValueOf(doc).Elem())
	if w.err != nil {
		return nil, fmt.Errorf("build a document: %w", w.err)
	}
	return w.b, nil
}

// Rebuild is Build undone: the document as kin's decoder would make it,
// to be resolved by kin's loader.
func Rebuild(built []byte) (doc *openapi3.T, err error) {
	r := &builtReader{b: built}
	defer func() {
		// A short or corrupt stream makes the reader index past its end
		// or set a value of the wrong type.
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("rebuild a document: corrupt at byte %d: %v", r.off, p)
		}
	}()
	doc = &openapi3.T{}
	r.value(reflect.ValueOf(doc).Elem())
	if r.off != len(r.b) {
		return nil, fmt.Errorf("rebuild a document: %d bytes left over", len(r.b)-r.off)
	}
	return doc, nil
}

// Kin's map-like types keep their entries unexported: the stream carries
// them as a map, and Rebuild fills them through Set, as kin's decoder does.
var (
	pathsType     = reflect.TypeFor[openapi3.Paths]()
	responsesType = reflect.TypeFor[openapi3.Responses]()
	callbackType  = reflect.TypeFor[openapi3.Callback]()
)

func isMapLike(t reflect.Type) bool {
	return t == pathsType || t == responsesType || t == callbackType
}

// Tags of the dynamic values an interface field holds: what
// encoding/json makes of any JSON.
const (
	tagNil byte = iota
	tagString
	tagFloat
	tagBool
	tagObject
	tagArray
)

type builtWriter struct {
	b   []byte
	err error
}

func (w *builtWriter) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *builtWriter) uint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }

func (w *builtWriter) string(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// value writes v; nil maps, slices and pointers are told from empty ones,
// since reflect.DeepEqual (and kin, here and there) tells them apart.
func (w *builtWriter) value(v reflect.Value) {
	t := v.Type()
	switch v.Kind() {
	case reflect.Interface:
		w.dynamic(v)
	case reflect.Pointer:
		if v.IsNil() {
			w.uint(0)
			return
		}
		w.uint(1)
		w.value(v.Elem())
	case reflect.Struct:
		if isMapLike(t) {
			w.mapLike(v)
			return
		}
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			if fv.IsZero() {
				continue
			}
			if !f.IsExported() {
				w.fail("%s.%s set, which only kin's decoder can set", t, f.Name)
				continue
			}
			w.uint(uint64(i + 1))
			w.value(fv)
		}
		w.uint(0)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			w.fail("a map keyed by %s", t.Key())
			return
		}
		if v.IsNil() {
			w.uint(0)
			return
		}
		w.uint(uint64(v.Len() + 1))
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return compareStrings(a.String(), b.String()) })
		for _, k := range keys {
			w.string(k.String())
			w.value(v.MapIndex(k))
		}
	case reflect.Slice:
		if v.IsNil() {
			w.uint(0)
			return
		}
		w.uint(uint64(v.Len() + 1))
		for i := range v.Len() {
			w.value(v.Index(i))
		}
	case reflect.String:
		w.string(v.String())
	case reflect.Bool:
		w.b = append(w.b, boolByte(v.Bool()))
	case reflect.Float64:
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v.Float()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.b = binary.AppendVarint(w.b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.uint(v.Uint())
	default:
		w.fail("a value of kind %s (%s)", v.Kind(), t)
	}
}

func (w *builtWriter) dynamic(v reflect.Value) {
	if v.IsNil() {
		w.b = append(w.b, tagNil)
		return
	}
	// Kinds and types, not Interface: values under kin's unexported
	// entries can be read but not taken out.
	e := v.Elem()
	switch e.Type() {
	case reflect.TypeFor[string]():
		w.b = append(w.b, tagString)
		w.string(e.String())
	case reflect.TypeFor[float64]():
		w.b = append(w.b, tagFloat)
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(e.Float()))
	case reflect.TypeFor[bool]():
		w.b = append(w.b, tagBool, boolByte(e.Bool()))
	case reflect.TypeFor[map[string]any]():
		w.b = append(w.b, tagObject)
		w.value(e)
	case reflect.TypeFor[[]any]():
		w.b = append(w.b, tagArray)
		w.value(e)
	default:
		w.fail("an interface holding %s", e.Type())
	}
}

// mapLike writes one of kin's map-like types: whether its entries are
// nil or made, its extensions, and its entries.
func (w *builtWriter) mapLike(v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name != "m" && f.Name != "Extensions" && !v.Field(i).IsZero() {
			w.fail("%s.%s set, which the built form does not carry", t, f.Name)
		}
	}
	w.value(v.FieldByName("Extensions"))
	w.value(v.FieldByName("m")) // read, never set: Rebuild goes through Set
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type builtReader struct {
	b   []byte
	off int
}

var errShort = errors.New("the stream ends early")

func (r *builtReader) uint() uint64 {
	n, size := binary.Uvarint(r.b[r.off:])
	if size <= 0 {
		panic(errShort)
	}
	r.off += size
	return n
}

func (r *builtReader) byte() byte {
	c := r.b[r.off]
	r.off++
	return c
}

func (r *builtReader) string() string {
	n := int(r.uint())
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

func (r *builtReader) float() float64 {
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.off:]))
	r.off += 8
	return f
}

// value reads into v, settable and zero, what builtWriter.value wrote.
func (r *builtReader) value(v reflect.Value) {
	t := v.Type()
	switch v.Kind() {
	case reflect.Interface:
		r.dynamic(v)
	case reflect.Pointer:
		if r.uint() == 0 {
			return
		}
		p := reflect.New(t.Elem())
		r.value(p.Elem())
		v.Set(p)
	case reflect.Struct:
		if isMapLike(t) {
			r.mapLike(v)
			return
		}
		for i := r.uint(); i != 0; i = r.uint() {
			r.value(v.Field(int(i - 1)))
		}
	case reflect.Map:
		n := int(r.uint())
		if n == 0 {
			return
		}
		m := reflect.MakeMapWithSize(t, n-1)
		for range n - 1 {
			k := reflect.New(t.Key()).Elem()
			k.SetString(r.string())
			e := reflect.New(t.Elem()).Elem()
			r.value(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Slice:
		n := int(r.uint())
		if n == 0 {
			return
		}
		s := reflect.MakeSlice(t, n-1, n-1)
		for i := range n - 1 {
			r.value(s.Index(i))
		}
		v.Set(s)
	case reflect.String:
		v.SetString(r.string())
	case reflect.Bool:
		v.SetBool(r.byte() != 0)
	case reflect.Float64:
		v.SetFloat(r.float())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, size := binary.Varint(r.b[r.off:])
		if size <= 0 {
			panic(errShort)
		}
		r.off += size
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.uint())
	default:
		panic(fmt.Sprintf("a value of kind %s (%s)", v.Kind(), t))
	}
}

func (r *builtReader) dynamic(v reflect.Value) {
	switch tag := r.byte(); tag {
	case tagNil:
	case tagString:
		v.Set(reflect.ValueOf(r.string()))
	case tagFloat:
		v.Set(reflect.ValueOf(r.float()))
	case tagBool:
		v.Set(reflect.ValueOf(r.byte() != 0))
	case tagObject:
		var m map[string]any
		mv := reflect.ValueOf(&m).Elem()
		r.value(mv)
		v.Set(mv)
	case tagArray:
		var s []any
		sv := reflect.ValueOf(&s).Elem()
		r.value(sv)
		v.Set(sv)
	default:
		panic(fmt.Sprintf("unknown tag %d", tag))
	}
}

// mapLike reads one of kin's map-like types into v, made as kin's
// constructors make it and filled through Set, as kin's decoder does.
func (r *builtReader) mapLike(v reflect.Value) {
	var ext map[string]any
	r.value(reflect.ValueOf(&ext).Elem())
	n := int(r.uint())
	switch p := v.Addr().Interface().(type) {
	case *openapi3.Paths:
		if n > 0 {
			*p = *openapi3.NewPathsWithCapacity(n - 1)
		}
		p.Extensions = ext
		readEntries(r, n, p.Set)
	case *openapi3.Responses:
		if n > 0 {
			*p = *openapi3.NewResponsesWithCapacity(n - 1)
		}
		p.Extensions = ext
		readEntries(r, n, p.Set)
	case *openapi3.Callback:
		if n > 0 {
			*p = *openapi3.NewCallbackWithCapacity(n - 1)
		}
		p.Extensions = ext
		readEntries(r, n, p.Set)
	}
}

// readEntries reads the n-1 keyed entries of a map-like value into set.
func readEntries[T any](r *builtReader, n int, set func(string, T)) {
	for range n - 1 {
		k := r.string()
		var item T
		r.value(reflect.ValueOf(&item).Elem())
		set(k, item)
	}
}
