package deploy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dpulab/dpulab/labs"
)

// This file is the deploy kind's lab keys: read, checked and written back
// here, registered with labs. What they are read into, labs.DeploySpec in
// labs.Step.Deploy, stays in labs: bench targets and compare variants name
// deploy groups, and lint's cross-step checks and the time estimate read
// them. A compare variant's deploy: override is read with ReadKeys too
// (steps/kinds/load).
//
//	steps:
//	  - id: deploy
//	    title: Start the servers
//	    kind: deploy
//	    on: server
//	    group: servers        # what bench's target: names; default the step id
//	    instances: 4
//	    port: 7400            # the first instance's; the others count up
//	    config: redis.conf.tmpl
//	    transport: tcp        # tcp, unix or rdma
//	    bind: 0.0.0.0
//	    settings: {maxmemory: 1gb}
//	    server: bundled       # or redis-server, valkey-server

// Keys are a deploy step's keys beside the common ones; a variant's
// override takes them all but group.
var Keys = []string{"group", "instances", "port", "config", "transport", "bind", "settings", "server"}

func init() {
	labs.RegisterKind(labs.KindDeploy, labs.KindSyntax{Keys: Keys, OnHosts: true, Parse: parseStep, Encode: func(s *labs.Step, m *labs.StepEncoder) {
		if d := s.Deploy; d != nil {
			m.String("group", d.Group)
			EncodeKeys(m, d)
		}
	}})
}

// parseStep reads a deploy step: its group (the step id by default) is
// deployed once in the lab.
func parseStep(sp *labs.StepParser, s *labs.Step) {
	s.Deploy = ReadKeys(sp, false)
	if s.Deploy.Group == "" {
		s.Deploy.Group = s.ID
	}
	if prev, dup := Groups(sp.Lab())[s.Deploy.Group]; dup {
		sp.Errorf("", "group %q is already deployed by step %s", s.Deploy.Group, prev.ID)
	}
}

// Groups maps each group deployed by a step of l to the first deploy step
// that deploys it. Read while parsing (StepParser.Lab), it holds the
// groups the steps before this one deploy.
func Groups(l *labs.Lab) map[string]*labs.Step {
	out := map[string]*labs.Step{}
	for i := range l.Steps {
		st := &l.Steps[i]
		if st.Kind != labs.KindDeploy || st.Deploy == nil || st.Deploy.Group == "" {
			continue
		}
		if _, dup := out[st.Deploy.Group]; !dup {
			out[st.Deploy.Group] = st
		}
	}
	return out
}

// GroupList says which groups are deployed so far, for a problem with a
// group that is not: " (deployed so far: a, b)".
func GroupList(groups map[string]*labs.Step) string {
	if len(groups) == 0 {
		return " (this lab deploys none yet)"
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	return " (deployed so far: " + strings.Join(names, ", ") + ")"
}

// ReadKeys reads the keys of a deploy step, or of a compare variant's
// deploy override (override: group not read, nothing required).
func ReadKeys(sp *labs.StepParser, override bool) *labs.DeploySpec {
	what := sp.What()
	d := &labs.DeploySpec{}
	if !override {
		d.Group = sp.Node("group").ID(what + " group")
	}
	d.Instances = sp.Value("instances", labs.CheckIntMin(1))
	d.Port = sp.Value("port", labs.CheckPort)
	d.Config = sp.ConfigTemplateFile("config")
	d.Transport = sp.Value("transport", labs.CheckTransport)
	d.Bind = sp.Value("bind", nil)
	d.Settings = ReadSettings(sp.Node("settings"), what)
	d.Server = sp.Value("server", checkServer)
	if n := sp.Node("server"); n.Present() && d.Server.IsSet() && !strings.Contains(string(d.Server), "{{") {
		// What can be told from the file alone; the engine checks the
		// resolved step with its variant's overrides again.
		if err := ServerAccepts(string(d.Server), string(d.Transport), settingNames(d.Settings)); err != nil {
			n.Errorf("%s: %v", what, err)
		}
	}
	return d
}

// ReadSettings reads settings: (redis.conf directives and their values),
// of a deploy step or a compare variant (what names it).
func ReadSettings(n labs.Node, what string) []labs.Setting {
	sp := n.Map(what + " settings")
	if sp == nil {
		return nil
	}
	var out []labs.Setting
	for _, e := range sp.Entries() {
		if strings.ContainsAny(e.Name, " \t\n") || e.Name == "" {
			e.Key.Errorf("%s settings: %q is not a redis.conf directive name", what, e.Name)
		}
		v := e.Value.Value(what+" settings "+e.Name, nil)
		if strings.Contains(string(v), "\n") {
			e.Value.Errorf("%s settings %s: a directive's value must fit on one line", what, e.Name)
		}
		out = append(out, labs.Setting{Name: e.Name, Value: v})
	}
	return out
}

func settingNames(ss []labs.Setting) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func checkServer(s string) error {
	if slices.Contains(ServerNames, s) {
		return nil
	}
	return fmt.Errorf("server %q: use %s", s, strings.Join(ServerNames, ", "))
}

// EncodeKeys writes back the keys ReadKeys read (all but group).
func EncodeKeys(m *labs.StepEncoder, d *labs.DeploySpec) {
	m.Opt("instances", string(d.Instances))
	m.Opt("port", string(d.Port))
	m.Opt("config", d.Config)
	m.Opt("transport", string(d.Transport))
	m.Opt("bind", string(d.Bind))
	EncodeSettings(m, d.Settings)
	m.Opt("server", string(d.Server))
}

// EncodeSettings writes settings: when there are any.
func EncodeSettings(m *labs.StepEncoder, ss []labs.Setting) {
	if len(ss) == 0 {
		return
	}
	sm := m.Map("settings")
	for _, s := range ss {
		sm.String(s.Name, string(s.Value))
	}
}
