package beat

import "testing"

func TestSlot_KeepsNewestAndClearsOnlyWhatWasRead(t *testing.T) {
	s := newSlot[string]()
	s.put("t1")
	_, seq, _ := s.peek()
	s.put("t2")
	s.clearIf(seq)
	if v, _, ok := s.peek(); !ok || v != "t2" {
		t.Fatalf("after clearing a superseded value peek() = %q, %v; want t2, true", v, ok)
	}
	if len(s.ready) != 0 {
		t.Fatal("peek left a wake-up token behind")
	}
	_, seq, _ = s.peek()
	s.clearIf(seq)
	if _, _, ok := s.peek(); ok {
		t.Fatal("slot still full after clearing the value it held")
	}
	s.put("t3")
	if v, ok := s.take(); !ok || v != "t3" {
		t.Fatalf("take() = %q, %v; want t3, true", v, ok)
	}
	if _, ok := s.take(); ok {
		t.Fatal("second take() found a value")
	}
}
