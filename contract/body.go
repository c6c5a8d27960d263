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
	"strings"

	"github.com/paymock/paymock"
)

// ReadBody reads the body of an operation that takes one, once, under the
// limit, and checks that it is JSON at all before schema validation.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	return readBody(r, limit, false, nil)
}

// ReadJSONBody is ReadBody, and then CheckJSON's findings answered as
// invalid: one read of a body in the plain shape (plainJSON) settles both.
func ReadJSONBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := ReadParsedJSONBody(r, limit)
	b.Release()
	return b.Data, err
}

// JSONBody is a request body ReadParsedJSONBody read, with the parse that
// found it in the plain shape: ValidateParsedRequest checks the body on
// it rather than parsing the bytes a second time.
type JSONBody struct {
	Data  []byte
	plain *tree // nil: not parsed, or not plain
}

// Release gives back the parse. The body's Data stays.
func (b *JSONBody) Release() {
	if b.plain != nil {
		b.plain.release()
		b.plain = nil
	}
}

// ReadParsedJSONBody is ReadJSONBody, and the parse of a plain body kept
// for its check; Release it once checked.
func ReadParsedJSONBody(r *http.Request, limit int64) (JSONBody, error) {
	var b JSONBody
	var err error
	b.Data, err = readBody(r, limit, true, &b.plain)
	return b, err
}

// RefuseBody reads the body of a request to an operation that declares
// none: nothing, blanks or an empty object ({}, which many JSON clients
// send with every POST) pass; anything else is refused, since a client
// that sends data there expects it to count (a reason on /fail, say) and
// it would be dropped unseen.
func RefuseBody(r *http.Request, limit int64) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	data, err := readAtMost(r.Body, limit+1, r.ContentLength)
	if err != nil {
		return WithStatus(http.StatusBadRequest, paymock.InvalidRequest, "body_unreadable", "the request body could not be read")
	}
	if int64(len(data)) > limit {
		return tooLarge(limit)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || len(data) >= 2 && data[0] == '{' && data[len(data)-1] == '}' && len(bytes.TrimSpace(data[1:len(data)-1])) == 0 {
		return nil
	}
	return paymock.Invalid(paymock.Violation{Code: "body_not_taken",
		Message: "this operation takes no request body: send none, or {}"})
}

func tooLarge(limit int64) error {
	return WithStatus(http.StatusRequestEntityTooLarge, paymock.InvalidRequest, "body_too_large",
		fmt.Sprintf("the request body is larger than %d bytes", limit))
}

// readBody reads and refuses as ReadBody and ReadJSONBody say; where keep
// is not nil, the parse of a plain body is kept there.
func readBody(r *http.Request, limit int64, strict bool, keep **tree) ([]byte, error) {
	// A declared length past the limit is refused before any byte is
	// read: waiting for a body that may never come would hold the
	// connection until the read timeout.
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	data, err := readAtMost(r.Body, limit+1, r.ContentLength)
	if err != nil {
		return nil, WithStatus(http.StatusBadRequest, paymock.InvalidRequest, "body_unreadable", "the request body could not be read")
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(limit)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, paymock.Invalid(paymock.Violation{Code: "body_missing", Message: "a JSON request body is required"})
	}
	ct := r.Header.Get("Content-Type")
	mt, charset, perr := mediaType(ct)
	if perr != nil || mt != "application/json" {
		return nil, WithStatus(http.StatusUnsupportedMediaType, paymock.InvalidRequest, "unsupported_media_type",
			"the request body must be sent with Content-Type: application/json")
	}
	if charset != "" && !strings.EqualFold(charset, "utf-8") && !strings.EqualFold(charset, "utf8") {
		// JSON is UTF-8 (RFC 8259): a body said to be in another charset
		// would be read as what it is not.
		return nil, WithStatus(http.StatusUnsupportedMediaType, paymock.InvalidRequest, "unsupported_media_type",
			fmt.Sprintf("the request body must be JSON in UTF-8, not charset=%s", charset))
	}
	if tooManyValues(data, MaxBodyValues) {
		return nil, paymock.Invalid(paymock.Violation{Code: "body_too_complex", Message: fmt.Sprintf(
			"the request body holds more than %d JSON values; no request of this API needs that many", MaxBodyValues)})
	}
	if t, ok := plainTree(data); ok {
		if keep != nil {
			*keep = t
		} else {
			t.release()
		}
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
	t, ok := plainTree(data)
	if ok {
		t.release()
	}
	return ok
}

// plainTree is plainJSON, with the parse of a plain body.
func plainTree(data []byte) (*tree, bool) {
	t, ok := parseTree(data)
	if !ok {
		return nil, false
	}
	for i := range t.nodes {
		if t.nodes[i].escaped {
			t.release()
			return nil, false
		}
	}
	return t, true
}

// MaxBodyValues bounds the JSON values of a request body (each member's
// value and each array item, nested ones included). Under the byte limit
// alone, a body of a few hundred kilobytes of empty arrays or objects cost
// the server a hundred milliseconds of CPU or more, mostly in schema
// validation, where a create costs well under one: one tenant could keep
// the cores busy. The largest valid create holds about 12,600 values (50
// metadata values of 500 bytes of JSON each, at most about 250 values
// apiece), and every other body far fewer.
const MaxBodyValues = 16384

// tooManyValues reports whether data holds more than max JSON values, in
// one pass that parses nothing: a value follows each colon, and each
// array's first item and each comma in an array start one. On a body that
// is not JSON the count is a guess, which only decides which of two 400s
// it gets. A value takes a byte at least, so a body of max bytes or fewer
// is not scanned at all.
func tooManyValues(data []byte, max int) bool {
	return len(data) > max && countValues(data, max) > max
}

// countValues counts data's JSON values, stopping once past max, which is
// at least 1 (the body's own value).
func countValues(data []byte, max int) int {
	var buf [64]bool
	inArray := buf[:0] // innermost container last: an array or not
	n := 1             // the body's own value
	for i := paymock.NextJSONStructural(data, 0); i < len(data); i = paymock.NextJSONStructural(data, i+1) {
		switch data[i] {
		case ':':
			n++
		case '{':
			inArray = append(inArray, false)
		case '[':
			inArray = append(inArray, true)
			if j := skipSpace(data, i+1); j < len(data) && data[j] != ']' {
				n++
			}
		case '}', ']':
			if len(inArray) > 0 {
				inArray = inArray[:len(inArray)-1]
			}
		case ',':
			if len(inArray) > 0 && inArray[len(inArray)-1] {
				n++
			}
		}
		if n > max {
			break
		}
	}
	return n
}

// skipSpace is the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// mediaType is mime.ParseMediaType's media type and charset parameter,
// without its work (and its map of parameters) for the one type nearly
// every call carries.
func mediaType(ct string) (mt, charset string, err error) {
	if ct == "application/json" {
		return ct, "", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	return mt, params["charset"], err
}
