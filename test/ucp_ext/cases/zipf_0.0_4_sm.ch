np=4; args='zipf -z 0 -t 20000'
