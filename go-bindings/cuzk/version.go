package cuzk

import (
	"fmt"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

// The header these bindings were compiled against and the library linked into
// the program must be one C ABI: the same MAJOR.MINOR (docs/compatibility.md).
// They differ only when the build took cuzk.h and libcuzk.a from different
// installs (e.g. a stale cuzk.h earlier on the include path). Then every call
// would pass structures and constants of another ABI, so none can be made
// safely, not even one returning an error: the package panics at init, in the
// first run of any program or test, before it touches a sector.
func init() {
	if err := checkVersion(ccuzk.VersionMajor, ccuzk.VersionMinor, ccuzk.LibVersion()); err != nil {
		panic(err)
	}
}

// checkVersion compares the header's MAJOR.MINOR with the linked library's
// cuzk_version ("MAJOR.MINOR.PATCH"; patches never change the ABI).
func checkVersion(major, minor int, lib string) error {
	var libMajor, libMinor, libPatch int
	if _, err := fmt.Sscanf(lib, "%d.%d.%d", &libMajor, &libMinor, &libPatch); err != nil {
		return fmt.Errorf("cuzk: the linked library's version %q is not MAJOR.MINOR.PATCH: %v", lib, err)
	}
	if libMajor != major || libMinor != minor {
		return fmt.Errorf("cuzk: these bindings were compiled against cuzk.h %d.%d but the linked libcuzk.a is %s: "+
			"take both from one install (scripts/install.sh; PKG_CONFIG_PATH names its lib/pkgconfig)", major, minor, lib)
	}
	return nil
}
