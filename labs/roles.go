package labs

import (
	"fmt"
	"strings"
	"time"
)

// RoleStatus says which hosts play one of a lab's roles.
type RoleStatus struct {
	Role  string   `json:"role"`
	Hosts []string `json:"hosts"`
	// Local is true when no inventory is given and the role falls to this
	// machine.
	Local bool `json:"local,omitempty"`
}

// Coverage reports, for each of the lab's roles, the hosts that play it.
// hostsByRole maps a role to the inventory's host names for it (an
// inventory's roles, inverted); nil means no inventory, and then every role
// is this machine ("local"), which always covers the lab.
func (l *Lab) Coverage(hostsByRole map[string][]string) []RoleStatus {
	out := make([]RoleStatus, len(l.Roles))
	for i, r := range l.Roles {
		out[i].Role = r.Name
		if hostsByRole == nil {
			out[i].Hosts = []string{"local"}
			out[i].Local = true
			continue
		}
		out[i].Hosts = append([]string(nil), hostsByRole[r.Name]...)
	}
	return out
}

// MissingRoles returns the lab's roles no host plays (nil when the
// inventory covers the lab, or when there is no inventory). An optional
// role without a host is not missing.
func (l *Lab) MissingRoles(hostsByRole map[string][]string) []string {
	var missing []string
	for i, s := range l.Coverage(hostsByRole) {
		if len(s.Hosts) == 0 && !l.Roles[i].Optional {
			missing = append(missing, s.Role)
		}
	}
	return missing
}

// FormatDuration writes a lab's duration the way people say it: 3m, 45m,
// 1h30m, 1m30s.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d <= 0 {
		return "0s"
	}
	h, m, sec := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}

// OptionalRole reports whether name is one of the lab's roles declared
// optional: true (a role an inventory may leave without a host).
func (l *Lab) OptionalRole(name string) bool {
	for _, r := range l.Roles {
		if r.Name == name {
			return r.Optional
		}
	}
	return false
}
