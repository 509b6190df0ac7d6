package server

import (
	"math"
	"sort"
)

// The geohash math of Redis 7.0 (geohash.c, geohash_helper.c), operation
// for operation, so that scores, positions, distances and the boxes a
// search visits are redis-server's to the bit: a position is a 52-bit
// interleaved geohash (latitude in the even bits, longitude in the odd
// ones, 26 steps each) over longitudes -180..180 and latitudes
// -85.05112878..85.05112878, stored as the member's sorted-set score.

const (
	geoStepMax = 26
	geoLatMin  = -85.05112878
	geoLatMax  = 85.05112878
	geoLongMin = -180.0
	geoLongMax = 180.0

	geoEarthRadius = 6372797.560856 // meters, WGS-84's quadratic mean
	geoMercatorMax = 20037726.37
)

// geoDR is Redis's D_R, M_PI/180 computed in double precision.
var geoDR = func() float64 { pi := math.Pi; return pi / 180.0 }()

func geoDegRad(ang float64) float64 { return ang * geoDR }
func geoRadDeg(ang float64) float64 { return ang / geoDR }

type geoHashBits struct {
	bits uint64
	step uint8
}

func (h geoHashBits) isZero() bool { return h.bits == 0 && h.step == 0 }

type geoRange struct{ min, max float64 }

type geoArea struct {
	hash     geoHashBits
	lon, lat geoRange
}

// geoNeighbors are the eight boxes around one, in the order Redis searches
// them after the box itself.
type geoNeighbors struct {
	north, south, east, west                   geoHashBits
	northEast, northWest, southEast, southWest geoHashBits
}

var (
	geoLongRange = geoRange{geoLongMin, geoLongMax}
	geoLatRange  = geoRange{geoLatMin, geoLatMax}
)

func geoInterleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	x = (x | x<<s[4]) & b[4]
	y = (y | y<<s[4]) & b[4]
	x = (x | x<<s[3]) & b[3]
	y = (y | y<<s[3]) & b[3]
	x = (x | x<<s[2]) & b[2]
	y = (y | y<<s[2]) & b[2]
	x = (x | x<<s[1]) & b[1]
	y = (y | y<<s[1]) & b[1]
	x = (x | x<<s[0]) & b[0]
	y = (y | y<<s[0]) & b[0]
	return x | y<<1
}

func geoDeinterleave64(v uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x, y := v, v>>1
	x = (x | x>>s[0]) & b[0]
	y = (y | y>>s[0]) & b[0]
	x = (x | x>>s[1]) & b[1]
	y = (y | y>>s[1]) & b[1]
	x = (x | x>>s[2]) & b[2]
	y = (y | y>>s[2]) & b[2]
	x = (x | x>>s[3]) & b[3]
	y = (y | y>>s[3]) & b[3]
	x = (x | x>>s[4]) & b[4]
	y = (y | y>>s[4]) & b[4]
	x = (x | x>>s[5]) & b[5]
	y = (y | y>>s[5]) & b[5]
	return x | y<<32
}

// geoEncode is geohashEncode: ok is false for a position outside the
// ranges (the hash then has the step and no bits, as Redis leaves it).
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint8) (geoHashBits, bool) {
	if step > 32 || step == 0 {
		return geoHashBits{}, false
	}
	if lon > geoLongMax || lon < geoLongMin || lat > geoLatMax || lat < geoLatMin {
		return geoHashBits{}, false
	}
	h := geoHashBits{step: step}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return h, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	scale := float64(uint64(1) << step)
	latOff *= scale
	lonOff *= scale
	h.bits = geoInterleave64(uint32(latOff), uint32(lonOff))
	return h, true
}

// geoDecode is geohashDecode: the box a hash stands for.
func geoDecode(lonR, latR geoRange, h geoHashBits) (geoArea, bool) {
	if h.isZero() {
		return geoArea{}, false
	}
	sep := geoDeinterleave64(h.bits)
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	ilato, ilono := uint32(sep), uint32(sep>>32)
	div := float64(uint64(1) << h.step)
	a := geoArea{hash: h}
	a.lat.min = latR.min + float64(ilato)*1.0/div*latScale
	a.lat.max = latR.min + float64(ilato+1)*1.0/div*latScale
	a.lon.min = lonR.min + float64(ilono)*1.0/div*lonScale
	a.lon.max = lonR.min + float64(ilono+1)*1.0/div*lonScale
	return a, true
}

// geoDecodeScore is decodeGeohash: the position a score stands for. The
// score is converted to an integer as x86-64 C code converts a double to
// uint64_t, so that scores no GEOADD made decode as in redis-server.
func geoDecodeScore(score float64) (lon, lat float64) {
	a, _ := geoDecode(geoLongRange, geoLatRange, geoHashBits{bits: cUint64(score), step: geoStepMax})
	lon = (a.lon.min + a.lon.max) / 2
	lon = math.Max(math.Min(lon, geoLongMax), geoLongMin)
	lat = (a.lat.min + a.lat.max) / 2
	lat = math.Max(math.Min(lat, geoLatMax), geoLatMin)
	return lon, lat
}

// cUint64 is gcc's double to uint64_t conversion on x86-64 (cvttsd2si,
// with 2^63 subtracted first for large values): defined here for every
// input, where Go's own conversion is not.
func cUint64(f float64) uint64 {
	const two63 = 9223372036854775808.0
	cvt := func(f float64) uint64 {
		if f != f || f >= two63 || f < -two63 {
			return 1 << 63 // the "integer indefinite" value
		}
		return uint64(int64(f))
	}
	if f >= two63 {
		return cvt(f-two63) ^ 1<<63
	}
	return cvt(f)
}

// cInt64 is the x86-64 double to long long conversion (cvttsd2si).
func cInt64(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// geoScore is the score GEOADD stores for a valid position.
func geoScore(lon, lat float64) float64 {
	h, _ := geoEncode(geoLongRange, geoLatRange, lon, lat, geoStepMax)
	return float64(geoAlign52(h))
}

func geoAlign52(h geoHashBits) uint64 { return h.bits << (52 - 2*uint(h.step)) }

func geoMoveX(h *geoHashBits, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - 2*uint(h.step))
	if d > 0 {
		x = x + (zz + 1)
	} else {
		x = x | zz
		x = x - (zz + 1)
	}
	x &= uint64(0xaaaaaaaaaaaaaaaa) >> (64 - 2*uint(h.step))
	h.bits = x | y
}

func geoMoveY(h *geoHashBits, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - 2*uint(h.step))
	if d > 0 {
		y = y + (zz + 1)
	} else {
		y = y | zz
		y = y - (zz + 1)
	}
	y &= uint64(0x5555555555555555) >> (64 - 2*uint(h.step))
	h.bits = x | y
}

func geoNeighborsOf(h geoHashBits) geoNeighbors {
	move := func(dx, dy int) geoHashBits {
		n := h
		geoMoveX(&n, dx)
		geoMoveY(&n, dy)
		return n
	}
	return geoNeighbors{
		east: move(1, 0), west: move(-1, 0), south: move(0, -1), north: move(0, 1),
		northWest: move(-1, 1), northEast: move(1, 1), southEast: move(1, -1), southWest: move(-1, -1),
	}
}

// geoLatDistance is the distance along a meridian (geohashGetLatDistance).
func geoLatDistance(lat1d, lat2d float64) float64 {
	return geoEarthRadius * math.Abs(geoDegRad(lat2d)-geoDegRad(lat1d))
}

// geoDistance is the haversine distance in meters (geohashGetDistance, as
// redis-server 7.0.15 has it: along the meridian when the longitudes'
// sine is exactly zero).
func geoDistance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	return geoDistanceCos(lon1d, lat1d, lon2d, lat2d, math.NaN(), math.NaN())
}

// geoDistanceCos is geoDistance given the cosines of the latitudes in
// radians when known (NaN: not known), which a search reuses.
func geoDistanceCos(lon1d, lat1d, lon2d, lat2d, cos1, cos2 float64) float64 {
	lon1r := geoDegRad(lon1d)
	lon2r := geoDegRad(lon2d)
	v := crSin((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1d, lat2d)
	}
	lat1r := geoDegRad(lat1d)
	lat2r := geoDegRad(lat2d)
	u := crSin((lat2r - lat1r) / 2)
	if cos1 != cos1 {
		cos1 = crCos(lat1r)
	}
	if cos2 != cos2 {
		cos2 = crCos(lat2r)
	}
	a := float64(u*u) + float64(float64(cos1*cos2)*v)*v
	return 2.0 * geoEarthRadius * crAsin(math.Sqrt(a))
}

// geoShape is a search area (GeoShape): a circle of radius, or a box of
// width by height, in the request's unit (conversion: meters per unit),
// around xy.
type geoShape struct {
	box           bool
	lon, lat      float64
	radius        float64
	width, height float64
	conversion    float64
	bounds        [4]float64 // min lon, min lat, max lon, max lat
	cosLat        float64    // cos of the center's latitude in radians
}

// within is geoWithinShape: whether the point is in the shape, and its
// distance from the center in meters.
func (s *geoShape) within(lon, lat float64) (float64, bool) {
	if !s.box {
		d := geoDistanceCos(s.lon, s.lat, lon, lat, s.cosLat, math.NaN())
		return d, d <= s.radius*s.conversion
	}
	// Latitude first, the cheaper test (geohashGetDistanceIfInRectangle).
	if geoLatDistance(lat, s.lat) > s.height*s.conversion/2 {
		return 0, false
	}
	c := crCos(geoDegRad(lat))
	if geoDistanceCos(lon, lat, s.lon, lat, c, c) > s.width*s.conversion/2 {
		return 0, false
	}
	return geoDistanceCos(s.lon, s.lat, lon, lat, s.cosLat, c), true
}

// boundingBox is geohashBoundingBox.
func (s *geoShape) boundingBox() {
	var height, width float64
	if s.box {
		height = s.conversion * s.height / 2
		width = s.conversion * s.width / 2
	} else {
		height = s.conversion * s.radius
		width = s.conversion * s.radius
	}
	latDelta := geoRadDeg(height / geoEarthRadius)
	lonDeltaTop := geoRadDeg(width / geoEarthRadius / crCos(geoDegRad(s.lat+latDelta)))
	lonDeltaBottom := geoRadDeg(width / geoEarthRadius / crCos(geoDegRad(s.lat-latDelta)))
	if s.lat < 0 {
		s.bounds[0] = s.lon - lonDeltaBottom
		s.bounds[2] = s.lon + lonDeltaBottom
	} else {
		s.bounds[0] = s.lon - lonDeltaTop
		s.bounds[2] = s.lon + lonDeltaTop
	}
	s.bounds[1] = s.lat - latDelta
	s.bounds[3] = s.lat + latDelta
}

// geoEstimateSteps is geohashEstimateStepsByRadius.
func geoEstimateSteps(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < geoMercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	if step < 1 {
		step = 1
	}
	if step > 26 {
		step = 26
	}
	return uint8(step)
}

// geoAreas is geohashCalculateAreasByShapeWGS84: the box holding the
// center at a precision the shape fits in, and its neighbours, those the
// shape cannot reach zeroed.
func geoAreas(s *geoShape) (geoHashBits, geoNeighbors) {
	s.boundingBox()
	minLon, minLat, maxLon, maxLat := s.bounds[0], s.bounds[1], s.bounds[2], s.bounds[3]
	var radius float64
	if s.box {
		radius = math.Sqrt(float64(s.width/2)*(s.width/2) + float64(s.height/2)*(s.height/2))
	} else {
		radius = s.radius
	}
	radius *= s.conversion
	steps := geoEstimateSteps(radius, s.lat)
	hash, _ := geoEncode(geoLongRange, geoLatRange, s.lon, s.lat, steps)
	nb := geoNeighborsOf(hash)
	area, _ := geoDecode(geoLongRange, geoLatRange, hash)

	north, _ := geoDecode(geoLongRange, geoLatRange, nb.north)
	south, _ := geoDecode(geoLongRange, geoLatRange, nb.south)
	east, _ := geoDecode(geoLongRange, geoLatRange, nb.east)
	west, _ := geoDecode(geoLongRange, geoLatRange, nb.west)
	decrease := north.lat.max < maxLat || south.lat.min > minLat || east.lon.max < maxLon || west.lon.min > minLon
	if steps > 1 && decrease {
		steps--
		hash, _ = geoEncode(geoLongRange, geoLatRange, s.lon, s.lat, steps)
		nb = geoNeighborsOf(hash)
		area, _ = geoDecode(geoLongRange, geoLatRange, hash)
	}
	if steps >= 2 {
		if area.lat.min < minLat {
			nb.south, nb.southWest, nb.southEast = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
		if area.lat.max > maxLat {
			nb.north, nb.northEast, nb.northWest = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
		if area.lon.min < minLon {
			nb.west, nb.southWest, nb.northWest = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
		if area.lon.max > maxLon {
			nb.east, nb.southEast, nb.northEast = geoHashBits{}, geoHashBits{}, geoHashBits{}
		}
	}
	return hash, nb
}

// geoPoint is a search result.
type geoPoint struct {
	member   string
	lon, lat float64
	dist     float64 // meters, then the request's unit
	score    float64
}

// geoSearch collects the members of z in the shape, box by box in
// Redis's order (membersOfAllNeighbors), stopping once it has limit of
// them when limit > 0 (COUNT ... ANY).
func geoSearch(z *ZSet, s *geoShape, limit int) []geoPoint {
	hash, nb := geoAreas(s)
	s.cosLat = crCos(geoDegRad(s.lat))
	boxes := [9]geoHashBits{hash, nb.north, nb.south, nb.east, nb.west, nb.northEast, nb.northWest, nb.southEast, nb.southWest}
	var out []geoPoint
	last := -1
	for i, b := range boxes {
		if b.isZero() {
			continue
		}
		// Huge radii make neighbours repeat: skip a box just searched.
		if last > 0 && b == boxes[last] {
			continue
		}
		if len(out) > 0 && limit > 0 && len(out) >= limit {
			break
		}
		min := float64(geoAlign52(b))
		b.bits++
		max := float64(geoAlign52(b))
		z.eachInScoreRange(min, max, func(member string, score float64) bool {
			lon, lat := geoDecodeScore(score)
			if d, ok := s.within(lon, lat); ok {
				out = append(out, geoPoint{member: member, lon: lon, lat: lat, dist: d, score: score})
			}
			return !(len(out) > 0 && limit > 0 && len(out) >= limit)
		})
		last = i
	}
	return out
}

// eachInScoreRange calls fn for the members with min <= score < max in
// order, until fn returns false.
func (z *ZSet) eachInScoreRange(min, max float64, fn func(member string, score float64) bool) {
	if !z.isBig() {
		i := sort.Search(len(z.small), func(i int) bool { return z.small[i].Score >= min })
		for ; i < len(z.small) && z.small[i].Score < max; i++ {
			if !fn(z.small[i].Member, z.small[i].Score) {
				return
			}
		}
		return
	}
	for x := z.b.zsl.firstInRange(ScoreRange{Min: min, Max: max, MaxEx: true}); x != nil && x.score < max; x = x.level[0].forward {
		if !fn(x.member, x.score) {
			return
		}
	}
}

// Correctly rounded sine, cosine and arcsine. glibc's are correctly
// rounded (to within a vanishing fraction of cases) and Go's math
// package's are not always, so distances computed with Go's differ from
// redis-server's in the last bit now and then, which STOREDIST's scores
// show. These evaluate in double-double arithmetic (about 106 bits) and
// round once.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func ddTwoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func ddFast(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func ddAdd(x, y dd) dd {
	s := ddTwoSum(x.hi, y.hi)
	t := ddTwoSum(x.lo, y.lo)
	s = ddFast(s.hi, s.lo+t.hi)
	return ddFast(s.hi, s.lo+t.lo)
}

func ddMul(x, y dd) dd {
	p := x.hi * y.hi
	e := math.FMA(x.hi, y.hi, -p)
	e += x.hi*y.lo + x.lo*y.hi
	return ddFast(p, e)
}

// π/2 as three doubles.
const (
	ddPio2a = 1.5707963267948966
	ddPio2b = 6.123233995736766e-17
	ddPio2c = -1.4973849048591698e-33
)

// ddSinReduced and ddCosReduced are sin and cos of r (|r| <= about pi/4)
// to about 2^-70 relative, ample to round correctly: the leading terms of
// their series in double-double, the small rest in double.
func ddSinReduced(r dd) dd {
	x2 := r.hi * r.hi
	t := -1.0/5040 + x2*(1.0/362880+x2*(-1.0/39916800+x2*(1.0/6227020800+x2*(-1.0/1307674368000+x2*(1.0/355687428096000)))))
	r2 := ddMul(r, r)
	in := ddAdd(dd{0.008333333333333333, 1.1564823173178714e-19}, ddMul(r2, dd{t, 0}))
	in = ddAdd(dd{-0.16666666666666666, -9.25185853854297e-18}, ddMul(r2, in))
	return ddAdd(r, ddMul(ddMul(r, r2), in))
}

func ddCosReduced(r dd) dd {
	x2 := r.hi * r.hi
	t := 1.0/40320 + x2*(-1.0/3628800+x2*(1.0/479001600+x2*(-1.0/87178291200+x2*(1.0/20922789888000))))
	r2 := ddMul(r, r)
	in := ddAdd(dd{-0.001388888888888889, 5.300543954373577e-20}, ddMul(r2, dd{t, 0}))
	in = ddAdd(dd{0.041666666666666664, 2.3129646346357427e-18}, ddMul(r2, in))
	in = ddAdd(dd{-0.5, 0}, ddMul(r2, in))
	return ddAdd(dd{1, 0}, ddMul(r2, in))
}

// ddReduce returns x - k*pi/2 in double-double and k mod 4.
func ddReduce(x float64) (dd, int) {
	k := math.Round(x / ddPio2a)
	r := dd{x, 0}
	if k != 0 {
		r = ddAdd(r, ddTwoSum(-k*ddPio2a, -math.FMA(k, ddPio2a, -k*ddPio2a)))
		r = ddAdd(r, ddTwoSum(-k*ddPio2b, -math.FMA(k, ddPio2b, -k*ddPio2b)))
		r = ddAdd(r, dd{-k * ddPio2c, 0})
	}
	return r, int(k) & 3
}

func ddNeg(x dd) dd { return dd{-x.hi, -x.lo} }

// ddSin and ddCos are sin and cos in double-double for |x| up to a few
// multiples of pi (all the geo math needs).
func ddSin(x float64) dd {
	r, q := ddReduce(x)
	switch q {
	case 0:
		return ddSinReduced(r)
	case 1:
		return ddCosReduced(r)
	case 2:
		return ddNeg(ddSinReduced(r))
	default:
		return ddNeg(ddCosReduced(r))
	}
}

func ddCos(x float64) dd {
	r, q := ddReduce(x)
	switch q {
	case 0:
		return ddCosReduced(r)
	case 1:
		return ddNeg(ddSinReduced(r))
	case 2:
		return ddNeg(ddCosReduced(r))
	default:
		return ddSinReduced(r)
	}
}

// crSin is sin as glibc 2.36 computes it on x86-64 with FMA below 0.126
// (its polynomial and fused multiply-adds, read from libm: the sines of
// half the angles between points less than about 1600 km apart), and
// correctly rounded above; outside the range the geo math uses it is Go's.
func crSin(x float64) float64 {
	ax := math.Abs(x)
	switch {
	case ax < 0x1p-26:
		return x
	case ax < 0.126:
		x2 := x * x
		p := -2.5022014848318398e-08
		p = math.FMA(x2, p, 2.755729806860771e-06)
		p = math.FMA(x2, p, -0.00019841269834414642)
		p = math.FMA(x2, p, 0.008333333333332329)
		p = math.FMA(x2, p, -0.16666666666666666)
		p = x * p
		return x + float64(x2*p)
	case ax < 64:
		s := ddSin(x)
		return s.hi + s.lo
	}
	return math.Sin(x)
}

// crCos is cos correctly rounded (glibc's is within 0.51 ulp, so nearly
// always the same); outside the range the geo math uses it is Go's.
func crCos(x float64) float64 {
	if !(math.Abs(x) < 64) {
		return math.Cos(x)
	}
	c := ddCos(x)
	return c.hi + c.lo
}

// crAsin is asin as glibc 2.36 computes it on x86-64 with FMA (the build
// Debian's redis-server calls) for |x| < 0.125, the distances up to about
// 1600 km: its polynomial, constants and fused multiply-adds. Elsewhere it
// is asin correctly rounded (Go's estimate refined by one Newton step in
// double-double), which glibc's, accurate to 0.51 ulp, nearly always is.
func crAsin(x float64) float64 {
	if ax := math.Abs(x); ax < 0x1p-26 {
		return x
	} else if ax < 0.125 {
		x2 := x * x
		p := 0.018138290340456505
		p = math.FMA(x2, p, 0.022355121102652562)
		p = math.FMA(x2, p, 0.03038212685821193)
		p = math.FMA(x2, p, 0.044642856142105974)
		p = math.FMA(x2, p, 0.07500000000261227)
		p = math.FMA(x2, p, 0.1666666666666641)
		return math.FMA(p, x*x2, x)
	}
	y := math.Asin(x)
	if !(math.Abs(x) < 1) || x == 0 {
		return y
	}
	f := ddAdd(ddSin(y), dd{-x, 0})
	c := ddCos(y)
	return y - (f.hi+f.lo)/(c.hi+c.lo)
}

// geoPartialSort orders the points by distance (descending when desc) as
// far as positions lo..hi need, as Redis's pqsort (NetBSD's quicksort
// that skips the partitions outside the range) does for COUNT: points at
// equal distances then come in redis-server's order, which a stable sort
// would not give.
func geoPartialSort(a []geoPoint, desc bool, lo, hi int) {
	cmp := func(i, j int) int {
		x, y := a[i].dist, a[j].dist
		r := 0
		if x > y {
			r = 1
		} else if x < y {
			r = -1
		}
		if desc {
			r = -r
		}
		return r
	}
	swap := func(i, j int) { a[i], a[j] = a[j], a[i] }
	vecswap := func(i, j, n int) {
		for k := 0; k < n; k++ {
			swap(i+k, j+k)
		}
	}
	med3 := func(x, y, z int) int {
		if cmp(x, y) < 0 {
			if cmp(y, z) < 0 {
				return y
			} else if cmp(x, z) < 0 {
				return z
			}
			return x
		}
		if cmp(y, z) > 0 {
			return y
		} else if cmp(x, z) < 0 {
			return x
		}
		return z
	}
	insertion := func(base, n int) {
		for m := base + 1; m < base+n; m++ {
			for l := m; l > base && cmp(l-1, l) > 0; l-- {
				swap(l, l-1)
			}
		}
	}
	// outside reports whether the partition base..base+n-1 misses lo..hi.
	outside := func(base, n int) bool {
		return lo < base && hi < base || lo >= base+n && hi >= base+n
	}
	var sortRange func(base, n int)
	sortRange = func(base, n int) {
		for {
			if n < 7 {
				insertion(base, n)
				return
			}
			pm := base + n/2
			if n > 7 {
				pl, pn := base, base+n-1
				if n > 40 {
					d := n / 8
					pl = med3(pl, pl+d, pl+2*d)
					pm = med3(pm-d, pm, pm+d)
					pn = med3(pn-2*d, pn-d, pn)
				}
				pm = med3(pl, pm, pn)
			}
			swap(base, pm)
			swapped := false
			pa, pb := base+1, base+1
			pc, pd := base+n-1, base+n-1
			for {
				for pb <= pc {
					r := cmp(pb, base)
					if r > 0 {
						break
					}
					if r == 0 {
						swapped = true
						swap(pa, pb)
						pa++
					}
					pb++
				}
				for pb <= pc {
					r := cmp(pc, base)
					if r < 0 {
						break
					}
					if r == 0 {
						swapped = true
						swap(pc, pd)
						pd--
					}
					pc--
				}
				if pb > pc {
					break
				}
				swap(pb, pc)
				swapped = true
				pb++
				pc--
			}
			if !swapped {
				insertion(base, n)
				return
			}
			pn := base + n
			r := min(pa-base, pb-pa)
			vecswap(base, pb-r, r)
			r = min(pd-pc, pn-pd-1)
			vecswap(pb, pn-r, r)
			if r = pb - pa; r > 1 && !outside(base, r) {
				sortRange(base, r)
			}
			if r = pd - pc; r > 1 {
				base, n = pn-r, r
				if !outside(base, n) {
					continue
				}
			}
			return
		}
	}
	sortRange(0, len(a))
}
