package runner

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dpulab/dpulab/internal/suggest"
)

// An inventory's mistakes said in its author's words: a field yaml.v3
// reports as "field adress not found in type runner.Host" reads "unknown
// field adress in host h1; did you mean address?", and a role no lab uses
// ("roles: [locl]") is refused with the roles that exist and the closest
// one, rather than leaving the host out of every step without a word.

// unknownFieldRe is yaml.v3's message for a key KnownFields refuses.
var unknownFieldRe = regexp.MustCompile(`^line (\d+): field (.+) not found in type runner\.(\w+)$`)

// fieldsOf lists the yaml keys a struct type takes, in declaration order.
func fieldsOf(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// unknownField rewrites one of yaml.v3's unknown-field messages, naming
// where the field is (the host by name, the vcenter section, the top
// level), the closest field it takes and all the fields it takes; ok is
// false for any other message.
func unknownField(path, msg string, doc *yaml.Node) (string, bool) {
	m := unknownFieldRe.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	line, _ := strconv.Atoi(m[1])
	field := m[2]
	var where string
	var fields []string
	switch m[3] {
	case "Host":
		where = "in " + hostAt(doc, line)
		fields = fieldsOf(reflect.TypeOf(Host{}))
	case "VCenter":
		where = "in the vcenter section"
		fields = slices.DeleteFunc(fieldsOf(reflect.TypeOf(VCenter{})), func(s string) bool { return s == "password" })
	case "Inventory":
		where = "at the top level"
		fields = fieldsOf(reflect.TypeOf(Inventory{}))
	default:
		return "", false
	}
	out := fmt.Sprintf("%s:%d: unknown field %s %s", path, line, field, where)
	if s := suggest.Closest(field, fields); s != "" {
		out += "; did you mean " + s + "?"
	}
	return out + " (it takes: " + strings.Join(fields, ", ") + ")", true
}

// hostAt names the host whose entry under hosts holds line: "host NAME",
// or "host #N" when it has no name yet.
func hostAt(doc *yaml.Node, line int) string {
	if doc == nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "a host"
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "hosts" || top.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		found, n := (*yaml.Node)(nil), 0
		for j, it := range top.Content[i+1].Content {
			if it.Line <= line {
				found, n = it, j+1
			}
		}
		if found == nil {
			break
		}
		if found.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(found.Content); k += 2 {
				if found.Content[k].Value == "name" && found.Content[k+1].Value != "" {
					return "host " + found.Content[k+1].Value
				}
			}
		}
		return fmt.Sprintf("host #%d", n)
	}
	return "a host"
}

// CheckRoles refuses every role of a hosts.yaml host that is not in known
// (the roles of the labs dpulab knows: a role no lab uses is a typo, and
// the host would silently take part in nothing), naming the host and line,
// the closest known role and all of them. An Ansible inventory's groups
// are its own business and are not checked.
func (inv *Inventory) CheckRoles(known []string) error {
	if inv == nil || inv.ansible || len(known) == 0 {
		return nil
	}
	known = slices.Clone(known)
	sort.Strings(known)
	known = slices.Compact(known)
	var errs []string
	for _, h := range inv.Hosts {
		at := inv.Path
		if h.Line > 0 {
			at = fmt.Sprintf("%s:%d", inv.Path, h.Line)
		}
		for _, r := range h.Roles {
			if slices.Contains(known, r) || strings.TrimSpace(r) == "" {
				continue
			}
			msg := fmt.Sprintf("%s: host %s: unknown role %q", at, h.Name, r)
			if s := suggest.Closest(r, known); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			errs = append(errs, msg+" (the labs' roles: "+strings.Join(known, ", ")+")")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
