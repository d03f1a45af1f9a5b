package cuzk

import "github.com/cuzk/cuzk/go-bindings/internal/ccuzk"

// ParamsFileName is the file name of c's production parameters as
// filecoin-proofs names it in its parameter cache, e.g.
// "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a3….params"
// for Porep("32GiB"): join it to the cache directory (filecoin-ffi's is
// FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters) and
// load it with LoadParams. The verifying key has the same stem with ".vk".
// A synthetic circuit has none (ErrInvalidArgument).
func ParamsFileName(c Circuit) (string, error) {
	name, s, msg := ccuzk.ParamsFileName(c.c())
	return name, check("cuzk_params_file_name", s, msg)
}
