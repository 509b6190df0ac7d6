package server

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisGeo drives the GEO commands through go-redis v9, RESP3 and
// RESP2, with the figures Redis's documentation gives for Sicily.
func TestGoRedisGeo(t *testing.T) {
	addr := StartTest(t, DefaultConfig())
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
			defer rdb.Close()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			n, err := rdb.GeoAdd(ctx, "Sicily",
				&redis.GeoLocation{Name: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
				&redis.GeoLocation{Name: "Catania", Longitude: 15.087269, Latitude: 37.502669}).Result()
			if err != nil || n != 2 {
				t.Fatalf("GEOADD = %d, %v", n, err)
			}
			if d := rdb.GeoDist(ctx, "Sicily", "Palermo", "Catania", "km").Val(); d != 166.2742 {
				t.Errorf("GEODIST = %v, want 166.2742", d)
			}
			if h := rdb.GeoHash(ctx, "Sicily", "Palermo", "Catania").Val(); !slices.Equal(h, []string{"sqc8b49rny0", "sqdtr74hyu0"}) {
				t.Errorf("GEOHASH = %v", h)
			}
			pos := rdb.GeoPos(ctx, "Sicily", "Palermo", "Nope").Val()
			if len(pos) != 2 || pos[1] != nil || math.Abs(pos[0].Longitude-13.361389) > 1e-5 || math.Abs(pos[0].Latitude-38.115556) > 1e-5 {
				t.Errorf("GEOPOS = %v", pos)
			}
			got, err := rdb.GeoSearch(ctx, "Sicily", &redis.GeoSearchQuery{
				Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km", Sort: "ASC",
			}).Result()
			if err != nil || !slices.Equal(got, []string{"Catania", "Palermo"}) {
				t.Errorf("GEOSEARCH = %v, %v", got, err)
			}
			got = rdb.GeoSearch(ctx, "Sicily", &redis.GeoSearchQuery{
				Member: "Palermo", BoxWidth: 400, BoxHeight: 400, BoxUnit: "km", Sort: "DESC", Count: 1,
			}).Val()
			if !slices.Equal(got, []string{"Catania"}) {
				t.Errorf("GEOSEARCH BYBOX DESC COUNT 1 = %v", got)
			}
			locs, err := rdb.GeoSearchLocation(ctx, "Sicily", &redis.GeoSearchLocationQuery{
				GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km", Sort: "ASC"},
				WithCoord:      true, WithDist: true, WithHash: true,
			}).Result()
			if err != nil || len(locs) != 2 || locs[0].Name != "Catania" || locs[0].Dist != 56.4413 ||
				locs[0].GeoHash != 3479447370796909 || math.Abs(locs[0].Longitude-15.087269) > 1e-5 {
				t.Errorf("GEOSEARCH WITHCOORD WITHDIST WITHHASH = %+v, %v", locs, err)
			}
			stored, err := rdb.GeoSearchStore(ctx, "Sicily", "near", &redis.GeoSearchStoreQuery{
				GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km"},
				StoreDist:      true,
			}).Result()
			if err != nil || stored != 2 {
				t.Errorf("GEOSEARCHSTORE = %d, %v", stored, err)
			}
			if s := rdb.ZScore(ctx, "near", "Catania").Val(); math.Abs(s-56.4413) > 1e-3 {
				t.Errorf("STOREDIST score %v", s)
			}
			if _, err := rdb.GeoAdd(ctx, "Sicily", &redis.GeoLocation{Name: "x", Longitude: 200, Latitude: 0}).Result(); err == nil ||
				err.Error() != "ERR invalid longitude,latitude pair 200.000000,0.000000" {
				t.Errorf("GEOADD out of range: %v", err)
			}
		})
	}
}

// TestGeoSearchRandomAgainstRedis sends the same random points and
// searches (circles and boxes of every size, everywhere, with COUNT, ANY,
// ASC/DESC and every WITH option) to redis-server and to ours: the
// replies must be equal.
func TestGeoSearchRandomAgainstRedis(t *testing.T) {
	sock := startRedisPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	peer := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: 3, MaxRetries: -1})
	defer peer.Close()
	ours := redis.NewClient(&redis.Options{Addr: StartTest(t, DefaultConfig()), Protocol: 3, MaxRetries: -1})
	defer ours.Close()
	r := rand.New(rand.NewPCG(29, 7))
	both := func(args ...any) (any, any) {
		a, errA := peer.Do(ctx, args...).Result()
		b, errB := ours.Do(ctx, args...).Result()
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("%v: errors differ: redis-server %v, ours %v", args, errA, errB)
		}
		return a, b
	}
	// Clusters of points around a few centers (small, listpack-encoded
	// sets and big skiplist ones), including near the poles and 180°.
	for set, size := range map[string]int{"small": 100, "big": 3000} {
		args := []any{"GEOADD", set}
		for i := 0; i < size; i++ {
			clon, clat := []float64{0, 12, -120, 179, 100}[i%5], []float64{0, 45, -60, 10, 84}[i%5]
			lon := math.Max(-180, math.Min(180, clon+r.NormFloat64()*5))
			lat := math.Max(-85, math.Min(85, clat+r.NormFloat64()*3))
			args = append(args, lon, lat, fmt.Sprint("m", i))
		}
		both(args...)
	}
	units := []string{"m", "km", "mi", "ft"}
	for q := 0; q < 400; q++ {
		set := []string{"small", "big"}[q%2]
		args := []any{"GEOSEARCH", set}
		if q%3 == 0 {
			args = append(args, "FROMMEMBER", fmt.Sprint("m", r.IntN(100)))
		} else {
			args = append(args, "FROMLONLAT", r.Float64()*360-180, r.Float64()*170-85)
		}
		unit := units[r.IntN(len(units))]
		size := math.Pow(10, r.Float64()*4) // 1..10000 km
		conv := map[string]float64{"m": 0.001, "km": 1, "mi": 1.60934, "ft": 0.0003048}[unit]
		if q%2 == 0 {
			args = append(args, "BYRADIUS", size/conv, unit)
		} else {
			args = append(args, "BYBOX", size/conv, size/conv*(0.2+r.Float64()*2), unit)
		}
		switch r.IntN(4) {
		case 1:
			args = append(args, "ASC")
		case 2:
			args = append(args, "DESC")
		}
		if r.IntN(3) == 0 {
			args = append(args, "COUNT", 1+r.IntN(20))
			if r.IntN(3) == 0 {
				args = append(args, "ANY")
			}
		}
		args = append(args, "WITHDIST", "WITHHASH", "WITHCOORD")
		a, b := both(args...)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v:\n redis-server %v\n ours         %v", args, a, b)
		}
	}
}

func TestCUint64(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want uint64
	}{
		{0, 0}, {5.9, 5}, {-5, math.MaxUint64 - 4}, {1 << 63, 1 << 63}, {1e19, 10000000000000000000},
		{math.Inf(1), 0}, {math.Inf(-1), 1 << 63}, {math.NaN(), 1 << 63}, {-1e30, 1 << 63},
	} {
		if got := cUint64(tc.f); got != tc.want {
			t.Errorf("cUint64(%v) = %#x, want %#x", tc.f, got, tc.want)
		}
	}
}
