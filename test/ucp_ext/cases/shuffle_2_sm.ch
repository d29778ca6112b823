np=2; args='shuffle -t 50000'
