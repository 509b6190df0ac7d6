package labs

import (
	"fmt"
	"strconv"

	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/server/transport"
)

// netPath reads a compare variant's emulated network path (netpath,
// firewall_rules). The path joins two namespaces of one host, so the
// variant's servers must be reached over TCP from the same role.
func (p *parser) netPath(vm *mapping, v *Variant, s *Step, what string) {
	if n := vm.get("netpath"); n != nil {
		v.NetPath = p.str(n, what+" netpath")
		if _, err := netpath.ParseVariant(v.NetPath); err != nil {
			p.errf(n, "%s: %v", what, err)
		}
		if v.Transport != "" && v.Transport != Value(transport.TCP) {
			p.errf(vm.get("transport"), "%s: an emulated network path carries TCP: leave transport out or set it to tcp", what)
		}
		if v.On != "" && len(s.On) > 0 && v.On != s.On[0] {
			p.errf(vm.get("on"), "%s: an emulated network path joins two namespaces of one host: its servers must run on the load generator's role (%s)", what, s.On[0])
		}
	}
	if n := vm.get("firewall_rules"); n != nil {
		if v.NetPath == "" {
			p.errf(n, "%s: firewall_rules needs netpath: firewall or overlay+firewall", what)
		}
		v.FirewallRules = p.value(n, what+" firewall_rules", func(s string) error {
			k, err := strconv.Atoi(s)
			if err != nil || k < 1 || k > netpath.MaxFirewallRules {
				return fmt.Errorf("firewall_rules %q: want a number of rules from 1 to %d", s, netpath.MaxFirewallRules)
			}
			return nil
		})
	}
}
