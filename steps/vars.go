package steps

import (
	"github.com/dpulab/dpulab/labs"
)

// CheckVar checks a value against a lab variable's type, bounds, allowed
// values and pattern (labs.Variable.Check, the same rule as --set), saying
// what would be accepted. The TUI's variables form uses it too.
func CheckVar(v labs.Variable, s string) error {
	return v.Check(s)
}
