package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/labs"
)

// CheckVar checks a value against a lab variable's type, bounds, allowed
// values and pattern, saying what would be accepted. The TUI's variables
// form uses it too.
func CheckVar(v labs.Variable, s string) error {
	switch v.Type {
	case labs.TypeInt:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("%s wants an integer, got %q", v.Name, s)
		}
		return checkBounds(v, float64(n), func(b string) (float64, error) {
			x, err := strconv.ParseInt(b, 10, 64)
			return float64(x), err
		})
	case labs.TypeDuration:
		d, err := labs.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		return checkBounds(v, float64(d), func(b string) (float64, error) {
			x, err := labs.ParseDuration(b)
			return float64(x), err
		})
	case labs.TypeSize:
		n, err := labs.ParseSize(s)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		return checkBounds(v, float64(n), func(b string) (float64, error) {
			x, err := labs.ParseSize(b)
			return float64(x), err
		})
	case labs.TypeBool:
		if _, err := labs.ParseBool(s); err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
	case labs.TypeEnum:
		for _, a := range v.Values {
			if a == s {
				return nil
			}
		}
		return fmt.Errorf("%s must be one of %s, got %q", v.Name, strings.Join(v.Values, ", "), s)
	}
	if v.Pattern != "" {
		re, err := regexp.Compile("^(?:" + v.Pattern + ")$")
		if err != nil {
			return fmt.Errorf("%s: the lab's pattern %q is invalid: %w", v.Name, v.Pattern, err)
		}
		if !re.MatchString(s) {
			return fmt.Errorf("%s must match %s, got %q", v.Name, v.Pattern, s)
		}
	}
	return nil
}

func checkBounds(v labs.Variable, x float64, parse func(string) (float64, error)) error {
	if v.Min != "" {
		if m, err := parse(v.Min); err == nil && x < m {
			return fmt.Errorf("%s must be at least %s", v.Name, v.Min)
		}
	}
	if v.Max != "" {
		if m, err := parse(v.Max); err == nil && x > m {
			return fmt.Errorf("%s must be at most %s", v.Name, v.Max)
		}
	}
	return nil
}
