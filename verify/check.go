// The contract check of one answer: against its operation in
// openapi.yaml, every violation with the JSON path it is at.

package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/paymock/paymock/contract"
)

// Violation is one way an answer breaks openapi.yaml.
type Violation struct {
	Check  string `json:"check"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	// Param is the dotted JSON path of the offending value ("" for the
	// answer as a whole).
	Param   string `json:"param,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// CheckAnswer checks an answer to a request of the service API against
// its operation: a declared status, a JSON body of the declared schema.
// A path outside the contract gets one violation saying so.
func CheckAnswer(ctx context.Context, doc *contract.Document, req *http.Request, status int, header http.Header, body []byte) []Violation {
	var out []Violation
	add := func(param, code, msg string) {
		out = append(out, Violation{Method: req.Method, Path: req.URL.RequestURI(), Status: status, Param: param, Code: code, Message: msg})
	}
	// A HEAD is its GET without the body (RFC 9110 9.3.2), as paymock
	// serves it: the contract declares no HEAD, and a deployment that
	// answers one with a 405 or a status of its own still breaks what a
	// client of the GET may rely on.
	head := req.Method == http.MethodHead
	get := req
	if head {
		get = req.Clone(ctx)
		get.Method = http.MethodGet
	}
	rt, err := doc.Match(get)
	if err != nil {
		add("", "route_undeclared", req.Method+" "+req.URL.Path+" is not an operation of openapi.yaml")
		return out
	}
	if declared := declaredStatuses(doc, rt.OperationID()); !slices.Contains(declared, status) {
		msg := fmt.Sprintf("status %d is not declared for %s (declared: %s)", status, rt.OperationID(), joinInts(declared))
		if head {
			msg = fmt.Sprintf("status %d is not declared for %s, whose GET a HEAD asks for without the body (declared: %s)", status, rt.OperationID(), joinInts(declared))
		}
		add("", "status_undeclared", msg)
		return out
	}
	if head {
		return append(out, headViolations(ctx, doc, get, rt, status, header)...)
	}
	// The caller hands over the body decoded; a coding still named here
	// is one it could not undo, and "not valid JSON" would blame bytes
	// nobody has read.
	if ce := strings.TrimSpace(header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		add("", "content_encoding", fmt.Sprintf("the answer is Content-Encoding %s, which could not be decoded: its body was not checked", ce))
		return out
	}
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		if mt == "" {
			mt = "no Content-Type"
		}
		add("", "content_type", fmt.Sprintf("the answer is %s, not application/json", mt))
		return out
	}
	if !json.Valid(body) {
		add("", "invalid_json", "the answer's body is not valid JSON")
		return out
	}
	verr := doc.ValidateResponse(ctx, req, rt, status, header, body)
	if verr == nil {
		return out
	}
	for _, v := range contract.Violations(verr) {
		msg := v.Message
		if v.Param == "" && strings.TrimSpace(msg) == "is invalid" {
			msg = "the answer breaks the contract: " + firstLine(verr.Error())
		}
		add(v.Param, v.Code, msg)
	}
	return out
}

// headViolations checks the headers of a HEAD's answer as its GET's: a
// Content-Type other than the declared JSON, and the declared headers of
// the status. The body is empty by definition, and a missing Content-Type
// is allowed: a server MAY leave out what it learns only while writing
// the content (RFC 9110 9.3.2). As does the Content-Encoding, which names
// the GET's coding with no body to decode.
func headViolations(ctx context.Context, doc *contract.Document, get *http.Request, rt *contract.Route, status int, header http.Header) []Violation {
	var out []Violation
	add := func(code, msg string) {
		out = append(out, Violation{Method: http.MethodHead, Path: get.URL.RequestURI(), Status: status, Code: code, Message: msg})
	}
	if ct := header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "application/json" {
			add("content_type", fmt.Sprintf("the answer to a HEAD is %s, not the application/json of its GET", ct))
		}
	}
	// The declared headers, checked as every other answer's are, with the
	// body left out.
	if err := doc.ValidateResponseHeaders(ctx, get, rt, status, header); err != nil {
		add("header_invalid", firstLine(err.Error()))
	}
	return out
}

func declaredStatuses(doc *contract.Document, opID string) []int {
	for _, op := range doc.Operations() {
		if op.ID == opID {
			return op.Statuses
		}
	}
	return nil
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = itoa(n)
	}
	return strings.Join(parts, " ")
}

// firstLine cuts a kin-openapi error to its first line, never its
// schema dumps.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
