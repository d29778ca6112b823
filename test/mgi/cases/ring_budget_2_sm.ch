np=2; args=ring_budget
