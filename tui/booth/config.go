package booth

import "time"

// Config sets booth mode's timing. Zero fields take the defaults.
type Config struct {
	// StepDelay is the visible countdown before each step.
	StepDelay time.Duration
	// PromptTimeout bounds every dialog: booth mode never waits forever.
	PromptTimeout time.Duration
	// CompareHold is how long the compare view stays before the restart.
	CompareHold time.Duration
	// ErrorHold is how long a failure stays on screen before cleanup and
	// restart.
	ErrorHold time.Duration
	// AutoConfirm lists the steps whose confirmation booth mode answers
	// with yes, after the visible countdown: the lab's booth: auto_confirm.
	// Every other dialog (unlisted confirmations, host keys, passwords)
	// is refused after PromptTimeout, and the loop starts over.
	AutoConfirm []string
	// KeepResults is how many results folders of its own booth mode
	// keeps; older ones it made are deleted (default 20). Folders it did
	// not make are never touched.
	KeepResults int
}

// DefaultKeep is how many of its results folders booth mode keeps.
const DefaultKeep = 20

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.StepDelay <= 0 {
		c.StepDelay = 5 * time.Second
	}
	if c.PromptTimeout <= 0 {
		c.PromptTimeout = 20 * time.Second
	}
	if c.CompareHold <= 0 {
		c.CompareHold = 60 * time.Second
	}
	if c.ErrorHold <= 0 {
		c.ErrorHold = 15 * time.Second
	}
	if c.KeepResults <= 0 {
		c.KeepResults = DefaultKeep
	}
	return c
}
