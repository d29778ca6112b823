np=3; tls=tcp,self; args='shuffle -t 100000'
