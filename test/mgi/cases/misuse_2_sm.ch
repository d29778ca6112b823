np=2; args=misuse
