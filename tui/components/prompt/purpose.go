package prompt

import (
	"slices"

	"github.com/dpulab/dpulab/steps"
)

// Choice is one answer a dialog offers: Value is what the answer carries
// (and its first letter the key that gives it), Label what the button says.
type Choice struct{ Value, Label string }

// Purpose says what a dialog is for, which decides how it reads: its title,
// the words on its buttons, and which answer is the safe one (selected
// first, given by esc). The engine's questions get theirs from their kind
// (ForPrompt); a page that asks something of its own says so with its own
// Purpose, so that no button ever promises what its answer does not do.
type Purpose struct {
	Title   string
	Choices []Choice
	// Safe is the Value of the answer that changes nothing: refuse the
	// key, do not run, do not quit.
	Safe string
	// Default is the message when the question carries none.
	Default string
}

// label returns the button text for value v (v itself when unknown).
func (p Purpose) label(v string) string {
	for _, c := range p.Choices {
		if c.Value == v {
			return c.Label
		}
	}
	return v
}

// purposes are the engine's questions, by kind.
var purposes = map[steps.PromptKind]Purpose{
	steps.PromptHostKey: {
		Title:   "Unknown host key",
		Choices: []Choice{{"once", "Accept once"}, {"save", "Accept and save"}, {"refuse", "Refuse"}},
		Safe:    "refuse",
		Default: "This host is not in known_hosts. Compare the fingerprint with the one the host's owner gives you " +
			"(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the host) before accepting.",
	},
	steps.PromptConfirm: {
		Title:   "Confirm",
		Choices: []Choice{{"yes", "Yes, run it"}, {"no", "No"}},
		Safe:    "no",
		Default: "Run this step?",
	},
	steps.PromptSecret: {
		Title:   "Password needed",
		Choices: []Choice{{"ok", "OK"}, {"cancel", "Cancel"}},
		Safe:    "cancel",
		Default: "Enter the password.",
	},
}

// ForPrompt is the Purpose of an engine question: its kind's, with the
// buttons narrowed to (and ordered as) the choices the engine offers. The
// safe answer stays on offer even when the engine left it out: the engine
// takes it from every dialog that closes unanswered, so it must also be
// what a stray enter gives.
func ForPrompt(p steps.Prompt) Purpose {
	pu := purposes[p.Type]
	if len(p.Choices) == 0 {
		pu.Choices = slices.Clone(pu.Choices)
		return pu
	}
	narrowed := pu
	narrowed.Choices = nil
	for _, v := range p.Choices {
		if v != "" {
			narrowed.Choices = append(narrowed.Choices, Choice{v, pu.label(v)})
		}
	}
	if !slices.ContainsFunc(narrowed.Choices, func(c Choice) bool { return c.Value == pu.Safe }) {
		narrowed.Choices = append(narrowed.Choices, Choice{pu.Safe, pu.label(pu.Safe)})
	}
	return narrowed
}
