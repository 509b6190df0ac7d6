package session

import (
	"reflect"
	"sync"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// CleanEvent returns ev with every string it carries made safe to draw:
// command output keeps the safe SGR colours (termtext.SGR), the host it came
// from and everything else is termtext.Plain. An event that is already clean
// comes back as it is, without a copy; output lines, thousands a second, take
// that path without allocating.
func CleanEvent(ev steps.Event) steps.Event {
	switch e := ev.(type) {
	case steps.Output:
		// The hot path, spelled out: no reflection per line.
		if termtext.SGR(e.Line.Text) == e.Line.Text && termtext.Line(e.Line.Host) == e.Line.Host && termtext.Safe(e.Step) {
			return ev
		}
		e.Step = termtext.Plain(e.Step)
		e.Line = runner.Line{Host: termtext.Line(e.Line.Host), Stream: e.Line.Stream, Text: termtext.SGR(e.Line.Text)}
		return e
	case steps.Sample:
		e.Step, e.Variant, e.Sweep = termtext.Plain(e.Step), termtext.Plain(e.Variant), termtext.Plain(e.Sweep)
		return e
	case steps.LabStarted:
		e = clean(e)
		e.Title = termtext.Line(e.Title)
		// One line: the lab page's status line shows it.
		e.ResultsDir = termtext.Line(e.ResultsDir)
		e.Steps = cleanSteps(e.Steps)
		return e
	}
	// Every other kind, including any added later, by reflection: rare
	// events, and a new string field cannot be forgotten.
	return clean(ev)
}

// CleanResults returns a copy of r (recorded results, or the engine's so far)
// with every string made Plain: lab and variant labels, hosts and their
// labels, variables, references, errors. The per-second series, which hold
// no strings, are shared with r, not copied.
func CleanResults(r *results.Results) *results.Results {
	if r == nil {
		return nil
	}
	return clean(r)
}

// cleanSteps makes step titles one line each: the step list and the step's
// title bar count rows.
func cleanSteps(in []steps.StepInfo) []steps.StepInfo {
	out := clean(in)
	for i := range out {
		out[i].Title = termtext.Line(out[i].Title)
	}
	return out
}

// cleanInfo is LabInfo made safe to draw, its title on one line.
func cleanInfo(in LabInfo) LabInfo {
	in = clean(in)
	in.Title = termtext.Line(in.Title)
	return in
}

// clean returns v with every string reachable from it (through exported
// struct fields, pointers, slices, arrays, maps and interfaces) passed
// through termtext.Plain. Nothing of v is modified: what changes is copied,
// everything else is shared, so clean data costs no copy at all.
func clean[T any](v T) T {
	out, changed := cleanValue(reflect.ValueOf(&v).Elem())
	if !changed {
		return v
	}
	if c, ok := out.Interface().(T); ok {
		return c
	}
	return v
}

// cleanValue returns v cleaned and whether anything had to change; when
// nothing did, it returns v itself.
func cleanValue(v reflect.Value) (reflect.Value, bool) {
	t := v.Type()
	if !holdsStrings(t) {
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		c := termtext.Plain(s)
		if c == s {
			return v, false
		}
		out := reflect.New(t).Elem()
		out.SetString(c)
		return out, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := cleanValue(v.Elem())
		if !changed {
			return v, false
		}
		out := reflect.New(t.Elem())
		out.Elem().Set(e)
		return out, true
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return v, false
		}
		var out reflect.Value
		for i := range v.Len() {
			e, changed := cleanValue(v.Index(i))
			if changed && !out.IsValid() {
				// The first change: copy what came before it.
				if v.Kind() == reflect.Slice {
					out = reflect.MakeSlice(t, v.Len(), v.Len())
				} else {
					out = reflect.New(t).Elem()
				}
				reflect.Copy(out, v)
			}
			if out.IsValid() {
				out.Index(i).Set(e)
			}
		}
		if !out.IsValid() {
			return v, false
		}
		return out, true
	case reflect.Map:
		if v.IsNil() {
			return v, false
		}
		changed := false
		for it := v.MapRange(); it.Next() && !changed; {
			_, kc := cleanValue(it.Key())
			_, vc := cleanValue(it.Value())
			changed = kc || vc
		}
		if !changed {
			return v, false
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			k, _ := cleanValue(it.Key())
			e, _ := cleanValue(it.Value())
			out.SetMapIndex(k, e)
		}
		return out, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		e, changed := cleanValue(v.Elem())
		if !changed {
			return v, false
		}
		out := reflect.New(t).Elem()
		out.Set(e)
		return out, true
	case reflect.Struct:
		var out reflect.Value
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			e, changed := cleanValue(v.Field(i))
			if changed && !out.IsValid() {
				out = reflect.New(t).Elem()
				out.Set(v) // unexported fields as they are: never drawn from here
			}
			if changed {
				out.Field(i).Set(e)
			}
		}
		if !out.IsValid() {
			return v, false
		}
		return out, true
	}
	return v, false
}

// stringTypes caches, per type, whether a value of it can reach a string
// through exported fields.
var stringTypes sync.Map // reflect.Type → bool

func holdsStrings(t reflect.Type) bool {
	if b, ok := stringTypes.Load(t); ok {
		return b.(bool)
	}
	b := holdsStringsSeen(t, map[reflect.Type]bool{})
	stringTypes.Store(t, b)
	return b
}

func holdsStringsSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type: its strings are found on the first visit
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsStringsSeen(t.Elem(), seen)
	case reflect.Map:
		return holdsStringsSeen(t.Key(), seen) || holdsStringsSeen(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsStringsSeen(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
