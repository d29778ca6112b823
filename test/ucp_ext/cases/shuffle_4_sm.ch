np=4; args='shuffle -t 20000'
