np=2; tls=tcp,self; args='zipf -z 1.5 -t 100000'
