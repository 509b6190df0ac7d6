package assets

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Recordings are results folders of real runs shipped inside dpulab, so
// that `dpulab replay NAME` (and a booth's `--loop`) can show a comparison
// where it cannot be run: on a laptop without root, at a booth without the
// hardware. Each is recordings/NAME/ holding the run's results.json as
// `dpulab run` wrote it and a README.md saying how, where and when it was
// made. A replay is labelled as a replay of what it recorded (an
// emulation, a rehearsal), with the recorded machine and date.

// RecordingFile is the results document inside a recording.
const RecordingFile = "results.json"

// Recordings lists the names of the shipped recordings, sorted.
func Recordings() []string {
	ents, err := fs.ReadDir(recordings, "recordings")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Recording returns a shipped recording's results.json.
func Recording(name string) ([]byte, error) {
	if !slices.Contains(Recordings(), name) {
		return nil, fmt.Errorf("no recording named %q ships with dpulab (there are: %s)", name, strings.Join(Recordings(), ", "))
	}
	return recordings.ReadFile(path.Join("recordings", name, RecordingFile))
}

// RecordingNotes returns how a shipped recording was made (its README.md).
func RecordingNotes(name string) (string, error) {
	b, err := recordings.ReadFile(path.Join("recordings", name, "README.md"))
	return string(b), err
}
