package labs

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"6379", "6379"},
		{"/tmp/dpulab/x.conf", "/tmp/dpulab/x.conf"},
		{"a b", "'a b'"},
		{"x; rm -rf /", "'x; rm -rf /'"},
		{"it's", `'it'\''s'`},
		{"$(id)", "'$(id)'"},
		{"`id`", "'`id`'"},
		{"~root", "'~root'"},
		{"a\nb", "'a\nb'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ShellQuote(tt.in); got != tt.want {
				t.Errorf("ShellQuote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestRenderCommandQuotesEverything renders commands with hostile values and
// runs them through a real sh: each value must arrive as exactly one
// argument, unchanged, and nothing in it may run.
func TestRenderCommandQuotesEverything(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine")
	}
	hostile := []string{
		"x; touch /tmp/dpulab-pwned",
		"$(touch /tmp/dpulab-pwned)",
		"`touch /tmp/dpulab-pwned`",
		"a'b\"c",
		"two words",
		"",
		"*",
		"line\nbreak",
		"-n",
	}
	tmpls := []string{
		`printf '%s\n' {{.vars.v}}`,
		`printf '%s\n' {{.vars.v | lower | upper | lower}}`,
		`printf '%s\n' {{quote .vars.v}}`,
		`{{if .vars.v}}printf '%s\n' {{.vars.v}}{{else}}printf '%s\n' ''{{end}}`,
		`{{$x := .vars.v}}printf '%s\n' {{$x}}`,
	}
	for _, tmpl := range tmpls {
		for _, v := range hostile {
			t.Run(tmpl+"/"+v, func(t *testing.T) {
				cmd, err := RenderCommand(tmpl, Data(map[string]string{"v": v}, nil))
				if err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(sh, "-c", cmd).Output()
				if err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
				want := strings.ToLower(v)
				if !strings.Contains(tmpl, "upper") {
					want = v
				}
				if got := strings.TrimSuffix(string(out), "\n"); got != want {
					t.Errorf("command %s printed %q, want %q", cmd, got, want)
				}
			})
		}
	}
}

func TestRenderCommandExtraDataAndArithmetic(t *testing.T) {
	got, err := RenderCommand(`{{.dpulab}} server --port {{add .vars.port .instance}} --dir {{.workdir}}/i{{.instance}}`,
		Data(map[string]string{"port": "7000"}, map[string]any{"dpulab": "/opt/my tools/dpulab", "instance": 3, "workdir": "/tmp/w"}))
	if err != nil {
		t.Fatal(err)
	}
	want := `'/opt/my tools/dpulab' server --port 7003 --dir /tmp/w/i3`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestRenderTextDoesNotQuote(t *testing.T) {
	got, err := RenderText("maxmemory {{.vars.mem}}\nname {{.vars.n}}", Data(map[string]string{"mem": "1gb", "n": "a b"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got != "maxmemory 1gb\nname a b" {
		t.Errorf("got %q", got)
	}
}

func TestRenderMissingKeyIsAnError(t *testing.T) {
	if _, err := RenderCommand("echo {{.vars.nope}}", Data(nil, nil)); err == nil {
		t.Error("a missing variable rendered without error")
	}
	if _, err := RenderText("{{.host}}", Data(nil, nil)); err == nil {
		t.Error("missing data rendered without error")
	}
}

func TestValueAccessors(t *testing.T) {
	vars := map[string]string{"n": "80", "d": "5s", "s": "4KiB", "b": "yes", "f": "0.15"}
	if n, err := Value("{{.vars.n}}").Int(vars, 1); err != nil || n != 80 {
		t.Errorf("Int = %d, %v", n, err)
	}
	if n, err := Value("").Int(vars, 7); err != nil || n != 7 {
		t.Errorf("unset Int = %d, %v; want the default", n, err)
	}
	if _, err := Value("{{.vars.d}}").Int(vars, 0); err == nil {
		t.Error("a duration read as an int")
	}
	if d, err := Value("{{.vars.d}}").Duration(vars, 0); err != nil || d != 5*time.Second {
		t.Errorf("Duration = %v, %v", d, err)
	}
	if d, err := Value("10").Duration(vars, 0); err != nil || d != 10*time.Second {
		t.Errorf("bare number Duration = %v, %v; want seconds", d, err)
	}
	if s, err := Value("{{.vars.s}}").Size(vars, 0); err != nil || s != 4096 {
		t.Errorf("Size = %d, %v", s, err)
	}
	if b, err := Value("{{.vars.b}}").Bool(vars, false); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if f, err := Value("{{.vars.f}}").Float(vars, 0); err != nil || f != 0.15 {
		t.Errorf("Float = %v, %v", f, err)
	}
	if s, err := Value("instances-{{.vars.n}}").String(vars, ""); err != nil || s != "instances-80" {
		t.Errorf("String = %q, %v", s, err)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"32", 32, true}, {"4KiB", 4096, true}, {"64k", 65536, true}, {"1MiB", 1 << 20, true},
		{"2gb", 2 << 30, true}, {"12 B", 12, true}, {"1.5k", 0, false}, {"-1", 0, false}, {"4XB", 0, false},
		{"99999999999999999999", 0, false}, {"9999999999999G", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v", tt.in, got, err)
			}
		})
	}
}
