np=2; tls=tcp,self; args='explicit -t 10000'
