package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// labInfo is one lab as `dpulab labs --json` prints it: one line each,
// "type":"lab", after the stream's header line.
type labInfo struct {
	Type            string            `json:"type"`
	ID              string            `json:"id"`
	Title           string            `json:"title"`
	Summary         string            `json:"summary"`
	Duration        string            `json:"duration_text"`
	DurationSeconds float64           `json:"duration_seconds"`
	Roles           []labs.RoleStatus `json:"roles"`
	Covered         bool              `json:"covered"`
	Missing         []string          `json:"missing_roles,omitempty"`
	Embedded        bool              `json:"embedded"`
	File            string            `json:"file"`
}

func newLabsCmd() *cobra.Command {
	var (
		asJSON      bool
		labDirFlags []string
		inventory   string
	)
	cmd := &cobra.Command{
		Use:   "labs",
		Short: "List labs: built in and from --lab-dir",
		Long: `List the labs dpulab knows: the built-in ones and those in --lab-dir.
For each: id, title, duration, the roles it needs and whether they are
covered. Without --inventory every role runs on this machine, so every lab is
covered; with one, a lab is covered when some host plays each of its roles.

With --json, one JSON line per lab ("type":"lab") after a header line
({"type":"header","stream":"labs","schema_version":2}); see FORMATS.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all, err := labs.All(labDirs(labDirFlags)...)
			if err != nil {
				return err
			}
			var byRole map[string][]string
			if inventory != "" {
				byRole, err = inventoryRoles(inventory)
				if err != nil {
					return usageError{Err: err}
				}
			}
			infos := make([]labInfo, len(all))
			for i, l := range all {
				missing := l.MissingRoles(byRole)
				// A lab file is outside text: its title and summary
				// are filtered here, for the table and for --json
				// (which a script may print).
				infos[i] = labInfo{
					Type: "lab", ID: termtext.Line(l.ID), Title: termtext.Line(l.Title), Summary: termtext.Plain(l.Summary),
					Duration: labs.FormatDuration(l.Duration), DurationSeconds: l.Duration.Seconds(),
					Roles: l.Coverage(byRole), Covered: len(missing) == 0, Missing: missing,
					Embedded: l.Embedded, File: termtext.Line(l.File),
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				writeHeader(out, streamLabs, labsSchemaVersion)
				enc := json.NewEncoder(out)
				for _, in := range infos {
					if err := enc.Encode(in); err != nil {
						return fmt.Errorf("write: %w", err)
					}
				}
				return nil
			}
			return writeLabsTable(out, infos)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the labs as JSON lines")
	cmd.Flags().StringArrayVar(&labDirFlags, "lab-dir", nil, "also list the labs in `DIR` (repeatable; a lab there replaces a built-in one, or one from ~/.config/dpulab/labs or DPULAB_LAB_PATH, with the same id)")
	cmd.Flags().StringVar(&inventory, "inventory", "", "hosts.yaml `FILE` to check the labs' roles against")
	return cmd
}

// writeLabsTable prints the labs as a table that fits an 80-column
// terminal: id, duration, roles and hosts aligned on one row, and the
// title, free text of any length, on the row's next line, indented, where
// it wraps without breaking the columns.
func writeLabsTable(out io.Writer, infos []labInfo) error {
	var rows bytes.Buffer
	tw := tabwriter.NewWriter(&rows, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDURATION\tROLES\tHOSTS")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.ID, in.Duration, termtext.Line(roleNames(in.Roles)), termtext.Line(coverText(in)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(rows.String(), "\n"), "\n")
	var b strings.Builder
	b.WriteString(strings.TrimRight(lines[0], " ") + "\n")
	for i, in := range infos {
		b.WriteString(strings.TrimRight(lines[i+1], " ") + "\n")
		b.WriteString("    " + in.Title + "\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func roleNames(rs []labs.RoleStatus) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Role
	}
	return strings.Join(names, ", ")
}

// coverText says, in a few words, whether the lab can run on the hosts.
func coverText(in labInfo) string {
	if len(in.Missing) > 0 {
		return "missing: " + strings.Join(in.Missing, ", ")
	}
	var parts []string
	here := true
	for _, r := range in.Roles {
		if r.Local || len(r.Hosts) == 1 && r.Hosts[0] == runner.LocalName {
			continue
		}
		here = false
		parts = append(parts, r.Role+"="+strings.Join(r.Hosts, "+"))
	}
	if here {
		return "this machine"
	}
	return "ok (" + strings.Join(parts, " ") + ")"
}

// inventoryRoles reads an inventory file (hosts.yaml) and returns its roles
// as role → host names. Reading it opens no connection: listing labs never
// needs SSH or credentials.
func inventoryRoles(path string) (map[string][]string, error) {
	inv, err := runner.LoadInventory(path)
	if err != nil {
		return nil, err
	}
	if len(inv.Hosts) == 0 {
		return nil, nil // no hosts: every role is this machine, as for the engine
	}
	// HostsFor decides who plays a role, as for the engine (the role
	// "local" is this machine unless a host takes it).
	byRole := map[string][]string{}
	for _, r := range append(inv.Roles(), runner.LocalName) {
		hs, err := inv.HostsFor(r)
		if err != nil {
			continue
		}
		for _, h := range hs {
			byRole[r] = append(byRole[r], h.Name)
		}
	}
	return byRole, nil
}
