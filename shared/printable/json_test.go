package printable

import "testing"

func TestJSON_EscapesWhatATerminalWouldObeyAndDecodesToTheSameValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no escape needed", `{"a":"größer ✓","b":[1, 2]}` + "\n", `{"a":"größer ✓","b":[1, 2]}` + "\n"},
		{"indentation kept", "{\n\t\"a\": 1\n}\n", "{\n\t\"a\": 1\n}\n"},
		{"encoder-escaped ESC untouched", `{"a":"\u001b[31m"}`, `{"a":"\u001b[31m"}`},
		{"raw C1 CSI", "{\"a\":\"x\u009by\"}", `{"a":"x\u009by"}`},
		{"raw DEL", "{\"a\":\"x\x7fy\"}", `{"a":"x\u007fy"}`},
		{"raw right-to-left override", "{\"a\":\"x\u202Ey\"}", `{"a":"x\u202ey"}`},
		{"above the BMP as a surrogate pair", "{\"a\":\"\U000E0041\"}", `{"a":"\udb40\udc41"}`},
		{"a byte that is not UTF-8", "{\"a\":\"x\x9by\"}", `{"a":"x\ufffdy"}`},
		{"carriage return", "{}\r\n", "{}\\u000d\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(JSON([]byte(tt.in))); got != tt.want {
				t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
