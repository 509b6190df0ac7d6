package runner

import (
	"context"
	"sync"
)

// FanOut runs c on every target at once and returns each one's Result and
// error, in the order of targets. Lines carry their target's name, so
// c.Output sees them interleaved but attributed.
func FanOut(ctx context.Context, targets []Target, c Command) ([]Result, []error) {
	res := make([]Result, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = t.Run(ctx, c)
		}()
	}
	wg.Wait()
	return res, errs
}
