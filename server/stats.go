package server

import "time"

// stats are one instance's counters, guarded by Server.mu.
type stats struct {
	totalCommands    int64
	totalConnections int64
	rejectedConns    int64
	expiredKeys      int64
	evictedKeys      int64
	keyspaceHits     int64
	keyspaceMisses   int64
	netInput         int64
	netOutput        int64
	dirty            int64
	totalErrors      int64
	errorReplies     map[string]int64 // by error code (ERR, WRONGTYPE, ...)

	cmd []cmdStat // by command id

	// instantaneous_ops_per_sec: Redis keeps 16 samples, one per 100 ms.
	samples    [16]float64
	sampleIdx  int
	lastSample time.Time
	lastOps    int64
}

type cmdStat struct {
	calls, usec, rejected, failed int64
	hist                          *latencyHist // LATENCY HISTOGRAM (latency.go); nil: no samples
}

func (s *stats) init(ncmds int) {
	s.cmd = make([]cmdStat, ncmds)
	s.errorReplies = make(map[string]int64)
}

func (s *stats) reset() {
	cmds := len(s.cmd)
	*s = stats{lastSample: s.lastSample, lastOps: 0}
	s.init(cmds)
}

// sample records ops/s since the last sample, at most every 100 ms.
func (s *stats) sample(now time.Time) {
	if s.lastSample.IsZero() {
		s.lastSample, s.lastOps = now, s.totalCommands
		return
	}
	el := now.Sub(s.lastSample)
	if el < 100*time.Millisecond {
		return
	}
	s.samples[s.sampleIdx%len(s.samples)] = float64(s.totalCommands-s.lastOps) / el.Seconds()
	s.sampleIdx++
	s.lastSample, s.lastOps = now, s.totalCommands
}

func (s *stats) instantaneousOps() int64 {
	var sum float64
	n := min(s.sampleIdx, len(s.samples))
	if n == 0 {
		return 0
	}
	for i := 0; i < n; i++ {
		sum += s.samples[i]
	}
	return int64(sum / float64(n))
}
