// Reading a request body: once, under a limit, and only if it is JSON.

package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/paymock/paymock"
)

// ReadBody reads the body of an operation that takes one, once, under the
// limit, and checks that it is JSON at all before schema validation.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	return readBody(r, limit, false)
}

// ReadJSONBody is ReadBody, and then CheckJSON's findings answered as
// invalid: one read of a body in the plain shape (plainJSON) settles both.
func ReadJSONBody(r *http.Request, limit int64) ([]byte, error) {
	return readBody(r, limit, true)
}

func readBody(r *http.Request, limit int64, strict bool) ([]byte, error) {
	data, err := readAtMost(r.Body, limit+1, r.ContentLength)
	if err != nil {
		return nil, WithStatus(http.StatusBadRequest, paymock.InvalidRequest, "body_unreadable", "the request body could not be read")
	}
	if int64(len(data)) > limit {
		return nil, WithStatus(http.StatusRequestEntityTooLarge, paymock.InvalidRequest, "body_too_large",
			fmt.Sprintf("the request body is larger than %d bytes", limit))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, paymock.Invalid(paymock.Violation{Code: "body_missing", Message: "a JSON request body is required"})
	}
	ct := r.Header.Get("Content-Type")
	mt, perr := mediaType(ct)
	if perr != nil || mt != "application/json" {
		return nil, WithStatus(http.StatusUnsupportedMediaType, paymock.InvalidRequest, "unsupported_media_type",
			"the request body must be sent with Content-Type: application/json")
	}
	if plainJSON(data) {
		return data, nil // valid, and nothing for CheckJSON to find
	}
	if !json.Valid(data) {
		var v any
		msg := "the request body is not valid JSON"
		var se *json.SyntaxError
		if err := json.Unmarshal(data, &v); errors.As(err, &se) {
			msg = fmt.Sprintf("the request body is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
		}
		return nil, paymock.Invalid(paymock.Violation{Code: "invalid_json", Message: msg})
	}
	if strict {
		// What encoding/json would take silently (a duplicated key, bytes
		// that are not UTF-8) is a client bug the sandbox must show.
		if vs := CheckJSON(data); vs != nil {
			return nil, paymock.Invalid(vs...)
		}
	}
	return data, nil
}

// readAtMost is io.ReadAll(io.LimitReader(body, n)), without the
// LimitedReader, which escapes to the heap, and in a buffer the size of
// the body when the request declares it (size, -1 when unknown): one
// allocation of the body's size, not ReadAll's 512 bytes and its growth
// (FuzzReadAtMost_ReadsWhatReadAllReads).
func readAtMost(body io.Reader, n, size int64) ([]byte, error) {
	room := 512
	if size >= 0 && size < n {
		room = int(size) + 1 // and a byte for the read that finds the end
	}
	b := make([]byte, 0, room)
	for {
		if n <= 0 {
			return b, nil
		}
		p := b[len(b):cap(b)]
		if int64(len(p)) > n {
			p = p[:n]
		}
		m, err := body.Read(p)
		n -= int64(m)
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// plainJSON reports whether data is JSON of the plain shape: parseTree
// takes it (so it is valid JSON without a duplicated key or a byte that
// is not UTF-8) and no string holds an escape (so none hides a lone
// surrogate). CheckJSON finds nothing in such a body
// (FuzzPlainJSON_IsValidAndClean).
func plainJSON(data []byte) bool {
	t, ok := parseTree(data)
	if !ok {
		return false
	}
	defer t.release()
	for i := range t.nodes {
		if t.nodes[i].escaped {
			return false
		}
	}
	return true
}

// mediaType is mime.ParseMediaType's media type, without its work (and
// its map of parameters) for the one type nearly every call carries.
func mediaType(ct string) (string, error) {
	if ct == "application/json" {
		return ct, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	return mt, err
}
