np=4; args='zipf -z 1.0 -t 100000'
