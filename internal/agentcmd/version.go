package agentcmd

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/spf13/cobra"
)

// VersionString is what `version` prints: program's name, version (set at
// build time with -ldflags "-X main.version=v1.2.3" and passed in;
// otherwise the module version or VCS revision from the build info, with
// "+dirty" when the tree had changes), platform, Go version and the
// transports this build has. The engine records the agent's line in
// results (results.HostInfo.Agent), so a run says what measured it.
func VersionString(program, version string) string {
	v := version
	rev := ""
	dirty := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12:
				rev = s.Value[:12]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = true
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if rev != "" {
		if dirty {
			rev += "+dirty"
		}
		v += " (" + rev + ")"
	}
	var ts []string
	for _, n := range transport.Names() {
		var notes []string
		if transport.Simulated(n) != "" {
			notes = append(notes, "simulated")
		}
		if n == transport.RDMA {
			// The provider, and whether this host can use it: a binary
			// runs without rdma-core or a device.
			if name, err := rdma.Provider(); name != "" {
				notes = append(notes, name)
				if err != nil {
					notes = append(notes, "not usable on this host: "+err.Error())
				}
			}
		}
		t := string(n)
		if len(notes) > 0 {
			t += " (" + strings.Join(notes, "; ") + ")"
		}
		ts = append(ts, t)
	}
	return fmt.Sprintf("%s %s %s/%s %s; transports: %s", program, v, runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(ts, ", "))
}

// NewVersionCmd is `version`: VersionString's line.
func NewVersionCmd(program, version string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), VersionString(program, version))
			return err
		},
	}
}
