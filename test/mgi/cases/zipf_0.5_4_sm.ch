np=4; args='zipf -z 0.5 -t 100000'
