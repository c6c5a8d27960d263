// Package contracttest gives tests a client transport that checks every
// answer against the contract and fails the test on any that breaks it,
// or on any 5xx the test did not ask for.
package contracttest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Checker says whether an answer is one the contract declares for the
// request sent; *contract.Documents is one (the server's own reading of
// the contract), Independent another.
type Checker interface {
	CheckAnswer(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error
}

// Transport is a client's http.RoundTripper that checks every answer on
// its way back and reports, through T, each that breaks the contract or
// is a 5xx not Expected. The test goes on: one bad answer should not hide
// the next.
type Transport struct {
	T       testing.TB
	Answers Checker
	// Next sends the request; nil: http.DefaultTransport.
	Next http.RoundTripper
	// Expected reports whether a 5xx answer is one the test asked for
	// (an injected fault, a store it cut off); nil: none is.
	Expected func(status int, body []byte) bool
}

// RoundTrip sends req through Next and checks the answer. The bodies of
// both are read whole (the check needs them) and handed on as read.
func (c *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		sent, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	next := c.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if resp.StatusCode >= 500 && (c.Expected == nil || !c.Expected(resp.StatusCode, body)) {
		c.T.Errorf("%s %s answered %d: %s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	if err := c.Answers.CheckAnswer(req, sent, resp.StatusCode, resp.Header, body); err != nil {
		c.T.Errorf("%s %s: answer %d breaks the contract: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return resp, nil
}
