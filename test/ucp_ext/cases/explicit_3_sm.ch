np=3; args='explicit -t 10000'
