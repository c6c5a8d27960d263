// Compiled checks of parameters and security: what kin-openapi's
// ValidateRequest does besides the body, answered without it for the
// shapes the documents use. As with bodies, they only ever answer
// "valid" where kin would; anything else goes to kin, which judges every
// refusal and writes its messages.

package contract

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
)

// opParams are one operation's parameters and security, compiled.
type opParams struct {
	// open: no security requirement, or an empty one, so any caller
	// passes; keyed: a requirement whose schemes are all declared, which
	// an authenticated caller passes (securityCheck is kin's only
	// AuthenticationFunc).
	open, keyed bool
	params      []paramCheck
}

// paramCheck is one path or query parameter of a primitive string
// schema, or of any schema when in the query and not required.
type paramCheck struct {
	name     string
	in       string
	required bool
	check    *check // nil when kin would skip the value's check
}

// compileParams compiles every operation's parameters and security; an
// operation with a parameter outside the model gets none, and kin
// checks all of its requests.
func (d *Document) compileParams() {
	d.params = map[*openapi3.Operation]*opParams{}
	if d.doc.IsOpenAPI31OrLater() {
		return
	}
	c := newCompiler()
	schemes := openapi3.SecuritySchemes{}
	if d.doc.Components != nil && d.doc.Components.SecuritySchemes != nil {
		schemes = d.doc.Components.SecuritySchemes
	}
	for _, p := range d.doc.Paths.InMatchingOrder() {
		item := d.doc.Paths.Value(p)
		for _, op := range item.Operations() {
			sec := op.Security
			if sec == nil {
				sec = &d.doc.Security
			}
			o := &opParams{open: len(*sec) == 0}
			for _, req := range *sec {
				declared := true
				for name := range req {
					if ref := schemes[name]; ref == nil || ref.Value == nil {
						declared = false
					}
				}
				o.open = o.open || len(req) == 0
				o.keyed = o.keyed || declared
			}
			var all openapi3.Parameters
			for _, ref := range item.Parameters {
				if ref.Value != nil && op.Parameters.GetByInAndName(ref.Value.In, ref.Value.Name) != nil {
					continue // overridden by the operation's own
				}
				all = append(all, ref)
			}
			all = append(all, op.Parameters...)
			ok := true
			for _, ref := range all {
				pc, supported := compileParam(c, ref)
				if !supported {
					ok = false
					break
				}
				o.params = append(o.params, pc)
			}
			if ok {
				d.params[op] = o
			}
		}
	}
}

// compileParam compiles one parameter, if the model covers it.
func compileParam(c *compiler, ref *openapi3.ParameterRef) (paramCheck, bool) {
	if ref == nil || ref.Value == nil {
		return paramCheck{}, false
	}
	p := ref.Value
	pc := paramCheck{name: p.Name, in: p.In, required: p.Required}
	if p.Content != nil || p.AllowEmptyValue {
		return pc, false
	}
	if p.Schema == nil {
		return pc, true // kin checks nothing of it
	}
	if p.Schema.Value == nil {
		return pc, false
	}
	switch p.In {
	case openapi3.ParameterInQuery:
		// Only an absent optional query parameter is modelled, which kin
		// passes whatever its schema.
		return pc, !p.Required
	case openapi3.ParameterInPath:
		if p.Style != "" && p.Style != openapi3.SerializationSimple {
			return pc, false
		}
		s := p.Schema.Value
		k := c.compile(s)
		if k.unsupported || !s.Type.Is(openapi3.TypeString) || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil {
			return pc, false
		}
		pc.check = k
		return pc, true
	}
	return pc, false
}

// paramsValid reports whether kin's ValidateRequest, the body left out,
// would find nothing in r. False is no verdict.
func (d *Document) paramsValid(r *http.Request, rt *Route, authenticated bool) bool {
	o := d.params[rt.Operation]
	if o == nil || !(o.open || authenticated && o.keyed) {
		return false
	}
	for i := range o.params {
		p := &o.params[i]
		switch p.in {
		case openapi3.ParameterInQuery:
			if r.URL.RawQuery != "" {
				return false // present, perhaps: kin decodes and judges
			}
		case openapi3.ParameterInPath:
			if p.check == nil {
				continue
			}
			// kin's pathParamDecoder: an empty value is a missing one.
			v := rt.Params[p.name]
			if v == "" || p.check.stringValue(v) != valid {
				return false
			}
		}
	}
	return true
}
