// Package paymock is the domain of the payments sandbox: payments, customers,
// money, statuses, merchants and the rules a create request must follow, and
// the store that keeps payments per merchant.
//
// It depends on nothing else in the project; the HTTP side (mockserver), the
// lifecycle (scenarios) and the webhooks are built around it.
package paymock

import _ "embed"

// OpenAPI is the service contract, openapi.yaml, as served and enforced.
//
//go:embed openapi.yaml
var OpenAPI []byte
