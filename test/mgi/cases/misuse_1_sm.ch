np=1; args=misuse
