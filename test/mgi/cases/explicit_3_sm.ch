np=3; args='explicit -t 50000'
