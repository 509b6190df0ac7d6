package lab

import "time"

// BoothConfig is booth mode's timing under the name cmd/dpulab still uses
// (tui.Config.Booth); the page itself never reads it. Booth mode lives in
// package booth, whose Config has the same fields (so the two convert):
// this copy goes once cmd/dpulab names booth.Config.
type BoothConfig struct {
	StepDelay     time.Duration
	PromptTimeout time.Duration
	CompareHold   time.Duration
	ErrorHold     time.Duration
	AutoConfirm   []string
	KeepResults   int
}
