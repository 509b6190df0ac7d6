package load

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
	"github.com/dpulab/dpulab/steps/kind"
)

// Hosts reaches the hosts a load runs on.
type Hosts interface {
	// Agent is the path of dpulab on h (Agents').
	Agent(h kind.Host) string
	// Reached is h's target, reached, with dpulab there (its working
	// directory is not made: a sampler needs none).
	Reached(ctx context.Context, h kind.Host) (runner.Target, error)
}

// SamplerStartTimeout bounds the wait for the samplers' first numbers; a
// sampler that does not report by then leaves CPU unknown for the run.
// The wait ends as soon as every sampler has reported or ended, so the
// bound only matters for a host that neither answers nor fails: it is
// generous, because on a loaded host (or over a slow link) a sampler's
// first line can take several seconds, and a bench without its CPU
// numbers is a lesser one.
const SamplerStartTimeout = 30 * time.Second

// CPUCount asks a host how many CPUs are online (0 when it cannot say).
func CPUCount(ctx context.Context, t runner.Target) int {
	var n int
	res, err := t.Run(ctx, runner.Command{Cmd: "getconf _NPROCESSORS_ONLN", Timeout: 10 * time.Second, Output: func(l runner.Line) {
		if l.Stream == runner.Stdout {
			fmt.Sscanf(strings.TrimSpace(l.Text), "%d", &n)
		}
	}})
	if err != nil || res.ExitCode != 0 {
		return 0
	}
	return n
}

// StartSamplers starts `dpulab sample` on the server hosts of a bench
// from client (over path, when one is set), best effort: a host it cannot
// reach or sample leaves CPU unknown (nil), it does not fail the bench.
// latest is the board their lines go to; stop ends them and waits for
// them.
func StartSamplers(ctx context.Context, hosts Hosts, servers []kind.Host, client kind.Host, path *netpath.Path) (latest *SampleBoard, stop func()) {
	sctx, stopSamplers := context.WithCancel(ctx)
	var swg sync.WaitGroup
	latest = NewSampleBoard()
	for _, h := range servers {
		t, err := hosts.Reached(ctx, h)
		if err != nil {
			continue
		}
		latest.SetCPUs(h.Name, CPUCount(ctx, t))
		latest.Expect(h.Name)
		swg.Add(1)
		go func() {
			defer swg.Done()
			defer latest.Gone(h.Name)
			_, _ = t.Run(sctx, runner.Command{Cmd: SamplerCommand(hosts.Agent(h), h, client, path), Output: func(l runner.Line) {
				if l.Stream != runner.Stdout {
					return
				}
				if s, ok := ParseHostSample([]byte(l.Text)); ok {
					latest.Put(h.Name, s)
				}
			}})
		}()
	}
	return latest, func() {
		stopSamplers()
		swg.Wait()
	}
}
