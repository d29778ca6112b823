np=2; tls=tcp,self; args='explicit -t 50000'
