np=2; args='shuffle -t 500000'
