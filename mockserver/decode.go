// Decoding a request body the contract has already accepted.

package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// decodeBody decodes the request's body into v. The contract check ran
// first, so a failure here is a value the document allows and the Go type
// cannot hold (a whole number past int64, say): a 400 naming the field,
// never a 500. Numbers are kept as json.Number where v asks for one.
func decodeBody(c *echo.Context, v any) error {
	return decodeJSON(bodyOf(c), v)
}

// decodeJSON is decodeBody's work on the body's bytes.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	return nil
}

// decodeError is the 400 answer to a body that does not decode.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		msg := te.Field + " must be " + kindName(te.Type)
		return paymock.Invalid(paymock.Violation{Param: te.Field, Code: "parameter_invalid", Message: msg})
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return paymock.Invalid(paymock.Violation{Param: f, Code: "parameter_unknown", Message: f + " is not a known field"})
	}
	return paymock.Invalid(paymock.Violation{Code: "invalid_json", Message: fmt.Sprintf("the body cannot be read: %v", err)})
}

// kindName says what a Go type accepts, in the words of the contract.
func kindName(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number within range"
	case reflect.Float32, reflect.Float64:
		return "a number within range"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "of another type"
}

// wholeFields rewrites the named top-level fields of a JSON object that
// hold a whole number in another form (503.0, 5.03e2) as plain integers,
// for Go types whose integer fields are plain ints. Anything else, and a
// body that is not an object, is left as it is for the decode to judge.
func wholeFields(body []byte, names ...string) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body
	}
	changed := false
	for _, name := range names {
		raw, ok := fields[name]
		if !ok || bytes.IndexAny(raw, ".eE") < 0 {
			continue
		}
		if n, ok := paymock.ParseWhole(bytes.TrimSpace(raw)); ok {
			fields[name] = strconv.AppendInt(nil, n, 10)
			changed = true
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return body
	}
	return out
}
