// Package memory is the in-memory paymock.Backend, the default: every
// interface the PostgreSQL backend implements, held in the process, so that
// a single sandbox runs the same code paths as a cluster of replicas.
package memory
