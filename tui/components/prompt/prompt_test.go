package prompt

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/common"
)

func TestSafeDefaultsAndSingleReply(t *testing.T) {
	tests := []struct {
		kind steps.PromptKind
		want string
	}{
		{steps.PromptHostKey, "refuse"},
		{steps.PromptConfirm, "no"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			var got []steps.Answer
			m := New(common.NewCommon(true, 100, 30), steps.Prompt{Type: tc.kind, Reply: func(a steps.Answer) { got = append(got, a) }})
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
			m.Update(tea.KeyMsg{Type: tea.KeyEnter})
			m.Answer(steps.Answer{Choice: "yes"}, false)
			if len(got) != 1 || got[0].Choice != tc.want {
				t.Fatalf("replies %+v, want exactly one %q", got, tc.want)
			}
		})
	}
}

func TestDeadlineAnswersOnItsOwn(t *testing.T) {
	var got []steps.Answer
	m := New(common.NewCommon(true, 100, 30), steps.Prompt{Type: steps.PromptHostKey, Reply: func(a steps.Answer) { got = append(got, a) }})
	now := time.Now()
	m.SetDeadline(now.Add(time.Second), steps.Answer{Choice: "refuse"})
	if cmd := m.Tick(now); cmd != nil || len(got) != 0 {
		t.Fatal("answered before the deadline")
	}
	cmd := m.Tick(now.Add(2 * time.Second))
	if cmd == nil || len(got) != 1 || got[0].Choice != "refuse" {
		t.Fatalf("replies %+v: the deadline must give the safe answer", got)
	}
	if msg := cmd().(AnsweredMsg); !msg.Auto {
		t.Fatal("an automatic answer must say so")
	}
}
