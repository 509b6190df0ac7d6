package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version or VCS revision from the build info is shown.
var version = ""

func versionString() string {
	v := version
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if rev != "" {
		v += " (" + rev + ")"
	}
	var ts []string
	for _, n := range transport.Names() {
		var notes []string
		if transport.Simulated(n) != "" {
			notes = append(notes, "simulated")
		}
		if n == transport.RDMA {
			// The cgo provider, and whether this host can use it: a
			// -tags rdma binary runs without rdma-core or a device.
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
	return fmt.Sprintf("dpulab %s %s/%s %s; transports: %s", v, runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(ts, ", "))
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}
