// Paging: the page number a list is asked for, and where that page is
// among the list's pages.

package dashboard

import (
	"errors"
	"math"
	"strconv"
)

// pageNumber reads a list's ?page= for pages of size rows: 1 when it is
// absent or not a positive number, and at most the largest page whose
// offset and end fit in 32 bits. A larger number, even one too large for
// an int, asks for that largest page instead: past the last of any list
// the sandbox holds (a merchant keeps at most 10,000 payments and 10,000
// requests by default), so it is shown as a page past the last, and no
// offset overflows into a negative or a small number.
func pageNumber(raw string, size int) int {
	n, err := strconv.Atoi(raw)
	if err != nil && !errors.Is(err, strconv.ErrRange) || n < 1 {
		return 1
	}
	return min(n, math.MaxInt32/size)
}

// pager is where one page of a list is among its pages, with the links to
// the pages around it.
type pager struct {
	Page       int
	TotalPages int
	Total      int
	PrevURL    string
	NextURL    string
	// PastEnd: the page asked for is past the last page of a list that
	// has rows. It shows none, and links to the first and last pages
	// instead of the previous and next.
	PastEnd  bool
	FirstURL string
	LastURL  string
}

// newPager places page among the pages of total rows, size per page; link
// is the address of a page of the same list.
func newPager(page, total, size int, link func(page int) string) pager {
	p := pager{Page: page, Total: total, TotalPages: (total + size - 1) / size}
	switch {
	case total == 0:
		// An empty list says so; no page of it is to go to.
	case page > p.TotalPages:
		p.PastEnd = true
		p.FirstURL, p.LastURL = link(1), link(p.TotalPages)
	default:
		if page > 1 {
			p.PrevURL = link(page - 1)
		}
		if page < p.TotalPages {
			p.NextURL = link(page + 1)
		}
	}
	return p
}
