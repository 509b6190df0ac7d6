package server

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
)

// sortedModel is the obvious sort-on-read implementation the skiplist must
// agree with.
func sortedModel(m map[string]float64) []ZMember {
	var out []ZMember
	for k, v := range m {
		out = append(out, ZMember{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return zslLess(out[i].Score, out[i].Member, out[j].Score, out[j].Member) })
	return out
}

func TestZSetAgainstSortedSlice(t *testing.T) {
	// 50 members keep the small encoding throughout; 400 convert to the
	// skiplist early on.
	for _, space := range []int{50, 400} {
		t.Run(strconv.Itoa(space), func(t *testing.T) { zsetModelCheck(t, space) })
	}
}

func zsetModelCheck(t *testing.T, space int) {
	r := rand.New(rand.NewPCG(5, uint64(space)))
	z := NewZSet()
	model := map[string]float64{}
	for step := 0; step < 20000; step++ {
		m := "m" + strconv.Itoa(r.IntN(space))
		switch r.IntN(5) {
		case 0, 1, 2:
			score := float64(r.IntN(50))
			_, had := model[m]
			if z.Set(m, score) == had {
				t.Fatalf("step %d: Set newness wrong", step)
			}
			model[m] = score
		case 3:
			_, had := model[m]
			if z.Remove(m) != had {
				t.Fatalf("step %d: Remove wrong", step)
			}
			delete(model, m)
		case 4:
			if len(model) > 0 && r.IntN(20) == 0 {
				popped := z.Pop(2, r.IntN(2) == 0)
				for _, p := range popped {
					delete(model, p.Member)
				}
			}
		}
		if step%101 != 0 {
			continue
		}
		want := sortedModel(model)
		sum := 0
		for m := range model {
			sum += len(m)
		}
		if z.bytes != sum {
			t.Fatalf("step %d: tracked bytes %d, want %d", step, z.bytes, sum)
		}
		if z.isBig() != (int64(space) > defaultTuning.ZSetMaxListpackEntries) && step > 5000 {
			t.Fatalf("step %d: big = %v with %d possible members", step, z.isBig(), space)
		}
		if z.Len() != len(want) {
			t.Fatalf("step %d: Len %d, want %d", step, z.Len(), len(want))
		}
		all := z.RangeByRank(0, len(want)-1, false)
		for i := range want {
			if all[i] != want[i] {
				t.Fatalf("step %d: rank %d = %v, want %v", step, i, all[i], want[i])
			}
			if rk, ok := z.Rank(want[i].Member); !ok || rk != i {
				t.Fatalf("step %d: Rank(%s) = %d, want %d", step, want[i].Member, rk, i)
			}
		}
		rev := z.RangeByRank(0, len(want)-1, true)
		for i := range want {
			if rev[i] != want[len(want)-1-i] {
				t.Fatalf("step %d: reverse rank %d wrong", step, i)
			}
		}
		lo, hi := float64(r.IntN(50)), float64(r.IntN(50))
		rg := ScoreRange{Min: lo, Max: hi, MinEx: r.IntN(2) == 0, MaxEx: r.IntN(2) == 0}
		var in []ZMember
		for _, e := range want {
			if rg.aboveMin(e.Score) && rg.belowMax(e.Score) {
				in = append(in, e)
			}
		}
		if c := z.CountInRange(rg); c != len(in) {
			t.Fatalf("step %d: CountInRange(%+v) = %d, want %d", step, rg, c, len(in))
		}
		got := z.RangeByScore(rg, false, 1, 3)
		var exp []ZMember
		if len(in) > 1 {
			exp = in[1:min(len(in), 4)]
		}
		if len(got) != len(exp) {
			t.Fatalf("step %d: RangeByScore limit: %v, want %v", step, got, exp)
		}
		for i := range exp {
			if got[i] != exp[i] {
				t.Fatalf("step %d: RangeByScore[%d] = %v, want %v", step, i, got[i], exp[i])
			}
		}
		gotRev := z.RangeByScore(rg, true, 0, -1)
		if len(gotRev) != len(in) || (len(in) > 0 && gotRev[0] != in[len(in)-1]) {
			t.Fatalf("step %d: reverse RangeByScore %v, want reverse of %v", step, gotRev, in)
		}
	}
}

func TestZSetLexAndInfinities(t *testing.T) {
	z := NewZSet()
	for _, m := range []string{"a", "b", "c", "d"} {
		z.Set(m, 0)
	}
	r := LexRange{Min: "b", MaxInf: 1, MinEx: true}
	got := z.RangeByLex(r, false, 0, -1)
	if len(got) != 2 || got[0].Member != "c" || got[1].Member != "d" {
		t.Fatalf("(b + = %v, want c d", got)
	}
	z.Set("lo", math.Inf(-1))
	z.Set("hi", math.Inf(1))
	all := z.RangeByScore(ScoreRange{Min: math.Inf(-1), Max: math.Inf(1)}, false, 0, -1)
	if len(all) != 6 || all[0].Member != "lo" || all[5].Member != "hi" {
		t.Fatalf("-inf..+inf = %v", all)
	}
	z.Set("neg0", math.Copysign(0, -1))
	if s, _ := z.Score("neg0"); math.Signbit(s) {
		t.Fatal("-0 stored with its sign in a small set; Redis's listpack prints it as 0")
	}
	for i := 0; i < int(defaultTuning.ZSetMaxListpackEntries); i++ {
		z.Set(strconv.Itoa(i), 1)
	}
	z.Set("neg0b", math.Copysign(0, -1))
	if s, _ := z.Score("neg0b"); !math.Signbit(s) {
		t.Fatal("-0 lost its sign in a large set; Redis's skiplist keeps it")
	}
}
