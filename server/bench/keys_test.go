package bench

import "testing"

func TestPartitionCoversKeysOnce(t *testing.T) {
	for _, tc := range []struct {
		max int64
		n   int
	}{{1000, 3}, {10, 4}, {3, 8}, {1, 1}, {1_000_000, 4000}} {
		next := int64(0)
		for w := 0; w < tc.n; w++ {
			lo, hi := partition(tc.max, w, tc.n)
			if lo != next || hi < lo || hi-lo != quota(tc.max, tc.n, w) {
				t.Fatalf("partition(%d, %d, %d) = [%d, %d), want to start at %d with %d keys", tc.max, w, tc.n, lo, hi, next, quota(tc.max, tc.n, w))
			}
			next = hi
		}
		if next != tc.max {
			t.Fatalf("partition of %d over %d ends at %d", tc.max, tc.n, next)
		}
	}
}

func TestSetsFor(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		r    Ratio
		want int64
	}{{11, Ratio{Set: 1, Get: 10}, 1}, {12, Ratio{Set: 1, Get: 10}, 2}, {5, Ratio{Set: 2, Get: 1}, 4}, {7, Ratio{Set: 0, Get: 1}, 0}, {7, Ratio{Set: 1, Get: 0}, 7}} {
		if got := setsFor(tc.n, tc.r); got != tc.want {
			t.Errorf("setsFor(%d, %s) = %d, want %d", tc.n, tc.r, got, tc.want)
		}
	}
}
