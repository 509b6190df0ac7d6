package session

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
)

func find(t *testing.T, ls []LabInfo, id string) LabInfo {
	t.Helper()
	for _, l := range ls {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("lab %s not listed", id)
	return LabInfo{}
}

func TestEngineCatalogLabs(t *testing.T) {
	cat := &EngineCatalog{StateDir: t.TempDir()}
	ls, err := cat.Labs()
	if err != nil {
		t.Fatal(err)
	}
	q := find(t, ls, "quickstart")
	if !q.Local || len(q.Missing) != 0 || q.Steps == 0 || q.ResumeAt != -1 || q.Duration == 0 {
		t.Fatalf("quickstart info %+v: want local, covered, steps, no saved progress", q)
	}

	inv, err := runner.ParseInventory("hosts.yaml", []byte("hosts:\n  - name: c1\n    address: 10.0.0.5\n    roles: [client]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cat.Inventory = inv
	ls, err = cat.Labs()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if slices.Contains(l.Roles, "baseline") && !slices.Contains(l.Missing, "baseline") {
			t.Fatalf("%s: an inventory without a baseline host must report the role missing (%v)", l.ID, l.Missing)
		}
	}
}

func TestEngineSessionReadsTheLab(t *testing.T) {
	cat := &EngineCatalog{StateDir: t.TempDir()}
	s, err := cat.Open("quickstart", Options{Emit: func(steps.Event) {}, Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Steps()) != s.Info().Steps || s.Resume() != 0 {
		t.Fatalf("%d steps, resume %d", len(s.Steps()), s.Resume())
	}
	if s.Doc(0) == "" {
		t.Fatal("the first step's markdown is empty")
	}
	vars := s.Variables()
	if len(vars) == 0 {
		t.Fatal("quickstart has variables for the form")
	}
	if err := s.ValidateVar("instances", "0"); err == nil {
		t.Fatal("instances=0 is below the lab's min and must be refused")
	}
	if err := s.ValidateVar("instances", "4"); err != nil {
		t.Fatalf("instances=4: %v", err)
	}
	if err := s.ValidateVar("nope", "1"); err == nil {
		t.Fatal("an unknown variable must be refused")
	}
}

func TestEngineCatalogResumePoint(t *testing.T) {
	dir := t.TempDir()
	p, err := steps.StatePath(dir, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	cat := &EngineCatalog{StateDir: dir}
	s, err := cat.Open("quickstart", Options{Emit: func(steps.Event) {}, Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := s.Steps()
	st := &steps.State{Lab: "quickstart", Steps: map[string]steps.StepState{
		ids[0].ID: {Status: results.Done}, ids[1].ID: {Status: results.Skipped},
	}}
	if err := st.Save(p); err != nil {
		t.Fatal(err)
	}
	ls, err := cat.Labs()
	if err != nil {
		t.Fatal(err)
	}
	if q := find(t, ls, "quickstart"); q.ResumeAt != 2 || q.StateErr != "" {
		t.Fatalf("resume at %d (%s), want index 2 after two finished steps", q.ResumeAt, q.StateErr)
	}
	if err := os.WriteFile(p, []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	ls, _ = cat.Labs()
	if q := find(t, ls, "quickstart"); q.StateErr == "" {
		t.Fatal("damaged progress must be reported in the picker")
	}
}

// TestEngineCatalogFinishedOpensForReview: saved progress of a completed run
// makes the lab read done, and opening it without Restart gives a review
// session that shows the saved outcomes and runs nothing.
func TestEngineCatalogFinishedOpensForReview(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(t.TempDir()) // a restarted engine makes results/ here
	p, err := steps.StatePath(dir, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	cat := &EngineCatalog{StateDir: dir}
	// The run ended complete, but its cleanup once set deploy (step 5)
	// back to pending: it must still read done.
	st := &steps.State{Lab: "quickstart", Status: results.RunComplete, Steps: map[string]steps.StepState{}}
	s, err := cat.Open("quickstart", Options{Emit: func(steps.Event) {}, Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, si := range s.Steps() {
		status := results.Done
		if i == 4 {
			status = results.Pending
		}
		st.Steps[si.ID] = steps.StepState{Status: status}
	}
	if err := st.Save(p); err != nil {
		t.Fatal(err)
	}
	q := find(t, mustLabs(t, cat), "quickstart")
	if !q.Finished || q.ResumeAt != q.Steps {
		t.Fatalf("info %+v: a completed run must read finished, not resume at %d", q, q.ResumeAt+1)
	}
	r, err := cat.Open("quickstart", Options{Emit: func(steps.Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Review() || !r.Info().Finished {
		t.Fatal("opening a finished lab without Restart must give the review")
	}
	if got := r.Steps()[0].Status; got != results.Done {
		t.Fatalf("review step 1 is %v, want the saved done", got)
	}
	if got := r.RunStep(t.Context(), 4); got != results.Pending {
		t.Fatalf("RunStep in review returned %v: it must run nothing and report the saved status", got)
	}
	if _, err := r.Plan(1); err != nil {
		t.Fatalf("review cannot show step 2's commands: %v", err)
	}
	if err := r.SetVars(map[string]string{"instances": "2"}); err == nil {
		t.Fatal("review accepted new variables")
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), `"complete"`) {
		t.Fatalf("opening for review changed the saved progress:\n%s", b)
	}
	n, err := cat.Open("quickstart", Options{Emit: func(steps.Event) {}, Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	if n.Review() || n.Info().Finished || n.Info().ResumeAt != -1 {
		t.Fatalf("Restart must give a new run: review %v, info %+v", n.Review(), n.Info())
	}
}

func mustLabs(t *testing.T, c Catalog) []LabInfo {
	t.Helper()
	ls, err := c.Labs()
	if err != nil {
		t.Fatal(err)
	}
	return ls
}
