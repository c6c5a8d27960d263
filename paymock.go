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

// SandboxOpenAPI is the control API's document. It refers to the service
// contract's schemas as "../openapi.yaml#/...", which resolves both on disk
// and when served at /_sandbox/openapi.yaml.
//
//go:embed sandbox/openapi.yaml
var SandboxOpenAPI []byte

// Documents holds both documents at their paths, for resolving the
// references between them.
//
//go:embed openapi.yaml sandbox/openapi.yaml
var Documents embed.FS
