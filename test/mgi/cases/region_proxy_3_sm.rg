np=3; args=proxy
