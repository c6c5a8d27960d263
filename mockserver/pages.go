// Hosted pages: where next_action.url and payment_link send the customer.
package mockserver

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"
	"github.com/paymock/paymock"
)

// pageTmpl is the interim page: it names the payment and its state. The
// interactive checkout and 3DS pages replace it.
var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}} · paymock</title></head>
<body><main><h1>{{.Title}}</h1><p>Payment <code>{{.ID}}</code></p>
<p>This hosted page is a placeholder in this paymock version; use the sandbox API to set the outcome.</p></main></body></html>
`))

// page serves a hosted page by payment id alone: the id is unguessable, and
// the customer has no API key. It never changes anything.
func (s *Server) page(c *echo.Context) error {
	id := c.Param("id")
	title := "Checkout"
	if strings.HasPrefix(c.Request().URL.Path, threeDSPath) {
		title = "Card authentication"
	}
	if !strings.HasPrefix(id, "pay_") || len(id) < 4+paymock.IDLength {
		return withStatus(http.StatusNotFound, paymock.NotFound, "resource_missing", "no such payment")
	}
	var b strings.Builder
	if err := pageTmpl.Execute(&b, struct{ Title, ID string }{title, id}); err != nil {
		return fmt.Errorf("render page: %w", err)
	}
	return c.HTML(http.StatusOK, b.String())
}
