np=4; args='zipf -z 0.0 -t 100000'
