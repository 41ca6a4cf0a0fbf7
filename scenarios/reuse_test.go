package scenarios

import (
	"reflect"
	"testing"
)

// TestRenderReusingMatchesRender renders every embedded scenario into scripts other scenarios
// (with more and fewer turns and steps) rendered before, as the load generator does with its
// pool, and wants exactly what Render gives: reusing memory must never leak a step, a text or
// a turn from the previous script.
func TestRenderReusingMatchesRender(t *testing.T) {
	t.Parallel()
	lib := Embedded()
	names := lib.Names()
	var prev *Script
	for round := range 3 {
		for i, name := range names {
			s, _ := lib.Get(name)
			seed := testSeeds[(i+round)%len(testSeeds)]
			want := s.Render(seed)
			got := s.RenderReusing(seed, prev)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: %s seed %d: RenderReusing differs from Render:\n got %+v\nwant %+v", round, name, seed, got, want)
			}
			if !reflect.DeepEqual(got.Expected(), want.Expected()) {
				t.Fatalf("round %d: %s seed %d: Expected differs", round, name, seed)
			}
			prev = got
		}
	}
}

// TestRenderReusingReusesSteps shows the point of it: a script of the same shape renders into
// the previous one's step array instead of a new one.
func TestRenderReusingReusesSteps(t *testing.T) {
	t.Parallel()
	s, _ := Embedded().Get("plain-answer")
	first := s.Render(1)
	if len(first.Turns) == 0 || len(first.Turns[0].Steps) == 0 {
		t.Fatal("plain-answer rendered no steps")
	}
	backing, capacity := &first.Turns[0].Steps[:1][0], cap(first.Turns[0].Steps)
	again := s.RenderReusing(2, first)
	if n := len(again.Turns[0].Steps); n > capacity {
		t.Fatalf("seed 2 has %d steps, more than seed 1's %d: pick seeds of one shape", n, capacity)
	}
	if &again.Turns[0].Steps[:1][0] != backing {
		t.Error("the second script did not reuse the first one's steps")
	}
	if fresh := s.Render(2); &fresh.Turns[0].Steps[:1][0] == backing {
		t.Error("Render reused memory it was not given")
	}
}
