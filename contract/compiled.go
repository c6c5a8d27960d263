// Compiled checks: the documents' schemas turned, once, into checks that
// read a body's bytes directly. They only ever answer "valid" where
// kin-openapi would too; anything else (a violation, or a schema or body
// outside what they model) goes to kin-openapi, which stays the judge of
// every refusal and writes its messages.

package contract

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// verdict is a compiled check's answer. valid and invalid are exactly
// kin-openapi's (oneOf and not rely on both); unsure sends the value to
// kin-openapi.
type verdict uint8

const (
	valid verdict = iota
	invalid
	unsure
)

// Type bits of a compiled schema.
const (
	typeBoolean uint8 = 1 << iota
	typeInteger
	typeNumber
	typeString
	typeArray
	typeObject
	typeAny = 0xff
)

// check is one schema, compiled. It models kin-openapi's OpenAPI 3.0
// visitor (openapi3.Schema.visitJSON) keyword by keyword, for the keywords
// the documents use; a schema with any other is unsupported and every
// value it sees is unsure.
type check struct {
	unsupported bool
	empty       bool // openapi3.Schema.IsEmpty
	nullable    bool
	types       uint8
	enum        []enumValue

	// numbers
	min, max *float64
	format   string // looked up at check time, as kin does

	// strings
	minLength  uint64
	maxLength  *uint64
	pattern    *pattern
	formatFunc func(string) error // a document-scoped format (email, uri)

	// arrays
	minItems uint64
	maxItems *uint64
	items    *check

	// objects
	props      map[string]*check
	required   []string
	additional bool   // additionalProperties absent or true (or a schema)
	addSchema  *check // additionalProperties as a schema
	maxProps   *uint64

	not   *check
	oneOf []*check
	anyOf []*check
	allOf []*check
}

// enumValue is one allowed value: a string, or a number compared as
// float64 the way kin's equalJSONValues does.
type enumValue struct {
	isNum bool
	num   float64
	str   string
}

// compiler turns schemas into checks, each schema once.
type compiler struct {
	done    map[*openapi3.Schema]*check
	onStack map[*openapi3.Schema]bool
	// formats are the document-scoped string formats of the validation
	// options, which kin consults before its global ones.
	formats map[string]func(string) error
}

func newCompiler() *compiler {
	return &compiler{
		done:    map[*openapi3.Schema]*check{},
		onStack: map[*openapi3.Schema]bool{},
		formats: map[string]func(string) error{"email": checkEmail, "uri": checkURI},
	}
}

var unsupportedCheck = &check{unsupported: true}

func (c *compiler) ref(r *openapi3.SchemaRef) *check {
	if r == nil || r.Value == nil {
		return unsupportedCheck
	}
	return c.compile(r.Value)
}

func (c *compiler) refs(rs openapi3.SchemaRefs) []*check {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*check, len(rs))
	for i, r := range rs {
		out[i] = c.ref(r)
	}
	return out
}

func (c *compiler) compile(s *openapi3.Schema) *check {
	if k, ok := c.done[s]; ok {
		return k
	}
	if c.onStack[s] {
		// A recursive schema: kin's cycle rule (a schema met again on the
		// same value passes) is not modelled.
		return unsupportedCheck
	}
	c.onStack[s] = true
	defer delete(c.onStack, s)
	k := &check{empty: s.IsEmpty(), nullable: s.Nullable, types: typeAny}
	if s.Always != nil || s.ReadOnly || s.WriteOnly || s.AllowEmptyValue || s.UniqueItems ||
		s.ExclusiveMin.IsSet() || s.ExclusiveMax.IsSet() || s.MultipleOf != nil ||
		s.MinProps != 0 || s.Discriminator != nil || s.Const != nil ||
		len(s.PrefixItems) > 0 || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		len(s.PatternProperties) > 0 || len(s.DependentSchemas) > 0 || s.PropertyNames != nil ||
		s.UnevaluatedItems.Has != nil || s.UnevaluatedItems.Schema != nil ||
		s.UnevaluatedProperties.Has != nil || s.UnevaluatedProperties.Schema != nil ||
		s.If != nil || s.Then != nil || s.Else != nil || len(s.DependentRequired) > 0 ||
		strings.Contains(s.Pattern, `\u`) {
		return c.finish(s, unsupportedCheck)
	}
	if s.Type != nil {
		k.types = 0
		for _, t := range *s.Type {
			switch t {
			case openapi3.TypeBoolean:
				k.types |= typeBoolean
			case openapi3.TypeInteger:
				k.types |= typeInteger
			case openapi3.TypeNumber:
				k.types |= typeNumber
			case openapi3.TypeString:
				k.types |= typeString
			case openapi3.TypeArray:
				k.types |= typeArray
			case openapi3.TypeObject:
				k.types |= typeObject
			default: // "null" and the like: 3.1 forms
				return c.finish(s, unsupportedCheck)
			}
		}
	}
	for _, e := range s.Enum {
		switch v := e.(type) {
		case string:
			k.enum = append(k.enum, enumValue{str: v})
		case float64:
			k.enum = append(k.enum, enumValue{isNum: true, num: v})
		case int:
			k.enum = append(k.enum, enumValue{isNum: true, num: float64(v)})
		case int64:
			k.enum = append(k.enum, enumValue{isNum: true, num: float64(v)})
		default:
			return c.finish(s, unsupportedCheck)
		}
	}
	k.min, k.max, k.format = s.Min, s.Max, s.Format
	k.minLength, k.maxLength = s.MinLength, s.MaxLength
	k.formatFunc = c.formats[s.Format]
	if s.Pattern != "" {
		p, err := compilePattern(s.Pattern)
		if err != nil {
			return c.finish(s, unsupportedCheck)
		}
		k.pattern = p
	}
	k.minItems, k.maxItems = s.MinItems, s.MaxItems
	if s.Items != nil {
		k.items = c.ref(s.Items)
	}
	if len(s.Properties) > 0 {
		k.props = make(map[string]*check, len(s.Properties))
		for name, r := range s.Properties {
			k.props[name] = c.ref(r) // a readOnly or writeOnly one is unsupported
		}
	}
	k.required = s.Required
	k.maxProps = s.MaxProps
	k.additional = s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has
	if r := s.AdditionalProperties.Schema; r != nil {
		k.addSchema = c.ref(r)
	}
	if s.Not != nil {
		k.not = c.ref(s.Not)
	}
	k.oneOf, k.anyOf, k.allOf = c.refs(s.OneOf), c.refs(s.AnyOf), c.refs(s.AllOf)
	// One unsupported part makes the whole unsupported: keywords reach
	// across schemas (a readOnly property named in another schema's
	// required), so a part's verdict cannot stand alone.
	for _, sub := range k.children() {
		if sub.unsupported {
			return c.finish(s, unsupportedCheck)
		}
	}
	return c.finish(s, k)
}

// children are the checks k applies to its value or its parts.
func (k *check) children() []*check {
	out := make([]*check, 0, len(k.props)+len(k.oneOf)+len(k.anyOf)+len(k.allOf)+3)
	for _, p := range k.props {
		out = append(out, p)
	}
	out = append(out, k.oneOf...)
	out = append(out, k.anyOf...)
	out = append(out, k.allOf...)
	for _, p := range []*check{k.items, k.addSchema, k.not} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

func (c *compiler) finish(s *openapi3.Schema, k *check) *check {
	c.done[s] = k
	return k
}

// validate checks the value at node i of t.
func (k *check) validate(t *tree, i int) verdict {
	if k.unsupported {
		return unsure
	}
	n := &t.nodes[i]
	if n.kind == kindNull && k.nullable {
		return valid
	}
	if k.empty {
		if n.kind == kindNull {
			return invalid
		}
		return valid
	}
	// not, then oneOf, anyOf and allOf, then enum, then the type's own
	// keywords: kin's order, which matters for a null.
	if k.not != nil {
		switch k.not.validate(t, i) {
		case valid:
			return invalid
		case unsure:
			return unsure
		}
	}
	xof := false
	if len(k.oneOf) > 0 {
		matched := 0
		for _, b := range k.oneOf {
			switch b.validate(t, i) {
			case valid:
				matched++
			case unsure:
				return unsure
			}
		}
		if matched != 1 {
			return invalid
		}
		xof = true
	}
	if len(k.anyOf) > 0 {
		any, sure := false, true
		for _, b := range k.anyOf {
			switch b.validate(t, i) {
			case valid:
				any = true
			case unsure:
				sure = false
			}
			if any {
				break
			}
		}
		if !any {
			if !sure {
				return unsure
			}
			return invalid
		}
		xof = true
	}
	if len(k.allOf) > 0 {
		for _, b := range k.allOf {
			if v := b.validate(t, i); v != valid {
				return v
			}
		}
		xof = true
	}
	if xof && n.kind == kindNull {
		return valid
	}
	if len(k.enum) > 0 {
		if v := k.inEnum(t, n); v != valid {
			return v
		}
	}
	switch n.kind {
	case kindNull:
		return invalid // nullable was handled first
	case kindBool:
		return k.is(typeBoolean)
	case kindNumber:
		return k.number(t, n)
	case kindString:
		return k.string(t, n)
	case kindArray:
		return k.array(t, i)
	case kindObject:
		return k.object(t, i)
	}
	return unsure
}

func (k *check) is(bit uint8) verdict {
	if k.types&bit != 0 {
		return valid
	}
	return invalid
}

func (k *check) inEnum(t *tree, n *node) verdict {
	switch n.kind {
	case kindString:
		s, ok := t.str(n)
		if !ok {
			return unsure
		}
		for _, e := range k.enum {
			if !e.isNum && e.str == s {
				return valid
			}
		}
	case kindNumber:
		f, err := strconv.ParseFloat(view(t.raw(n)), 64)
		if err != nil {
			return unsure
		}
		for _, e := range k.enum {
			if e.isNum && e.num == f {
				return valid
			}
		}
	}
	return invalid
}

func (k *check) number(t *tree, n *node) verdict {
	// kin reads a JSON number as json.Number and then as float64.
	f, err := strconv.ParseFloat(view(t.raw(n)), 64)
	if err != nil {
		return unsure // past float64: kin refuses it with its own words
	}
	integer := k.types&typeInteger != 0 && k.types&typeNumber == 0
	if integer {
		if f != math.Trunc(f) {
			return invalid
		}
	} else if k.types&(typeInteger|typeNumber) == 0 {
		return invalid
	}
	if k.format != "" {
		if integer {
			if fv, ok := openapi3.SchemaIntegerFormats[k.format]; ok && integerFormat(fv, f) != nil {
				return invalid
			}
		} else if fv, ok := openapi3.SchemaNumberFormats[k.format]; ok && fv.Validate(f) != nil {
			return invalid
		}
	}
	if k.min != nil && !(*k.min <= f) {
		return invalid
	}
	if k.max != nil && !(*k.max >= f) {
		return invalid
	}
	return valid
}

// integerFormat is kin's validateIntegerFormat: a float64 outside the
// int64 range would wrap on conversion.
func integerFormat(v openapi3.IntegerFormatValidator, f float64) error {
	switch {
	case f == float64(math.MaxInt64):
		return v.Validate(math.MaxInt64)
	case f >= float64(math.MinInt64) && f < float64(math.MaxInt64):
		return v.Validate(int64(f))
	default:
		return errOutOfInt64
	}
}

var errOutOfInt64 = strconv.ErrRange

func (k *check) string(t *tree, n *node) verdict {
	if k.types&typeString == 0 {
		return invalid
	}
	s, ok := t.str(n)
	if !ok {
		return unsure
	}
	return k.stringKeywords(s)
}

// stringValue checks a string value met alone (a parameter's) where the
// check has no not, oneOf, anyOf or allOf: its enum, then its type's
// keywords, in kin's order.
func (k *check) stringValue(s string) verdict {
	if k.unsupported || k.not != nil || len(k.oneOf)+len(k.anyOf)+len(k.allOf) > 0 {
		return unsure
	}
	if k.empty {
		return valid
	}
	if len(k.enum) > 0 && !slices.ContainsFunc(k.enum, func(e enumValue) bool { return !e.isNum && e.str == s }) {
		return invalid
	}
	if k.types&typeString == 0 {
		return invalid
	}
	return k.stringKeywords(s)
}

// stringKeywords applies a string's own keywords.
func (k *check) stringKeywords(s string) verdict {
	if k.minLength != 0 || k.maxLength != nil {
		// kin counts UTF-16 code units this way (a rune of a Go string is
		// never a surrogate, so it is the rune count).
		length := uint64(0)
		for range s {
			length++
		}
		if k.minLength != 0 && length < k.minLength {
			return invalid
		}
		if k.maxLength != nil && length > *k.maxLength {
			return invalid
		}
	}
	if k.pattern != nil && !k.pattern.MatchString(s) {
		return invalid
	}
	if k.format != "" {
		if k.formatFunc != nil {
			if k.formatFunc(s) != nil {
				return invalid
			}
		} else if k.format == "date-time" && plainDateTime(s) {
			// Every time of every payment: spare it kin's regexp.
		} else if fv, ok := openapi3.SchemaStringFormats[k.format]; ok && fv.Validate(s) != nil {
			return invalid
		}
	}
	return valid
}

func (k *check) array(t *tree, i int) verdict {
	if k.types&typeArray == 0 {
		return invalid
	}
	n := &t.nodes[i]
	count := uint64(n.count)
	if k.minItems != 0 && count < k.minItems {
		return invalid
	}
	if k.maxItems != nil && count > *k.maxItems {
		return invalid
	}
	if k.items == nil {
		return valid
	}
	result := valid
	for j := i + 1; j < int(n.after); j = int(t.nodes[j].after) {
		switch k.items.validate(t, j) {
		case invalid:
			return invalid
		case unsure:
			result = unsure // a later item may still be a sure invalid
		}
	}
	return result
}

func (k *check) object(t *tree, i int) verdict {
	if k.types&typeObject == 0 {
		return invalid
	}
	n := &t.nodes[i]
	result := valid
	var seen uint64 // required names met, by index, for up to 64 of them
	if len(k.required) > 64 {
		return unsure
	}
	var count uint64
	for j := i + 1; j < int(n.after); {
		key := t.raw(&t.nodes[j])
		v := j + 1
		j = int(t.nodes[v].after)
		count++
		for r, name := range k.required {
			if name == string(key) {
				seen |= 1 << r
			}
		}
		var sub *check
		if p, ok := k.props[string(key)]; ok {
			sub = p
		} else if !k.additional {
			return invalid
		} else if k.addSchema != nil {
			sub = k.addSchema
		}
		if sub == nil {
			continue
		}
		switch sub.validate(t, v) {
		case invalid:
			return invalid
		case unsure:
			result = unsure
		}
	}
	if seen != 1<<len(k.required)-1 {
		return invalid
	}
	if k.maxProps != nil && count > *k.maxProps {
		// kin counts the keys of the decoded map, where a repeated key is
		// one: past the bound, it judges.
		return unsure
	}
	return result
}

// compileChecks compiles the schema of every JSON request and response
// body of the document, and indexes its responses by exact status.
func (d *Document) compileChecks() {
	d.checks = map[*openapi3.Schema]*check{}
	d.responses = map[responseKey]*openapi3.Response{}
	d.jsonChecks = map[responseKey]*check{}
	d.jsonBodies = map[*openapi3.Operation]*check{}
	if d.doc.IsOpenAPI31OrLater() {
		return // kin validates 3.1 with its JSON Schema 2020 validator
	}
	c := newCompiler()
	content := func(ct openapi3.Content) {
		for _, mt := range ct {
			if mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
				d.checks[mt.Schema.Value] = c.compile(mt.Schema.Value)
			}
		}
	}
	for _, p := range d.doc.Paths.InMatchingOrder() {
		for _, op := range d.doc.Paths.Value(p).Operations() {
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				content(rb.Value.Content)
				if k := d.contentCheck(rb.Value.Content, "application/json"); k != nil {
					d.jsonBodies[op] = k
				}
			}
			if op.Responses == nil {
				continue
			}
			for code, ref := range op.Responses.Map() {
				n, err := strconv.Atoi(code)
				if err != nil || ref == nil || ref.Value == nil || strconv.Itoa(n) != code {
					continue // "default" and "2XX" are kin's to resolve
				}
				d.responses[responseKey{op, n}] = ref.Value
				content(ref.Value.Content)
			}
		}
	}
	// The media type every answer of ours and nearly every request
	// carries, looked up once.
	for key, resp := range d.responses {
		if k := d.contentCheck(resp.Content, "application/json"); k != nil && len(resp.Headers) == 0 {
			d.jsonChecks[key] = k
		}
	}
}

// bodyValid reports whether a compiled check finds a request body valid
// where kin's ValidateRequestBody would. False is no verdict.
func (d *Document) bodyValid(rt *Route, contentType string, body []byte, parsed *tree) bool {
	rb := rt.Operation.RequestBody
	if rb == nil || rb.Value == nil || len(body) == 0 {
		return false
	}
	if contentType == "application/json" {
		k := d.jsonBodies[rt.Operation] // contentCheck's answer, found at Load
		if k != nil && parsed != nil {
			return k.validate(parsed, 0) == valid
		}
		return k != nil && k.validBody(body)
	}
	return d.contentValid(rb.Value.Content, contentType, body)
}

// responseValid reports whether a compiled check finds an answer valid
// where kin's ValidateResponse would. False is no verdict.
func (d *Document) responseValid(rt *Route, status int, header http.Header, body []byte) bool {
	k := d.responseCheck(rt, status, header)
	return k != nil && k.validBody(body)
}

// responseCheck is the compiled check of an answer's body where kin's
// ValidateResponse would judge the answer by its body alone, or nil.
func (d *Document) responseCheck(rt *Route, status int, header http.Header) *check {
	key := responseKey{rt.Operation, status}
	if ct := header.Get("Content-Type"); ct == "application/json" {
		return d.jsonChecks[key] // contentCheck's answer, found at Load
	}
	resp := d.responses[key]
	if resp == nil || len(resp.Headers) > 0 {
		return nil // declared headers are kin's to check
	}
	return d.contentCheck(resp.Content, header.Get("Content-Type"))
}

// contentValid runs the compiled check of the media type kin would pick
// for contentType, when that is JSON decoded the way kin decodes it.
func (d *Document) contentValid(content openapi3.Content, contentType string, body []byte) bool {
	k := d.contentCheck(content, contentType)
	return k != nil && k.validBody(body)
}

// contentCheck is the compiled check of the media type kin would pick for
// contentType, when that is JSON decoded the way kin decodes it, or nil.
func (d *Document) contentCheck(content openapi3.Content, contentType string) *check {
	if len(content) == 0 {
		return nil
	}
	mt := content.Get(contentType)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || len(mt.Encoding) > 0 {
		return nil
	}
	// kin's decodeBody: parameters dropped, case folded, then its JSON
	// decoder for application/json.
	base, _, _ := strings.Cut(contentType, ";")
	if strings.ToLower(strings.TrimSpace(base)) != "application/json" {
		return nil
	}
	if s := mt.Schema.Value; s.Type.Is(openapi3.TypeString) && s.Format == "binary" {
		return nil
	}
	k := d.checks[mt.Schema.Value]
	if k == nil || k.unsupported {
		return nil
	}
	return k
}

// validBody reports whether k finds body valid. False is no verdict.
func (k *check) validBody(body []byte) bool {
	t, ok := parseTree(body)
	if !ok {
		return false
	}
	v := k.validate(t, 0)
	t.release()
	return v == valid
}
