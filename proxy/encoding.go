// Content codings between client and upstream: the request asks only for
// codings the proxy can read back, and the answer is decoded for the check.

package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// readable are the content codings the proxy can undo for the check.
var readable = []string{"gzip", "x-gzip", "deflate", "identity"}

// acceptable narrows a client's Accept-Encoding to the codings the proxy
// can read: a client that also takes br or zstd would otherwise get an
// answer whose body the proxy cannot check, and every such answer would
// be journaled as the upstream's fault. Each kept coding keeps its
// weight, so the upstream still chooses as the client asked; "*" stands
// for the readable codings. It returns "" when the client sent none
// (the upstream then answers as it would to the client), and "identity"
// when none the client named is readable.
func acceptable(header string) string {
	if strings.TrimSpace(header) == "" {
		return ""
	}
	var kept []string
	seen := map[string]bool{}
	add := func(coding, params string) {
		if !seen[coding] {
			seen[coding] = true
			kept = append(kept, coding+params)
		}
	}
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if params != "" {
			params = ";" + params
		}
		if coding == "*" {
			for _, c := range []string{"gzip", "deflate"} {
				add(c, params)
			}
			continue
		}
		for _, c := range readable {
			if coding == c {
				add(coding, params)
			}
		}
	}
	if len(kept) == 0 {
		return "identity"
	}
	return strings.Join(kept, ", ")
}

// decoded undoes a gzip or deflate Content-Encoding for the check, and
// returns the header the decoded body goes with. Another coding, or a
// body that does not decode, is an error: the caller checks the answer
// as it came, Content-Encoding and all, and the check says its body
// could not be read.
func decoded(h http.Header, body []byte, limit int64) ([]byte, http.Header, error) {
	coding := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	var zr io.Reader
	switch coding {
	case "", "identity":
		return body, h, nil
	case "gzip", "x-gzip":
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, nil, fmt.Errorf("gzip answer: %w", err)
		}
		zr = r
	case "deflate":
		// "deflate" is zlib-wrapped by RFC 9110; some servers send the
		// raw stream, which clients accept too.
		if r, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
			zr = r
		} else {
			zr = flate.NewReader(bytes.NewReader(body))
		}
	default:
		return nil, nil, fmt.Errorf("content coding %q is not one the proxy reads", coding)
	}
	plain, err := io.ReadAll(io.LimitReader(zr, limit))
	if err != nil {
		return nil, nil, fmt.Errorf("%s answer: %w", coding, err)
	}
	h = h.Clone()
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	return plain, h, nil
}
