// Create requests built from openapi.yaml the way example-driven tools
// build them (Postman's import, contract-test generators, mock clients):
// the example where there is one, else a value made from the schema.
// paymock must accept every one.

package interop

import (
	"encoding/json"
	"maps"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// sampler makes values from schemas: the schema's example, else its
// default, else its first enum value, else the smallest value its type and
// bounds allow (a string matching its pattern, an object with every
// property).
type sampler struct {
	// requiredOnly leaves out properties that are not required, as tools
	// do for a "minimal" request.
	requiredOnly bool
	// noExamples makes every value from the schema alone.
	noExamples bool
}

// object samples an object schema, leaving out the properties in omit and
// adding those in require to the required ones.
func (sm sampler) object(s *openapi3.Schema, omit, require []string) map[string]any {
	out := map[string]any{}
	required := slices.Concat(s.Required, require)
	for _, name := range sortedKeys(s.Properties) {
		if slices.Contains(omit, name) || sm.requiredOnly && !slices.Contains(required, name) {
			continue
		}
		out[name] = sm.value(s.Properties[name].Value)
	}
	return out
}

func (sm sampler) value(s *openapi3.Schema) any {
	switch {
	case s.Example != nil && !sm.noExamples:
		return s.Example
	case s.Default != nil:
		return s.Default
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.OneOf) > 0:
		return sm.value(s.OneOf[0].Value)
	case len(s.AllOf) > 0:
		// One object meets every schema of the allOf (CreatedPayment: a
		// Payment that carries cancel_url): each one's properties, with
		// what any of them requires.
		var required []string
		for _, m := range s.AllOf {
			required = append(required, m.Value.Required...)
		}
		out := map[string]any{}
		for _, m := range s.AllOf {
			maps.Copy(out, sm.object(m.Value, nil, required))
		}
		return out
	}
	switch {
	case s.Type.Is("object"):
		return sm.object(s, nil, nil)
	case s.Type.Is("array"):
		if s.Items == nil {
			return []any{}
		}
		return []any{sm.value(s.Items.Value)}
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return *s.Min
		}
		return 0
	case s.Type.Is("boolean"):
		return true
	case s.Type.Is("string"):
		return sampleString(s)
	}
	return nil
}

// sampleString is the value a generator gives a string: by format, by
// pattern, or a placeholder within the length bounds.
func sampleString(s *openapi3.Schema) string {
	switch s.Format {
	case "email":
		return "user@example.com"
	case "uri":
		return "https://example.com/"
	case "date-time":
		return "2026-11-21T12:00:00Z"
	}
	if s.Pattern != "" {
		if re, err := syntax.Parse(s.Pattern, syntax.Perl); err == nil {
			var b strings.Builder
			shortestMatch(&b, re.Simplify())
			return b.String()
		}
	}
	v := "string"
	for uint64(len(v)) < s.MinLength {
		v += "s"
	}
	if s.MaxLength != nil && uint64(len(v)) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}

// shortestMatch writes the shortest string re matches, taking the first
// alternative and the first printable letter or digit of every class, as
// pattern-driven generators do.
func shortestMatch(b *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(firstPrintable(re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture:
		shortestMatch(b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			shortestMatch(b, sub)
		}
	case syntax.OpAlternate:
		shortestMatch(b, re.Sub[0])
	case syntax.OpPlus:
		shortestMatch(b, re.Sub[0])
	case syntax.OpRepeat:
		for range re.Min {
			shortestMatch(b, re.Sub[0])
		}
	}
	// Star, quest, anchors and empty match nothing at their shortest.
}

// firstPrintable picks from a class's ranges a letter or digit, else any
// printable character.
func firstPrintable(ranges []rune) rune {
	for _, want := range []func(rune) bool{unicode.IsLetter, unicode.IsDigit, unicode.IsPrint} {
		for i := 0; i+1 < len(ranges); i += 2 {
			for r := ranges[i]; r <= ranges[i+1] && r < 0x250; r++ {
				if r > ' ' && want(r) {
					return r
				}
			}
		}
	}
	return 'a'
}

// generatedCreates are the create requests a generator builds from the
// document: for each field of CreatePaymentRequest's exactly-one rule, one
// with every property but the other fields of the rule and one with only
// the required ones.
func generatedCreates(t *testing.T, doc *openapi3.T) map[string]map[string]any {
	t.Helper()
	schema := doc.Paths.Value("/api/v1/payments").Post.RequestBody.Value.Content["application/json"].Schema.Value
	choice := choiceOf(schema)
	if choice == nil {
		t.Fatal("CreatePaymentRequest states no exactly-one rule: the document no longer says that mcc and account_id exclude each other")
	}
	out := map[string]map[string]any{}
	for _, name := range choice {
		omit := slices.DeleteFunc(slices.Clone(choice), func(n string) bool { return n == name })
		out["every field, "+name] = sampler{}.object(schema, omit, []string{name})
		out["required fields, "+name] = sampler{requiredOnly: true}.object(schema, omit, []string{name})
	}
	// From the schema alone: what a generator makes of a document without
	// examples. Only the mcc choice can work so: an account_id must name
	// an active account, which no schema can say.
	if slices.Contains(choice, "mcc") {
		out["required fields from the schema alone, mcc"] = sampler{requiredOnly: true, noExamples: true}.object(schema, []string{"account_id"}, []string{"mcc"})
	}
	return out
}

// choiceOf reads the fields of which exactly one is given from a schema
// that states it as a not: not all of them at once (the first branch of
// its anyOf), and not none of them (the second: a not of an anyOf of one
// required field each). It is nil for a schema without that rule.
func choiceOf(s *openapi3.Schema) []string {
	if s.Not == nil || len(s.Not.Value.AnyOf) != 2 {
		return nil
	}
	all, neither := s.Not.Value.AnyOf[0].Value, s.Not.Value.AnyOf[1].Value
	if neither.Not == nil || len(neither.Not.Value.AnyOf) != len(all.Required) {
		return nil
	}
	for i, b := range neither.Not.Value.AnyOf {
		if !slices.Equal(b.Value.Required, all.Required[i:i+1]) {
			return nil
		}
	}
	return all.Required
}

func TestGenerated_CreatesAreAllAccepted(t *testing.T) {
	srv := startServer(t)
	doc := loadDoc(t, "openapi.yaml")
	creates := generatedCreates(t, doc)
	for _, name := range sortedKeys(creates) {
		t.Run(name, func(t *testing.T) {
			body := creates[name]
			c := do(t, "POST", srv.URL+"/api/v1/payments", token(t), body)
			if c.status != 201 {
				sent, _ := json.Marshal(body)
				t.Errorf("status %d, want 201\nsent %s\ngot %s", c.status, sent, c.body)
			}
		})
	}
	if len(creates) < 5 {
		t.Errorf("%d requests generated, want one full and one minimal per field of the choice, and one from the schema alone", len(creates))
	}
}

func TestGenerated_SchemaFirstValuesMatchTheirSchemas(t *testing.T) {
	needInterop(t)
	// The generator itself must make what the schemas say, or the test
	// above proves nothing: every value it makes, example or not, passes
	// kin-openapi's check of its own schema.
	for _, name := range documents {
		doc := loadDoc(t, name)
		for _, sname := range sortedKeys(doc.Components.Schemas) {
			s := doc.Components.Schemas[sname].Value
			for _, sm := range []sampler{{}, {requiredOnly: true}, {noExamples: true}} {
				v := sm.value(s)
				if choice := choiceOf(s); choice != nil {
					v = sm.object(s, choice[1:], choice[:1])
				}
				if err := s.VisitJSON(v, schemaOptions(true)...); err != nil {
					b, _ := json.Marshal(v)
					t.Errorf("%s %s: generated %s does not match its schema: %v", name, sname, b, err)
				}
			}
		}
	}
}
