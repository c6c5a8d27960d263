// The Backend: everything a sandbox keeps, one behaviour-level interface
// per concern, so that one algorithm runs on memory and on PostgreSQL.

package paymock

// Backend is where a sandbox keeps its state. Package memory builds one held
// in the process (memory.New), package postgres one that every replica
// shares (postgres.Store.Backend). Each field is an interface at the level
// of behaviour, implemented by both: the components that use them hold
// their algorithm once and never ask which kind of backend they were given.
type Backend struct {
	// Payments keeps payments and customers.
	Payments Store
	// Faults keeps each merchant's fault rules and their counts.
	Faults FaultRules
	// Journal keeps each merchant's request journal and its counts.
	Journal JournalStore
}
