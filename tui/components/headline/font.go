package headline

import "strings"

// glyphs is a block font of what a delta is written with: digits, sign,
// point, per cent and the significance rule's marks (~ within the noise,
// ? noise not measured). Each glyph is five rows of pixels ('#' set),
// drawn either with full blocks or, twice as compact, with half blocks.
var glyphs = map[rune][5]string{
	'0': {"###", "#.#", "#.#", "#.#", "###"},
	'1': {".#.", "##.", ".#.", ".#.", "###"},
	'2': {"###", "..#", "###", "#..", "###"},
	'3': {"###", "..#", "###", "..#", "###"},
	'4': {"#.#", "#.#", "###", "..#", "..#"},
	'5': {"###", "#..", "###", "..#", "###"},
	'6': {"###", "#..", "###", "#.#", "###"},
	'7': {"###", "..#", "..#", "..#", "..#"},
	'8': {"###", "#.#", "###", "#.#", "###"},
	'9': {"###", "#.#", "###", "..#", "###"},
	'+': {"...", ".#.", "###", ".#.", "..."},
	'-': {"...", "...", "###", "...", "..."},
	'.': {".", ".", ".", ".", "#"},
	'%': {"#.#", "..#", ".#.", "#..", "#.#"},
	'~': {".....", ".#...", "#.#.#", "...#.", "....."},
	'?': {"###", "..#", ".##", "...", ".#."},
	' ': {".", ".", ".", ".", "."},
}

// font is how glyph pixels become terminal cells.
type font struct {
	// px is the columns one pixel takes (2 keeps the glyphs' shape, as a
	// cell is about twice as tall as it is wide).
	px int
	// py is the lines one pixel row takes with full blocks (a poster's
	// digits on a large terminal).
	py int
	// half draws two pixel rows per line with half blocks (3 lines a
	// glyph instead of 5).
	half bool
}

// The fonts, largest first.
var fonts = []font{{px: 4, py: 2}, {px: 3, py: 2}, {px: 2, py: 1}, {px: 2, half: true}, {px: 1, half: true}}

// supported reports whether every rune of s has a glyph.
func supported(s string) bool {
	for _, r := range s {
		if _, ok := glyphs[r]; !ok {
			return false
		}
	}
	return s != ""
}

// width is the columns s takes in f: the glyphs and a pixel's gap between
// two of them.
func (f font) width(s string) int {
	w := 0
	for i, r := range []rune(s) {
		if i > 0 {
			w += f.px
		}
		w += runeWidth(glyphs[r]) * f.px
	}
	return w
}

func runeWidth(g [5]string) int {
	w := 0
	for _, row := range g {
		w = max(w, len(row))
	}
	return w
}

// render draws s in f, f.rows() lines of f.width(s) columns each. Runes
// without a glyph must have been ruled out (supported).
func (f font) render(s string) []string {
	var px [5]strings.Builder
	for i, r := range []rune(s) {
		g := glyphs[r]
		w := runeWidth(g)
		for y := range 5 {
			if i > 0 {
				px[y].WriteByte('.')
			}
			row := g[y]
			px[y].WriteString(row + strings.Repeat(".", w-len(row)))
		}
	}
	var grid [5]string
	for y := range 5 {
		grid[y] = px[y].String()
	}
	var out []string
	if !f.half {
		for _, row := range grid {
			for range max(f.py, 1) {
				out = append(out, cells(row, row, f.px))
			}
		}
		return out
	}
	blank := strings.Repeat(".", len(grid[0]))
	for y := 0; y < 5; y += 2 {
		lower := blank
		if y+1 < 5 {
			lower = grid[y+1]
		}
		out = append(out, cells(grid[y], lower, f.px))
	}
	return out
}

// cells draws an upper and a lower pixel row as one line of cells, each
// pixel px columns wide: full block, upper half, lower half or blank.
func cells(upper, lower string, px int) string {
	var b strings.Builder
	for x := range len(upper) {
		u, l := upper[x] == '#', lower[x] == '#'
		c := " "
		switch {
		case u && l:
			c = "█"
		case u:
			c = "▀"
		case l:
			c = "▄"
		}
		b.WriteString(strings.Repeat(c, px))
	}
	return b.String()
}
