package ccuzk

/*
#include "cuzk.h"
*/
import "C"

// The header's CUZK_VERSION_MAJOR and CUZK_VERSION_MINOR: the C ABI these
// bindings were compiled against (docs/compatibility.md).
const (
	VersionMajor = int(C.CUZK_VERSION_MAJOR)
	VersionMinor = int(C.CUZK_VERSION_MINOR)
)
