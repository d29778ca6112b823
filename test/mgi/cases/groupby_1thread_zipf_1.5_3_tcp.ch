np=3; tls=tcp,self; args='zipf -z 1.5 -s -e 2 -t 50000'
