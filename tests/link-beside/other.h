/* The stand-in for filecoin-ffi's library (src/lib.rs): 1 on success, 0 on a
 * wrong result, -1 on a panic. */
#ifndef OTHER_H
#define OTHER_H
#include <stdint.h>

int32_t other_g1_generator(uint8_t out[48]);
int32_t other_bls_sign_verify(uint8_t seed);
int32_t other_panic_caught(void);

#endif
