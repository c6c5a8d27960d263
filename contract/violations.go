// Violations: kin-openapi's errors turned into dotted-path violations in
// the user's words.

package contract

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/paymock/paymock"
)

// Violations turns kin-openapi's errors into dotted-path violations with
// readable messages, never its "Schema:/Value:" dumps. They are sorted by
// param so the same request always gets the same answer.
func Violations(err error) []paymock.Violation {
	return tidy(violationsAt(err, "", nil))
}

// tidy sorts violations by param and drops repeats.
func tidy(out []paymock.Violation) []paymock.Violation {
	slices.SortStableFunc(out, func(a, b paymock.Violation) int { return strings.Compare(a.Param, b.Param) })
	// Two rules of one field can fail in the same words (a uri's pattern
	// and its format): a person needs to read them once.
	if len(out) < 2 {
		return out
	}
	seen := make(map[paymock.Violation]bool, len(out))
	kept := out[:0]
	for _, v := range out {
		if !seen[v] {
			seen[v] = true
			kept = append(kept, v)
		}
	}
	return kept
}

// violationsAt is Violations, unsorted, of an error about the value at the
// dotted path base ("" for a whole body). blanks, when not nil, gets the
// param of every value found wrong that is an empty string, whatever the
// rule it broke: the request check words those of required fields as
// missing (blankAsMissing).
func violationsAt(err error, base string, blanks map[string]bool) []paymock.Violation {
	var out []paymock.Violation
	var walk func(err error, param string)
	walk = func(err error, param string) {
		// A type switch, not errors.As: a RequestError unwraps to its
		// inner errors, and its Parameter must not be skipped.
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, inner := range e {
				walk(inner, param)
			}
		case *openapi3filter.RequestError:
			p := param
			if e.Parameter != nil {
				p = e.Parameter.Name
			}
			switch {
			case e.Err == nil:
				out = append(out, paymock.Violation{Param: p, Code: "parameter_invalid", Message: strings.TrimSpace(p + " " + e.Reason)})
			case errors.Is(e.Err, openapi3filter.ErrInvalidRequired):
				out = append(out, paymock.Violation{Param: p, Code: "parameter_missing", Message: p + " is required"})
			default:
				walk(e.Err, p)
			}
		case *openapi3.SchemaError:
			if e.SchemaField == "allOf" && e.Origin != nil {
				// Every schema of an allOf speaks of the same value (a
				// created payment is a Payment that carries cancel_url):
				// what each found, at its own path below the value, says
				// more than "doesn't match all schemas".
				walk(e.Origin, strings.Join(append(nonEmpty(param), e.JSONPointer()...), "."))
				return
			}
			if e.SchemaField == "not" {
				if vs, ok := choiceViolations(e, param, blanks); ok {
					out = append(out, vs...)
					return
				}
			}
			v := schemaViolation(e, param)
			if s, ok := e.Value.(string); ok && s == "" && blanks != nil {
				blanks[v.Param] = true
			}
			out = append(out, v)
		case *openapi3filter.ParseError:
			out = append(out, paymock.Violation{Param: param, Code: "parameter_invalid", Message: param + " " + parseReason(e)})
		default:
			if next := errors.Unwrap(err); next != nil {
				walk(next, param)
				return
			}
			out = append(out, paymock.Violation{Param: param, Code: "parameter_invalid", Message: strings.TrimSpace(param + " is invalid")})
		}
	}
	walk(err, base)
	return out
}

// nonEmpty is the path of the dotted param p: none for "".
func nonEmpty(p string) []string {
	if p == "" {
		return nil
	}
	return []string{p}
}

// unsupported finds the name kin gives an unknown property in its reason.
var unsupported = regexp.MustCompile(`^property "(.*)" is unsupported$`)

func parseReason(pe *openapi3filter.ParseError) string {
	var inner *openapi3filter.ParseError
	if errors.As(pe.Cause, &inner) && inner != pe {
		return parseReason(inner)
	}
	switch {
	case strings.Contains(pe.Reason, "integer"):
		return "must be an integer"
	case strings.Contains(pe.Reason, "number"):
		return "must be a number"
	case strings.Contains(pe.Reason, "boolean"):
		return "must be a boolean"
	}
	return "is not a valid value"
}

// schemaViolation words one schema failure for a person; base is the
// parameter the schema belongs to ("" for a body).
func schemaViolation(se *openapi3.SchemaError, base string) paymock.Violation {
	path := se.JSONPointer()
	field := se.SchemaField
	if m := unsupported.FindStringSubmatch(se.Reason); m != nil {
		path, field = append(path, m[1]), "additionalProperties"
	}
	if base != "" {
		path = append([]string{base}, path...)
	}
	param := strings.Join(path, ".")
	name := param
	if name == "" {
		name = "the request body"
	}
	s := se.Schema
	v := paymock.Violation{Param: param, Code: "parameter_invalid"}
	switch field {
	case "required":
		v.Code, v.Message = "parameter_missing", name+" is required"
	case "additionalProperties":
		v.Code, v.Message = "parameter_unknown", name+" is not a known field"
	case "type":
		v.Message = name + " must be " + article(s.Type.Slice())
		if s.Nullable {
			v.Message += " or null"
		}
	case "enum":
		v.Message = name + " must be one of " + joinEnum(s.Enum)
	case "nullable":
		v.Message = name + " must not be null"
		if s.Type != nil && len(s.Type.Slice()) > 0 {
			v.Message += ": it must be " + article(s.Type.Slice())
		}
	case "exclusiveMinimum":
		v.Message = fmt.Sprintf("%s must be greater than %v", name, num(s.Min))
	case "exclusiveMaximum":
		v.Message = fmt.Sprintf("%s must be less than %v", name, num(s.Max))
	case "minimum":
		if b := s.ExclusiveMin.Bool; b != nil && *b {
			v.Message = fmt.Sprintf("%s must be greater than %v", name, num(s.Min))
		} else {
			v.Message = fmt.Sprintf("%s must be at least %v", name, num(s.Min))
		}
	case "maximum":
		if b := s.ExclusiveMax.Bool; b != nil && *b {
			v.Message = fmt.Sprintf("%s must be less than %v", name, num(s.Max))
		} else {
			v.Message = fmt.Sprintf("%s must be at most %v", name, num(s.Max))
		}
	case "minLength":
		if s.MinLength == 1 {
			v.Message = name + " must not be empty"
		} else {
			v.Message = fmt.Sprintf("%s must be at least %d characters", name, s.MinLength)
		}
	case "maxLength":
		v.Message = fmt.Sprintf("%s must be at most %d characters", name, *s.MaxLength)
	case "pattern":
		// A regular expression is no message for a person: the document
		// words each pattern in x-pattern-message.
		if words, ok := s.Extensions["x-pattern-message"].(string); ok && words != "" {
			v.Message = name + " " + words
		} else {
			v.Message = name + " is not in the expected form"
		}
	case "oneOf":
		v.Message = name + " must be " + oneOfTypes(s)
	case "format":
		v.Message = name + " " + formatReason(s)
	case "maxItems":
		v.Message = fmt.Sprintf("%s must have at most %d items", name, *s.MaxItems)
	case "not":
		// kin tries a schema's not before its type: a body that is no
		// object fails the not that refuses objects of a wrong shape.
		if _, isObject := se.Value.(map[string]any); !isObject && s.Type.Is("object") {
			v.Message = name + " must be an object"
		} else {
			v.Message = name + " is not in a form the contract allows"
		}
	default:
		// kin's Reason never holds the value (so no card data), only the rule.
		v.Message = name + ": " + se.Reason
		if se.Reason == "" {
			v.Message = name + " is not valid"
		}
	}
	return v
}

func formatReason(s *openapi3.Schema) string {
	switch s.Format {
	case "email":
		return errNotEmail.Error()
	case "uri":
		// Every uri of both documents is a URL a browser or a webhook
		// goes to: say what is wanted, in the words of the docs.
		return "must be an absolute http or https URL with a host"
	case "date-time":
		return "must be a date-time"
	case "int32":
		return integerReason(s, math.MinInt32, math.MaxInt32)
	case "int64":
		return integerReason(s, math.MinInt64, math.MaxInt64)
	}
	return "must be in the " + s.Format + " format"
}

// integerReason words an integer format's range, narrowed to the schema's
// own inclusive bounds: a value past both is told the range it may take
// (0 to 31536000), not the format's (-2147483648 to 2147483647).
func integerReason(s *openapi3.Schema, lo, hi int64) string {
	if s.Min != nil && !s.ExclusiveMin.IsTrue() && *s.Min > float64(lo) {
		lo = int64(math.Ceil(*s.Min))
	}
	if s.Max != nil && !s.ExclusiveMax.IsTrue() && *s.Max < float64(hi) {
		hi = int64(math.Floor(*s.Max))
	}
	return "must be an integer from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10)
}

func article(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "object", "array":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

func joinEnum(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// num writes a bound as people write numbers: 2147483647, not 2.147483647e+09.
func num(p *float64) string {
	if p == nil {
		return "0"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// choiceViolations words the failure of a rule that exactly one of some
// fields is given ("exactly one of mcc or account_id"), which the contract
// states as a `not` refusing all of them at once or none of them (see
// choiceOf): the choice itself, in the user's words, and then everything
// else wrong with the object. kin stops at a failed `not` without looking
// at the object's properties, so they are checked here again without it;
// otherwise one answer would not list every problem. ok is false for any
// other `not`.
func choiceViolations(se *openapi3.SchemaError, base string, blanks map[string]bool) (vs []paymock.Violation, ok bool) {
	obj, isObj := se.Value.(map[string]any)
	names := choiceOf(se.Schema)
	if !isObj || names == nil {
		return nil, false
	}
	prefix := slices.Clone(se.JSONPointer())
	if base != "" {
		prefix = append([]string{base}, prefix...)
	}
	dotted := func(name string) string { return strings.Join(append(slices.Clone(prefix), name), ".") }
	var present []string
	for _, n := range names {
		if _, has := obj[n]; has {
			present = append(present, n)
		}
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = dotted(n)
	}
	choice := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
	switch len(present) {
	case 0:
		vs = append(vs, paymock.Violation{Param: dotted(names[0]), Code: "parameter_missing", Message: "one of " + choice + " is required"})
	case 1:
		// The one given field is refused for its value (null): the failure
		// was not the choice, so say nothing of it and let the recheck
		// below speak.
	default:
		vs = append(vs, paymock.Violation{Param: dotted(present[0]), Code: "parameter_conflict", Message: "give exactly one of " + choice + ", not both"})
	}
	rest := *se.Schema
	rest.Not = nil
	if err := rest.VisitJSON(se.Value, requestSchemaOptions()...); err != nil {
		vs = append(vs, violationsAt(err, strings.Join(prefix, "."), blanks)...)
	}
	return vs, true
}

// choiceOf reads the fields of which exactly one must be given from a
// schema that says so as
//
//	not:
//	  anyOf:
//	    - required: [a, b]             # both
//	    - not:
//	        anyOf:                     # neither
//	          - required: [a]
//	          - required: [b]
//
// and is nil for a schema without that rule.
func choiceOf(s *openapi3.Schema) []string {
	if s == nil || s.Not == nil || s.Not.Value == nil || len(s.Not.Value.AnyOf) != 2 {
		return nil
	}
	all, neither := s.Not.Value.AnyOf[0].Value, s.Not.Value.AnyOf[1].Value
	if all == nil || len(all.Required) < 2 || neither == nil || neither.Not == nil || neither.Not.Value == nil {
		return nil
	}
	each := neither.Not.Value.AnyOf
	if len(each) != len(all.Required) {
		return nil
	}
	for i, b := range each {
		if b.Value == nil || len(b.Value.Required) != 1 || b.Value.Required[0] != all.Required[i] {
			return nil
		}
	}
	return all.Required
}

// requestSchemaOptions are the options a request body is checked with,
// for checks made again outside kin's request validation.
func requestSchemaOptions() []openapi3.SchemaValidationOption {
	return []openapi3.SchemaValidationOption{
		openapi3.MultiErrors(),
		openapi3.VisitAsRequest(),
		openapi3.EnableFormatValidation(),
		openapi3.WithStringFormatValidator("email", openapi3.NewCallbackValidator(checkEmail)),
		openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(checkURI)),
	}
}

// oneOfTypes words the types a oneOf admits: "a number or a string".
func oneOfTypes(s *openapi3.Schema) string {
	var types []string
	for _, branch := range s.OneOf {
		if branch.Value == nil || branch.Value.Type == nil {
			return "one of the allowed forms"
		}
		types = append(types, branch.Value.Type.Slice()...)
	}
	if len(types) == 0 {
		return "one of the allowed forms"
	}
	return article(types)
}

// requiredStrings are the dotted paths of the string properties that a
// request body's schema requires where they stand (an array's items as
// "*"), found through properties and items; a property of a schema
// reached otherwise (allOf, oneOf...) is not among them.
func requiredStrings(s *openapi3.Schema) map[string]bool {
	out := map[string]bool{}
	seen := map[*openapi3.Schema]bool{}
	var walk func(s *openapi3.Schema, path []string)
	walk = func(s *openapi3.Schema, path []string) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		defer delete(seen, s)
		for name, p := range s.Properties {
			if p == nil || p.Value == nil {
				continue
			}
			at := append(slices.Clone(path), name)
			if p.Value.Type.Is("string") && slices.Contains(s.Required, name) {
				out[strings.Join(at, ".")] = true
			}
			walk(p.Value, at)
		}
		if s.Items != nil {
			walk(s.Items.Value, append(slices.Clone(path), "*"))
		}
	}
	walk(s, nil)
	return out
}

// blankAsMissing words the violations of a required string sent empty as
// parameter_missing, "is required": the docs' parameter_missing is "a
// required field or parameter is absent (or blank)", and the rule an
// empty value breaks (a length, an enum, a pattern, a format) says
// nothing a client can act on that "is required" does not. The create
// rules say the same of a blank value (ValidateCreate's missing).
func blankAsMissing(vs []paymock.Violation, blanks, required map[string]bool) {
	for i, v := range vs {
		if blanks[v.Param] && required[starIndexes(v.Param)] {
			vs[i] = paymock.Violation{Param: v.Param, Code: "parameter_missing", Message: v.Param + " is required"}
		}
	}
}

// starIndexes writes the array indexes of a dotted path as "*".
func starIndexes(param string) string {
	parts := strings.Split(param, ".")
	for i, p := range parts {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, ".")
}
