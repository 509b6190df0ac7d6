package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/deploy"
	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/internal/atomicfile"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
)

// StateVersion is the schema version of a saved progress file.
const StateVersion = 1

// State is a lab's saved progress: which steps finished, what deploy
// started (so cleanup can stop exactly that, even from a later run) and
// where this run's results go. It is written after every step.
type State struct {
	Version int       `json:"version"`
	Lab     string    `json:"lab"`
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// Vars are the variables the run was started with; a resumed run keeps
	// them unless new --set values override them.
	Vars map[string]string `json:"vars,omitempty"`
	// Steps holds each step's outcome by step id.
	Steps map[string]StepState `json:"steps"`
	// Procs are the processes started by deploy steps and not stopped yet.
	Procs []runner.Proc `json:"procs,omitempty"`
	// Deployments record what each deploy step started, by group name.
	Deployments map[string]Deployment `json:"deployments,omitempty"`
	// ResultsDir is where this run writes its results.
	ResultsDir string `json:"results_dir,omitempty"`
	// Workdir is the run's working directory on every host
	// (/tmp/dpulab-LAB-RUN-NONCE): unique even for two runs of a lab
	// started in the same second, since cleanup deletes it.
	Workdir string `json:"workdir,omitempty"`
	// Hosts are the hosts this run has used (recorded before anything is
	// made there): where its working directory and processes may be.
	// Cleanup removes each host it has cleaned.
	Hosts []string `json:"hosts,omitempty"`
	// Stale are earlier runs whose cleanup did not finish; the next step
	// that runs cleans them up first.
	Stale []StaleRun `json:"stale,omitempty"`
	// Status is how the run ended, once it did (Engine.Finish); empty while
	// it is under way or when it was killed.
	Status results.RunStatus `json:"status,omitempty"`
	// Paths are the emulated network paths this run made (or was making)
	// and has not removed; recorded before each is made.
	Paths []netpath.Path `json:"paths,omitempty"`
}

// Finished reports whether the run this progress belongs to completed:
// the picker shows such a lab as done, and the next run starts over.
func (s *State) Finished() bool { return s != nil && s.Status == results.RunComplete }

// StepState is one step's saved outcome.
type StepState struct {
	Status   results.Status `json:"status"`
	Err      string         `json:"error,omitempty"`
	Finished time.Time      `json:"finished"`
	// Host, Cmd, Hint and Tail complete a failure: where and in which
	// command it happened, the lab's advice, the command's last lines.
	Host string   `json:"host,omitempty"`
	Cmd  string   `json:"command,omitempty"`
	Hint string   `json:"hint,omitempty"`
	Tail []string `json:"tail,omitempty"`
}

// Deployment is a group of server instances a deploy step started: where,
// and how to reach each one (so a bench in a later, resumed run finds them).
type Deployment struct {
	Step  string `json:"step"`
	Group string `json:"group"`
	// Key identifies what was deployed (instances, ports, settings), so a
	// compare redeploys only when a variant or sweep point needs otherwise.
	Key       string     `json:"key"`
	Instances []Instance `json:"instances"`
	// Server says which server ran when it was not the bundled one, as its
	// INFO server says: "redis-server 7.0.15" (deploy_server.go).
	Server string `json:"server,omitempty"`
}

// Instance is one server instance of a deployment (steps/kinds/deploy).
type Instance = deploy.Instance

var labIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// DefaultStateDir is $XDG_STATE_HOME/dpulab, or ~/.local/state/dpulab.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "dpulab"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the state directory: %w (set XDG_STATE_HOME)", err)
	}
	return filepath.Join(home, ".local", "state", "dpulab"), nil
}

// DefaultResultsRoot is where runs write their results folders unless told
// otherwise: $XDG_DATA_HOME/dpulab/results, or ~/.local/share/dpulab/results
// — one place per user, whatever directory dpulab was started from.
func DefaultResultsRoot() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "dpulab", "results"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the results folder: %w (set XDG_DATA_HOME, or give --results)", err)
	}
	return filepath.Join(home, ".local", "share", "dpulab", "results"), nil
}

// StatePath is the progress file of lab under dir.
func StatePath(dir, lab string) (string, error) {
	if !labIDPattern.MatchString(lab) {
		return "", fmt.Errorf("lab id %q cannot name a state file (letters, digits, . _ - only)", lab)
	}
	return filepath.Join(dir, lab+".json"), nil
}

// LoadState reads a saved progress file; a missing file is (nil, nil).
func LoadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read progress %s: %w", path, err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("progress file %s is damaged (%v); start over with --restart", path, err)
	}
	if s.Version > StateVersion {
		return nil, fmt.Errorf("progress file %s has version %d, newer than this dpulab's %d; upgrade dpulab or use --restart", path, s.Version, StateVersion)
	}
	if s.Steps == nil {
		s.Steps = map[string]StepState{}
	}
	return &s, nil
}

// Save writes the state atomically (temp file, fsync, rename).
func (s *State) Save(path string) error {
	s.Version = StateVersion
	s.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o600)
}

// LoadLabState reads the saved progress of lab from the state directory dir
// ("" = DefaultStateDir); (nil, nil) when there is none. The TUI's lab picker
// uses it to show "resume at step 4/9".
func LoadLabState(dir, lab string) (*State, error) {
	if dir == "" {
		d, err := DefaultStateDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	p, err := StatePath(dir, lab)
	if err != nil {
		return nil, err
	}
	return LoadState(p)
}
