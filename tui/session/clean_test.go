package session

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

// hostile carries one of everything a terminal would act on.
const hostile = "x\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[10;10H\x9b1;1H\u009d0;t\u009c\u202eevil\u202c\x1bc"

// assertClean fails when s holds an ESC, a C0 control but \n and \t, a C1
// control or a bidi override, or one of hostile's payload markers.
func assertClean(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if r == 0x1b || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e {
			t.Errorf("%s = %q holds %U", what, s, r)
			return
		}
	}
	for _, m := range []string{"52;c;", "2J", "10;10H"} {
		if strings.Contains(s, m) {
			t.Errorf("%s = %q holds %q", what, s, m)
		}
	}
}

// walkStrings calls fn with every string reachable from v's exported fields.
func walkStrings(v reflect.Value, fn func(string)) {
	switch v.Kind() {
	case reflect.String:
		fn(v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), fn)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkStrings(v.Index(i), fn)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walkStrings(it.Key(), fn)
			walkStrings(it.Value(), fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkStrings(v.Field(i), fn)
			}
		}
	}
}

func TestCleanEventEveryKind(t *testing.T) {
	h := hostile
	replied := false
	events := []steps.Event{
		steps.LabStarted{Lab: h, Title: h + "\nsecond line", RunID: h, Steps: []steps.StepInfo{{ID: h, Title: h + "\n", Kind: h}}},
		steps.StepStarted{Step: h, Commands: []steps.PlannedCommand{{Host: h, Cmd: h}}},
		steps.Output{Step: h, Line: runner.Line{Host: h, Text: h}},
		steps.Progress{Step: h, Label: h},
		steps.Sample{Step: h, Variant: h, Sweep: h},
		steps.StepFinished{Step: h, Err: h, Hint: h, Host: h, Tail: []string{h, h}},
		steps.Prompt{Step: h, Host: h, Message: h, KeyType: h, Fingerprint: h, Choices: []string{h},
			Reply: func(steps.Answer) { replied = true }},
		steps.LabFinished{Lab: h, ResultsDir: h},
	}
	for _, ev := range events {
		c := CleanEvent(ev)
		if reflect.TypeOf(c) != reflect.TypeOf(ev) {
			t.Fatalf("CleanEvent(%T) returned a %T", ev, c)
		}
		n := 0
		walkStrings(reflect.ValueOf(c), func(s string) {
			n++
			assertClean(t, ev.Kind(), s)
		})
		if n == 0 {
			t.Errorf("%T: no strings seen", ev)
		}
		// The original is left as it was: the engine (and the headless
		// printer, results.json) keep their own copy.
		walkStrings(reflect.ValueOf(ev), func(s string) {
			if s != "" && !strings.Contains(s, "\x1b") {
				t.Errorf("%T: original string %q was modified", ev, s)
			}
		})
		if p, ok := c.(steps.Prompt); ok {
			p.Reply(steps.Answer{Choice: "no"})
		}
	}
	if !replied {
		t.Error("a cleaned prompt's Reply must still reach the engine")
	}
	if ls := CleanEvent(events[0]).(steps.LabStarted); strings.Contains(ls.Title, "\n") || strings.Contains(ls.Steps[0].Title, "\n") {
		t.Errorf("titles must be one line: %q, %q", ls.Title, ls.Steps[0].Title)
	}
	if o := CleanEvent(steps.Output{Line: runner.Line{Text: "\x1b[1;31mred\x1b[0m\x1b[2J"}}).(steps.Output); o.Line.Text != "\x1b[1;31mred\x1b[0m" {
		t.Errorf("output %q: the safe SGR colours must stay for the output pane", o.Line.Text)
	}
	if CleanEvent(nil) != nil {
		t.Error("a nil event must stay nil")
	}
}

// TestCleanEventCleanOutputNoCopy: a clean output line, the common case at
// thousands a second, passes without an allocation.
func TestCleanEventCleanOutputNoCopy(t *testing.T) {
	ev := steps.Event(steps.Output{Step: "bench", Line: runner.Line{Host: "client1", Text: "\x1b[32mSET: 182149.36 requests per second\x1b[0m"}})
	if a := testing.AllocsPerRun(100, func() { _ = CleanEvent(ev) }); a != 0 {
		t.Errorf("%v allocations per clean output line, want 0", a)
	}
}

func TestCleanResultsCopies(t *testing.T) {
	h := hostile
	cpu := 42.0
	r := &results.Results{Lab: h, Title: h, Hosts: []results.HostInfo{{}}, Variables: map[string]string{h: h},
		Benches: []results.Compare{{Step: h, Variants: []results.VariantResult{{Label: h, Points: []results.SweepPoint{{Value: h,
			Runs: []results.RunResult{{Series: []results.Point{{T: 1, OpsPerSec: 5, ServerCPU: &cpu}}}}}}}}}},
		Error: h}
	c := CleanResults(r)
	walkStrings(reflect.ValueOf(c), func(s string) { assertClean(t, "results", s) })
	if r.Lab != h || r.Variables[h] != h || r.Benches[0].Variants[0].Label != h {
		t.Error("CleanResults modified the results it was given")
	}
	got := c.Benches[0].Variants[0].Points[0].Runs[0].Series
	if len(got) != 1 || got[0].OpsPerSec != 5 || *got[0].ServerCPU != 42 {
		t.Errorf("the series must come through unchanged: %+v", got)
	}
	if CleanResults(nil) != nil {
		t.Error("nil results must stay nil")
	}
}

func TestCleanErrKeepsCause(t *testing.T) {
	err := cleanErr(errors.Join(errors.New(hostile), fs.ErrNotExist))
	assertClean(t, "error", err.Error())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is must still see the cause")
	}
	plain := errors.New("plain")
	if cleanErr(plain) != plain {
		t.Error("a clean error must come back as it is")
	}
}

// TestSanitizeCatalog: every string a session hands the TUI is clean, and
// events reach Emit cleaned.
func TestSanitizeCatalog(t *testing.T) {
	h := hostile
	var got []steps.Event
	cat := Sanitize(&hostileCatalog{})
	if Sanitize(cat) != cat {
		t.Error("Sanitize must wrap once")
	}
	ls, err := cat.Labs()
	if err != nil {
		t.Fatal(err)
	}
	walkStrings(reflect.ValueOf(ls), func(s string) { assertClean(t, "Labs", s) })
	s, err := cat.Open("x", Options{Emit: func(ev steps.Event) { got = append(got, ev) }})
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := s.Plan(0)
	for what, v := range map[string]any{"Info": s.Info(), "Steps": s.Steps(), "Doc": s.Doc(0), "Plan": plan,
		"Variables": s.Variables(), "Results": s.Results()} {
		walkStrings(reflect.ValueOf(v), func(s string) { assertClean(t, what, s) })
	}
	for what, err := range map[string]error{"ValidateVar": s.ValidateVar("a", h), "SetVars": s.SetVars(nil),
		"Cleanup": s.Cleanup(context.Background())} {
		assertClean(t, what, err.Error())
	}
	files, _, ferr := s.Rendered(0)
	sol, serr := s.Solution(0)
	_, sherr := s.Shell(0)
	for what, v := range map[string]any{"Rendered": files, "Solution": sol} {
		walkStrings(reflect.ValueOf(v), func(s string) { assertClean(t, what, s) })
	}
	for what, err := range map[string]error{"Rendered": ferr, "Solution": serr, "Shell": sherr} {
		assertClean(t, what, err.Error())
	}
	// A file keeps its lines and tabs: the rendered-files view shows them.
	if len(files) != 1 || !strings.Contains(files[0].Content, "\nline two\tcell") {
		t.Errorf("rendered content lost its layout: %q", files)
	}
	s.RunStep(context.Background(), 0)
	if len(got) != 1 {
		t.Fatalf("%d events emitted, want 1", len(got))
	}
	walkStrings(reflect.ValueOf(got[0]), func(s string) { assertClean(t, "event", s) })
	if _, err := cat.Open("missing", Options{}); err == nil {
		t.Fatal("open error lost")
	} else {
		assertClean(t, "Open error", err.Error())
	}
}

// hostileCatalog is a session whose every string is hostile.
type hostileCatalog struct{ emit func(steps.Event) }

func (c *hostileCatalog) Labs() ([]LabInfo, error) { return []LabInfo{c.Info()}, nil }
func (c *hostileCatalog) Open(id string, o Options) (Session, error) {
	if id != "x" {
		return nil, errors.New("no lab " + hostile)
	}
	c.emit = o.Emit
	return c, nil
}
func (c *hostileCatalog) Info() LabInfo {
	return LabInfo{ID: hostile, Title: hostile, Summary: hostile, Roles: []string{hostile}, Missing: []string{hostile},
		BoothConfirm: []string{hostile}, CannotRun: []string{hostile}, Err: hostile, StateErr: hostile}
}
func (c *hostileCatalog) Steps() []steps.StepInfo {
	return []steps.StepInfo{{ID: hostile, Title: hostile, Kind: hostile}}
}
func (c *hostileCatalog) Resume() int    { return 0 }
func (c *hostileCatalog) Doc(int) string { return "# " + hostile }
func (c *hostileCatalog) Plan(int) ([]steps.PlannedCommand, error) {
	return []steps.PlannedCommand{{Host: hostile, Cmd: hostile}}, nil
}
func (c *hostileCatalog) Variables() []Variable {
	return []Variable{{Name: hostile, Default: hostile, Values: []string{hostile}, Description: hostile}}
}
func (c *hostileCatalog) ValidateVar(string, string) error { return errors.New(hostile) }
func (c *hostileCatalog) SetVars(map[string]string) error  { return errors.New(hostile) }
func (c *hostileCatalog) RunStep(context.Context, int) results.Status {
	c.emit(steps.StepFinished{Err: hostile, Hint: hostile, Tail: []string{hostile}})
	return results.Failed
}
func (c *hostileCatalog) Skip(int)                      {}
func (c *hostileCatalog) Cleanup(context.Context) error { return errors.New(hostile) }
func (c *hostileCatalog) Finish(context.Context) (string, error) {
	return "", errors.New(hostile)
}
func (c *hostileCatalog) Leave(context.Context, string) (string, error) {
	return "", errors.New(hostile)
}
func (c *hostileCatalog) Results() *results.Results {
	return &results.Results{Lab: hostile, Title: hostile, Variables: map[string]string{hostile: hostile}}
}
func (c *hostileCatalog) Close() error { return nil }
func (c *hostileCatalog) Review() bool { return false }
func (c *hostileCatalog) Shell(int) (runner.Shell, error) {
	return runner.Shell{Argv: []string{hostile}}, errors.New(hostile)
}
func (c *hostileCatalog) CheckTask(ctx context.Context, i int) results.Status {
	return c.RunStep(ctx, i)
}
func (c *hostileCatalog) Solution(int) ([]steps.TaskSolution, error) {
	return []steps.TaskSolution{{Host: hostile, Run: []string{hostile}, Verify: hostile}}, errors.New(hostile)
}
func (c *hostileCatalog) Rendered(int) ([]steps.RenderedFile, int, error) {
	return []steps.RenderedFile{{Step: hostile, Host: hostile, Path: hostile, Source: hostile, Content: hostile + "\nline two\tcell"}}, 0, errors.New(hostile)
}

// TestCleanSharesWhatIsClean: clean data comes back as it is (the same
// pointer, no copy); a change copies only its path, arrays included.
func TestCleanSharesWhatIsClean(t *testing.T) {
	r := &results.Results{Lab: "quickstart", Title: "Quickstart", Variables: map[string]string{"instances": "4"},
		Benches: []results.Compare{{Step: "bench"}}}
	if CleanResults(r) != r {
		t.Error("clean results were copied")
	}
	type withArray struct {
		A [2]string
		N int
		m string
	}
	in := withArray{A: [2]string{"ok", "\x1b[2Jbad"}, N: 7, m: "\x1b[2Jkept"}
	out := clean(in)
	if out.A != [2]string{"ok", "bad"} || out.N != 7 || out.m != in.m {
		t.Errorf("clean(%+v) = %+v", in, out)
	}
	if in.A[1] != "\x1b[2Jbad" {
		t.Error("clean modified its argument")
	}
}

// TestCleanStepsFiltersAFailure: a failed step's reason (remote output in
// its tail, its command and error) is cleaned with the step.
func TestCleanStepsFiltersAFailure(t *testing.T) {
	in := []steps.StepInfo{{ID: "s", Title: "S", Failure: &steps.Failure{Err: hostile, Host: hostile, Cmd: hostile, Hint: hostile, Tail: []string{hostile}}}}
	out := cleanSteps(in)
	f := out[0].Failure
	for _, s := range []string{f.Err, f.Host, f.Cmd, f.Hint, f.Tail[0]} {
		if strings.ContainsAny(s, "\x1b\x07\u009b") {
			t.Errorf("failure text not cleaned: %q", s)
		}
	}
	if in[0].Failure.Err != hostile {
		t.Error("cleaning changed the engine's copy")
	}
}
