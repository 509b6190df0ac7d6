package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/dpulab/dpulab/runner"
)

// ask emits a Prompt and waits for its reply or for ctx to end.
func (e *Engine) ask(ctx context.Context, p Prompt) (Answer, error) {
	ch := make(chan Answer, 1)
	p.Reply = func(a Answer) {
		select {
		case ch <- a:
		default: // a second reply is ignored
		}
	}
	e.opts.Emit(p)
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// confirm asks to go ahead with a step (unless --yes).
func (e *Engine) confirm(ctx context.Context, step, host, question string) error {
	if e.opts.Yes {
		return nil
	}
	a, err := e.ask(ctx, Prompt{Step: step, Type: PromptConfirm, Host: host, Message: question, Choices: []string{"yes", "no"}})
	if err != nil {
		return fmt.Errorf("no answer to %q: %w", question, err)
	}
	if a.Choice != "yes" {
		return errors.New("not confirmed (answer yes, or run with --yes)")
	}
	return nil
}

// enginePrompter forwards the runner's questions (host keys, passwords) to
// whoever renders the events, as Prompt events.
type enginePrompter struct {
	e *Engine
}

func (e *Engine) prompter() runner.Prompter {
	return enginePrompter{e: e}
}

// HostKey implements runner.Prompter.
func (p enginePrompter) HostKey(ctx context.Context, hk runner.HostKeyPrompt) (runner.HostKeyDecision, error) {
	if p.e.opts.AcceptNewHostKeys {
		return runner.AcceptAndSave, nil
	}
	a, err := p.e.ask(ctx, Prompt{
		Type: PromptHostKey, Host: hk.Host,
		Message:     fmt.Sprintf("The host key of %s (%s) is not known. Compare the fingerprint with the one the host's admin reads off (ssh-keygen -lf).", hk.Host, hk.Address),
		KeyType:     hk.KeyType,
		Fingerprint: hk.Fingerprint,
		Choices:     []string{"once", "save", "refuse"},
	})
	if err != nil {
		return runner.Refuse, err
	}
	switch a.Choice {
	case "once":
		return runner.AcceptOnce, nil
	case "save":
		return runner.AcceptAndSave, nil
	}
	return runner.Refuse, nil
}

// Secret implements runner.Prompter.
func (p enginePrompter) Secret(ctx context.Context, sp runner.SecretPrompt) (string, error) {
	msg := fmt.Sprintf("%s for %s@%s", sp.Kind, sp.User, sp.Host)
	if sp.Prompt != "" {
		msg += ": " + sp.Prompt
	}
	if sp.Attempt > 1 {
		msg += " (the previous answer was not accepted)"
	}
	a, err := p.e.ask(ctx, Prompt{Type: PromptSecret, Host: sp.Host, Message: msg})
	if err != nil {
		return "", err
	}
	if a.Choice == "cancel" {
		return "", errors.New("cancelled")
	}
	return a.Secret, nil
}
