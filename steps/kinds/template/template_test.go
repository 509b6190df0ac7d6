package template_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kind/kindtest"
	_ "github.com/dpulab/dpulab/steps/kinds/template"
)

const templateLab = `
id: faketemplate
title: Fake template
summary: a template step
duration: 1m
roles:
  web: web servers
variables:
  maxmemory:
    type: string
    default: 64mb
    description: the server's memory
steps:
  - id: conf
    title: Write the config
    kind: template
    template: redis.conf.tmpl
    dest: "{{.workdir}}/{{.host}}.conf"
    mode: "0600"
`

func plan(t *testing.T, env *kindtest.Env) kind.Plan {
	t.Helper()
	k, ok := kind.Lookup("template")
	if !ok || !k.WritesFiles {
		t.Fatal("the template kind is not registered as writing files")
	}
	p, err := k.Resolve(env, env.Step(t, "conf"), map[string]string{"maxmemory": "128mb"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newEnv(t *testing.T) *kindtest.Env {
	return kindtest.New(kindtest.Lab(t, templateLab, map[string]string{
		"redis.conf.tmpl": "# on {{.host}}\nmaxmemory {{.vars.maxmemory}}\n",
	}), "a", "b")
}

// TestTemplatePlan: the plan names each host's rendered dest; Rendered
// shows each host's file without writing it.
func TestTemplatePlan(t *testing.T) {
	env := newEnv(t)
	p := plan(t, env)
	c := p.Commands()
	if len(c) != 2 || c[1].Host != "b" || c[1].Cmd != "# write /tmp/dpulab-test-wd/b.conf (rendered from redis.conf.tmpl)" {
		t.Errorf("plan %+v", c)
	}
	files, err := p.(kind.Renderer).Rendered()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Content != "# on a\nmaxmemory 128mb\n" || files[0].Path != "/tmp/dpulab-test-wd/a.conf" {
		t.Errorf("rendered %+v", files)
	}
	if f := env.Target("a").Files; len(f) != 0 {
		t.Errorf("planning wrote %v", f)
	}
}

// TestTemplateRun: each host gets its own rendering, with the step's
// mode, and the step says what it wrote.
func TestTemplateRun(t *testing.T) {
	env := newEnv(t)
	if err := plan(t, env).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"a", "b"} {
		f, ok := env.Target(h).Files["/tmp/dpulab-test-wd/"+h+".conf"]
		if !ok || string(f.Data) != "# on "+h+"\nmaxmemory 128mb\n" || f.Mode != 0o600 {
			t.Errorf("%s: wrote %q mode %o", h, f.Data, f.Mode)
		}
	}
	if ls := env.Lines(); len(ls) != 2 || !strings.HasPrefix(ls[0].Text, "wrote /tmp/dpulab-test-wd/a.conf") {
		t.Errorf("said %+v", ls)
	}
}
