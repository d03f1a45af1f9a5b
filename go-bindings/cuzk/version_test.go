package cuzk

import (
	"strings"
	"testing"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

func TestVersionCheck(t *testing.T) {
	if err := checkVersion(ccuzk.VersionMajor, ccuzk.VersionMinor, Version()); err != nil {
		t.Fatalf("the linked library: %v", err)
	}
	for _, c := range []struct {
		major, minor int
		lib, want    string
	}{
		{0, 1, "0.1.0", ""},
		{0, 1, "0.1.7", ""},
		{0, 1, "0.2.0", "compiled against cuzk.h 0.1 but the linked libcuzk.a is 0.2.0"},
		{1, 2, "2.2.0", "compiled against cuzk.h 1.2 but the linked libcuzk.a is 2.2.0"},
		{1, 2, "1.3.0", "compiled against cuzk.h 1.2"},
		{0, 1, "0.1", "not MAJOR.MINOR.PATCH"},
		{0, 1, "", "not MAJOR.MINOR.PATCH"},
	} {
		err := checkVersion(c.major, c.minor, c.lib)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkVersion(%d, %d, %q) = %v, want nil", c.major, c.minor, c.lib, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("checkVersion(%d, %d, %q) = %v, want an error containing %q", c.major, c.minor, c.lib, err, c.want)
		}
	}
}
