np=2; tls=tcp,self; args=proxy
