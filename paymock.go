// Package paymock is the domain of the payments sandbox: payments, customers,
// money, statuses, merchants and the rules a create request must follow, and
// the store that keeps payments per merchant.
//
// It depends on nothing else in the project; the HTTP side (mockserver), the
// lifecycle and the webhooks are built around it.
package paymock

import "embed"

// OpenAPI is the service contract, openapi.yaml, as served and enforced.
//
//go:embed openapi.yaml
var OpenAPI []byte

// SandboxOpenAPI is the control API's document. It stands alone: the
// service contract's schemas it uses (Payment, Error, ...) are copied into
// it, so that generators and clients fetching /_sandbox/openapi.yaml need
// no second document; a test keeps the copies equal to openapi.yaml's.
//
//go:embed sandbox/openapi.yaml
var SandboxOpenAPI []byte

// Documents holds both documents at their paths, for loading them by
// name.
//
//go:embed openapi.yaml sandbox/openapi.yaml
var Documents embed.FS
