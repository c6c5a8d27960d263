// A merchant's book with a lock of its own, which a reset or a release
// takes out of its store: the one way every store here finds a book to
// write, so that no write lands in a book no longer found.

package memory

// liveBook is a merchant's book that a reset or a release marks taken out,
// under the book's own lock, when it removes it from its store's index.
type liveBook interface {
	comparable
	// lockIfLive locks the book and reports true, or, when it was taken
	// out, leaves it unlocked and reports false.
	lockIfLive() bool
}

// lockLive returns the book find returns, locked. A book taken out while
// its lock was awaited is let go for the one find returns next (the
// merchant's new book, or none): what is written to it would be found by
// no one. A find that returns no book (the zero B) ends the search.
func lockLive[B liveBook](find func() B) B {
	var none B
	for {
		b := find()
		if b == none || b.lockIfLive() {
			return b
		}
	}
}

func (ml *merchantLog) lockIfLive() bool {
	ml.mu.Lock()
	if ml.dead() {
		ml.mu.Unlock()
		return false
	}
	return true
}

func (b *outboxBook) lockIfLive() bool {
	b.mu.Lock()
	if b.dead {
		b.mu.Unlock()
		return false
	}
	return true
}

func (b *faultBook) lockIfLive() bool {
	b.mu.Lock()
	if b.dead {
		b.mu.Unlock()
		return false
	}
	return true
}

func (b *book) lockIfLive() bool {
	b.mu.Lock()
	if b.dropped {
		b.mu.Unlock()
		return false
	}
	return true
}
