// The check of one exchange, both ways: the client's request against its
// operation, and the upstream's answer against the same operation.

package proxy

import (
	"context"
	"mime"
	"net/http"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/verify"
)

// The sides of a violation.
const (
	SideClient   = "client"
	SideUpstream = "upstream"
)

// Violation is one way an exchange broke the contract, and whose.
type Violation struct {
	Side    string `json:"side"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Exchange is one request and the upstream's answer, as checked.
type Exchange struct {
	Request *http.Request // its URL holds the path and query
	Body    []byte        // the request body; nil for none
	// Authenticated says the request carried a well-formed bearer key.
	Authenticated bool
	Status        int
	Header        http.Header
	Answer        []byte // decoded when the upstream compressed it
}

// Check checks an exchange of the service API and returns the operation
// it matched ("" for none) and every violation, the client's first.
func Check(ctx context.Context, doc *contract.Document, x Exchange) (operation string, vs []Violation) {
	r, original := x.Request, x.Request
	// A HEAD is a GET without the body, as paymock serves it: the request
	// is checked as the GET; its answer keeps its method, for CheckAnswer
	// checks a HEAD's status and headers as the GET's.
	if r.Method == http.MethodHead {
		r = r.Clone(ctx)
		r.Method = http.MethodGet
		x.Request = r
	}
	rt, err := doc.Match(r)
	if err != nil {
		de, _ := paymock.AsError(err)
		msg := "the request matches no operation of openapi.yaml"
		if de != nil {
			msg = de.Message
		}
		vs = append(vs, Violation{Side: SideClient, Code: "route_not_found", Message: paymock.BoundViolation(paymock.Violation{Message: msg}).Message})
	} else {
		operation = rt.OperationID()
		vs = append(vs, checkRequest(ctx, doc, rt, x)...)
	}
	if x.Status == 0 || operation == "" {
		return operation, vs
	}
	// Bounded as paymock bounds its own answers: an upstream answer of
	// 16,000 findings would otherwise be kept whole in the journal.
	var up []paymock.Violation
	for _, v := range verify.CheckAnswer(ctx, doc, original, x.Status, x.Header, x.Answer) {
		up = append(up, paymock.Violation{Param: v.Param, Code: v.Code, Message: v.Message})
	}
	for _, v := range paymock.BoundViolations(up) {
		vs = append(vs, Violation{Side: SideUpstream, Param: v.Param, Code: v.Code, Message: v.Message})
	}
	return operation, vs
}

// checkRequest is what the server's request chain checks, without
// refusing anything: the body's media type and JSON, then the operation.
func checkRequest(ctx context.Context, doc *contract.Document, rt *contract.Route, x Exchange) []Violation {
	r := x.Request.Clone(ctx)
	body := x.Body
	if rt.TakesBody() {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch {
		case len(body) == 0:
			return []Violation{{Side: SideClient, Code: "body_missing", Message: "a JSON request body is required"}}
		case mt != "application/json":
			return []Violation{{Side: SideClient, Code: "unsupported_media_type", Message: "the request body must be sent with Content-Type: application/json"}}
		}
		if found := contract.CheckJSON(body); found != nil {
			return clientSide(found)
		}
	} else {
		body = nil
	}
	err := doc.ValidateRequest(ctx, r, rt, body, x.Authenticated)
	switch {
	case err == nil:
		return nil
	case err == contract.ErrUnauthenticated && len(x.Request.Header.Values("Authorization")) > 0:
		// A header was sent, but no well-formed bearer key in it (a
		// recording keeps it redacted, yet present): the key is
		// malformed, as paymock answers it, not missing.
		return []Violation{{Side: SideClient, Code: "api_key_malformed", Message: "the Authorization header holds no well-formed key: send it as Authorization: Bearer <API_KEY>"}}
	case err == contract.ErrUnauthenticated:
		return []Violation{{Side: SideClient, Code: "api_key_missing", Message: "the operation needs an API key: send it as Authorization: Bearer <API_KEY>"}}
	}
	if de, ok := paymock.AsError(err); ok {
		if len(de.Violations) > 0 {
			return clientSide(de.Violations)
		}
		b := paymock.BoundViolation(paymock.Violation{Param: de.Param, Code: de.Code, Message: de.Message})
		return []Violation{{Side: SideClient, Param: b.Param, Code: b.Code, Message: b.Message}}
	}
	return []Violation{{Side: SideClient, Code: "parameter_invalid", Message: err.Error()}}
}

// clientSide is the client's violations, bounded as paymock bounds an
// answer's: a body of 16,000 unknown keys is 50 of them and a count.
func clientSide(vs []paymock.Violation) []Violation {
	vs = paymock.BoundViolations(vs)
	out := make([]Violation, len(vs))
	for i, v := range vs {
		out[i] = Violation{Side: SideClient, Param: v.Param, Code: v.Code, Message: v.Message}
	}
	return out
}
