// Tests of the words given to the requests Go's HTTP server refuses.

package mockserver

import (
	"encoding/json"
	"testing"

	"github.com/paymock/paymock/contract"
)

func TestHTTPRefusal_SaysEachInTheErrorShape(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	words := HTTPRefusal(64 << 10)
	tests := []struct {
		status        int
		reason        string
		code, message string
	}{
		{431, "431 Request Header Fields Too Large", "headers_too_large",
			"the request line and headers are larger than the 64 KiB the server reads"},
		{400, "400 Bad Request: missing required Host header", "malformed_request",
			"the request is not valid HTTP: missing required Host header"},
		{400, "400 Bad Request", "malformed_request", "the request is not valid HTTP"},
		{501, "Unsupported transfer encoding", "unsupported_transfer_encoding",
			"the request's Transfer-Encoding is not one the server knows: send chunked, or none with a Content-Length"},
		{505, "505 HTTP Version Not Supported: unsupported protocol version", "http_version_not_supported",
			"the request's HTTP version is not supported: send HTTP/1.0 or HTTP/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			ct, body := words(tt.status, tt.reason)
			if ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if err := docs.Service.ValidateError(body); err != nil {
				t.Errorf("%s breaks the Error schema: %v", body, err)
			}
			var got struct {
				Error struct{ Type, Code, Message string }
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Error.Type != "invalid_request_error" || got.Error.Code != tt.code || got.Error.Message != tt.message {
				t.Errorf("got %+v, want invalid_request_error %s %q", got.Error, tt.code, tt.message)
			}
		})
	}
}

func TestByteSize_SaysBoundsAsPeopleWriteThem(t *testing.T) {
	for n, want := range map[int]string{64 << 10: "64 KiB", 1 << 20: "1 MiB", 4096: "4 KiB", 1000: "1000 bytes", 1536: "1536 bytes"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
