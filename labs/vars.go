package labs

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Check reports whether value is valid for the variable: of its type, within
// min and max, among its values, matching its pattern. The error says what
// would be accepted.
func (v Variable) Check(value string) error {
	if err := v.check(value); err != nil {
		return fmt.Errorf("%w; %s takes %s", err, v.Name, v.Accepts())
	}
	return nil
}

// Accepts says in words what the variable takes: "an integer from 1 to 64
// (default 4)".
func (v Variable) Accepts() string {
	var what string
	switch v.Type {
	case TypeInt:
		what = "an integer"
	case TypeDuration:
		what = "a duration (500ms, 5s, 2m)"
	case TypeSize:
		what = "a size in bytes (32, 4KiB, 1MiB)"
	case TypeBool:
		what = "true or false"
	case TypeEnum:
		what = "one of " + strings.Join(v.Values, ", ")
	default:
		what = "text"
		if v.Pattern != "" {
			what += " matching " + v.Pattern
		}
	}
	switch {
	case v.Min != "" && v.Max != "":
		what += " from " + v.Min + " to " + v.Max
	case v.Min != "":
		what += " of at least " + v.Min
	case v.Max != "":
		what += " of at most " + v.Max
	}
	if v.Default != "" {
		what += " (default " + v.Default + ")"
	}
	return what
}

func (v Variable) check(value string) error {
	value = strings.TrimSpace(value)
	switch v.Type {
	case TypeInt:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not an integer", v.Name, value)
		}
		return v.checkRange(float64(n), value, func(s string) (float64, error) {
			m, err := strconv.ParseInt(s, 10, 64)
			return float64(m), err
		})
	case TypeDuration:
		d, err := ParseDuration(value)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		return v.checkRange(float64(d), value, func(s string) (float64, error) {
			d, err := ParseDuration(s)
			return float64(d), err
		})
	case TypeSize:
		n, err := ParseSize(value)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		return v.checkRange(float64(n), value, func(s string) (float64, error) {
			n, err := ParseSize(s)
			return float64(n), err
		})
	case TypeBool:
		if _, err := ParseBool(value); err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
	case TypeEnum:
		if !slices.Contains(v.Values, value) {
			return fmt.Errorf("%s: %q is not one of %s", v.Name, value, strings.Join(v.Values, ", "))
		}
	case TypeString:
		if v.Pattern != "" {
			re, err := regexp.Compile("^(?:" + v.Pattern + ")$")
			if err != nil {
				return fmt.Errorf("%s: bad pattern %q: %w", v.Name, v.Pattern, err)
			}
			if !re.MatchString(value) {
				return fmt.Errorf("%s: %q does not match %s", v.Name, value, v.Pattern)
			}
		}
	default:
		return fmt.Errorf("%s: unknown type %q", v.Name, v.Type)
	}
	return nil
}

// checkRange compares a parsed value with the variable's min and max.
func (v Variable) checkRange(n float64, value string, parse func(string) (float64, error)) error {
	if v.Min != "" {
		if lo, err := parse(v.Min); err == nil && n < lo {
			return fmt.Errorf("%s: %s is below the minimum %s", v.Name, value, v.Min)
		}
	}
	if v.Max != "" {
		if hi, err := parse(v.Max); err == nil && n > hi {
			return fmt.Errorf("%s: %s is above the maximum %s", v.Name, value, v.Max)
		}
	}
	return nil
}

// ResolveVars returns every variable's value: its default, or the override
// from set (--set NAME=VALUE). Unknown names and invalid values are errors
// that name what is accepted; nothing is run with a bad value.
func (l *Lab) ResolveVars(set map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(l.Variables))
	for _, v := range l.Variables {
		out[v.Name] = v.Default
	}
	var errs []string
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v, ok := l.Var(k)
		if !ok {
			errs = append(errs, fmt.Sprintf("lab %s has no variable %q (it has: %s)", l.ID, k, strings.Join(l.varNames(), ", ")))
			continue
		}
		val := strings.TrimSpace(set[k])
		if err := v.Check(val); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out[k] = val
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("variables: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

func (l *Lab) varNames() []string {
	names := make([]string, len(l.Variables))
	for i, v := range l.Variables {
		names[i] = v.Name
	}
	return names
}
