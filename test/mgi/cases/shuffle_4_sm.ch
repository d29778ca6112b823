np=4; args='shuffle -t 100000'
