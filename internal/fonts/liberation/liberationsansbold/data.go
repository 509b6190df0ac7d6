// Package liberationsansbold stands in for go-fonts' package of the same
// name: its TTF is Liberation Sans Regular's, the one face dpulab's charts
// use (see ../README.md).
package liberationsansbold // import "codeberg.org/go-fonts/liberation/liberationsansbold"

import "codeberg.org/go-fonts/liberation/liberationsansregular"

// TTF is Liberation Sans Regular, standing in for this face.
var TTF = liberationsansregular.TTF
