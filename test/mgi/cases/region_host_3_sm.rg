np=3; args=host
