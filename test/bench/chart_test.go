package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// chartPoint is one cluster size's median resident memory, in MiB.
type chartPoint struct {
	pods, nodes      int
	observer, leader float64
}

// The chart's frame, in SVG user units.
const (
	chartW, chartH       = 760, 470
	plotL, plotR         = 80, 730
	plotT, plotB         = 60, 370
	observerColor, actor = "#1f6fb4", "#d1462f"
)

// chart draws resident memory against pod count (log scale) for the
// observer and the actor leader, with the memory limit deploy/ sets (limit
// MiB, 0 for none) as a dashed line, labelled axes, a legend and a caption.
// Plain SVG, so it renders on GitHub and needs no dependency.
func chart(points []chartPoint, limit float64, caption string) string {
	if len(points) == 0 {
		return ""
	}
	lo, hi := decades(points)
	top := yTop(points, limit)
	x := func(pods int) float64 {
		return plotL + (plotR-plotL)*(math.Log10(float64(max(pods, 1)))-lo)/(hi-lo)
	}
	y := func(mib float64) float64 { return plotB - (plotB-plotT)*mib/top }

	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartW, chartH, chartW, chartH)
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartW, chartH)
	text(&s, chartW/2, 28, "middle", 16, "kubehz-agent: resident memory against cluster size")

	// Grid and axes: a line per decade, a step of the y scale per line.
	for d := lo; d <= hi; d++ {
		px := x(int(math.Pow(10, d)))
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e3e3e3"/>`+"\n", px, plotT, px, plotB)
		text(&s, px, plotB+18, "middle", 12, podsLabel(int(math.Pow(10, d))))
	}
	step := top / 4
	for v := 0.0; v <= top+1e-9; v += step {
		py := y(v)
		fmt.Fprintf(&s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e3e3e3"/>`+"\n", plotL, py, plotR, py)
		text(&s, plotL-8, py+4, "end", 12, fmt.Sprintf("%.0f", v))
	}
	fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", plotL, plotT, plotR-plotL, plotB-plotT)
	text(&s, (plotL+plotR)/2, plotB+42, "middle", 13, "pods in the cluster (log scale); Warning events = pods/25; nodes as marked")
	fmt.Fprintf(&s, `<text x="22" y="%d" text-anchor="middle" font-size="13" transform="rotate(-90 22 %d)">resident memory, MiB (median)</text>`+"\n",
		(plotT+plotB)/2, (plotT+plotB)/2)

	if limit > 0 {
		fmt.Fprintf(&s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" stroke-dasharray="6 4"/>`+"\n", plotL, y(limit), plotR, y(limit))
		text(&s, plotR-6, y(limit)-6, "end", 11, fmt.Sprintf("memory limit in deploy/: %.0f MiB", limit))
	}
	for _, p := range points {
		text(&s, x(p.pods), plotT+14, "middle", 10, podsLabel(p.nodes)+" nodes")
	}
	observer := func(p chartPoint) float64 { return p.observer }
	leader := func(p chartPoint) float64 { return p.leader }
	series(&s, points, x, y, observerColor, observer, leader)
	series(&s, points, x, y, actor, leader, observer)

	// Legend, top left inside the plot, below the node counts.
	for i, l := range []struct{ color, name string }{{observerColor, "observer"}, {actor, "actor leader"}} {
		ly := plotT + 40 + 18*i
		fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"/>`+"\n", plotL+12, ly-4, plotL+36, ly-4, l.color)
		text(&s, plotL+42, float64(ly), "start", 12, l.name)
	}
	text(&s, chartW/2, chartH-22, "middle", 11, caption)
	s.WriteString("</svg>\n")
	return s.String()
}

// series draws one line; each value's label goes above its point when it is
// the larger of the two series there, below otherwise, so they never collide.
func series(s *strings.Builder, points []chartPoint, x func(int) float64, y func(float64) float64, color string, val, other func(chartPoint) float64) {
	var path []string
	for _, p := range points {
		path = append(path, fmt.Sprintf("%.1f,%.1f", x(p.pods), y(val(p))))
	}
	fmt.Fprintf(s, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5"/>`+"\n", strings.Join(path, " "), color)
	for _, p := range points {
		px, py := x(p.pods), y(val(p))
		fmt.Fprintf(s, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n", px, py, color)
		dy := -8.0
		if val(p) < other(p) {
			dy = 17
		}
		text(s, px+6, py+dy, "start", 11, fmt.Sprintf("%.1f", val(p)))
	}
}

func text(s *strings.Builder, x, y float64, anchor string, size int, body string) {
	fmt.Fprintf(s, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d">%s</text>`+"\n", x, y, anchor, size, html.EscapeString(body))
}

// decades spans the points' pod counts in whole powers of ten.
func decades(points []chartPoint) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range points {
		l := math.Log10(float64(max(p.pods, 1)))
		lo, hi = min(lo, math.Floor(l)), max(hi, math.Ceil(l))
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// yTop is the y axis' top: above every point and the limit, four round
// steps.
func yTop(points []chartPoint, limit float64) float64 {
	most := max(1, limit)
	for _, p := range points {
		most = max(most, p.observer, p.leader)
	}
	for _, step := range []float64{4, 8, 16, 32, 64, 128, 256, 512} {
		if 4*step >= most*1.15 {
			return 4 * step
		}
	}
	return math.Ceil(most*1.15/1024) * 1024
}

func podsLabel(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
