package vsphere

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSamplerCountersLandInPoints(t *testing.T) {
	s := newSim(t)
	c := s.dial(t)

	since := time.Now().Add(-50 * time.Second).Truncate(time.Second)
	var mu sync.Mutex
	var pts []Point
	var notes []string
	polls := 0
	smp := &Sampler{Client: c, Hosts: []string{"DC0_H0", "DC0_C0_H1"}, VMs: []string{"DC0_H0_VM0"}, Since: since, Poll: 50 * time.Millisecond,
		Note: func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- smp.Run(ctx, func(p Point) {
			mu.Lock()
			defer mu.Unlock()
			pts = append(pts, p)
			polls++
		})
	}()
	// Wait for points of every entity, then for a few more polls.
	deadline := time.After(60 * time.Second)
	for {
		mu.Lock()
		seen := map[string]bool{}
		for _, p := range pts {
			seen[p.Host+"/"+p.VM] = true
		}
		mu.Unlock()
		if len(seen) == 3 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("sampler ended: %v", err)
		case <-deadline:
			t.Fatalf("no points from every entity: %v", seen)
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(300 * time.Millisecond) // several more polls
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("a cancelled sampler returns nil, got %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	byEntity := map[string][]Point{}
	for _, p := range pts {
		byEntity[p.Host+"/"+p.VM] = append(byEntity[p.Host+"/"+p.VM], p)
	}
	for key, ps := range byEntity {
		for i, p := range ps {
			if p.Source != "host (ESXi)" || p.Interval != 20*time.Second {
				t.Fatalf("%s: source %q interval %v", key, p.Source, p.Interval)
			}
			if p.T.Before(since) || !p.T.Before(p.SampleEnd) || p.T.Before(p.SampleEnd.Add(-p.Interval)) {
				t.Fatalf("%s: second %v outside its sample (%v - %v] or before Since %v", key, p.T, p.SampleEnd.Add(-p.Interval), p.SampleEnd, since)
			}
			if i > 0 && !p.T.After(ps[i-1].T) {
				t.Fatalf("%s: second %v delivered after %v: seconds go forward, once each", key, p.T, ps[i-1].T)
			}
		}
		// The simulator serves the 20 s real-time samples since Since:
		// at least two samples' worth of seconds.
		if len(ps) < 40 {
			t.Errorf("%s: %d points, want the 50 s since Since", key, len(ps))
		}
	}
	for _, host := range []string{"DC0_H0", "DC0_C0_H1"} {
		ps := byEntity[host+"/"]
		p := ps[len(ps)-1]
		// The simulator lists power.power.average but has no data for it
		// (its zeros are dropped on the wire): power stays unknown.
		if p.CPUUsagePct == nil || p.CPUUsedCores == nil || p.CPUReadyPct == nil || p.PowerWatts != nil {
			t.Fatalf("%s: counters missing from %+v (notes %q)", host, p, notes)
		}
		if _, ok := p.NetKBps["vmnic0"]; !ok {
			t.Fatalf("%s: no vmnic0 in %v", host, p.NetKBps)
		}
		if *p.CPUUsagePct < 0 || *p.CPUUsedCores < 0 || *p.CPUReadyPct < 0 {
			t.Fatalf("%s: negative values %+v", host, p)
		}
		// Every second of one vSphere sample holds that sample's values.
		for _, q := range ps {
			if q.SampleEnd.Equal(p.SampleEnd) && *q.CPUUsagePct != *p.CPUUsagePct {
				t.Fatalf("%s: seconds of one sample differ: %v vs %v", host, *q.CPUUsagePct, *p.CPUUsagePct)
			}
		}
	}
	vm := byEntity["DC0_H0/DC0_H0_VM0"]
	if len(vm) == 0 || vm[0].VMNetKBps == nil || vm[0].CPUUsagePct != nil {
		t.Fatalf("VM points: %+v (want net only, on its host DC0_H0)", vm)
	}

	missing := 0
	for _, n := range notes {
		if strings.Contains(n, "power.power.average") {
			missing++
		}
		if strings.Contains(n, simPassword) {
			t.Fatalf("password in a note: %s", n)
		}
	}
	if missing != 2 { // once per host, not per poll or per sample
		t.Errorf("missing counter noted %d times, want once per host: %q", missing, notes)
	}
	if testing.Verbose() {
		t.Logf("notes: %q", notes)
	}
}

func TestSamplerUnknownHost(t *testing.T) {
	s := newSim(t)
	c := s.dial(t)
	err := (&Sampler{Client: c, Hosts: []string{"esx-nope"}}).Run(context.Background(), func(Point) {})
	if err == nil || !strings.Contains(err.Error(), `no ESXi host named "esx-nope"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSamplerCancelledWhileSettingUp(t *testing.T) {
	s := newSim(t)
	c := s.dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (&Sampler{Client: c, Hosts: []string{"DC0_H0"}}).Run(ctx, func(Point) { t.Error("a point after cancel") }); err != nil {
		t.Fatalf("a cancelled sampler returns nil, got %v", err)
	}
}

func TestCloseAfterCancel(t *testing.T) {
	s := newSim(t)
	cfg := s.config(nil)
	cfg.AcceptNew = true
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("close with a cancelled context (an interrupted run) must still log out: %v", err)
	}
}
