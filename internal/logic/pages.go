package logic

import (
	"fmt"

	"github.com/neemias/neemias-mcp/internal/errs"
)

// classPage is the page of a list of classes that starts at the class offset: whole classes
// while their rows (sizes[i]: children or check-ins) fit in limit (defaultLimit when absent),
// at least one. A page never splits a class, so labels, which are made distinct within a class,
// read on a page as in the whole list. An offset past the end is an *errs.Invalid naming the
// last one. The class list and the day's check-ins page this way.
func classPage(sizes []int, limitIn, offsetIn *int64, defaultLimit int64) (first, end int, err error) {
	limit := defaultLimit
	if limitIn != nil {
		limit = *limitIn
	}
	if offsetIn != nil {
		if *offsetIn > 0 && *offsetIn >= int64(len(sizes)) {
			return 0, 0, &errs.Invalid{Field: "offset", Reason: fmt.Sprintf("is past the last class: the list has %d (offsets 0 to %d)", len(sizes), max(len(sizes)-1, 0))}
		}
		first = int(*offsetIn)
	}
	end = first
	var n int64
	for end < len(sizes) && (end == first || n+int64(sizes[end]) <= limit) {
		n += int64(sizes[end])
		end++
	}
	return first, end, nil
}
