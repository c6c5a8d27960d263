// The words of the refusals Go's HTTP server writes itself, before any
// handler: a request it cannot parse gets an error in the one shape of
// DESIGN.md, as every other refused request does (connlimit.Refusal).

package mockserver

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// HTTPRefusal is the answer to a request net/http refused before serving
// it (a connlimit.Refusal): status is net/http's code, reason its text,
// such as "400 Bad Request: missing required Host header". maxHeaderBytes
// is the server's bound of the request line and headers, named in the
// 431's message.
func HTTPRefusal(maxHeaderBytes int) func(status int, reason string) (string, []byte) {
	return func(status int, reason string) (string, []byte) {
		e := &paymock.Error{Type: paymock.InvalidRequest, Code: "malformed_request"}
		_, detail, _ := strings.Cut(reason, ": ")
		switch status {
		case http.StatusRequestHeaderFieldsTooLarge:
			e.Code = "headers_too_large"
			e.Message = "the request line and headers are larger than the " + byteSize(maxHeaderBytes) + " the server reads"
		case http.StatusNotImplemented:
			e.Code = "unsupported_transfer_encoding"
			e.Message = "the request's Transfer-Encoding is not one the server knows: send chunked, or none with a Content-Length"
		case http.StatusHTTPVersionNotSupported:
			e.Code = "http_version_not_supported"
			e.Message = "the request's HTTP version is not supported: send HTTP/1.0 or HTTP/1.1"
		default:
			e.Message = "the request is not valid HTTP"
			if detail != "" {
				e.Message += ": " + detail
			}
		}
		return echo.MIMEApplicationJSON, encodeError(e)
	}
}

// byteSize says n bytes as people write it: "64 KiB", "1 MiB", "512 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
