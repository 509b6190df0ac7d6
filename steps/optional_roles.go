package steps

import (
	"context"
	"fmt"
	"strings"
)

// A lab may declare a role optional (labs.Role.Optional): an inventory
// may leave it without a host. The lab then runs with the hosts it has: a
// step on several roles runs on the hosts of the others, a step on absent
// optional roles alone is skipped with the reason (noHostPlan, through
// Engine.resolve, so the dry run, the TUI's command pane and the run all
// say it), and a compare variant on one is listed as not run with the
// reason (resolveLoad), never failed. Without an inventory every role is
// this machine, so an optional role always has a host then.

// absentOptional names the roles among roles that the lab declares
// optional and that no host of the inventory plays, or "" when every
// role has a host (or none is optional).
func (h *hostPool) absentOptional(roles []string) []string {
	if h.inv == nil {
		return nil
	}
	var out []string
	for _, r := range roles {
		if h.lab.OptionalRole(r) && !h.inv.HasRole(r) {
			out = append(out, r)
		}
	}
	return out
}

// noHostReason says why work on roles cannot run here, or "" when some
// host plays one of them: every role among them is optional and absent.
func (h *hostPool) noHostReason(roles []string) string {
	absent := h.absentOptional(roles)
	if len(roles) == 0 || len(absent) < len(roles) {
		return ""
	}
	what := "role " + strings.Join(absent, ", ")
	if len(absent) > 1 {
		what = "roles " + strings.Join(absent, ", ")
	}
	inv := "the inventory"
	if h.inv.Path != "" {
		inv = "inventory " + h.inv.Path
	}
	return fmt.Sprintf("no host plays %s in %s (optional in this lab: add it to a host's roles to run this)", what, inv)
}

// noHostPlan is a step whose roles are all optional and have no host.
type noHostPlan struct {
	e      *Engine
	step   string
	roles  []string
	reason string
}

// commands shows the step under its roles' names, in parentheses: no
// host plays them.
func (p noHostPlan) commands() []PlannedCommand {
	return []PlannedCommand{{Host: "(" + strings.Join(p.roles, ", ") + ")", Cmd: "# not run: " + p.reason}}
}

func (p noHostPlan) run(context.Context) error {
	p.e.say(p.step, "", "not run: %s", p.reason)
	return errSkipped
}
