np=3; args=ring_mismatch
