package server

import (
	"math"
	"sort"
	"strconv"
)

// GEO commands (geo.c): a geo set is a sorted set whose scores are 52-bit
// geohashes (geo.go). Replies as Redis 7.0 gives them: distances with four
// decimals as bulk strings, coordinates with up to 17 decimals (bulk
// strings in RESP2, doubles in RESP3), hashes as integers.

func init() {
	registerGroup(registerGeoCommands)
	groupCategory["geo"] = "geo"
	for name, flags := range map[string]string{
		"geoadd": "RW update", "geodist": "RO access", "geohash": "RO access", "geopos": "RO access",
		"georadius": "RO access", "georadiusbymember": "RO access", "georadius_ro": "RO access",
		"georadiusbymember_ro": "RO access", "geosearch": "RO access", "geosearchstore": "OW update|RO access",
	} {
		keySpecFlags[name] = flags
	}
	store := func(start int) []keySpec {
		return []keySpec{
			{flags: []string{"RO", "access"}, index: 1, keyStep: 1},
			{flags: []string{"OW", "update"}, begin: 'k', keyword: "STORE", startFrom: start, keyStep: 1},
			{flags: []string{"OW", "update"}, begin: 'k', keyword: "STOREDIST", startFrom: start, keyStep: 1},
		}
	}
	movableKeySpecs["georadius"] = store(6)
	movableKeySpecs["georadiusbymember"] = store(5)
	for name, u := range map[string]string{
		"geoadd":               "key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]",
		"geodist":              "key member1 member2 [M|KM|FT|MI]",
		"geohash":              "key [member [member ...]]",
		"geopos":               "key [member [member ...]]",
		"georadius":            "key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]",
		"georadiusbymember":    "key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]",
		"georadius_ro":         "key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]",
		"georadiusbymember_ro": "key member radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]",
		"geosearch":            "key FROMMEMBER member|FROMLONLAT longitude latitude BYRADIUS radius M|KM|FT|MI|BYBOX width height M|KM|FT|MI [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]",
		"geosearchstore":       "destination source FROMMEMBER member|FROMLONLAT longitude latitude BYRADIUS radius M|KM|FT|MI|BYBOX width height M|KM|FT|MI [ASC|DESC] [COUNT count [ANY]] [STOREDIST]",
	} {
		usages[name] = u
	}
}

func registerGeoCommands(t *commandTable) {
	const g = "geo"
	w, r := flagWrite|flagDenyOOM, flagReadonly
	t.add(
		&command{Name: "geoadd", Fn: cmdGeoAdd, Arity: -5, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Add one or more geospatial items in the geospatial index represented using a sorted set", Since: "3.2.0"},
		&command{Name: "geodist", Fn: cmdGeoDist, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns the distance between two members of a geospatial index", Since: "3.2.0"},
		&command{Name: "geohash", Fn: cmdGeoHash, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns members of a geospatial index as standard geohash strings", Since: "3.2.0"},
		&command{Name: "geopos", Fn: cmdGeoPos, Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Returns longitude and latitude of members of a geospatial index", Since: "3.2.0"},
		&command{Name: "georadius", Fn: cmdGeoRadius, Arity: -6, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", Since: "3.2.0"},
		&command{Name: "georadiusbymember", Fn: cmdGeoRadiusByMember, Arity: -5, Flags: w, FirstKey: 1, LastKey: 1, Group: g, Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", Since: "3.2.0"},
		&command{Name: "georadius_ro", Fn: cmdGeoRadiusRO, Arity: -6, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "A read-only variant for GEORADIUS", Since: "3.2.10"},
		&command{Name: "georadiusbymember_ro", Fn: cmdGeoRadiusByMemberRO, Arity: -5, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "A read-only variant for GEORADIUSBYMEMBER", Since: "3.2.10"},
		&command{Name: "geosearch", Fn: cmdGeoSearch, Arity: -7, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", Since: "6.2.0"},
		&command{Name: "geosearchstore", Fn: cmdGeoSearchStore, Arity: -8, Flags: w, FirstKey: 1, LastKey: 2, Group: g, Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", Since: "6.2.0"},
	)
}

// cFloat is C's "%f" (six decimals, "inf"/"-inf").
func cFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// geoLonLat parses a longitude and a latitude (extractLongLatOrReply);
// it replies the error itself.
func geoLonLat(c *Client, lonArg, latArg []byte) (lon, lat float64, ok bool) {
	if lon, ok = parseRedisDouble(lonArg); !ok {
		c.writeError(errNotFloat)
		return 0, 0, false
	}
	if lat, ok = parseRedisDouble(latArg); !ok {
		c.writeError(errNotFloat)
		return 0, 0, false
	}
	if lon < geoLongMin || lon > geoLongMax || lat < geoLatMin || lat > geoLatMax {
		c.writeError("ERR invalid longitude,latitude pair " + cFloat(lon) + "," + cFloat(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// geoUnit returns meters per unit (extractUnitOrReply), replying the error
// for an unknown unit.
func geoUnit(c *Client, u []byte) (float64, bool) {
	switch {
	case equalFold(u, "m"):
		return 1, true
	case equalFold(u, "km"):
		return 1000, true
	case equalFold(u, "ft"):
		return 0.3048, true
	case equalFold(u, "mi"):
		return 1609.34, true
	}
	c.writeError("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// geoRadiusArg parses "radius unit" (extractDistanceOrReply).
func geoRadiusArg(c *Client, args [][]byte, s *geoShape) bool {
	r, ok := parseRedisDouble(args[0])
	if !ok {
		c.writeError("ERR need numeric radius")
		return false
	}
	if r < 0 {
		c.writeError("ERR radius cannot be negative")
		return false
	}
	s.radius = r
	s.conversion, ok = geoUnit(c, args[1])
	return ok
}

// geoBoxArg parses "width height unit" (extractBoxOrReply).
func geoBoxArg(c *Client, args [][]byte, s *geoShape) bool {
	w, ok := parseRedisDouble(args[0])
	if !ok {
		c.writeError("ERR need numeric width")
		return false
	}
	h, ok := parseRedisDouble(args[1])
	if !ok {
		c.writeError("ERR need numeric height")
		return false
	}
	if h < 0 || w < 0 {
		c.writeError("ERR height or width cannot be negative")
		return false
	}
	s.width, s.height = w, h
	s.conversion, ok = geoUnit(c, args[2])
	return ok
}

// writeGeoDistance is addReplyDoubleDistance: four decimals, a bulk
// string in both protocols.
func writeGeoDistance(c *Client, d float64) {
	var tmp [32]byte
	c.writeBulk(strconv.AppendFloat(tmp[:0], d, 'f', 4, 64))
}

// writeGeoCoord is addReplyHumanLongDouble: "%.17Lf" without trailing
// zeros, a bulk string in RESP2 and a double in RESP3.
func writeGeoCoord(c *Client, v float64) {
	var tmp [48]byte
	b := strconv.AppendFloat(tmp[:0], v, 'f', 17, 64)
	for len(b) > 1 && b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b) == "-0" {
		b = b[1:]
	}
	if c.resp == 3 {
		c.out = append(c.out, ',')
		c.out = append(c.out, b...)
		c.out = append(c.out, '\r', '\n')
		return
	}
	c.writeBulk(b)
}

func cmdGeoAdd(c *Client, args [][]byte) {
	nx, xx, ch := false, false, false
	i := 2
	for ; i < len(args); i++ {
		switch a := args[i]; {
		case equalFold(a, "nx"):
			nx = true
		case equalFold(a, "xx"):
			xx = true
		case equalFold(a, "ch"):
			ch = true
		default:
			goto parsed
		}
	}
parsed:
	if (len(args)-i)%3 != 0 || nx && xx || len(args) == i {
		c.writeError(errSyntax)
		return
	}
	n := (len(args) - i) / 3
	scores := make([]float64, n)
	for j := range scores {
		lon, lat, ok := geoLonLat(c, args[i+3*j], args[i+3*j+1])
		if !ok {
			return
		}
		scores[j] = geoScore(lon, lat)
	}
	z, found, err := getObject[*ZSet](c, args[1], kindZSet)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		if xx {
			c.writeInt(0)
			return
		}
		z, _ = getOrCreateObject(c, args[1], kindZSet, NewZSet)
		z.lim = c.tuning()
	}
	added, updated := 0, 0
	for j, score := range scores {
		member := args[i+3*j+2]
		cur, exists := z.ScoreBytes(member)
		switch {
		case exists:
			if nx || cur == score {
				continue
			}
			z.SetBytes(member, score)
			updated++
		case !xx:
			z.SetBytes(member, score)
			added++
		}
	}
	if added+updated > 0 {
		c.signalModified(args[1])
	}
	if ch {
		added += updated
	}
	c.writeInt(int64(added))
}

// geoSet returns the sorted set at key for a reader: nil when missing; ok
// false after replying WRONGTYPE.
func geoSet(c *Client, key []byte) (*ZSet, bool) {
	z, found, err := getObject[*ZSet](c, key, kindZSet)
	if err != nil {
		c.writeErr(err)
		return nil, false
	}
	if !found {
		return nil, true
	}
	return z, true
}

func cmdGeoDist(c *Client, args [][]byte) {
	toMeter := 1.0
	switch {
	case len(args) == 5:
		var ok bool
		if toMeter, ok = geoUnit(c, args[4]); !ok {
			return
		}
	case len(args) > 5:
		c.writeError(errSyntax)
		return
	}
	z, ok := geoSet(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.writeNull()
		return
	}
	s1, ok1 := z.ScoreBytes(args[2])
	s2, ok2 := z.ScoreBytes(args[3])
	if !ok1 || !ok2 {
		c.writeNull()
		return
	}
	lon1, lat1 := geoDecodeScore(s1)
	lon2, lat2 := geoDecodeScore(s2)
	writeGeoDistance(c, geoDistance(lon1, lat1, lon2, lat2)/toMeter)
}

func cmdGeoHash(c *Client, args [][]byte) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	z, ok := geoSet(c, args[1])
	if !ok {
		return
	}
	c.writeArray(len(args) - 2)
	for _, m := range args[2:] {
		var score float64
		if z != nil {
			score, ok = z.ScoreBytes(m)
		}
		if z == nil || !ok {
			c.writeNull()
			continue
		}
		// Redis's latitudes stop at +-85.05: re-encode over the standard
		// geohash ranges for a standard string.
		lon, lat := geoDecodeScore(score)
		h, _ := geoEncode(geoRange{-180, 180}, geoRange{-90, 90}, lon, lat, 26)
		var buf [11]byte
		for i := 0; i < 10; i++ {
			buf[i] = alphabet[h.bits>>(52-uint(i+1)*5)&0x1f]
		}
		buf[10] = '0' // 52 bits make ten characters; the eleventh is zero
		c.writeBulk(buf[:])
	}
}

func cmdGeoPos(c *Client, args [][]byte) {
	z, ok := geoSet(c, args[1])
	if !ok {
		return
	}
	c.writeArray(len(args) - 2)
	for _, m := range args[2:] {
		var score float64
		if z != nil {
			score, ok = z.ScoreBytes(m)
		}
		if z == nil || !ok {
			c.writeNullArray()
			continue
		}
		lon, lat := geoDecodeScore(score)
		c.writeArray(2)
		writeGeoCoord(c, lon)
		writeGeoCoord(c, lat)
	}
}

// georadiusGeneric's variants.
const (
	geoCoords      = 1 << iota // GEORADIUS: around a position
	geoMember                  // GEORADIUSBYMEMBER: around a member
	geoNoStore                 // the _RO forms: no STORE/STOREDIST
	geoSearchCmd               // GEOSEARCH's arguments
	geoSearchStore             // GEOSEARCHSTORE: STOREDIST without a key
)

func cmdGeoRadius(c *Client, args [][]byte)         { geoRadiusGeneric(c, args, 1, geoCoords) }
func cmdGeoRadiusByMember(c *Client, args [][]byte) { geoRadiusGeneric(c, args, 1, geoMember) }
func cmdGeoRadiusRO(c *Client, args [][]byte)       { geoRadiusGeneric(c, args, 1, geoCoords|geoNoStore) }
func cmdGeoRadiusByMemberRO(c *Client, args [][]byte) {
	geoRadiusGeneric(c, args, 1, geoMember|geoNoStore)
}
func cmdGeoSearch(c *Client, args [][]byte) { geoRadiusGeneric(c, args, 1, geoSearchCmd) }
func cmdGeoSearchStore(c *Client, args [][]byte) {
	geoRadiusGeneric(c, args, 2, geoSearchCmd|geoSearchStore)
}

// geoMemberPos is longLatFromMember.
func geoMemberPos(z *ZSet, member []byte, s *geoShape) bool {
	score, ok := z.ScoreBytes(member)
	if !ok {
		return false
	}
	s.lon, s.lat = geoDecodeScore(score)
	return true
}

// geoRadiusGeneric is georadiusGeneric: the argument checks in Redis's
// order, the search, the sort, and the reply or the store.
func geoRadiusGeneric(c *Client, args [][]byte, srcIdx, flags int) {
	z, ok := geoSet(c, args[srcIdx])
	if !ok {
		return
	}
	var storeKey []byte
	storeDist := false
	var s geoShape
	var base int
	switch {
	case flags&geoCoords != 0:
		base = 6
		if s.lon, s.lat, ok = geoLonLat(c, args[2], args[3]); !ok {
			return
		}
		if !geoRadiusArg(c, args[base-2:], &s) {
			return
		}
	case flags&geoMember != 0 && z == nil:
		base = 5
	case flags&geoMember != 0:
		base = 5
		if !geoMemberPos(z, args[2], &s) {
			c.writeError("ERR could not decode requested zset member")
			return
		}
		if !geoRadiusArg(c, args[base-2:], &s) {
			return
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = args[1]
		}
	}

	withDist, withHash, withCoord := false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	sortDir := 0 // 1 ASC, -1 DESC
	anyOpt := false
	var count int64
	search := flags&geoSearchCmd != 0
	canStore := flags&geoNoStore == 0 && !search
	for i := base; i < len(args); i++ {
		a := args[i]
		more := len(args) - 1 - i // arguments after this one
		switch {
		case equalFold(a, "withdist"):
			withDist = true
		case equalFold(a, "withhash"):
			withHash = true
		case equalFold(a, "withcoord"):
			withCoord = true
		case equalFold(a, "any"):
			anyOpt = true
		case equalFold(a, "asc"):
			sortDir = 1
		case equalFold(a, "desc"):
			sortDir = -1
		case equalFold(a, "count") && more >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			if n <= 0 {
				c.writeError("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case equalFold(a, "store") && more >= 1 && canStore:
			storeKey, storeDist = args[i+1], false
			i++
		case equalFold(a, "storedist") && more >= 1 && canStore:
			storeKey, storeDist = args[i+1], true
			i++
		case equalFold(a, "storedist") && flags&geoSearchStore != 0:
			storeDist = true
		case equalFold(a, "frommember") && more >= 1 && search && !fromLoc:
			if z != nil && !geoMemberPos(z, args[i+1], &s) {
				c.writeError("ERR could not decode requested zset member")
				return
			}
			fromMember = true
			i++
		case equalFold(a, "fromlonlat") && more >= 2 && search && !fromMember:
			if s.lon, s.lat, ok = geoLonLat(c, args[i+1], args[i+2]); !ok {
				return
			}
			fromLoc = true
			i += 2
		case equalFold(a, "byradius") && more >= 2 && search && !byBox:
			if !geoRadiusArg(c, args[i+1:], &s) {
				return
			}
			s.box = false
			byRadius = true
			i += 2
		case equalFold(a, "bybox") && more >= 3 && search && !byRadius:
			if !geoBoxArg(c, args[i+1:], &s) {
				return
			}
			s.box = true
			byBox = true
			i += 3
		default:
			c.writeError(errSyntax)
			return
		}
	}

	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.writeError("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if search && !fromMember && !fromLoc {
		c.writeError("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(args[0]))
		return
	}
	if search && !byRadius && !byBox {
		c.writeError("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(args[0]))
		return
	}
	if anyOpt && count == 0 {
		c.writeError("ERR the ANY argument requires COUNT argument")
		return
	}
	if z == nil {
		if storeKey != nil {
			c.deleteKey(storeKey)
			c.writeInt(0)
		} else {
			c.writeArray(0)
		}
		return
	}
	if count != 0 && sortDir == 0 && !anyOpt {
		sortDir = 1
	}

	limit := 0
	if anyOpt {
		limit = int(min(count, int64(math.MaxInt32)))
	}
	pts := geoSearch(z, &s, limit)
	if len(pts) == 0 && storeKey == nil {
		c.writeArray(0)
		return
	}
	returned := len(pts)
	if count != 0 && int64(returned) > count {
		returned = int(count)
	}
	// glibc's qsort, which Redis calls to sort everything, is a stable
	// merge sort; for fewer than all it calls its own pqsort.
	switch {
	case sortDir != 0 && returned < len(pts):
		geoPartialSort(pts, sortDir < 0, 0, returned-1)
	case sortDir == 1:
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].dist < pts[j].dist })
	case sortDir == -1:
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].dist > pts[j].dist })
	}
	pts = pts[:returned]
	for i := range pts {
		pts[i].dist /= s.conversion
	}

	if storeKey == nil {
		opts := 0
		for _, b := range []bool{withDist, withHash, withCoord} {
			if b {
				opts++
			}
		}
		c.writeArray(len(pts))
		for _, p := range pts {
			if opts > 0 {
				c.writeArray(opts + 1)
			}
			c.writeBulkString(p.member)
			if withDist {
				writeGeoDistance(c, p.dist)
			}
			if withHash {
				c.writeInt(cInt64(p.score))
			}
			if withCoord {
				c.writeArray(2)
				writeGeoCoord(c, p.lon)
				writeGeoCoord(c, p.lat)
			}
		}
		return
	}
	res := NewZSet()
	res.lim = c.tuning()
	for _, p := range pts {
		if storeDist {
			res.Set(p.member, p.dist)
		} else {
			res.Set(p.member, p.score)
		}
	}
	storeZSet(c, storeKey, res)
}
