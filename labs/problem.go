package labs

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a lab file, at a line of it.
type Problem struct {
	File string
	// Line is 1-based; 0 when the problem concerns the whole file.
	Line int
	Msg  string
}

// String formats the problem as "file:line: message", the form editors and
// CI logs link to.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Problems is every problem found in one or more lab files. As an error it
// prints one problem a line.
type Problems []Problem

// Error joins the problems one a line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders problems by file, then line, so output is stable.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
}
