package platform

import (
	"mime"
	"strings"
)

// IsJSON reports whether a Content-Type names JSON (application/json, or a
// structured +json type), parameters aside. An answer in any other type,
// an HTML error page from a proxy in front of the platform say, is never
// read for what it would authorize.
func IsJSON(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return media == "application/json" || strings.HasPrefix(media, "application/") && strings.HasSuffix(media, "+json")
}
