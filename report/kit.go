package report

import (
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure draws itself on a canvas of Width × Height, written as Name.png and Name.svg.
type Figure struct {
	Name          string
	Width, Height vg.Length
	Draw          func(c draw.Canvas)
}
