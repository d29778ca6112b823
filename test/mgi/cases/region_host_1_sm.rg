np=1; args=host
