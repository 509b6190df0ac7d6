// Package labs loads, validates and lists labs: a lab is a directory holding
// lab.yaml (the steps, variables and roles) and the markdown each step shows.
// The labs shipped with dpulab are embedded; more come from --lab-dir.
//
// The key reference for lab.yaml is labs/README.md. This package only reads
// and checks lab files; the steps engine runs them.
package labs

import (
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Kind is what a step does. See labs/README.md for each kind's keys.
type Kind string

// The step kinds.
const (
	// KindRead shows markdown and runs nothing.
	KindRead Kind = "read"
	// KindRun runs shell commands on the hosts of its roles.
	KindRun Kind = "run"
	// KindCheck runs only its verify command (a prerequisite check).
	KindCheck Kind = "check"
	// KindTask is done by the trainee in a shell on its host; its verify
	// decides, and its run commands are what "do it for me" runs.
	KindTask Kind = "task"
	// KindTemplate renders a file from a template and writes it to hosts.
	KindTemplate Kind = "template"
	// KindDeploy starts N instances of the bundled server on each host.
	KindDeploy Kind = "deploy"
	// KindBench runs the load generator against a deployed group.
	KindBench Kind = "bench"
	// KindCompare runs one bench profile against several variants.
	KindCompare Kind = "compare"
	// KindTCO estimates fleet savings from inputs and a compare result.
	KindTCO Kind = "tco"
	// KindCleanup runs at the end and on abort, always.
	KindCleanup Kind = "cleanup"
)

// Kinds lists the step kinds dpulab ships, in the order the README
// documents them. labs registers the syntax of most; template's and tco's
// is registered by their packages under steps/kinds/ (Unlinked names any
// a program does not link). RegisteredKinds adds kinds registered from
// other packages.
var Kinds = []Kind{KindRead, KindRun, KindCheck, KindTask, KindTemplate, KindDeploy, KindBench, KindCompare, KindTCO, KindCleanup}

// VarType is the type of a lab variable; values given with --set are checked
// against it before anything runs.
type VarType string

// The variable types.
const (
	// TypeInt is a decimal integer.
	TypeInt VarType = "int"
	// TypeString is any text (always shell-quoted when substituted).
	TypeString VarType = "string"
	// TypeBool is true or false.
	TypeBool VarType = "bool"
	// TypeDuration is a Go duration: 500ms, 5s, 2m.
	TypeDuration VarType = "duration"
	// TypeSize is a byte count with an optional unit: 32, 4KiB, 1MiB, 64k.
	TypeSize VarType = "size"
	// TypeEnum is one of Variable.Values.
	TypeEnum VarType = "enum"
)

// Lab is one lab as loaded from lab.yaml. Fields that may reference variables
// are of type Value and are resolved by the engine with the run's variables.
type Lab struct {
	ID       string
	Title    string
	Summary  string
	Duration time.Duration
	// Roles are the kinds of host the lab needs, in declaration order.
	Roles []Role
	// Variables are in declaration order; Var looks one up by name.
	Variables  []Variable
	References []Reference
	Steps      []Step
	// Booth is what booth mode (dpulab --booth) may do on its own.
	Booth Booth

	// File is the path of lab.yaml as shown in messages (e.g.
	// "labs/quickstart/lab.yaml" or "embedded:quickstart/lab.yaml").
	File string
	// Dir is the lab's directory inside FS.
	Dir string
	// FS holds the lab's files (docs, templates); read them with ReadFile.
	FS fs.FS
	// Embedded is true for labs compiled into dpulab.
	Embedded bool
}

// Booth is the lab's booth-mode policy: booth mode plays a lab unattended
// and answers only the questions listed here by itself; every other one
// (unlisted confirmations, host keys, passwords) is refused after a
// timeout and the loop starts over.
type Booth struct {
	// AutoConfirm lists the ids of steps whose confirmation (confirm: or
	// sudo:) booth mode may answer with yes.
	AutoConfirm []string
}

// Role is a kind of host a lab needs (client, server, baseline, ...). An
// inventory maps hosts to roles; without one, every role is this machine.
type Role struct {
	Name        string
	Description string
	// Optional roles may have no host in an inventory: a step on such
	// roles alone is skipped, and a compare variant on one is listed as
	// not run with the reason, instead of the run being refused.
	Optional bool
	Line     int
}

// Variable is a typed, bounded lab parameter a person may change (--set,
// the TUI's variables form).
type Variable struct {
	Name    string
	Type    VarType
	Default string
	// Min and Max bound int, duration and size variables (in the variable's
	// own syntax, e.g. "1s" or "4KiB"); empty means unbounded.
	Min, Max string
	// Values are the allowed values of an enum.
	Values []string
	// Pattern is an optional regular expression a string must match whole.
	Pattern     string
	Description string
	// Rehearsal, when set, is the value a rehearsal (--rehearse) takes
	// when the variable is not set: a value of the variable's type, or
	// RehearsalDefaultRoute (this machine's default route: its interface
	// for a string, its MTU for an int).
	Rehearsal string
	Line      int
}

// RehearsalDefaultRoute as a variable's rehearsal value reads it from this
// machine's default route.
const RehearsalDefaultRoute = "default-route"

// Reference is a published figure the report shows beside ours. Source names
// the document and the section or figure it comes from.
type Reference struct {
	Label  string
	Value  string
	Source string
	// Step optionally ties the figure to a compare or bench step id.
	Step string
	// Figure is the id in assets/figures.yaml the figure was taken from
	// (Label, Value and Source are filled from it); empty when the lab
	// wrote the figure out itself.
	Figure string
	Line   int
}

// Value is a scalar field that may reference variables as {{.vars.NAME}},
// e.g. instances: "{{.vars.instances}}". Resolve it with the run's
// variables, then read it with the typed accessors in template.go. The zero
// Value means "not set".
type Value string

// Step is one step of a lab. The common keys and the command keys are
// fields here; the keys of deploy, bench and compare live in the pointer
// for that kind, and those of a kind whose package reads them alone in
// Spec.
type Step struct {
	ID    string
	Title string
	Kind  Kind
	// On lists the roles the step runs on. Empty for read and tco steps; for
	// a lab with a single role it defaults to that role.
	On []string
	// Doc is the markdown file (relative to the lab dir) shown for the step.
	Doc string

	// Run holds shell command templates (run, cleanup), each a Go
	// text/template in which every substituted value is shell-quoted.
	Run []string
	// Sudo runs the commands (and verify/skip_if) as root.
	Sudo bool
	// Timeout bounds each command; empty means the engine's default.
	Timeout Value
	// Confirm, when non-empty, is the question asked before the step runs
	// (confirm: true gives a default question).
	Confirm string
	// SkipIf is a command template; exit status 0 means the step's work is
	// already done and the step is skipped.
	SkipIf string
	// Verify checks the step's outcome (required for check steps).
	Verify *Verify
	// Hint is shown when the step fails: what to look at, what to do.
	Hint string
	// Hardware marks a check of the hardware the lab is about (a DPU in
	// the right mode, an RDMA device): a rehearsal (steps.Options.Rehearse)
	// skips it with a visible note; otherwise its failure stops the run
	// with what is missing.
	Hardware bool
	// Deploy, Bench and Compare are the keys of deploy, bench and compare
	// steps (a compare has both Bench and Compare), read by their kinds'
	// packages (steps/kinds/deploy, steps/kinds/load): a vocabulary the
	// kinds, lint and the estimate share, so the types stay here (see
	// KindSyntax).
	Deploy  *DeploySpec
	Bench   *BenchSpec
	Compare *CompareSpec
	// Spec holds the keys a kind's package reads alone, as its
	// KindSyntax.Parse kept them, typed by that package (template's,
	// tco's, run's record:, check's vsphere:); nil when it keeps none.
	Spec any

	// Line is the line of the step's "- id:" entry in File.
	Line int
}

// Verify is a check run after a step's commands (or alone, in a check step).
type Verify struct {
	// Run is a command template, quoted like Step.Run.
	Run string
	// ExpectExit is the exit status that passes (default 0).
	ExpectExit int
	// Expect, when non-empty, is a regular expression the output (stdout
	// and stderr together) must match.
	Expect string
	// Retries is how many more times to try after a failure (default 0).
	Retries int
	// Interval is the wait between tries (default 1s).
	Interval time.Duration
	Line     int
}

// DeploySpec starts instances of the bundled server on each host of the
// step's roles and records them so cleanup stops exactly those.
type DeploySpec struct {
	// Group names the deployed servers for bench and compare steps.
	Group string
	// Instances is how many servers per host.
	Instances Value
	// Port is the first port (default 7000); instance i listens on Port+i.
	Port Value
	// Config is the redis.conf template ("assets/redis.conf.tmpl" or a file
	// in the lab dir), rendered per instance; empty means the built-in
	// defaults.
	Config string
	// Transport is tcp, unix or rdma (default tcp).
	Transport Value
	// Bind is the listen address (default 127.0.0.1).
	Bind Value
	// Settings are extra redis.conf directives (name → value) appended to
	// the rendered config, e.g. io-threads: 2.
	Settings []Setting
	// Server is the program the instances run: bundled (the default,
	// `dpulab server`), redis-server or valkey-server (the distribution's,
	// found on the host or installed after a confirmation).
	Server Value
}

// Setting is one redis.conf directive with a value that may reference
// variables, kept in file order.
type Setting struct {
	Name  string
	Value Value
}

// BenchSpec is a load profile: what `dpulab bench` runs from the client role
// against every instance of a group.
type BenchSpec struct {
	// Target is the deploy group the load goes to.
	Target string
	// Clients is the number of connections per server instance.
	Clients Value
	// Pipeline is the number of requests in flight per connection.
	Pipeline Value
	// Ratio is SET:GET (memtier's convention), e.g. "1:10".
	Ratio Value
	// DataSize is the value size (size syntax).
	DataSize Value
	// Duration is how long each timed run lasts (unless Requests is set).
	Duration Value
	// Warmup runs load before timing starts.
	Warmup Value
	// Requests, when set, ends a run after this many requests instead.
	Requests Value
	// Rate caps requests per second per client (0 or empty = no cap).
	Rate Value
	// Runs is how many timed repetitions (mean ± stddev over them).
	Runs Value
	// KeyMaximum is the size of the key space.
	KeyMaximum Value
	// Prefill writes every key once before the first run.
	Prefill Value
	// Transport overrides the group's transport for the client side.
	Transport Value
	// ClientsHosts is how many hosts of the step's role share the load
	// (empty: every host of the role; 1: the first only).
	ClientsHosts Value
	// Capacity, when set, adds a capacity search to each variant and
	// sweep point (capacity:): the highest rate at which a latency
	// percentile stays under a cap.
	Capacity *CapacitySpec
}

// CompareSpec runs the step's BenchSpec against each variant, at each value
// of the sweep, Runs times (the BenchSpec's runs).
type CompareSpec struct {
	Variants []Variant
	// Sweep, when non-nil, repeats the comparison for each value of one
	// variable (instances, data_size, clients...).
	Sweep *Sweep
}

// Variant is one side of a comparison: where the servers are and how they
// are reached. The first variant is the one deltas are taken against.
type Variant struct {
	Label       string
	Description string
	// On is the role whose hosts run this variant's servers.
	On string
	// Group is the deploy group to use (defaults to the bench target).
	Group string
	// Deploy, when non-nil, overrides keys of the group's deploy step for
	// this variant (the engine redeploys for it).
	Deploy *DeploySpec
	// Transport is how the bench reaches this variant's servers.
	Transport Value
	// Settings are redis.conf directives for this variant's servers.
	Settings []Setting
	// NetPath, when set, runs this variant over an emulated network path
	// (runner/netpath: direct, firewall, overlay+firewall): the servers in
	// one network namespace of their host, the load generator in another,
	// joined the way the path says. Such a variant is an emulation and is
	// labelled so; where the path cannot be made (not root, no ip or nft,
	// no overlay in the kernel) it is skipped with the reason.
	NetPath string
	// FirewallRules is the path's N (rules walked before the matching
	// ones); unset: runner/netpath's default.
	FirewallRules Value
	Line          int
}

// Sweep repeats a comparison for each value of one variable.
type Sweep struct {
	// Var is the variable's name; each value is checked against it.
	Var    string
	Values []string
	// From, when set instead of Values, is a template (values:
	// "{{.vars.NAME}}") whose rendering lists the values, separated by
	// commas or spaces: a lab variable, so that --set can shorten a sweep.
	From Value
	Line int
}

// Points are the sweep's values with the run's variables.
func (s *Sweep) Points(vars map[string]string) ([]string, error) {
	if s.From == "" {
		return s.Values, nil
	}
	r, err := s.From.Resolve(vars)
	if err != nil {
		return nil, err
	}
	return splitList(r)
}

// splitList splits "10,20 30" into its values; empty is an error.
func splitList(s string) ([]string, error) {
	out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(out) == 0 {
		return nil, fmt.Errorf("sweep values %q: give at least one value, separated by commas", s)
	}
	return out, nil
}

// Var returns the variable called name.
func (l *Lab) Var(name string) (Variable, bool) {
	for _, v := range l.Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// Step returns the step with id, or nil.
func (l *Lab) Step(id string) *Step {
	for i := range l.Steps {
		if l.Steps[i].ID == id {
			return &l.Steps[i]
		}
	}
	return nil
}

// RoleNames returns the names of the lab's roles in declaration order.
func (l *Lab) RoleNames() []string {
	out := make([]string, len(l.Roles))
	for i, r := range l.Roles {
		out[i] = r.Name
	}
	return out
}

// ReadFile reads a file of the lab: a doc or template relative to the lab
// dir, or "assets/NAME" from package assets.
func (l *Lab) ReadFile(name string) ([]byte, error) {
	return readLabFile(l.FS, l.Dir, name)
}

// Doc returns the markdown of a step (empty when the step has no doc).
func (l *Lab) Doc(s *Step) (string, error) {
	if s.Doc == "" {
		return "", nil
	}
	b, err := l.ReadFile(s.Doc)
	return string(b), err
}
