np=4; args='zipf -z 1.5 -t 100000'
